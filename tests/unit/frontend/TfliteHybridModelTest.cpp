// TFLite dynamic-range ("hybrid") layers: a tiny model written here (TfliteGraphBuilder.h) with float32
// activations and int8 weights in CONV_2D (per-channel scales), DEPTHWISE_CONV_2D (one per-tensor scale, depth
// multiplier 2) and FULLY_CONNECTED (per-channel), and its twin with those weights expanded to float32 the way
// the importer used to (scale * (float)q). The hybrid model keeps its weights int8 (the _w8 kernels dequantize
// them), compile names the three layers, and `stowage run` gives the twin's outputs bit for bit.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <sys/wait.h>

#include "TfliteGraphBuilder.h"

namespace stowage {
namespace {

using tflitetest::bytesOf;
using tflitetest::OpSpec;
using tflitetest::TensorSpec;
namespace fs = std::filesystem;

std::pair<int, std::string> hybridCli(const std::string& args) {
  std::string out;
  FILE* p = popen((std::string(STOWAGE_CLI) + " " + args + " 2>&1").c_str(), "r");
  if (!p) return {-1, "popen failed"};
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int st = pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

void hybridWrite(const fs::path& p, const std::vector<uint8_t>& bytes) {
  std::ofstream f(p, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

std::string hybridRead(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

/// An int8 weight tensor with its scales, or (float32 = true) the same weights expanded as the importer did.
TensorSpec hybridWeights(const std::string& name, std::vector<int32_t> shape, const std::vector<int8_t>& q,
                         const std::vector<float>& scales, size_t inner, bool float32) {
  if (!float32) return TensorSpec{name, std::move(shape), 9, scales, std::vector<int64_t>(scales.size(), 0), bytesOf(q)};
  std::vector<float> f(q.size());
  for (size_t i = 0; i < q.size(); ++i)
    f[i] = scales[scales.size() > 1 ? (i / inner) % scales.size() : 0] * static_cast<float>(static_cast<int64_t>(q[i]) - 0);
  return TensorSpec{name, std::move(shape), 0, {}, {}, bytesOf(f)};
}

std::vector<uint8_t> hybridModel(bool float32) {
  std::mt19937 rng(2028);
  std::uniform_int_distribution<int> qd(-127, 127);
  std::uniform_real_distribution<float> fd(-0.5f, 0.5f), sd(0.002f, 0.03f);
  auto ints = [&](size_t n) {
    std::vector<int8_t> v(n);
    for (auto& x : v) x = static_cast<int8_t>(qd(rng));
    return v;
  };
  auto floats = [&](size_t n, auto& dist) {
    std::vector<float> v(n);
    for (auto& x : v) x = dist(rng);
    return v;
  };
  const std::vector<int8_t> wc = ints(4 * 3 * 3 * 3), wd = ints(3 * 3 * 8), wf = ints(6 * 200);
  const std::vector<float> sc = floats(4, sd), sdw = floats(1, sd), sf = floats(6, sd);
  const std::vector<float> bc = floats(4, fd), bd = floats(8, fd), bf = floats(6, fd);
  auto f32 = [](const std::string& name, std::vector<int32_t> shape, std::vector<float> data = {}) {
    return TensorSpec{name, std::move(shape), 0, {}, {}, bytesOf(data)};
  };
  std::vector<TensorSpec> t = {f32("x", {1, 5, 5, 3}),
                               hybridWeights("conv_w", {4, 3, 3, 3}, wc, sc, 27, float32),
                               f32("conv_b", {4}, bc),
                               f32("conv_y", {1, 5, 5, 4}),
                               hybridWeights("dw_w", {1, 3, 3, 8}, wd, sdw, 1, float32),
                               f32("dw_b", {8}, bd),
                               f32("dw_y", {1, 5, 5, 8}),
                               hybridWeights("fc_w", {6, 200}, wf, sf, 200, float32),
                               f32("fc_b", {6}, bf),
                               f32("fc_y", {1, 6})};
  OpSpec conv;
  conv.code = 3, conv.inputs = {0, 1, 2}, conv.outputs = {3}, conv.optionsTag = 1;
  conv.byteFields = {{0, 0}, {3, 1}};  // SAME, RELU
  conv.intFields = {{1, 1}, {2, 1}, {4, 1}, {5, 1}};
  OpSpec dw;
  dw.code = 4, dw.inputs = {3, 4, 5}, dw.outputs = {6}, dw.optionsTag = 2;
  dw.byteFields = {{0, 0}, {4, 3}};  // SAME, RELU6
  dw.intFields = {{1, 1}, {2, 1}, {3, 2}, {5, 1}, {6, 1}};
  OpSpec fc;
  fc.code = 9, fc.inputs = {6, 7, 8}, fc.outputs = {9}, fc.optionsTag = 8;
  fc.byteFields = {{0, 0}, {1, 0}};
  return tflitetest::buildTfliteModel(t, {conv, dw, fc}, {0}, {9});
}

TEST(TfliteHybridModel, KeepsInt8WeightsAndMatchesTheFloatExpansionBitForBit) {
  const fs::path dir = fs::path(STOWAGE_BINARY_DIR) / "test-scratch" / "tflite_hybrid_model";
  fs::remove_all(dir);
  fs::create_directories(dir);
  hybridWrite(dir / "hybrid.tflite", hybridModel(false));
  hybridWrite(dir / "float.tflite", hybridModel(true));
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> xd(-2.0f, 2.0f);
  std::vector<float> x(75);
  for (auto& v : x) v = xd(rng);
  hybridWrite(dir / "x.bin", bytesOf(x));

  const auto compiled = hybridCli("compile " + (dir / "hybrid.tflite").string() + " -o " + (dir / "c").string() + " --name h");
  ASSERT_EQ(compiled.first, 0) << compiled.second;
  EXPECT_NE(compiled.second.find("remark: hybrid: 3 layer(s) with int8 weights and float activations (CONV_2D_0, DEPTHWISE_CONV_2D_1, "
                                 "FULLY_CONNECTED_2) computed with their weights dequantized inside the kernel"),
            std::string::npos)
      << compiled.second;
  const std::string c = hybridRead(dir / "c" / "h.c");
  for (const char* fn : {"stowage_conv2d_nhwc_w8_f32(", "stowage_depthwise_conv2d_nhwc_w8_f32(", "stowage_gemm_w8_f32("})
    EXPECT_NE(c.find(fn), std::string::npos) << fn;
  const std::string weights = hybridRead(dir / "c" / "h_weights.c");
  EXPECT_NE(weights.find("int8_t"), std::string::npos);

  std::string outputs[2];
  for (int k = 0; k < 2; ++k) {
    const std::string model = (dir / (k == 0 ? "hybrid.tflite" : "float.tflite")).string();
    const fs::path out = dir / (k == 0 ? "out_hybrid" : "out_float");
    const auto run = hybridCli("run " + model + " --input " + (dir / "x.bin").string() + " --format bin --output-dir " + out.string());
    ASSERT_EQ(run.first, 0) << run.second;
    outputs[k] = hybridRead(out / "output_0.bin");
  }
  ASSERT_EQ(outputs[0].size(), 6 * sizeof(float));
  EXPECT_TRUE(outputs[0] == outputs[1]) << "the hybrid model's output differs from its float expansion's";
  fs::remove_all(dir);
}

}  // namespace
}  // namespace stowage
