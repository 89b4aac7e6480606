// TFLite's own interpreter as the oracle (tools/tflite-oracle, the WebAssembly build of @tensorflow/tfjs-tflite with
// XNNPACK): float .tflite models run by it and by `stowage run` on the same inputs must give the same outputs, the
// MLPerf Tiny float models of ../shared and random float .tflite files (zoo/RandomTflite.h). Skipped with a message
// when the oracle is not installed (`make deps` installs it) or ../shared is absent. Each test runs its oracle jobs
// in one Node process (runTfliteOracleBatch). Int8 models are not compared here: the interpreter's int8 kernels
// are not TFLite Micro's (docs/testing.md); bit-exactness for int8 is checked against TFLM's reference outputs
// (TfliteModelsTest.cpp). The largest differences measured are noted with each tolerance.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>

#include "E2eSupport.h"
#include "OrtOracle.h"
#include "TfliteOracle.h"
#include "stowage/zoo/RandomModel.h"
#include "stowage/zoo/RandomTflite.h"

namespace stowage::e2e {
namespace {

namespace fs = std::filesystem;

#define TFLITE_SKIP_WITHOUT_ORACLE()                                                           \
  do {                                                                                         \
    std::string tfliteWhy;                                                                     \
    if (!tfliteOracleAvailable(&tfliteWhy)) GTEST_SKIP() << "TFLite oracle: " << tfliteWhy;  \
  } while (0)

/// An unnamed float32 input tensor of `shape` holding `values` (bound to the model inputs by position).
Tensor tfliteFloatTensor(const Shape& shape, const std::vector<float>& values) {
  Tensor t;
  t.dtype = DType::Float32;
  t.shape = shape;
  t.kind = TensorKind::Input;
  t.data.resize(values.size() * sizeof(float));
  std::memcpy(t.data.data(), values.data(), t.data.size());
  return t;
}

std::vector<float> tfliteFloatsOf(const std::string& bytes) {
  std::vector<float> v(bytes.size() / sizeof(float));
  if (!v.empty()) std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
  return v;
}

/// One model of a comparison: its job for the oracle, the tolerance its outputs must meet, `stowage run`'s extra flags.
struct TfliteCase {
  std::string name;
  TfliteJob job;
  Tolerance tol;
  std::string stowageFlags;
};

/// Runs every case with the oracle (one batch) and with `stowage run`; expects the outputs to agree within each
/// case's tolerance and prints the differences measured.
void tfliteExpectSameOutputs(const std::vector<TfliteCase>& cases, const fs::path& batchFile) {
  std::vector<TfliteJob> jobs;
  for (const TfliteCase& c : cases) jobs.push_back(c.job);
  const std::vector<ModelRun> oracle = runTfliteOracleBatch(jobs, batchFile);
  ASSERT_EQ(oracle.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    const TfliteCase& c = cases[i];
    SCOPED_TRACE(c.name);
    ASSERT_TRUE(oracle[i].ok()) << oracle[i].error;
    ModelRun ours = runStowageCli(c.job.model, c.job.inputs, c.job.work, c.stowageFlags);
    ASSERT_TRUE(ours.ok()) << ours.error;
    EXPECT_EQ(diffOutputs(ours.outputs, oracle[i].outputs, c.tol), "") << c.job.model;
    for (size_t o = 0; o < ours.outputs.size() && o < oracle[i].outputs.size(); ++o) {
      std::printf("  %s output %zu (%s): %s\n", c.name.c_str(), o, oracle[i].outputs[o].name.c_str(),
                  diffTensors(ours.outputs[o], oracle[i].outputs[o], c.tol).summary().c_str());
    }
  }
}

// (a) The float MLPerf Tiny models of ../shared on real inputs where there are some: ResNet-8 on reference image 1
// (the int8 model's input + 128, the pixel values), ToyCar on the reference window 0 (its float-I/O int8 twin's
// input), KWS on the real sample (dequantized as the int8 model's input), VWW on seeded random pixels in [0, 1).
// ResNet-8, VWW and ToyCar: rtol 2e-5, atol 1e-6. Measured (max abs / max rel diff): ResNet-8 1.2e-7 / 8.4e-6
// (softmax probabilities), ToyCar 3.1e-5 / 1.1e-6 (values up to ~30), VWW 9.3e-10 / 8.3e-8.
// KWS (kws_ref_model_float32.tflite) is a hybrid model, int8 weights and float activations: TFLite quantizes each
// layer's input on the fly and accumulates in int32, Stowage computes in float with the dequantized weights on
// purpose (docs/quantized-onnx.md), so its probabilities are compared with atol 3e-5 only (measured: max abs diff
// 1.3e-5; relative 0.88 on the smallest probabilities, ~1e-5 of 1).
// Measured time: 2.5 s (four `stowage run`s of 0.3 s, one oracle batch of ~1 s) on the shared 2-core machine.
TEST(TfliteOracle, MlperfFloatModelsMatchTheInterpreter) {
  TFLITE_SKIP_WITHOUT_ORACLE();
  const fs::path dir = sharedPath("models/mlperf-tiny");
  if (dir.empty()) GTEST_SKIP() << "../shared/models/mlperf-tiny not found; skipping";
  const fs::path work = scratchDir("tflite_oracle_mlperf");
  std::vector<TfliteCase> cases;

  std::vector<float> pixels;
  for (char c : readFileBytes(dir / "reference/pretrainedResnet_quant/input_1.bin"))
    pixels.push_back(static_cast<float>(static_cast<int8_t>(c)) + 128.0f);
  ASSERT_EQ(pixels.size(), 32u * 32u * 3u);
  const Tolerance floatTol{2e-5, 1e-6};
  // The weights as a binary image the harness loads: VWW's 866 KB and ToyCar's 1 MB of floats as C arrays took cc
  // 1.5 s each, 0.3 s as an image.
  const std::string bin = "--weights bin";
  cases.push_back({"resnet8", {dir / "pretrainedResnet.tflite", {tfliteFloatTensor({1, 32, 32, 3}, pixels)}, work / "resnet8"}, floatTol, bin});

  const std::vector<float> window = tfliteFloatsOf(readFileBytes(dir / "reference/model_ToyCar_quant_fullint_micro/input_0.bin"));
  ASSERT_EQ(window.size(), 640u);
  cases.push_back({"toycar", {dir / "model_ToyCar.tflite", {tfliteFloatTensor({1, 640}, window)}, work / "toycar"}, floatTol, bin});

  std::string error;
  std::vector<Tensor> vww = randomModelInputs(dir / "vww_96_float.tflite", 7, &error, 0.0, 1.0);
  ASSERT_EQ(vww.size(), 1u) << error;
  cases.push_back({"vww", {dir / "vww_96_float.tflite", vww, work / "vww"}, floatTol, bin});

  std::vector<float> mfcc;
  for (char c : readFileBytes(dir / "reference/kws_ref_model/input_sample.bin"))
    mfcc.push_back(static_cast<float>(static_cast<int>(static_cast<int8_t>(c)) - 83) * 0.584702909f);
  ASSERT_EQ(mfcc.size(), 490u);
  cases.push_back({"kws-hybrid", {dir / "kws_ref_model_float32.tflite", {tfliteFloatTensor({1, 49, 10, 1}, mfcc)}, work / "kws"},
                   Tolerance{0.0, 3e-5}, bin});

  tfliteExpectSameOutputs(cases, work / "tflite_batch.json");
}

// (b) Random float .tflite files (the campaign's recipes written in float, zoo/RandomTflite.h) on seeded random
// inputs in [-1, 1). Tolerance rtol 2e-5, atol 4e-6. Measured over seeds 1..150 (172 outputs, all within it): max abs
// diff 1.9e-6; max rel diff 2.1e-3, on elements near 0 (abs 6e-8); 48 s, 0.3 s a seed.
TEST(TfliteOracle, RandomFloatTfliteModelsMatchTheInterpreter) {
  TFLITE_SKIP_WITHOUT_ORACLE();
  const fs::path work = scratchDir("tflite_oracle_random");
  std::vector<TfliteCase> cases;
  zoo::RandomModelOptions options;
  // Seeds 1..10 less 5, 7 and 9, whose builtins the others have: between them the seven write PAD, CONV_2D,
  // DEPTHWISE_CONV_2D, MAX_POOL_2D, AVERAGE_POOL_2D, MEAN, RELU, a clip, LOGISTIC, TANH, LEAKY_RELU, HARD_SWISH, ADD,
  // MUL, CONCATENATION, TRANSPOSE, RESHAPE, FULLY_CONNECTED and SOFTMAX, and models with two outputs.
  const uint64_t seeds[] = {1, 2, 3, 4, 6, 8, 10};
  for (uint64_t seed : seeds) {
    zoo::RandomRecipe recipe = zoo::randomRecipe(seed, options);
    ASSERT_FALSE(recipe.quantized);
    recipe.tflite = true;
    Result<std::vector<uint8_t>> bytes = zoo::buildRandomTflite(recipe);
    ASSERT_TRUE(bytes.ok()) << bytes.error().render();
    const fs::path model = work / ("random_" + std::to_string(seed) + ".tflite");
    writeFileBytes(model, std::string(bytes->begin(), bytes->end()));
    std::string error;
    std::vector<Tensor> inputs = randomModelInputs(model, seed, &error);
    ASSERT_FALSE(inputs.empty()) << "seed " << seed << ": " << error;
    cases.push_back({"seed " + std::to_string(seed) + " (" + recipe.describe() + ")",
                     {model, inputs, work / ("seed" + std::to_string(seed))}, Tolerance{2e-5, 4e-6}, ""});
  }
  tfliteExpectSameOutputs(cases, work / "tflite_batch.json");
}

// (c) The oracle is not vacuous: it computes (other inputs give other outputs), a perturbed output is reported as a
// difference, and a broken model or a wrong input is an error with the interpreter's or run.js's message.
TEST(TfliteOracle, DetectsDifferencesAndReportsErrors) {
  TFLITE_SKIP_WITHOUT_ORACLE();
  const fs::path work = scratchDir("tflite_oracle_checks");
  zoo::RandomRecipe recipe = zoo::randomRecipe(3, {});
  recipe.tflite = true;
  Result<std::vector<uint8_t>> bytes = zoo::buildRandomTflite(recipe);
  ASSERT_TRUE(bytes.ok()) << bytes.error().render();
  const fs::path model = work / "random.tflite";
  writeFileBytes(model, std::string(bytes->begin(), bytes->end()));
  writeFileBytes(work / "broken.tflite", "not a model");
  std::string error;
  std::vector<Tensor> a = randomModelInputs(model, 1, &error), b = randomModelInputs(model, 2, &error);
  ASSERT_FALSE(a.empty()) << error;
  Tensor wrongType = a[0];
  wrongType.dtype = DType::Int8;
  wrongType.data.resize(wrongType.byteSize());
  const std::vector<ModelRun> runs = runTfliteOracleBatch({{model, a, work / "a"}, {model, b, work / "b"},
                                                          {work / "broken.tflite", {}, work / "broken"},
                                                          {model, {wrongType}, work / "wrong"}},
                                                         work / "tflite_batch.json");
  ASSERT_EQ(runs.size(), 4u);
  ASSERT_TRUE(runs[0].ok()) << runs[0].error;
  ASSERT_TRUE(runs[1].ok()) << runs[1].error;
  ASSERT_FALSE(runs[0].outputs.empty());
  EXPECT_FALSE(diffTensors(runs[0].outputs[0], runs[1].outputs[0]).same());

  ModelRun ours = runStowageCli(model, a, work / "a");
  ASSERT_TRUE(ours.ok()) << ours.error;
  EXPECT_EQ(diffOutputs(ours.outputs, runs[0].outputs), "");
  Tensor bad = ours.outputs.back();
  ASSERT_EQ(bad.dtype, DType::Float32);
  float& last = reinterpret_cast<float*>(bad.data.data())[bad.numElements() - 1];
  last += 1e-3f + 1e-3f * std::fabs(last);  // outside rtol 1e-4, atol 1e-5 whatever its magnitude
  std::vector<Tensor> perturbed = ours.outputs;
  perturbed.back() = bad;
  const std::string report = diffOutputs(perturbed, runs[0].outputs);
  EXPECT_NE(report.find("1 of "), std::string::npos) << report;

  EXPECT_FALSE(runs[2].ok());
  EXPECT_NE(runs[2].error.find("cannot load the model"), std::string::npos) << runs[2].error;
  EXPECT_FALSE(runs[3].ok());
  EXPECT_NE(runs[3].error.find("dtype int8"), std::string::npos) << runs[3].error;
}

}  // namespace
}  // namespace stowage::e2e
