// TFLite activation and elementwise ops end to end: tiny .tflite models written here (TfliteGraphBuilder.h) with
// LOGISTIC, TANH, HARD_SWISH, RELU, RELU6, RELU_N1_TO_1, LEAKY_RELU, SUB, MAXIMUM, MINIMUM, STRIDED_SLICE and
// SQUEEZE, int8 and float32, compiled and run with `stowage run`; outputs compared with float math done here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
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

struct Cli {
  int status = 0;
  std::string output;
};

Cli runCli(const std::string& args) {
  Cli r;
  const std::string cmd = std::string(STOWAGE_CLI) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {-1, "popen failed"};
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

fs::path scratch(const std::string& name) {
  fs::path d = fs::path(STOWAGE_BINARY_DIR) / "test-scratch" / ("tflite_activation_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void writeFile(const fs::path& p, const std::vector<uint8_t>& bytes) {
  std::ofstream f(p, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

std::vector<uint8_t> readFile(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

constexpr int32_t kLogistic = 14, kRelu = 19, kReluN1To1 = 20, kRelu6 = 21, kTanh = 28, kSub = 41, kSqueeze = 43,
                  kStridedSlice = 45, kMaximum = 55, kMinimum = 57, kLeakyRelu = 98, kHardSwish = 117;

/// One int8 quantization.
struct Q {
  float scale;
  int zp;
  float real(int q) const { return scale * static_cast<float>(q - zp); }
  int quant(double v) const { return std::clamp(static_cast<int>(std::lround(v / scale)) + zp, -128, 127); }
};

TensorSpec i8(const std::string& name, std::vector<int32_t> shape, Q q, std::vector<int8_t> data = {}) {
  return TensorSpec{name, std::move(shape), 9, {q.scale}, {q.zp}, bytesOf(data)};
}
TensorSpec f32(const std::string& name, std::vector<int32_t> shape, std::vector<float> data = {}) {
  return TensorSpec{name, std::move(shape), 0, {}, {}, bytesOf(data)};
}
TensorSpec i32(const std::string& name, std::vector<int32_t> data) {
  return TensorSpec{name, {static_cast<int32_t>(data.size())}, 2, {}, {}, bytesOf(data)};
}

double hardSwish(double x) { return x * std::min(6.0, std::max(0.0, x + 3.0)) / 6.0; }

/// The op list shared by the int8 and float models; tensor indices: 0 x, 1 c (constant [4] for SUB),
/// 2 k (constant [4] shared by MAXIMUM / MINIMUM), 3..4 begin/end/strides of STRIDED_SLICE (3, 4, 5), outputs 6...
OpSpec mk(int32_t code, std::vector<int32_t> ins, std::vector<int32_t> outs, uint8_t tag = 0) {
  OpSpec o;
  o.code = code;
  o.inputs = std::move(ins);
  o.outputs = std::move(outs);
  o.optionsTag = tag;
  return o;
}

std::vector<OpSpec> opList() {
  OpSpec sub = mk(kSub, {0, 1}, {12}, 28);
  sub.byteFields = {{0, 1}};  // fused RELU
  OpSpec leaky = mk(kLeakyRelu, {0}, {11}, 75);
  leaky.floatFields = {{0, 0.2f}};
  OpSpec slice = mk(kStridedSlice, {0, 3, 4, 5}, {15}, 32);
  slice.intFields = {{1, 0b1000}, {4, 0b0010}};  // end_mask on dim 3, shrink_axis_mask on dim 1
  return {mk(kLogistic, {0}, {6}),    mk(kTanh, {0}, {7}),      mk(kHardSwish, {0}, {8}), mk(kRelu, {0}, {9}),
          mk(kRelu6, {0}, {10}),      leaky,                    sub,                      mk(kMaximum, {0, 2}, {13}),
          mk(kMinimum, {0, 2}, {14}), slice,                    mk(kSqueeze, {0}, {16}, 30), mk(kReluN1To1, {0}, {17})};
}

const std::vector<int32_t> kShape = {1, 2, 2, 4};
const std::vector<int32_t> kBegin = {0, 1, 0, 1}, kEnd = {1, 2, 2, 0}, kStrides = {1, 1, 1, 2};

/// Indices of x[0, 1, h, 1::2] (the STRIDED_SLICE above), in output order [1, 2, 2].
std::vector<size_t> sliceIndices() {
  std::vector<size_t> idx;
  for (size_t h = 0; h < 2; ++h)
    for (size_t c = 1; c < 4; c += 2) idx.push_back(1 * 8 + h * 4 + c);
  return idx;
}

TEST(TfliteActivationOps, Int8ModelRunsEveryOpLikeFloatMath) {
  const Q qx{0.05f, -3}, qc{0.1f, 2}, qLogistic{1.0f / 256, -128}, qTanh{1.0f / 128, 0}, qSwish{0.03f, -40}, qRelu{0.04f, -128},
      qLeaky{0.05f, 10}, qSub{0.08f, 0}, qN1{0.01f, 0};
  const std::vector<int8_t> c = {10, -20, 0, 40}, k = {-3, 17, -60, 90};
  std::vector<TensorSpec> t = {i8("x", kShape, qx),
                               i8("c", {4}, qc, c),
                               i8("k", {4}, qx, k),
                               i32("begin", kBegin),
                               i32("end", kEnd),
                               i32("strides", kStrides),
                               i8("logistic", kShape, qLogistic),
                               i8("tanh", kShape, qTanh),
                               i8("hard_swish", kShape, qSwish),
                               i8("relu", kShape, qRelu),
                               i8("relu6", kShape, qx),
                               i8("leaky_relu", kShape, qLeaky),
                               i8("sub", kShape, qSub),
                               i8("maximum", kShape, qx),
                               i8("minimum", kShape, qx),
                               i8("strided_slice", {1, 2, 2}, qx),
                               i8("squeeze", {2, 2, 4}, qx),
                               i8("relu_n1_to_1", kShape, qN1)};
  std::vector<int32_t> outs;
  for (int32_t i = 6; i < 18; ++i) outs.push_back(i);
  const fs::path dir = scratch("int8");
  writeFile(dir / "model.tflite", tflitetest::buildTfliteModel(t, opList(), {0}, outs));
  std::vector<int8_t> x(16);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int8_t>(-128 + static_cast<int>(i) * 17);  // -128 .. 127
  writeFile(dir / "x.bin", bytesOf(x));

  const Cli info = runCli("info " + (dir / "model.tflite").string());
  ASSERT_EQ(info.status, 0) << info.output;
  for (const char* name : {"LOGISTIC", "TANH", "HARD_SWISH", "RELU", "RELU6", "LEAKY_RELU", "SUB", "MAXIMUM", "MINIMUM", "STRIDED_SLICE",
                           "SQUEEZE", "RELU_N1_TO_1"})
    EXPECT_NE(info.output.find(name), std::string::npos) << name << "\n" << info.output;
  EXPECT_EQ(info.output.find("unsupported"), std::string::npos) << info.output;

  const Cli run = runCli("run " + (dir / "model.tflite").string() + " --input " + (dir / "x.bin").string() + " --format bin --output-dir " +
                         (dir / "out").string());
  ASSERT_EQ(run.status, 0) << run.output;
  auto output = [&](int i) {
    std::vector<uint8_t> b = readFile(dir / "out" / ("output_" + std::to_string(i) + ".bin"));
    return std::vector<int8_t>(b.begin(), b.end());
  };
  // Transcendental ops: within one quantization step of the float function (exactness is in the kernel tests).
  auto expectNear = [&](int out, Q q, auto f, int tolerance, const char* what) {
    const std::vector<int8_t> y = output(out);
    ASSERT_EQ(y.size(), x.size()) << what;
    for (size_t i = 0; i < x.size(); ++i)
      EXPECT_NEAR(y[i], q.quant(f(static_cast<double>(qx.real(x[i])), i)), tolerance) << what << " at " << i << " x=" << int{x[i]};
  };
  expectNear(0, qLogistic, [](double v, size_t) { return 1.0 / (1.0 + std::exp(-v)); }, 1, "LOGISTIC");
  expectNear(1, qTanh, [](double v, size_t) { return std::tanh(v); }, 1, "TANH");
  expectNear(2, qSwish, [](double v, size_t) { return hardSwish(v); }, 1, "HARD_SWISH");
  expectNear(3, qRelu, [](double v, size_t) { return std::max(v, 0.0); }, 1, "RELU");
  expectNear(4, qx, [](double v, size_t) { return std::clamp(v, 0.0, 6.0); }, 0, "RELU6");
  expectNear(5, qLeaky, [](double v, size_t) { return v >= 0 ? v : 0.2 * v; }, 1, "LEAKY_RELU");
  expectNear(6, qSub, [&](double v, size_t i) { return std::max(0.0, v - static_cast<double>(qc.real(c[i % 4]))); }, 1, "SUB");
  expectNear(11, qN1, [](double v, size_t) { return std::clamp(v, -1.0, 1.0); }, 1, "RELU_N1_TO_1");
  // Exact ops: raw values.
  const std::vector<int8_t> mx = output(7), mn = output(8), sl = output(9), sq = output(10);
  ASSERT_EQ(mx.size(), x.size());
  ASSERT_EQ(mn.size(), x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(mx[i], std::max(x[i], k[i % 4])) << i;
    EXPECT_EQ(mn[i], std::min(x[i], k[i % 4])) << i;
  }
  const std::vector<size_t> idx = sliceIndices();
  ASSERT_EQ(sl.size(), idx.size());
  for (size_t i = 0; i < idx.size(); ++i) EXPECT_EQ(sl[i], x[idx[i]]) << i;
  EXPECT_EQ(sq, x);
}

TEST(TfliteActivationOps, Float32ModelRunsEveryOpLikeFloatMath) {
  const std::vector<float> c = {0.5f, -1.0f, 0.0f, 2.0f}, k = {-0.15f, 0.85f, -3.0f, 4.5f};
  std::vector<TensorSpec> t = {f32("x", kShape),          f32("c", {4}, c),          f32("k", {4}, k),        i32("begin", kBegin),
                               i32("end", kEnd),          i32("strides", kStrides),  f32("logistic", kShape), f32("tanh", kShape),
                               f32("hard_swish", kShape), f32("relu", kShape),       f32("relu6", kShape),    f32("leaky_relu", kShape),
                               f32("sub", kShape),        f32("maximum", kShape),    f32("minimum", kShape),  f32("strided_slice", {1, 2, 2}),
                               f32("squeeze", {2, 2, 4}), f32("relu_n1_to_1", kShape)};
  std::vector<int32_t> outs;
  for (int32_t i = 6; i < 18; ++i) outs.push_back(i);
  const fs::path dir = scratch("float");
  writeFile(dir / "model.tflite", tflitetest::buildTfliteModel(t, opList(), {0}, outs));
  std::vector<float> x(16);
  for (size_t i = 0; i < x.size(); ++i) x[i] = -7.0f + 0.9f * static_cast<float>(i);
  writeFile(dir / "x.bin", bytesOf(x));
  const Cli run = runCli("run " + (dir / "model.tflite").string() + " --input " + (dir / "x.bin").string() + " --format bin --output-dir " +
                         (dir / "out").string());
  ASSERT_EQ(run.status, 0) << run.output;
  auto output = [&](int i) {
    std::vector<uint8_t> b = readFile(dir / "out" / ("output_" + std::to_string(i) + ".bin"));
    std::vector<float> v(b.size() / sizeof(float));
    std::memcpy(v.data(), b.data(), v.size() * sizeof(float));
    return v;
  };
  auto expectNear = [&](int out, auto f, const char* what) {
    const std::vector<float> y = output(out);
    ASSERT_EQ(y.size(), x.size()) << what;
    for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(y[i], f(static_cast<double>(x[i]), i), 1e-5) << what << " at " << i;
  };
  expectNear(0, [](double v, size_t) { return 1.0 / (1.0 + std::exp(-v)); }, "LOGISTIC");
  expectNear(1, [](double v, size_t) { return std::tanh(v); }, "TANH");
  expectNear(2, [](double v, size_t) { return hardSwish(v); }, "HARD_SWISH");
  expectNear(3, [](double v, size_t) { return std::max(v, 0.0); }, "RELU");
  expectNear(4, [](double v, size_t) { return std::clamp(v, 0.0, 6.0); }, "RELU6");
  expectNear(5, [](double v, size_t) { return v >= 0 ? v : 0.2 * v; }, "LEAKY_RELU");
  expectNear(6, [&](double v, size_t i) { return std::max(0.0, v - static_cast<double>(c[i % 4])); }, "SUB");
  expectNear(7, [&](double v, size_t i) { return std::max(v, static_cast<double>(k[i % 4])); }, "MAXIMUM");
  expectNear(8, [&](double v, size_t i) { return std::min(v, static_cast<double>(k[i % 4])); }, "MINIMUM");
  expectNear(11, [](double v, size_t) { return std::clamp(v, -1.0, 1.0); }, "RELU_N1_TO_1");
  const std::vector<float> sl = output(9), sq = output(10);
  const std::vector<size_t> idx = sliceIndices();
  ASSERT_EQ(sl.size(), idx.size());
  for (size_t i = 0; i < idx.size(); ++i) EXPECT_EQ(sl[i], x[idx[i]]) << i;
  EXPECT_EQ(sq, x);
}

TEST(TfliteActivationOps, Uint8LogisticIsAClearErrorNamingOpAndTensor) {
  std::vector<TensorSpec> t = {TensorSpec{"x_u8", {1, 4}, 3, {0.05f}, {128}, {}},
                               TensorSpec{"y_u8", {1, 4}, 3, {1.0f / 256}, {0}, {}}};
  const fs::path dir = scratch("uint8");
  writeFile(dir / "model.tflite", tflitetest::buildTfliteModel(t, {mk(kLogistic, {0}, {1})}, {0}, {1}));
  const Cli r = runCli("compile " + (dir / "model.tflite").string() + " -o " + (dir / "out").string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("LOGISTIC"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("x_u8"), std::string::npos) << r.output;
}

TEST(TfliteActivationOps, Int8LogisticWithWrongOutputScaleIsNamed) {
  std::vector<TensorSpec> t = {i8("x", {1, 4}, Q{0.05f, 0}), i8("y_bad", {1, 4}, Q{0.01f, -128})};
  const fs::path dir = scratch("badscale");
  writeFile(dir / "model.tflite", tflitetest::buildTfliteModel(t, {mk(kLogistic, {0}, {1})}, {0}, {1}));
  const Cli r = runCli("compile " + (dir / "model.tflite").string() + " -o " + (dir / "out").string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("y_bad"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("1/256"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace stowage
