// Imports the real models of the shared folder (mnist-8, the onnx-light ImageNet topologies) and every node
// conformance model of Debian's libonnx-testdata: no crash, and each either imports or gives a diagnostic.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "stowage/frontend/OnnxImporter.h"
#include "stowage/frontend/OnnxInspect.h"
#include "stowage/ir/Verifier.h"
#include "stowage/pass/FoldBatchNorm.h"

namespace stowage {
namespace {

namespace fs = std::filesystem;

fs::path sharedModels() { return fs::path(STOWAGE_SHARED_DIR) / "models/onnx"; }

int countOp(const Graph& g, OpKind op) {
  int n = 0;
  for (const Node& node : g.nodes) n += node.op == op;
  return n;
}

TEST(RealModels, Mnist8) {
  const fs::path p = sharedModels() / "mnist-8/model.onnx";
  if (!fs::exists(p)) GTEST_SKIP() << "shared models folder absent: " << p;
  auto g = importOnnxFile(p.string());
  ASSERT_TRUE(g.ok()) << g.error().render();
  EXPECT_EQ(g->nodes.size(), 11u);
  EXPECT_EQ(countOp(*g, OpKind::Conv), 2);
  EXPECT_EQ(countOp(*g, OpKind::MaxPool), 2);
  ASSERT_EQ(g->outputs.size(), 1u);
  EXPECT_EQ(g->tensor(g->outputs[0]).shape, (Shape{1, 10}));
  ASSERT_EQ(g->inputs.size(), 1u);
  EXPECT_EQ(g->tensor(g->inputs[0]).shape, (Shape{1, 1, 28, 28}));
}

TEST(RealModels, OnnxLightModelsImportWithFoldedWeights) {
  const fs::path dir = sharedModels() / "onnx-light";
  if (!fs::exists(dir)) GTEST_SKIP() << "shared models folder absent: " << dir;
  const std::map<std::string, int> expectedConvs = {
      {"light_squeezenet.onnx", 26}, {"light_resnet50.onnx", 53}, {"light_inception_v1.onnx", 57}, {"light_shufflenet.onnx", -1}};
  for (const auto& [file, convs] : expectedConvs) {
    SCOPED_TRACE(file);
    auto g = importOnnxFile((dir / file).string());
    ASSERT_TRUE(g.ok()) << g.error().render();
    ASSERT_EQ(g->outputs.size(), 1u);
    // SqueezeNet ends in GlobalAveragePool + Softmax: [1, 1000, 1, 1], like its reference output.
    const Shape expected = file == "light_squeezenet.onnx" ? Shape{1, 1000, 1, 1} : Shape{1, 1000};
    EXPECT_EQ(g->tensor(g->outputs[0]).shape, expected);
    if (convs > 0) {
      EXPECT_EQ(countOp(*g, OpKind::Conv), convs);
    }
    for (const Tensor& t : g->tensors) EXPECT_NE(t.dtype, DType::Int64) << t.name;
    // Every weight came from ConstantOfShape and must be a constant now.
    for (const Node& n : g->nodes)
      if (n.op == OpKind::Conv) {
        EXPECT_TRUE(g->tensor(n.inputs[1]).isConstant()) << n.name;
      }
  }
}

TEST(RealModels, ResNet50BatchNormsFoldIntoConvs) {
  const fs::path p = sharedModels() / "onnx-light/light_resnet50.onnx";
  if (!fs::exists(p)) GTEST_SKIP() << "shared models folder absent: " << p;
  auto g = importOnnxFile(p.string());
  ASSERT_TRUE(g.ok()) << g.error().render();
  EXPECT_EQ(countOp(*g, OpKind::BatchNormalization), 53);
  ASSERT_TRUE(foldBatchNorm(*g).ok());
  EXPECT_EQ(countOp(*g, OpKind::BatchNormalization), 0);
  EXPECT_TRUE(verifyGraph(*g).ok());
}

TEST(NodeConformance, EveryModelImportsOrGivesADiagnostic) {
  const fs::path root = "/usr/share/libonnx-testdata/data/node";
  if (!fs::exists(root)) GTEST_SKIP() << "libonnx-testdata not installed (" << root << ")";
  int imported = 0, unsupported = 0, errors = 0;
  std::map<std::string, int> reasons;
  std::vector<std::string> errorCases;
  for (const auto& entry : fs::directory_iterator(root)) {
    const fs::path model = entry.path() / "model.onnx";
    if (!fs::exists(model)) continue;
    auto g = importOnnxFile(model.string());
    if (g.ok()) {
      ++imported;
      EXPECT_TRUE(verifyGraph(*g).ok()) << model;
      continue;
    }
    const Diagnostic& d = g.error();
    EXPECT_FALSE(d.message.empty()) << model;
    EXPECT_NE(d.location.find(model.string()), std::string::npos) << "diagnostics name the file: " << d.render();
    if (d.unsupported) {
      ++unsupported;
      ++reasons[d.message.substr(0, d.message.find(" is not supported"))];
    } else {
      ++errors;
      errorCases.push_back(entry.path().filename().string() + ": " + d.message);
    }
  }
  std::printf("node conformance models: %d imported, %d unsupported, %d errors\n", imported, unsupported, errors);
  for (const auto& e : errorCases) std::printf("  error: %s\n", e.c_str());
  // The conformance models are valid ONNX: a non-"unsupported" error means the importer is wrong, except
  // training-only models that import no default-domain operator set.
  EXPECT_GE(imported, 250);
  EXPECT_LE(errors, 0) << "valid conformance models must import or be reported as unsupported";
}

TEST(Inspect, InventoryListsUnsupportedOpsWithoutFailing) {
  const fs::path p = "/usr/share/libonnx-testdata/data/node/test_argmax_default_axis_example/model.onnx";
  if (!fs::exists(p)) GTEST_SKIP() << "libonnx-testdata not installed";
  auto s = inspectOnnxFile(p.string());
  ASSERT_TRUE(s.ok()) << s.error().render();
  ASSERT_EQ(s->ops.size(), 1u);
  EXPECT_EQ(s->ops[0].opType, "ArgMax");
  EXPECT_EQ(s->ops[0].support, OnnxOpSupport::Unsupported);
  ASSERT_TRUE(s->importError.has_value());
  EXPECT_TRUE(s->importError->unsupported);
  EXPECT_FALSE(s->graph.has_value());
}

TEST(Inspect, MissingFileIsAnError) {
  // Negative case.
  EXPECT_FALSE(inspectOnnxFile("/nonexistent.onnx").ok());
}

}  // namespace
}  // namespace stowage
