// The int8 kernels' hand-written Arm paths (SMLAD loops over widened inputs or filters, the narrow requantization's
// SMMULR, Helium's vector loops) against the portable C kernels, on shapes no shared model has: four seeded random int8
// chains (3x3 convolutions with odd channel counts, depthwise, pointwise layers whose input channels leave a tail of
// 1-3 and exceed the widened buffer, stride 2, a residual ADD, a fully connected layer over 12 to 1,386 inputs) built
// in-process, run once by the host build and once
// on the emulated Cortex-M4 (DSP extension) and Cortex-M55 (Helium): the outputs must be byte-identical.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "../unit/frontend/TfliteGraphBuilder.h"
#include "E2eSupport.h"
#include "stowage/firmware/Toolchain.h"

namespace stowage::e2e {
namespace {

namespace fs = std::filesystem;
using tflitetest::bytesOf;
using tflitetest::OpSpec;
using tflitetest::TensorSpec;

constexpr int32_t kAdd = 0, kConv2d = 3, kDepthwise = 4, kFullyConnected = 9;

/// A random int8 chain: x -> conv 3x3 (stride 1) -> depthwise 3x3 -> pointwise -> conv 3x3 stride 2 -> pointwise (y)
/// -> fully connected (z), plus the pointwise layer's output added to the depthwise output when their channels agree
/// (a residual ADD).
struct Chain {
  std::vector<uint8_t> model;
  std::string input;  ///< raw int8 bytes of x
  int fcInputs = 0;   ///< the fully connected layer's row length
};

Chain randomChain(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto values = [&](size_t n, int lo, int hi) {
    std::vector<int8_t> v(n);
    for (auto& e : v) e = static_cast<int8_t>(pick(lo, hi));
    return v;
  };
  const int h = pick(5, 13), w = pick(3, 11), c0 = pick(1, 9);
  // Channel counts around the kernels' limits: tails of 1-3 past a multiple of 4, more than the 128 input channels a
  // pointwise layer widens at once, and (seed 3) a 3x3 window of 44 to 128 channels, whose filters the DSP path widens
  // one row at a time.
  const int c1 = seed % 3 == 0 ? pick(129, 140) : pick(5, 40);
  const int c2 = seed % 2 == 0 ? c1 : (seed == 3 ? 4 * pick(11, 32) : pick(3, 37)), c3 = pick(4, 30);
  std::vector<TensorSpec> t;
  auto act = [&](const std::string& name, std::vector<int32_t> shape) {
    t.push_back(TensorSpec{name, std::move(shape), 9, {0.02f + 0.01f * static_cast<float>(pick(0, 4))}, {pick(-20, 20)}, {}});
    return static_cast<int32_t>(t.size() - 1);
  };
  // Filters [m, kh, kw, c] per output channel (depthwise [1, kh, kw, m] with one scale), bias int32 at in x w scale.
  auto filters = [&](const std::string& name, int m, int kh, int kw, int c, bool depthwise, float inScale) {
    const size_t n = static_cast<size_t>(m * kh * kw * c);
    std::vector<float> scales;
    const int count = depthwise ? 1 : m;
    for (int i = 0; i < count; ++i) scales.push_back(0.004f + 0.001f * static_cast<float>(pick(0, 8)));
    std::vector<int32_t> shape = depthwise ? std::vector<int32_t>{1, kh, kw, m} : std::vector<int32_t>{m, kh, kw, c};
    t.push_back(TensorSpec{name + "_w", shape, 9, scales, std::vector<int64_t>(scales.size(), 0), bytesOf(values(n, -127, 127))});
    std::vector<float> biasScales;
    for (float s : scales) biasScales.push_back(s * inScale);
    std::vector<int32_t> bias(static_cast<size_t>(m));
    for (auto& b : bias) b = pick(-3000, 3000);
    t.push_back(TensorSpec{name + "_b", {m}, 2, biasScales, std::vector<int64_t>(biasScales.size(), 0), bytesOf(bias)});
    return static_cast<int32_t>(t.size() - 2);
  };
  std::vector<OpSpec> ops;
  auto conv = [&](int32_t code, int32_t in, int32_t wIndex, int32_t out, int stride) {
    OpSpec o;
    o.code = code;
    o.inputs = {in, wIndex, wIndex + 1};
    o.outputs = {out};
    o.optionsTag = code == kConv2d ? 1 : 2;
    o.byteFields = {{0, 0}};  // padding SAME
    o.intFields = {{1, stride}, {2, stride}};
    if (code == kDepthwise) o.intFields.push_back({3, 1});
    ops.push_back(o);
  };
  const int32_t x = act("x", {1, h, w, c0});
  const float sx = t[static_cast<size_t>(x)].scales[0];
  const int32_t w1 = filters("conv1", c1, 3, 3, c0, false, sx);
  const int32_t a = act("a", {1, h, w, c1});
  conv(kConv2d, x, w1, a, 1);
  const int32_t w2 = filters("dw", c1, 3, 3, 1, true, t[static_cast<size_t>(a)].scales[0]);
  const int32_t b = act("b", {1, h, w, c1});
  conv(kDepthwise, a, w2, b, 1);
  const int32_t w3 = filters("pw1", c2, 1, 1, c1, false, t[static_cast<size_t>(b)].scales[0]);
  int32_t p = act("p", {1, h, w, c2});
  conv(kConv2d, b, w3, p, 1);
  if (c2 == c1) {  // residual: p + b
    const int32_t r = act("r", {1, h, w, c2});
    OpSpec add;
    add.code = kAdd;
    add.inputs = {p, b};
    add.outputs = {r};
    ops.push_back(add);
    p = r;
  }
  const int32_t w4 = filters("conv2", c3, 3, 3, c2, false, t[static_cast<size_t>(p)].scales[0]);
  const int32_t d = act("d", {1, (h + 1) / 2, (w + 1) / 2, c3});
  conv(kConv2d, p, w4, d, 2);
  const int32_t w5 = filters("pw2", c3 + 3, 1, 1, c3, false, t[static_cast<size_t>(d)].scales[0]);
  const int32_t y = act("y", {1, (h + 1) / 2, (w + 1) / 2, c3 + 3});
  conv(kConv2d, d, w5, y, 1);
  // A fully connected layer over y's every element (a second output): rows of 12 to 1,386 inputs, so that some leave a
  // tail of 1-3 and some exceed the 1,024 the DSP path widens at once; per channel on even seeds.
  const int k = ((h + 1) / 2) * ((w + 1) / 2) * (c3 + 3), m = pick(3, 9);
  std::vector<float> fcScales(seed % 2 == 0 ? static_cast<size_t>(m) : 1u);
  for (float& sc : fcScales) sc = 0.002f + 0.001f * static_cast<float>(pick(0, 4));
  t.push_back(TensorSpec{"fc_w", {m, k}, 9, fcScales, std::vector<int64_t>(fcScales.size(), 0),
                         bytesOf(values(static_cast<size_t>(m * k), -127, 127))});
  const int32_t wfc = static_cast<int32_t>(t.size() - 1);
  std::vector<float> fcBiasScales;
  for (float sc : fcScales) fcBiasScales.push_back(sc * t[static_cast<size_t>(y)].scales[0]);
  std::vector<int32_t> fcBias(static_cast<size_t>(m));
  for (auto& bv : fcBias) bv = pick(-3000, 3000);
  t.push_back(TensorSpec{"fc_b", {m}, 2, fcBiasScales, std::vector<int64_t>(fcBiasScales.size(), 0), bytesOf(fcBias)});
  const int32_t z = act("z", {1, m});
  OpSpec fc;
  fc.code = kFullyConnected, fc.inputs = {y, wfc, wfc + 1}, fc.outputs = {z}, fc.optionsTag = 8;
  fc.byteFields = {{0, 0}, {1, 0}};
  ops.push_back(fc);
  Chain ch;
  ch.model = tflitetest::buildTfliteModel(t, ops, {x}, {y, z});
  ch.fcInputs = k;
  const std::vector<int8_t> in = values(static_cast<size_t>(h * w * c0), -128, 127);
  ch.input.assign(reinterpret_cast<const char*>(in.data()), in.size());
  return ch;
}

bool onPath(const std::string& program) { return findProgram(program, {}).ok(); }

/// `stowage run` of the chain on the host or on `machine`: both outputs' bytes (the test fails on a failed run).
std::string runChain(const fs::path& dir, const std::string& machine) {
  const fs::path out = dir / ("out_" + (machine.empty() ? std::string("host") : machine));
  const CommandResult r = runCommand(cli() + " run " + shellQuote((dir / "chain.tflite").string()) + " --input " +
                                     shellQuote((dir / "x.bin").string()) + " --output-dir " + shellQuote(out.string()) +
                                     " --format bin" + (machine.empty() ? "" : " --emulate " + machine));
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  return readFileBytes(out / "output_0.bin") + "|" + readFileBytes(out / "output_1.bin");
}

TEST(DspKernelsOnEmulator, RandomInt8ChainsGiveTheHostsBytes) {
  for (const char* program : {"arm-none-eabi-gcc", "qemu-system-arm"})
    if (!onPath(program)) GTEST_SKIP() << program << " not found on PATH (Debian packages gcc-arm-none-eabi, qemu-system-arm); skipping";
  bool longRow = false, tail = false;
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    const Chain ch = randomChain(seed);
    SCOPED_TRACE("seed " + std::to_string(seed) + ", fully connected over " + std::to_string(ch.fcInputs) + " inputs");
    longRow = longRow || ch.fcInputs > 1024;
    tail = tail || ch.fcInputs % 4 != 0;
    const fs::path dir = scratchDir("dsp_kernels_" + std::to_string(seed));
    writeFileBytes(dir / "chain.tflite", std::string(ch.model.begin(), ch.model.end()));
    writeFileBytes(dir / "x.bin", ch.input);
    const std::string host = runChain(dir, "");
    ASSERT_FALSE(host.empty());
    // The M4 (DSP extension) on every seed, the M55 (Helium) on every other one.
    EXPECT_EQ(runChain(dir, "mps2-an386"), host) << "Cortex-M4 output differs from the host's";
    if (seed % 2 == 1) {
      EXPECT_EQ(runChain(dir, "mps3-an547"), host) << "Cortex-M55 output differs from the host's";
    }
    if (!HasFailure()) fs::remove_all(dir);
  }
  // The seeds cover a row the DSP path widens in chunks and one with a tail past a multiple of 4.
  EXPECT_TRUE(longRow);
  EXPECT_TRUE(tail);
}

}  // namespace
}  // namespace stowage::e2e
