// End-to-end checks on real ONNX models from ../shared/models/onnx (skipped with a message when ../shared
// is absent): `stowage run` must reproduce each model's reference outputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "E2eSupport.h"
#include "stowage/driver/Compiler.h"
#include "stowage/frontend/OnnxImporter.h"
#include "stowage/io/TensorCompare.h"
#include "stowage/io/TensorFile.h"

namespace stowage::e2e {
namespace {

namespace fs = std::filesystem;

Tensor readOrFail(const fs::path& p) {
  auto t = readTensorFile(p.string());
  EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().render());
  return t.ok() ? t.value() : Tensor{};
}

TEST(RealModels, Mnist8MatchesItsThreeReferenceOutputs) {
  fs::path dir = sharedPath("models/onnx/mnist-8");
  if (dir.empty()) GTEST_SKIP() << "../shared/models/onnx/mnist-8 not found; skipping the real-model check";
  const int expectedClass[3] = {2, 0, 9};  // arg-max of the reference outputs (SOURCE.md)
  for (int i = 0; i < 3; ++i) {
    fs::path set = dir / ("test_data_set_" + std::to_string(i));
    fs::path out = scratchDir("mnist8_" + std::to_string(i));
    auto r = runCommand(cli() + " run " + shellQuote((dir / "model.onnx").string()) + " --input " +
                        shellQuote((set / "input_0.pb").string()) + " --output-dir " + shellQuote(out.string()));
    ASSERT_EQ(r.exitCode, 0) << r.err;
    Tensor got = readOrFail(out / "output_0.pb");
    Tensor want = readOrFail(set / "output_0.pb");
    EXPECT_EQ(compareTensors(got, want, Tolerance{1e-4, 1e-4}), "") << "data set " << i;
    ASSERT_EQ(got.numElements(), 10);
    const float* v = got.dataAs<float>();
    EXPECT_EQ(std::max_element(v, v + 10) - v, expectedClass[i]) << "data set " << i;
  }
}

class LightModel : public ::testing::TestWithParam<std::string> {};

// The ONNX "light" models: real ImageNet topologies whose weights are ConstantOfShape splats. Input is
// arange(N).reshape(shape) / N (ONNX's generate_dummy_data); tolerances rtol 1e-3, atol 1e-7 as upstream.
TEST_P(LightModel, MatchesReferenceOutput) {
  fs::path dir = sharedPath("models/onnx/onnx-light");
  if (dir.empty()) GTEST_SKIP() << "../shared/models/onnx/onnx-light not found; skipping";
  const std::string name = GetParam();
  fs::path model = dir / (name + ".onnx");
  auto graph = importOnnxFile(model.string());
  ASSERT_TRUE(graph.ok()) << graph.error().render();
  ASSERT_EQ(graph->inputs.size(), 1u);

  Tensor input;
  input.name = graph->tensor(graph->inputs[0]).name;
  input.dtype = DType::Float32;
  input.shape = graph->tensor(graph->inputs[0]).shape;
  input.kind = TensorKind::Input;
  const int64_t n = input.numElements();
  input.data.resize(static_cast<size_t>(n) * sizeof(float));
  float* x = reinterpret_cast<float*>(input.data.data());
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(static_cast<double>(i) / static_cast<double>(n));

  fs::path work = scratchDir("light_" + name);
  ASSERT_TRUE(writeNpy((work / "input_0.npy").string(), input).ok());
  // ResNet-50's and Inception's splatted weights (25 M and 7 M floats) made these tests take 81 s and 22 s, most of it
  // cc compiling the weights as C arrays (ResNet-50's weights file preprocesses to 408 MB); they come as a binary
  // image the harness loads (4 s and 1.3 s). The C arrays of weights are checked on the two smaller models here and
  // everywhere else.
  const bool weightsImage = name == "light_resnet50" || name == "light_inception_v1";
  auto r = runCommand(cli() + " run " + shellQuote(model.string()) + " --input " + shellQuote((work / "input_0.npy").string()) +
                      (weightsImage ? " --weights bin" : "") + " --output-dir " + shellQuote((work / "out").string()));
  ASSERT_EQ(r.exitCode, 0) << r.err;
  Tensor got = readOrFail(work / "out" / "output_0.pb");
  Tensor want = readOrFail(dir / (name + "_output_0.pb"));
  EXPECT_EQ(compareTensors(got, want, Tolerance{1e-3, 1e-7}), "");
  fs::remove_all(work);
}

// ShuffleNet's branches (channel split, concat) run in another order than the file's (pass/ReorderForMemory.h): the
// run above (and OrtOracleTest's) computes that order; here the planned workspace must be lower than with the model's
// order, by the bytes the summary's remark names. Two in-memory compiles, about 0.3 s.
TEST(OnnxLightReorder, ShufflenetPlansLessRamInTheReorderedSchedule) {
  fs::path dir = sharedPath("models/onnx/onnx-light");
  if (dir.empty()) GTEST_SKIP() << "../shared/models/onnx/onnx-light not found; skipping";
  CompileOptions o;
  o.modelPath = (dir / "light_shufflenet.onnx").string();
  auto workspace = [](const CompileResult& r) {
    size_t used = 0;
    for (const PoolUse& u : r.plan.pools)
      if (r.plan.board.pools[static_cast<size_t>(u.pool)].kind == PoolKind::Workspace) used += u.usedBytes;
    return used;
  };
  auto reordered = compileModel(o);
  ASSERT_TRUE(reordered.ok()) << reordered.error().render();
  o.reorder = false;
  auto asWritten = compileModel(o);
  ASSERT_TRUE(asWritten.ok()) << asWritten.error().render();
  // Measured: 3,110,912 -> 2,885,120 bytes, the pass's own measure exactly.
  EXPECT_EQ(workspace(*asWritten), 3110912u);
  EXPECT_EQ(workspace(*reordered), 2885120u);
  const auto& remarks = reordered->plan.remarks;
  EXPECT_TRUE(std::any_of(remarks.begin(), remarks.end(), [](const std::string& r) {
    return r.find("reorder:") == 0 && r.find("from 3110912 to 2885120") != std::string::npos;
  }));
}

INSTANTIATE_TEST_SUITE_P(OnnxLight, LightModel,
                         ::testing::Values("light_squeezenet", "light_shufflenet", "light_inception_v1",
                                           "light_resnet50"));

}  // namespace
}  // namespace stowage::e2e
