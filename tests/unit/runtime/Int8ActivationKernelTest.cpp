// Int8 activation kernels (int8_activation.c) and SUB / MAXIMUM / MINIMUM (int8_elementwise.c) against values
// derived here: fixed-point steps worked by hand for single inputs, and float math for whole input ranges
// (exact wherever the float result is not within 0.05 of a rounding tie, else within one step).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "stowage/frontend/TfliteQuant.h"
#include "stowage_kernels.h"

namespace stowage {
namespace {

/// Input scale 0.1: 0.1 * 2^27 = 0.8 * 2^24, so multiplier round(0.8 * 2^31) and left shift 24; radius
/// floor(15 * 2^27 / 2^24) = 120.
stowage_qsigmoid_params sigmoidParams(int32_t zeroPoint) {
  stowage_qsigmoid_params p;
  std::memset(&p, 0, sizeof p);
  p.count = 256;
  p.input_zero_point = zeroPoint;
  p.input_multiplier = 1717986918;
  p.input_left_shift = 24;
  p.input_range_radius = 120;
  return p;
}

std::vector<int8_t> allInt8() {
  std::vector<int8_t> x(256);
  for (int i = 0; i < 256; ++i) x[static_cast<size_t>(i)] = static_cast<int8_t>(i - 128);
  return x;
}

/// Checks y against round(f(x) / outScale) + outZero: exact away from ties, within one step near them.
template <class F>
void expectFloatAgreement(const std::vector<int8_t>& x, const std::vector<int8_t>& y, float inScale, int inZero, float outScale, int outZero,
                          F f, const char* what) {
  for (size_t i = 0; i < x.size(); ++i) {
    const double real = f(static_cast<double>(inScale) * (x[i] - inZero)) / static_cast<double>(outScale);
    const double frac = real - std::floor(real);
    const double want = std::clamp(std::round(real) + outZero, -128.0, 127.0);
    if (std::abs(frac - 0.5) > 0.05)
      EXPECT_EQ(y[i], want) << what << " x=" << int{x[i]} << " real steps " << real;
    else
      EXPECT_NEAR(y[i], want, 1.0) << what << " x=" << int{x[i]};
  }
}

TEST(Int8Activations, SigmoidInputScalingMatchesHandDerivation) {
  tflite::SigmoidInputScaling s = tflite::sigmoidInputScalingInt8(0.1f);
  ASSERT_TRUE(s.ok);
  // 0.1f is 0.100000001490116..., so the fraction is a hair above 0.8: round(0.8000000119 * 2^31).
  EXPECT_EQ(s.multiplier, 1717986944);
  EXPECT_EQ(s.leftShift, 24);
  EXPECT_EQ(s.rangeRadius, 120);
  EXPECT_FALSE(tflite::sigmoidInputScalingInt8(0.0f).ok);
}

TEST(Int8Activations, LogisticHandCasesAndFloatAgreement) {
  const stowage_qsigmoid_params p = sigmoidParams(-5);
  const std::vector<int8_t> x = allInt8();
  std::vector<int8_t> y(256);
  stowage_qlogistic_s8(x.data(), y.data(), &p);
  // x - zp = 0: logistic is exactly 1/2 (2^30 in Q0.31) -> 128 steps of 1/256 -> 0 after the -128 offset.
  EXPECT_EQ(y[static_cast<size_t>(-5 + 128)], 0);
  // x - zp = 10 is 1.0 (10 * 2^24 * 0.8 = 2^27 in Q4.27): 256 / (1 + e^-1) = 187.15 -> 187 - 128 = 59.
  EXPECT_EQ(y[static_cast<size_t>(5 + 128)], 59);
  // At and beyond the radius (|x - zp| >= 120) the output saturates.
  EXPECT_EQ(y[static_cast<size_t>(115 + 128)], 127);
  EXPECT_EQ(y[0], -128);  // x = -128: x - zp = -123
  expectFloatAgreement(x, y, 0.1f, -5, 1.0f / 256, -128, [](double v) { return 1.0 / (1.0 + std::exp(-v)); }, "logistic");
}

TEST(Int8Activations, TanhHandCasesAndFloatAgreement) {
  const stowage_qsigmoid_params p = sigmoidParams(3);
  const std::vector<int8_t> x = allInt8();
  std::vector<int8_t> y(256);
  stowage_qtanh_s8(x.data(), y.data(), &p);
  EXPECT_EQ(y[static_cast<size_t>(3 + 128)], 0);     // tanh(0) = 0
  EXPECT_EQ(y[static_cast<size_t>(13 + 128)], 97);   // 128 * tanh(1) = 97.48
  EXPECT_EQ(y[static_cast<size_t>(-7 + 128)], -97);  // odd function
  expectFloatAgreement(x, y, 0.1f, 3, 1.0f / 128, 0, [](double v) { return std::tanh(v); }, "tanh");
}

TEST(Int8Activations, HardSwishHandCaseAndFloatAgreement) {
  // Input and output scale 0.05: hires scale 0.05 / 128; output multiplier 1/128 = 0.5 * 2^-6 -> Q0.15 16384,
  // shift -6; reluish multiplier (0.05 / 128) / (3 / 32768) = 4.2667 = 0.5333 * 2^3 -> Q0.15 17476, shift 3.
  const tflite::HardSwishScaling h = tflite::hardSwishScalingInt8(0.05f, 0.05f);
  EXPECT_EQ(h.outputMultiplier, 16384);
  EXPECT_EQ(h.outputShift, -6);
  EXPECT_EQ(h.reluishMultiplier, 17476);
  EXPECT_EQ(h.reluishShift, 3);
  stowage_qhardswish_params p;
  std::memset(&p, 0, sizeof p);
  p.count = 256;
  p.output_multiplier = h.outputMultiplier;
  p.output_shift = h.outputShift;
  p.reluish_multiplier = h.reluishMultiplier;
  p.reluish_shift = h.reluishShift;
  const std::vector<int8_t> x = allInt8();
  std::vector<int8_t> y(256);
  stowage_qhardswish_s8(x.data(), y.data(), &p);
  // x = 20 (1.0): hires 2560; preshift output round(2560 * 16384 / 2^15) = 1280; reluish: 2560 << 2 = 10240,
  // round(10240 * 17476 / 2^15) = 5461, << 1 = 10922, (10922 + 32768) >> 1 = 21845; 21845 * 1280 / 2^15
  // truncated = 853; 853 / 2^6 rounded = 13 (hard_swish(1) = 2/3 = 13.3 steps).
  EXPECT_EQ(y[20 + 128], 13);
  EXPECT_EQ(y[0 + 128], 0);
  EXPECT_EQ(y[-100 + 128], 0);  // x = -5: below -3 the output is 0
  EXPECT_EQ(y[127 + 128], 127);  // 6.35 * 1 = 6.35 -> 127
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = 0.05 * x[i];
    EXPECT_NEAR(y[i], std::round(v * std::min(6.0, std::max(0.0, v + 3.0)) / 6.0 / 0.05), 1.0) << "x=" << int{x[i]};
  }
}

TEST(Int8Activations, ReluRequantizesThenClamps) {
  // Input scale 0.05 zp -3 -> output scale 0.04 zp -128: multiplier 1.25 = 0.625 * 2^1.
  stowage_qrelu_params p;
  std::memset(&p, 0, sizeof p);
  p.count = 4;
  p.input_zero_point = -3;
  p.output_zero_point = -128;
  p.multiplier = p.alpha_multiplier = 1342177280;
  p.shift = p.alpha_shift = 1;
  p.act_min = -128;
  p.act_max = 127;
  const std::vector<int8_t> x = {17, -10, -3, 127};
  std::vector<int8_t> y(4);
  stowage_qrelu_s8(x.data(), y.data(), &p);
  EXPECT_EQ(y[0], -103);  // v = 20 -> 25 steps
  EXPECT_EQ(y[1], -128);  // v = -7 -> -8.75 -> clamped at the quantized 0
  EXPECT_EQ(y[2], -128);
  EXPECT_EQ(y[3], 35);    // v = 130 -> 162.5 steps, the tie rounded up -> -128 + 163
  // LEAKY_RELU, alpha 0.25 with equal scales: negative side multiplier 0.25 = 0.5 * 2^-1.
  p.input_zero_point = p.output_zero_point = 0;
  p.multiplier = 1 << 30;
  p.shift = 1;
  p.alpha_multiplier = 1 << 30;
  p.alpha_shift = -1;
  const std::vector<int8_t> x2 = {40, -40, -6, -128};
  stowage_qrelu_s8(x2.data(), y.data(), &p);
  EXPECT_EQ(y[0], 40);
  EXPECT_EQ(y[1], -10);
  EXPECT_EQ(y[2], -2);   // -1.5 rounds away from zero
  EXPECT_EQ(y[3], -32);
}

stowage_qbinary_params binaryParams(int32_t n) {
  stowage_qbinary_params p;
  std::memset(&p, 0, sizeof p);
  p.rank = 1;
  p.shape[0] = n;
  p.a_stride[0] = 1;
  p.b_stride[0] = 1;
  p.act_min = -128;
  p.act_max = 127;
  return p;
}

TEST(Int8Elementwise, SubInTfliteSteps) {
  // All scales 0.1, zero points 0: twice_max 0.2, operand multipliers 0.5 (2^30, shift 0), output multiplier
  // 0.2 / (2^20 * 0.1) = 2^-19 (2^30, shift -18).
  stowage_qbinary_params p = binaryParams(4);
  p.left_shift = 20;
  p.a_multiplier = p.b_multiplier = 1 << 30;
  p.output_multiplier = 1 << 30;
  p.output_shift = -18;
  const std::vector<int8_t> a = {50, 20, -100, 100}, b = {20, 50, 100, -100};
  std::vector<int8_t> y(4);
  stowage_qsub_s8(a.data(), b.data(), y.data(), &p);
  // 50 << 20 halved = 26214400, 20 << 20 halved = 10485760; difference 15728640 halved, / 2^18 = 30.
  EXPECT_EQ(y, (std::vector<int8_t>{30, -30, -128, 127}));
  // Broadcast b (stride 0) with an output zero point and a clamp (fused RELU at the zero point).
  p.b_stride[0] = 0;
  p.output_offset = 5;
  p.act_min = 5;
  stowage_qsub_s8(a.data(), b.data(), y.data(), &p);
  EXPECT_EQ(y, (std::vector<int8_t>{35, 5, 5, 85}));
}

TEST(Int8Elementwise, MaximumAndMinimumCompareRawValuesWithBroadcast) {
  stowage_qbinary_params p = binaryParams(4);
  const std::vector<int8_t> a = {-128, 0, 5, 127}, b = {3, -1, 5, -128};
  std::vector<int8_t> y(4);
  stowage_qmaximum_s8(a.data(), b.data(), y.data(), &p);
  EXPECT_EQ(y, (std::vector<int8_t>{3, 0, 5, 127}));
  stowage_qminimum_s8(a.data(), b.data(), y.data(), &p);
  EXPECT_EQ(y, (std::vector<int8_t>{-128, -1, 5, -128}));
  p.b_stride[0] = 0;
  stowage_qmaximum_s8(a.data(), b.data(), y.data(), &p);
  EXPECT_EQ(y, (std::vector<int8_t>{3, 3, 5, 127}));
}

}  // namespace
}  // namespace stowage
