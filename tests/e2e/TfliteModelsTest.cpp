// End-to-end checks on real TFLite models from ../shared/models (skipped with a message when absent):
// `stowage run model.tflite --input input_k.bin --format bin` must reproduce TensorFlow Lite Micro's
// reference outputs byte for byte (MLPerf Tiny ResNet-8, DS-CNN KWS, ToyCar float-I/O and int8-I/O), classify
// the person_detect samples as TFLM does, and reject the Vela-compiled model with a clear custom-op error. The
// float models: ToyCar's anomaly score over the AD file matches TFLM's float score, the hybrid float KWS model
// recognises the real sample, float ResNet-8 and VWW agree with their int8 twins.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include "E2eSupport.h"

namespace stowage::e2e {
namespace {

namespace fs = std::filesystem;

/// `stowage run MODEL FLAGS` on one raw input into `outDir`; returns the raw bytes of output_0.bin (empty and a test
/// failure on error).
std::string runBin(const fs::path& model, const fs::path& input, const fs::path& outDir, const std::string& flags = "") {
  auto r = runCommand(cli() + " run " + shellQuote(model.string()) + flags + " --input " + shellQuote(input.string()) + " --output-dir " +
                      shellQuote(outDir.string()) + " --format bin");
  EXPECT_EQ(r.exitCode, 0) << r.err;
  return readFileBytes(outDir / "output_0.bin");
}

/// runBin in a scratch folder of its own, removed after.
std::string runRaw(const fs::path& model, const fs::path& input, const std::string& scratch) {
  fs::path out = scratchDir(scratch);
  std::string bytes = runBin(model, input, out / "out");
  fs::remove_all(out);
  return bytes;
}

class MlperfTinyModel : public ::testing::TestWithParam<std::string> {};

TEST_P(MlperfTinyModel, MatchesTflmReferenceOutputsByteForByte) {
  fs::path dir = sharedPath("models/mlperf-tiny");
  if (dir.empty()) GTEST_SKIP() << "../shared/models/mlperf-tiny not found; skipping";
  const std::string name = GetParam();
  const fs::path model = dir / (name + ".tflite");
  const fs::path ref = dir / "reference" / name;
  int checked = 0;
  for (const std::string k : {"0", "1", "2", "3", "sample"}) {
    if (!fs::exists(ref / ("input_" + k + ".bin"))) continue;
    const std::string got = runRaw(model, ref / ("input_" + k + ".bin"), "tflite_" + name + "_" + k);
    const std::string want = readFileBytes(ref / ("output_" + k + ".bin"));
    ASSERT_FALSE(want.empty());
    EXPECT_TRUE(got == want) << name << " input_" << k << ": output differs from TFLM's (" << got.size() << " vs " << want.size()
                             << " bytes)";
    ++checked;
  }
  EXPECT_GE(checked, 4);
}

INSTANTIATE_TEST_SUITE_P(TfliteReference, MlperfTinyModel,
                         ::testing::Values("pretrainedResnet_quant", "kws_ref_model", "model_ToyCar_quant_fullint_micro",
                                           "model_ToyCar_quant_fullint_micro_intio"));

// The 196 real sample windows of the AD benchmark file through the int8-I/O ToyCar model: `stowage run --keep`
// builds the host harness once, then the kept harness (args: input files, then output files) runs each window.
TEST(TfliteModels, ToyCarInt8AllSampleWindowsMatchTflm) {
  fs::path dir = sharedPath("models/mlperf-tiny");
  if (dir.empty()) GTEST_SKIP() << "../shared/models/mlperf-tiny not found; skipping";
  const fs::path ref = dir / "reference/model_ToyCar_quant_fullint_micro_intio";
  const std::string ins = readFileBytes(ref / "input_sample_windows.bin"), outs = readFileBytes(ref / "output_sample_windows.bin");
  ASSERT_EQ(ins.size(), 196u * 640u);
  ASSERT_EQ(outs.size(), 196u * 640u);
  fs::path work = scratchDir("tflite_toycar_windows");
  auto r = runCommand(cli() + " run " + shellQuote((dir / "model_ToyCar_quant_fullint_micro_intio.tflite").string()) + " --input " +
                      shellQuote((ref / "input_0.bin").string()) + " --output-dir " + shellQuote((work / "out").string()) +
                      " --format bin --keep " + shellQuote((work / "build").string()));
  ASSERT_EQ(r.exitCode, 0) << r.err;
  int mismatches = 0;
  for (size_t w = 0; w < 196; ++w) {
    {
      std::ofstream in(work / "window.bin", std::ios::binary);
      in.write(ins.data() + w * 640, 640);
    }
    auto h = runCommand(shellQuote((work / "build" / "harness").string()) + " " + shellQuote((work / "window.bin").string()) + " " +
                        shellQuote((work / "window_out.bin").string()));
    ASSERT_EQ(h.exitCode, 0) << h.err;
    if (readFileBytes(work / "window_out.bin") != outs.substr(w * 640, 640)) ++mismatches;
  }
  EXPECT_EQ(mismatches, 0);
  fs::remove_all(work);
}

std::vector<float> asFloats(const std::string& bytes) {
  std::vector<float> v(bytes.size() / sizeof(float));
  if (!v.empty()) std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
  return v;
}

// Float ResNet-8 (no TFLM float reference here): on the inputs where TFLM's int8 model is confident, the
// float model picks the same class. Its input is the pixel value, i.e. the int8 input + 128.
TEST(TfliteModels, FloatResnetAgreesWithInt8ReferenceClass) {
  fs::path dir = sharedPath("models/mlperf-tiny");
  if (dir.empty()) GTEST_SKIP() << "../shared/models/mlperf-tiny not found; skipping";
  const int expected[3] = {6, 6, 3};  // arg-max of reference/pretrainedResnet_quant/output_{1,2,3}.bin
  for (int k = 1; k <= 3; ++k) {
    const std::string q = readFileBytes(dir / "reference/pretrainedResnet_quant" / ("input_" + std::to_string(k) + ".bin"));
    std::vector<float> pixels;
    for (char c : q) pixels.push_back(static_cast<float>(static_cast<int8_t>(c)) + 128.0f);
    fs::path work = scratchDir("tflite_resnet_float_" + std::to_string(k));
    {
      std::ofstream out(work / "input.bin", std::ios::binary);
      out.write(reinterpret_cast<const char*>(pixels.data()), static_cast<std::streamsize>(pixels.size() * sizeof(float)));
    }
    std::vector<float> probs = asFloats(runRaw(dir / "pretrainedResnet.tflite", work / "input.bin", "tflite_resnet_float_run"));
    ASSERT_EQ(probs.size(), 10u);
    EXPECT_EQ(std::max_element(probs.begin(), probs.end()) - probs.begin(), expected[k - 1]) << "input " << k;
    fs::remove_all(work);
  }
}

// Float ToyCar autoencoder: its reconstruction of the real sample window is close to the int8 model's (TFLM
// output) and its reconstruction error is in the same range (per-window MSE about 11).
TEST(TfliteModels, FloatToyCarReconstructsLikeTheInt8Model) {
  fs::path dir = sharedPath("models/mlperf-tiny");
  if (dir.empty()) GTEST_SKIP() << "../shared/models/mlperf-tiny not found; skipping";
  const fs::path ref = dir / "reference/model_ToyCar_quant_fullint_micro";
  std::vector<float> x = asFloats(readFileBytes(ref / "input_sample.bin"));
  std::vector<float> q = asFloats(readFileBytes(ref / "output_sample.bin"));
  std::vector<float> y = asFloats(runRaw(dir / "model_ToyCar.tflite", ref / "input_sample.bin", "tflite_toycar_float"));
  ASSERT_EQ(y.size(), 640u);
  ASSERT_EQ(x.size(), 640u);
  double errFloat = 0, diffToInt8 = 0;
  for (size_t i = 0; i < 640; ++i) {
    errFloat += (x[i] - y[i]) * (x[i] - y[i]) / 640.0;
    diffToInt8 += (q[i] - y[i]) * (q[i] - y[i]) / 640.0;
  }
  EXPECT_GT(errFloat, 5.0);
  EXPECT_LT(errFloat, 20.0);
  EXPECT_LT(diffToInt8, 1.0);
}

void writeFloats(const fs::path& p, const std::vector<float>& v) {
  std::ofstream out(p, std::ios::binary);
  out.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
}

// Float ToyCar over the whole AD sample file: the anomaly score (mean over the 196 windows of the per-window
// MSE between window and reconstruction) must match TFLM's float score, 9.7070866 (reference/README.md).
TEST(TfliteModels, FloatToyCarAnomalyScoreMatchesTflm) {
  fs::path dir = sharedPath("models/mlperf-tiny");
  if (dir.empty()) GTEST_SKIP() << "../shared/models/mlperf-tiny not found; skipping";
  const std::vector<float> frames = asFloats(readFileBytes(dir / "samples/ad01_normal_id_01_00000000_hist_librosa.bin"));
  ASSERT_EQ(frames.size(), 200u * 128u);
  fs::path work = scratchDir("tflite_toycar_float_windows");
  writeFloats(work / "window.bin", std::vector<float>(frames.begin(), frames.begin() + 640));
  auto r = runCommand(cli() + " run " + shellQuote((dir / "model_ToyCar.tflite").string()) + " --input " +
                      shellQuote((work / "window.bin").string()) + " --output-dir " + shellQuote((work / "out").string()) +
                      " --format bin --keep " + shellQuote((work / "build").string()));
  ASSERT_EQ(r.exitCode, 0) << r.err;
  double score = 0;
  for (size_t w = 0; w < 196; ++w) {
    const std::vector<float> x(frames.begin() + static_cast<std::ptrdiff_t>(w * 128), frames.begin() + static_cast<std::ptrdiff_t>(w * 128 + 640));
    writeFloats(work / "window.bin", x);
    auto h = runCommand(shellQuote((work / "build" / "harness").string()) + " " + shellQuote((work / "window.bin").string()) + " " +
                        shellQuote((work / "window_out.bin").string()));
    ASSERT_EQ(h.exitCode, 0) << h.err;
    const std::vector<float> y = asFloats(readFileBytes(work / "window_out.bin"));
    ASSERT_EQ(y.size(), 640u);
    double mse = 0;
    for (size_t i = 0; i < 640; ++i) mse += (static_cast<double>(x[i]) - y[i]) * (static_cast<double>(x[i]) - y[i]);
    score += mse / 640.0 / 196.0;
  }
  EXPECT_NEAR(score, 9.7070866, 1e-5) << "TFLM's float anomaly score for this file";
  fs::remove_all(work);
}

// Float DS-CNN KWS: kws_ref_model_float32.tflite is a hybrid (dynamic-range) model, float activations with
// int8 weights, which the kernels dequantize. On the real sample (the int8 model's input, dequantized) it
// must say class 5 ("On") as TFLM's int8 model does. (On the pseudo-random reference inputs the two model
// files disagree: those inputs are noise, far from the training data, and the files were exported separately.)
TEST(TfliteModels, FloatKwsHybridModelRecognisesTheSample) {
  fs::path dir = sharedPath("models/mlperf-tiny");
  if (dir.empty()) GTEST_SKIP() << "../shared/models/mlperf-tiny not found; skipping";
  const std::string q = readFileBytes(dir / "reference/kws_ref_model/input_sample.bin");
  ASSERT_EQ(q.size(), 490u);
  std::vector<float> x;
  for (char c : q) x.push_back(static_cast<float>(static_cast<int>(static_cast<int8_t>(c)) - 83) * 0.584702909f);
  fs::path work = scratchDir("tflite_kws_float");
  writeFloats(work / "input.bin", x);
  std::vector<float> probs = asFloats(runRaw(dir / "kws_ref_model_float32.tflite", work / "input.bin", "tflite_kws_float_run"));
  ASSERT_EQ(probs.size(), 12u);
  EXPECT_EQ(std::max_element(probs.begin(), probs.end()) - probs.begin(), 5);
  EXPECT_GT(probs[5], 0.99f);
  float sum = 0;
  for (float p : probs) sum += p;
  EXPECT_NEAR(sum, 1.0f, 1e-5f);
  fs::remove_all(work);
}

// The hybrid KWS model keeps the int8 weights of its five CONV_2D layers (its depthwise and fully connected weights
// are float32 in the file). The kernels dequantize them; bit-identity with the float expansion is checked in
// tests/unit/runtime/HybridWeightKernelTest.cpp and tests/unit/frontend/TfliteHybridModelTest.cpp: the weights pool holds at most 1.3x
// the file's 33,592 bytes of constants (the float expansion took 90,416), and compile names the hybrid layers.
TEST(TfliteModels, FloatKwsHybridModelKeepsItsInt8Weights) {
  fs::path dir = sharedPath("models/mlperf-tiny");
  if (dir.empty()) GTEST_SKIP() << "../shared/models/mlperf-tiny not found; skipping";
  fs::path work = scratchDir("tflite_kws_hybrid_weights");
  auto r = runCommand(cli() + " compile " + shellQuote((dir / "kws_ref_model_float32.tflite").string()) + " -o " +
                      shellQuote((work / "c").string()) + " --name kws");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("remark: hybrid: 5 layer(s) with int8 weights and float activations (CONV_2D_0, CONV_2D_2, CONV_2D_4, CONV_2D_6, CONV_2D_8)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("not TFLite's on-the-fly activation quantization"), std::string::npos) << r.out;
  const std::string report = readFileBytes(work / "c" / "report.json");
  const size_t pool = report.find("\"name\": \"weights\"");
  ASSERT_NE(pool, std::string::npos);
  const size_t used = report.find("\"used\": ", pool);
  ASSERT_NE(used, std::string::npos);
  const long bytes = std::stol(report.substr(used + 8, 16));
  EXPECT_GT(bytes, 22606);  // at least one byte per parameter
  EXPECT_LE(bytes, 33592 * 13 / 10) << "constants " << bytes << " B for 33,592 B in the file";
  fs::remove_all(work);
}

// Visual Wake Words (MobileNetV1 at 96x96x3), int8 and float: no reference outputs exist, so the two models
// must agree on the same images (the person_detect samples, grey replicated to RGB): the float probabilities
// within 0.05 of the int8 model's dequantized output (scale 1/256, zero point -128). Input: int8 q = pixel - 128
// (scale 1/255, zero point -128), float pixel / 255.
TEST(TfliteModels, VwwFloatAndInt8ModelsAgree) {
  fs::path dir = sharedPath("models/mlperf-tiny"), tflm = sharedPath("models/tflm");
  if (dir.empty() || tflm.empty()) GTEST_SKIP() << "../shared/models/mlperf-tiny or tflm not found; skipping";
  for (const std::string name : {"person", "no_person"}) {
    const std::string px = readFileBytes(tflm / "samples" / (name + "_96x96x1_int8.bin"));
    ASSERT_EQ(px.size(), 96u * 96u);
    std::string q;
    std::vector<float> f;
    for (char c : px)
      for (int ch = 0; ch < 3; ++ch) {
        const int p = static_cast<unsigned char>(c);
        q.push_back(static_cast<char>(static_cast<int8_t>(p - 128)));
        f.push_back(static_cast<float>(p) / 255.0f);
      }
    fs::path work = scratchDir("tflite_vww_" + name);
    { std::ofstream(work / "q.bin", std::ios::binary) << q; }
    writeFloats(work / "f.bin", f);
    const std::string got8 = runRaw(dir / "vww_96_int8.tflite", work / "q.bin", "tflite_vww_int8_run");
    const std::vector<float> gotF = asFloats(runRaw(dir / "vww_96_float.tflite", work / "f.bin", "tflite_vww_float_run"));
    ASSERT_EQ(got8.size(), 2u);
    ASSERT_EQ(gotF.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
      const float deq = static_cast<float>(static_cast<int8_t>(got8[i]) + 128) / 256.0f;
      EXPECT_NEAR(gotF[i], deq, 0.05f) << name << " class " << i;
    }
    fs::remove_all(work);
  }
}

// VWW with fused bands (tile/FusedBands.h), chosen by the compiler because the workspace pool has 32 KiB (issue 25's
// target) and the layer-by-layer plan needs 37,248 bytes: fits, at most 15% more MACs, and the same output bytes as
// the layer-by-layer build (no overlaps, no fusion) on the person sample. An unlimited pool fuses nothing. ~4 s.
TEST(TfliteModels, VwwFusedBandsFitTheTargetWithTheLayerByLayerOutput) {
  fs::path dir = sharedPath("models/mlperf-tiny"), tflm = sharedPath("models/tflm");
  if (dir.empty() || tflm.empty()) GTEST_SKIP() << "../shared/models/mlperf-tiny or tflm not found; skipping";
  const fs::path model = dir / "vww_96_int8.tflite";
  const fs::path work = scratchDir("tflite_vww_fused");
  const std::string pool = " --pool 'name=workspace;size=32KiB'";
  auto c = runCommand(cli() + " compile " + shellQuote(model.string()) + pool + " -o " + shellQuote((work / "gen").string()));
  ASSERT_EQ(c.exitCode, 0) << c.err;
  const json report = json::parse(readFileBytes(work / "gen" / "report.json"));
  EXPECT_LE(report["pools"][0]["used"].get<size_t>(), 32768u);
  EXPECT_GE(report["fused_bands"]["chains"].get<int>(), 1);
  int64_t macs = 0;
  for (const json& l : report["layers"]) macs += l["macs"].get<int64_t>();
  const int64_t extra = report["fused_bands"]["extra_macs"].get<int64_t>();
  EXPECT_LE(extra * 100, (macs - extra) * 15) << "extra MACs " << extra << " of " << macs - extra;
  const std::string px = readFileBytes(tflm / "samples/person_96x96x1_int8.bin");
  ASSERT_EQ(px.size(), 96u * 96u);
  std::string q;
  for (char ch : px) q.append(3, static_cast<char>(static_cast<int8_t>(static_cast<unsigned char>(ch) - 128)));
  { std::ofstream(work / "q.bin", std::ios::binary) << q; }
  auto run = [&](const std::string& flags, const std::string& out) { return runBin(model, work / "q.bin", work / out, flags); };
  const std::string fused = run(pool, "fused");
  ASSERT_EQ(fused.size(), 2u);
  EXPECT_EQ(fused, run(" --no-fuse-layers --no-overlap", "whole"));
  fs::remove_all(work);
}

// MobileNetV2 224 (TFLM's int8 model, NCHW input) in issue 25's 172 KiB: the compiler fuses its layers into bands
// (the input's TRANSPOSE included, halos cached rather than recomputed) because the workspace pool has that size; the
// layer-by-layer plan needs 1,209,600 bytes. At most 25% more MACs, and the same output bytes as the layer-by-layer
// build (guard mode on the fused build takes 20 s more here: FusedBands.CachedHalosGiveTheSameBytesWithoutExtraMacs
// runs it on a small chain). ~6 s: two host builds of the 224x224 model.
TEST(TfliteModels, MobileNetV2FusedBandsFit172KiBWithTheLayerByLayerOutput) {
  fs::path tflm = sharedPath("models/tflm");
  if (tflm.empty()) GTEST_SKIP() << "../shared/models/tflm not found; skipping";
  const fs::path model = tflm / "mobilenet_v2_quantized_1x3x224x224.tflite";
  if (!fs::exists(model)) GTEST_SKIP() << model << " not found; skipping";
  const fs::path work = scratchDir("tflite_mobilenet_v2_fused");
  const std::string pool = " --pool 'name=workspace;size=172KiB'";
  auto c = runCommand(cli() + " compile " + shellQuote(model.string()) + pool + " -o " + shellQuote((work / "gen").string()));
  ASSERT_EQ(c.exitCode, 0) << c.err;
  const json report = json::parse(readFileBytes(work / "gen" / "report.json"));
  EXPECT_LE(report["pools"][0]["used"].get<size_t>(), 176128u);
  EXPECT_GE(report["fused_bands"]["chains"].get<int>(), 2);
  int64_t macs = 0;
  for (const json& l : report["layers"]) macs += l["macs"].get<int64_t>();
  const int64_t extra = report["fused_bands"]["extra_macs"].get<int64_t>();
  EXPECT_LE(extra * 100, (macs - extra) * 25) << "extra MACs " << extra << " of " << macs - extra;
  std::string image(3 * 224 * 224, '\0');
  for (size_t i = 0; i < image.size(); ++i) image[i] = static_cast<char>((i * 7919 + (i / 672) * 31) % 251);
  { std::ofstream(work / "x.bin", std::ios::binary) << image; }
  auto run = [&](const std::string& flags, const std::string& out) { return runBin(model, work / "x.bin", work / out, flags); };
  // Constants as binary images (--weights bin): the C arrays of 3.4 MB of weights take cc 7 s per build.
  const std::string fused = run(pool + " --weights bin", "fused");
  ASSERT_EQ(fused.size(), 1000u);
  EXPECT_EQ(fused, run(" --no-fuse-layers --weights bin", "whole"));
  fs::remove_all(work);
}

TEST(TfliteModels, PersonDetectScoresPersonSampleAsPerson) {
  fs::path dir = sharedPath("models/tflm");
  if (dir.empty()) GTEST_SKIP() << "../shared/models/tflm not found; skipping";
  // Output is [no_person, person], int8; the upstream test expects person > no_person on person.bmp and the
  // reverse on no_person.bmp.
  const std::string person = runRaw(dir / "person_detect.tflite", dir / "samples/person_96x96x1_int8.bin", "tflite_person");
  const std::string noPerson = runRaw(dir / "person_detect.tflite", dir / "samples/no_person_96x96x1_int8.bin", "tflite_no_person");
  ASSERT_EQ(person.size(), 2u);
  ASSERT_EQ(noPerson.size(), 2u);
  EXPECT_GT(static_cast<int8_t>(person[1]), static_cast<int8_t>(person[0]));
  EXPECT_GT(static_cast<int8_t>(noPerson[0]), static_cast<int8_t>(noPerson[1]));
}

TEST(TfliteModels, VelaModelFailsWithCustomOpError) {
  fs::path dir = sharedPath("models/tflm");
  if (dir.empty()) GTEST_SKIP() << "../shared/models/tflm not found; skipping";
  fs::path out = scratchDir("tflite_vela");
  auto r = runCommand(cli() + " compile " + shellQuote((dir / "person_detect_vela.tflite").string()) + " -o " +
                      shellQuote((out / "c").string()));
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("custom op"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ethos-u"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out / "c"));
}

TEST(TfliteModels, InfoListsOpsOfResnet) {
  fs::path dir = sharedPath("models/mlperf-tiny");
  if (dir.empty()) GTEST_SKIP() << "../shared/models/mlperf-tiny not found; skipping";
  auto r = runCommand(cli() + " info " + shellQuote((dir / "pretrainedResnet_quant.tflite").string()));
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("CONV_2D"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("QConv2d"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1x32x32x3"), std::string::npos) << r.out;
}

TEST(TfliteModels, KernelStackOfEachLayerIsReported) {
  fs::path dir = sharedPath("models/mlperf-tiny");
  if (dir.empty()) GTEST_SKIP() << "../shared/models/mlperf-tiny not found; skipping";
  const fs::path out = scratchDir("tflite_kws_kernel_stack");
  auto r = runCommand(cli() + " compile " + shellQuote((dir / "kws_ref_model.tflite").string()) + " -o " + shellQuote(out.string()));
  ASSERT_EQ(r.exitCode, 0) << r.err;
  // DS-CNN's first convolution (10x4 filter over one input channel) goes through the im2col buffer (1536 bytes with a
  // widened filter pair), its four pointwise layers keep folded biases, outputs and widened inputs (2048 bytes each),
  // its fully connected layer a widened input row (2048); the depthwise layers (pixel after pixel) the widened filters,
  // requantizations and one gathered window of a group of 64 channels (STOWAGE_DW_PIXEL_BYTES, 3008).
  EXPECT_NE(r.out.find("kernel stack: 3008 bytes at most, on the stack beside the pools (kernel buffers of CONV_2D_0, "
                       "DEPTHWISE_CONV_2D_1, CONV_2D_2, DEPTHWISE_CONV_2D_3, CONV_2D_4, DEPTHWISE_CONV_2D_5, CONV_2D_6, "
                       "DEPTHWISE_CONV_2D_7, CONV_2D_8, FULLY_CONNECTED_11)"),
            std::string::npos)
      << r.out;
  const std::string report = readFileBytes(out / "report.json");
  auto count = [&](const std::string& needle) {
    size_t n = 0;
    for (size_t at = report.find(needle); at != std::string::npos; at = report.find(needle, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("\"kernel_stack_bytes\": 1536"), 1u) << "CONV_2D_0";
  EXPECT_EQ(count("\"kernel_stack_bytes\": 2048"), 5u) << "the four pointwise layers and the fully connected one";
  EXPECT_EQ(count("\"kernel_stack_bytes\": 3008"), 5u) << "the four depthwise layers and the model's total";
}

TEST(TfliteModels, RawInputOfWrongSizeIsAClearError) {
  fs::path dir = sharedPath("models/mlperf-tiny");
  if (dir.empty()) GTEST_SKIP() << "../shared/models/mlperf-tiny not found; skipping";
  fs::path work = scratchDir("tflite_bad_input");
  { std::ofstream(work / "short.bin", std::ios::binary) << "abc"; }
  auto r = runCommand(cli() + " run " + shellQuote((dir / "kws_ref_model.tflite").string()) + " --input " +
                      shellQuote((work / "short.bin").string()) + " --output-dir " + shellQuote((work / "out").string()) +
                      " --format bin");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("490 bytes"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(work / "out"));
}

}  // namespace
}  // namespace stowage::e2e
