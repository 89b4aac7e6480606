// ONNX Runtime as the oracle: the same float models run by ONNX Runtime (tools/ort-oracle, optimisation level
// "disabled") and by `stowage run` on seeded random inputs must give the same outputs. Skipped with a message when
// the oracle is not installed (`make deps` installs it) or ../shared is absent.
// Float tolerance: rtol 1e-4, atol 1e-5 (TensorCompare's defaults); the largest differences measured are listed
// with each case.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "E2eSupport.h"
#include "OrtOracle.h"
#include "stowage/io/TensorFile.h"
#include "stowage/zoo/OnnxGraphBuilder.h"

namespace stowage::e2e {
namespace {

namespace fs = std::filesystem;

#define ORT_SKIP_WITHOUT_ORACLE()                                                   \
  do {                                                                              \
    std::string ortWhy;                                                             \
    if (!ortOracleAvailable(&ortWhy)) GTEST_SKIP() << "ONNX Runtime oracle: " << ortWhy; \
  } while (0)

// Runs `model` with ONNX Runtime and stowage on random inputs from `seed` and expects equal outputs; returns the
// two runs for further checks.
void ortExpectSameOutputs(const fs::path& model, const fs::path& work, uint64_t seed, Tolerance tol,
                          std::vector<Tensor>* stowageOutputs = nullptr, std::vector<Tensor>* ortOutputs = nullptr,
                          const std::string& stowageFlags = "") {
  std::string error;
  std::vector<Tensor> inputs = randomModelInputs(model, seed, &error);
  ASSERT_FALSE(inputs.empty()) << error;
  ModelRun ort = runOrtOracle(model, inputs, work);
  ASSERT_TRUE(ort.ok()) << ort.error;
  ModelRun ours = runStowageCli(model, inputs, work, stowageFlags);
  ASSERT_TRUE(ours.ok()) << ours.error;
  EXPECT_EQ(diffOutputs(ours.outputs, ort.outputs, tol), "") << model;
  for (size_t i = 0; i < ours.outputs.size() && i < ort.outputs.size(); ++i) {
    std::printf("  %s output %zu (%s): %s\n", model.filename().c_str(), i, ort.outputs[i].name.c_str(),
                diffTensors(ours.outputs[i], ort.outputs[i], tol).summary().c_str());
  }
  if (stowageOutputs) *stowageOutputs = std::move(ours.outputs);
  if (ortOutputs) *ortOutputs = std::move(ort.outputs);
}

// A small two-output float model: Conv, BatchNormalization, Relu, Add, AveragePool, GlobalAveragePool, Gemm,
// Softmax, with seeded weights.
fs::path ortWriteTinyModel(const fs::path& dir) {
  zoo::OnnxGraphBuilder b("ort_tiny", 11);
  zoo::Value x = b.input("x", {1, 3, 12, 12});
  zoo::Value c1 = b.relu(b.batchNorm(b.conv(x, "conv1", {.outChannels = 8}), "bn1"), "relu1");
  zoo::Value c2 = b.conv(c1, "conv2", {.outChannels = 8, .kernelH = 3, .kernelW = 3, .strideH = 1, .strideW = 1});
  zoo::Value sum = b.add(c1, c2, "add");
  zoo::Value pooled = b.averagePool(sum, "pool", 2, 2);
  b.output(pooled);
  zoo::Value g = b.flatten(b.globalAveragePool(pooled, "gap"), "flatten");
  b.output(b.softmax(b.gemm(g, "fc", 5, false), "softmax"));
  onnx::ModelProto m = b.finish("OrtOracleTest tiny model");
  fs::path file = dir / "tiny.onnx";
  std::ofstream out(file, std::ios::binary);
  m.SerializeToOstream(&out);
  return file;
}

// (a) The oracle itself: a model built here, run by both. Measured: 1.4 s; max abs diff 3e-7.
TEST(OrtOracle, TinyModelAgreesWithStowageAndTheComparisonCatchesADifference) {
  ORT_SKIP_WITHOUT_ORACLE();
  fs::path work = scratchDir("ort_tiny");
  fs::path model = ortWriteTinyModel(work);
  std::vector<Tensor> ours, ort;
  ortExpectSameOutputs(model, work, 1, Tolerance{}, &ours, &ort);
  ASSERT_EQ(ort.size(), 2u);
  ASSERT_EQ(ours.size(), 2u);
  EXPECT_EQ(ort[0].name, "pool");
  EXPECT_EQ(ort[1].shape, (Shape{1, 5}));

  // The comparison is not vacuous: one element off by 1e-3 is caught, and named.
  Tensor bad = ort[0];
  reinterpret_cast<float*>(bad.data.data())[17] += 1e-3f;
  TensorDiff d = diffTensors(bad, ort[0]);
  EXPECT_EQ(d.differing, 1);
  EXPECT_EQ(d.firstIndex, 17);
  EXPECT_NE(diffOutputs({bad, ort[1]}, ort), "");
  EXPECT_EQ(diffOutputs(ort, ort), "");

  // Other inputs, other outputs (the oracle really computes); integer comparison counts steps.
  std::string error;
  ModelRun other = runOrtOracle(model, randomModelInputs(model, 2, &error), work / "seed2");
  ASSERT_TRUE(other.ok()) << other.error;
  EXPECT_FALSE(diffTensors(other.outputs[0], ort[0]).same());
  Tensor a;
  a.dtype = DType::Int8;
  a.shape = {3};
  a.data = {0, 5, 0xFE};
  Tensor b2 = a;
  b2.data = {0, 2, 0x01};  // 0 vs 0, 5 vs 2, -2 vs 1
  TensorDiff id = diffTensors(a, b2, {}, 2);
  EXPECT_EQ(id.differing, 2);
  EXPECT_EQ(id.maxSteps, 3);
  EXPECT_TRUE(diffTensors(a, b2, {}, 3).same());

  // --dump-intermediates: every node output comes back after the model's own outputs.
  ModelRun all = runOrtOracle(model, randomModelInputs(model, 1, &error), work / "all", "disabled", true);
  ASSERT_TRUE(all.ok()) << all.error;
  ASSERT_GT(all.outputs.size(), 2u);
  EXPECT_TRUE(diffTensors(all.outputs[0], ort[0]).same());
  bool sawRelu = false;
  for (const Tensor& t : all.outputs) sawRelu = sawRelu || (t.name == "relu1" && t.shape == Shape{1, 8, 12, 12});
  EXPECT_TRUE(sawRelu);

  // A broken model is an error with ONNX Runtime's message, not a crash or empty outputs.
  writeFileBytes(work / "broken.onnx", "not a model");
  ModelRun broken = runOrtOracle(work / "broken.onnx", {}, work / "broken");
  EXPECT_FALSE(broken.ok());
  EXPECT_NE(broken.error.find("cannot load"), std::string::npos) << broken.error;
}

// Every .npy dtype through the oracle (C++ writeNpy -> run.js -> ONNX Runtime -> run.js -> readTensorFile): ONNX
// node tests from Debian's libonnx-testdata with int8, uint8, int32, int64 and bool inputs or outputs, against
// ONNX's reference outputs. Measured: 0.3 s per case (node's start-up).
TEST(OrtOracle, EveryDtypeRoundTripsAndMatchesOnnxReferenceOutputs) {
  ORT_SKIP_WITHOUT_ORACLE();
  const fs::path data = "/usr/share/libonnx-testdata/data/node";
  if (!fs::exists(data)) GTEST_SKIP() << data << " not found (Debian package libonnx-testdata; `make deps`)";
  for (const char* name : {"test_min_int8", "test_add_uint8", "test_min_int32", "test_mod_mixed_sign_int64",
                           "test_and2d", "test_where_example", "test_argmax_default_axis_example",
                           "test_quantizelinear"}) {
    SCOPED_TRACE(name);
    const fs::path dir = data / name / "test_data_set_0";
    std::vector<Tensor> inputs, want;
    for (int i = 0; fs::exists(dir / ("input_" + std::to_string(i) + ".pb")); ++i) {
      auto t = readTensorFile((dir / ("input_" + std::to_string(i) + ".pb")).string());
      ASSERT_TRUE(t.ok()) << t.error().render();
      t->name.clear();  // bind in the model's input order
      inputs.push_back(std::move(*t));
    }
    for (int i = 0; fs::exists(dir / ("output_" + std::to_string(i) + ".pb")); ++i) {
      auto t = readTensorFile((dir / ("output_" + std::to_string(i) + ".pb")).string());
      ASSERT_TRUE(t.ok()) << t.error().render();
      want.push_back(std::move(*t));
    }
    ModelRun ort = runOrtOracle(data / name / "model.onnx", inputs, scratchDir(std::string("ort_dtype_") + name));
    ASSERT_TRUE(ort.ok()) << ort.error;
    EXPECT_EQ(diffOutputs(ort.outputs, want), "");
  }
}

// The bundled zoo models (He-uniform random weights, so every output element carries signal).
// Measured (ONNX Runtime + stowage run): ds-cnn 1.0 s, resnet8 1.3 s; max abs diff 2e-8 on their softmax outputs.
class OrtZoo : public ::testing::TestWithParam<std::string> {};

TEST_P(OrtZoo, StowageMatchesOnnxRuntime) {
  ORT_SKIP_WITHOUT_ORACLE();
  std::string name = GetParam();
  fs::path work = scratchDir("ort_zoo_" + name);
  fs::path model = work / (name + ".onnx");
  auto w = runCommand(zoo() + " write " + name + " -o " + shellQuote(model.string()) + " --seed 3");
  ASSERT_EQ(w.exitCode, 0) << w.err;
  ortExpectSameOutputs(model, work, 5, Tolerance{});
}

INSTANTIATE_TEST_SUITE_P(Zoo, OrtZoo, ::testing::Values("ds-cnn", "resnet8"), [](const auto& info) {
  std::string n = info.param;
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
});

// (b) The float ONNX models of ../shared/models/onnx, each on seeded random inputs. Measured on the 2-core machine
// (ONNX Runtime + stowage run, loaded by other builds): mnist-8 0.8 s per input (two inputs);
// light_squeezenet 5 s, light_shufflenet 6 s, light_inception_v1 2.7 s and light_resnet50 7.4 s (the last two with
// --weights bin). Largest differences: mnist-8 7e-7 abs; light logits rel 1e-6 (shufflenet), 5e-7 (inception),
// 2.2e-5 (resnet50: 53 Convs deep), 0 (squeezenet).
TEST(OrtOracle, Mnist8MatchesOnnxRuntime) {
  ORT_SKIP_WITHOUT_ORACLE();
  fs::path model = sharedPath("models/onnx/mnist-8/model.onnx");
  if (model.empty()) GTEST_SKIP() << "../shared/models/onnx/mnist-8 not found; skipping";
  // Inputs in [0, 1) as the model's images.
  for (uint64_t seed : {1, 2}) {
    fs::path work = scratchDir("ort_mnist8_" + std::to_string(seed));
    std::string error;
    std::vector<Tensor> inputs = randomModelInputs(model, seed, &error, 0.0, 1.0);
    ASSERT_FALSE(inputs.empty()) << error;
    ModelRun ort = runOrtOracle(model, inputs, work);
    ASSERT_TRUE(ort.ok()) << ort.error;
    ModelRun ours = runStowageCli(model, inputs, work);
    ASSERT_TRUE(ours.ok()) << ours.error;
    EXPECT_EQ(diffOutputs(ours.outputs, ort.outputs), "");
    std::printf("  mnist-8 seed %d: %s\n", static_cast<int>(seed),
                diffTensors(ours.outputs[0], ort.outputs[0]).summary().c_str());
  }
}

// The light models end in Softmax over 1000 classes whose constant weights give every class the same score, so
// their output is 0.001 everywhere whatever the network computed. The check therefore drops the final Softmax and
// compares the logits (its input), which do depend on every layer.
fs::path ortWithoutFinalSoftmax(const fs::path& model, const fs::path& dir, std::string* error) {
  onnx::ModelProto m;
  {
    std::ifstream in(model, std::ios::binary);
    if (!m.ParseFromIstream(&in)) {
      *error = "cannot parse " + model.string();
      return {};
    }
  }
  onnx::GraphProto* g = m.mutable_graph();
  if (g->node_size() == 0 || g->node(g->node_size() - 1).op_type() != "Softmax" || g->output_size() != 1 ||
      g->node(g->node_size() - 1).output(0) != g->output(0).name()) {
    *error = model.string() + " does not end in a Softmax producing its only output";
    return {};
  }
  std::string logits = g->node(g->node_size() - 1).input(0);
  g->mutable_node()->RemoveLast();
  g->mutable_output(0)->set_name(logits);  // same dtype and shape: Softmax keeps both
  fs::path out = dir / ("logits_" + model.filename().string());
  std::ofstream o(out, std::ios::binary);
  m.SerializeToOstream(&o);
  return out;
}

class OrtLight : public ::testing::TestWithParam<std::string> {};

TEST_P(OrtLight, LogitsMatchOnnxRuntime) {
  ORT_SKIP_WITHOUT_ORACLE();
  fs::path dir = sharedPath("models/onnx/onnx-light");
  if (dir.empty()) GTEST_SKIP() << "../shared/models/onnx/onnx-light not found; skipping";
  const std::string name = GetParam();
  fs::path work = scratchDir("ort_light_" + name);
  std::string error;
  fs::path model = ortWithoutFinalSoftmax(dir / (name + ".onnx"), work, &error);
  ASSERT_FALSE(model.empty()) << error;
  // The splatted weights of Inception (7 M floats) and ResNet-50 (25 M) as C arrays took cc most of 20 s and 100 s
  // (RealModelsTest.cpp); as a binary image the harness loads, a few seconds.
  ortExpectSameOutputs(model, work, 9, Tolerance{}, nullptr, nullptr,
                       name == "light_inception_v1" || name == "light_resnet50" ? "--weights bin" : "");
  fs::remove_all(work);
}

INSTANTIATE_TEST_SUITE_P(OnnxLight, OrtLight,
                         ::testing::Values("light_squeezenet", "light_shufflenet", "light_inception_v1",
                                           "light_resnet50"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace stowage::e2e
