// Checks the binary (broadcast, aliasing) and unary C kernels against double-precision references.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "KernelTestUtil.h"
#include "stowage_kernels.h"

namespace {

using stowage::kerneltest::allClose;
using stowage::kerneltest::randomVec;

double binaryRef(stowage_binary_op op, double a, double b) {
  switch (op) {
    case STOWAGE_BINARY_ADD: return a + b;
    case STOWAGE_BINARY_SUB: return a - b;
    case STOWAGE_BINARY_MUL: return a * b;
    case STOWAGE_BINARY_DIV: return a / b;
    case STOWAGE_BINARY_POW: return std::pow(a, b);
    case STOWAGE_BINARY_MAX: return std::max(a, b);
    case STOWAGE_BINARY_MIN: return std::min(a, b);
    case STOWAGE_BINARY_PRELU: return a >= 0 ? a : a * b;
  }
  return 0;
}

// Dense strides of a shape; broadcast dims (size 1 in the input but not the output) get stride 0.
void setStrides(const std::vector<int>& out, const std::vector<int>& in, int64_t* strides) {
  const size_t r = out.size(), off = r - in.size();
  int64_t s = 1;
  for (size_t d = r; d-- > 0;) {
    const int dim = d >= off ? in[d - off] : 1;
    strides[d] = (dim == 1 && out[d] != 1) ? 0 : s;
    s *= dim;
  }
}

size_t elementCount(const std::vector<int>& s) {
  size_t n = 1;
  for (int d : s) n *= size_t(d);
  return n;
}

struct BroadcastCase {
  std::vector<int> out, a, b;
};

const stowage_binary_op kAllBinary[] = {STOWAGE_BINARY_ADD, STOWAGE_BINARY_SUB, STOWAGE_BINARY_MUL,
                                        STOWAGE_BINARY_DIV, STOWAGE_BINARY_POW, STOWAGE_BINARY_MAX,
                                        STOWAGE_BINARY_MIN, STOWAGE_BINARY_PRELU};

TEST(BinaryKernel, BroadcastShapesAllOps) {
  const BroadcastCase cases[] = {
      {{2, 3, 4, 5}, {2, 3, 4, 5}, {2, 3, 4, 5}},  // dense
      {{2, 3, 4, 5}, {2, 3, 4, 5}, {3, 1, 5}},     // middle broadcast
      {{2, 3, 4, 5}, {2, 3, 4, 5}, {3, 1, 1}},     // per-channel bias
      {{2, 3, 4, 5}, {1}, {2, 3, 4, 5}},           // scalar a
      {{2, 3, 4, 5}, {2, 3, 4, 5}, {}},            // scalar b (rank 0 operand)
      {{3, 4}, {3, 1}, {1, 4}},                    // outer product
      {{4, 1, 6}, {4, 1, 1}, {6}},                 // unit output dim
      {{3, 4}, {3, 1}, {3, 4}},                    // b merges into one run, a does not
      {{2, 3, 4}, {2, 3, 4}, {2, 1, 4}},           // a merges, b does not
      {{}, {}, {}},                                // rank 0
  };
  for (const auto& bc : cases)
    for (stowage_binary_op op : kAllBinary) {
      stowage_broadcast_params p{};
      p.rank = int32_t(bc.out.size());
      for (size_t d = 0; d < bc.out.size(); ++d) p.shape[d] = bc.out[d];
      setStrides(bc.out, bc.a, p.a_stride);
      setStrides(bc.out, bc.b, p.b_stride);
      // Pow needs a positive base for real results.
      const bool pow = op == STOWAGE_BINARY_POW;
      const auto a = randomVec(elementCount(bc.a), 61, pow ? 0.1f : -2.0f, 2.0f);
      auto b = randomVec(elementCount(bc.b), 62, -2.0f, 2.0f);
      if (op == STOWAGE_BINARY_DIV)
        for (auto& v : b) v = v < 0 ? v - 0.5f : v + 0.5f;  // keep away from zero
      std::vector<float> y(elementCount(bc.out), -999.0f);
      stowage_binary_f32(op, a.data(), b.data(), y.data(), &p);
      std::vector<double> want(y.size());
      // Independent index walk: decompose the flat output index.
      for (size_t i = 0; i < want.size(); ++i) {
        size_t rem = i;
        int64_t ao = 0, bo = 0;
        for (size_t d = bc.out.size(); d-- > 0;) {
          const size_t idx = rem % size_t(bc.out[d]);
          rem /= size_t(bc.out[d]);
          ao += int64_t(idx) * p.a_stride[d];
          bo += int64_t(idx) * p.b_stride[d];
        }
        want[i] = binaryRef(op, a[size_t(ao)], b[size_t(bo)]);
      }
      EXPECT_TRUE(allClose(y, want, 1e-5, 1e-6)) << "op " << int(op) << " out rank " << bc.out.size();
    }
}

TEST(BinaryKernel, OutputMayAliasNonBroadcastInput) {
  const std::vector<int> out{3, 4, 5};
  stowage_broadcast_params p{};
  p.rank = 3;
  for (int d = 0; d < 3; ++d) p.shape[d] = out[d];
  setStrides(out, out, p.a_stride);
  setStrides(out, {4, 1}, p.b_stride);
  auto a = randomVec(60, 71);
  const auto b = randomVec(4, 72);
  std::vector<double> want(60);
  for (size_t i = 0; i < 60; ++i) want[i] = double(a[i]) * b[(i / 5) % 4];
  stowage_binary_f32(STOWAGE_BINARY_MUL, a.data(), b.data(), a.data(), &p);  // y == a
  EXPECT_TRUE(allClose(a, want, 1e-6, 1e-7));

  // y == b with a broadcast (scalar a).
  auto b2 = randomVec(60, 73);
  const float s = 0.5f;
  setStrides(out, {}, p.a_stride);
  setStrides(out, out, p.b_stride);
  for (size_t i = 0; i < 60; ++i) want[i] = double(s) - b2[i];
  stowage_binary_f32(STOWAGE_BINARY_SUB, &s, b2.data(), b2.data(), &p);
  EXPECT_TRUE(allClose(b2, want, 1e-6, 1e-7));
}

TEST(BinaryKernel, MaxMinPropagateNan) {
  stowage_broadcast_params p{};
  p.rank = 1;
  p.shape[0] = 3;
  p.a_stride[0] = 1;
  p.b_stride[0] = 1;
  const float a[3] = {NAN, 1.0f, 2.0f};
  const float b[3] = {0.0f, NAN, 3.0f};
  std::vector<float> y(3);
  stowage_binary_f32(STOWAGE_BINARY_MAX, a, b, y.data(), &p);
  EXPECT_TRUE(allClose(y, {NAN, NAN, 3.0}));
  stowage_binary_f32(STOWAGE_BINARY_MIN, a, b, y.data(), &p);
  EXPECT_TRUE(allClose(y, {NAN, NAN, 2.0}));
}

// ---------------------------------------------------------------- unary

struct UnaryCase {
  stowage_unary_op op;
  const char* name;
  float alpha, beta;
  float lo, hi;  // input range
  std::function<double(double, double, double)> ref;
};

TEST(UnaryKernel, EachOpOverARange) {
  const UnaryCase cases[] = {
      {STOWAGE_UNARY_RELU, "relu", 0, 0, -5, 5, [](double x, double, double) { return x > 0 ? x : 0.0; }},
      {STOWAGE_UNARY_LEAKY_RELU, "leaky", 0.1f, 0, -5, 5, [](double x, double a, double) { return x < 0 ? a * x : x; }},
      {STOWAGE_UNARY_CLIP, "clip", -1.5f, 2.0f, -5, 5,
       [](double x, double a, double b) { return std::min(std::max(x, a), b); }},
      {STOWAGE_UNARY_SIGMOID, "sigmoid", 0, 0, -30, 30, [](double x, double, double) { return 1 / (1 + std::exp(-x)); }},
      {STOWAGE_UNARY_TANH, "tanh", 0, 0, -6, 6, [](double x, double, double) { return std::tanh(x); }},
      {STOWAGE_UNARY_ABS, "abs", 0, 0, -5, 5, [](double x, double, double) { return std::fabs(x); }},
      {STOWAGE_UNARY_NEG, "neg", 0, 0, -5, 5, [](double x, double, double) { return -x; }},
      {STOWAGE_UNARY_EXP, "exp", 0, 0, -10, 10, [](double x, double, double) { return std::exp(x); }},
      {STOWAGE_UNARY_LOG, "log", 0, 0, 0.001f, 100, [](double x, double, double) { return std::log(x); }},
      {STOWAGE_UNARY_SQRT, "sqrt", 0, 0, 0, 100, [](double x, double, double) { return std::sqrt(x); }},
      {STOWAGE_UNARY_RECIPROCAL, "reciprocal", 0, 0, 0.1f, 10, [](double x, double, double) { return 1 / x; }},
      {STOWAGE_UNARY_FLOOR, "floor", 0, 0, -5, 5, [](double x, double, double) { return std::floor(x); }},
      {STOWAGE_UNARY_CEIL, "ceil", 0, 0, -5, 5, [](double x, double, double) { return std::ceil(x); }},
      {STOWAGE_UNARY_ELU, "elu", 0.7f, 0, -5, 5,
       [](double x, double a, double) { return x < 0 ? a * (std::exp(x) - 1) : x; }},
      {STOWAGE_UNARY_SELU, "selu", 1.67326f, 1.0507f, -5, 5,
       [](double x, double a, double g) { return g * (x > 0 ? x : a * (std::exp(x) - 1)); }},
      {STOWAGE_UNARY_HARD_SIGMOID, "hard_sigmoid", 0.2f, 0.5f, -5, 5,
       [](double x, double a, double b) { return std::max(0.0, std::min(1.0, a * x + b)); }},
      {STOWAGE_UNARY_HARD_SWISH, "hard_swish", 0, 0, -5, 5,
       [](double x, double, double) { return x * std::max(0.0, std::min(1.0, x / 6 + 0.5)); }},
      {STOWAGE_UNARY_SOFTPLUS, "softplus", 0, 0, -20, 20, [](double x, double, double) { return std::log(std::exp(x) + 1); }},
      {STOWAGE_UNARY_SOFTSIGN, "softsign", 0, 0, -5, 5, [](double x, double, double) { return x / (1 + std::fabs(x)); }},
      {STOWAGE_UNARY_SIGN, "sign", 0, 0, -5, 5, [](double x, double, double) { return double((x > 0) - (x < 0)); }},
      {STOWAGE_UNARY_ERF, "erf", 0, 0, -4, 4, [](double x, double, double) { return std::erf(x); }},
      {STOWAGE_UNARY_SIN, "sin", 0, 0, -7, 7, [](double x, double, double) { return std::sin(x); }},
      {STOWAGE_UNARY_COS, "cos", 0, 0, -7, 7, [](double x, double, double) { return std::cos(x); }},
  };
  for (const auto& uc : cases) {
    // Evenly spaced points over the range (includes both ends), plus 0 where the range covers it.
    const int n = 101;
    std::vector<float> x(n);
    for (int i = 0; i < n; ++i) x[size_t(i)] = uc.lo + (uc.hi - uc.lo) * float(i) / float(n - 1);
    if (uc.lo < 0 && uc.hi > 0) x.push_back(0.0f);
    std::vector<double> want(x.size());
    for (size_t i = 0; i < x.size(); ++i) want[i] = uc.ref(x[i], uc.alpha, uc.beta);
    std::vector<float> y(x.size(), -999.0f);
    stowage_unary_f32(uc.op, x.data(), y.data(), int64_t(x.size()), uc.alpha, uc.beta);
    EXPECT_TRUE(allClose(y, want, 1e-5, 1e-6)) << uc.name;
    // In place.
    std::vector<float> inplace = x;
    stowage_unary_f32(uc.op, inplace.data(), inplace.data(), int64_t(x.size()), uc.alpha, uc.beta);
    EXPECT_TRUE(allClose(inplace, want, 1e-5, 1e-6)) << uc.name << " in place";
  }
}

TEST(UnaryKernel, SoftplusAndSigmoidDoNotOverflow) {
  const std::vector<float> x{-100.0f, 100.0f, 200.0f};
  std::vector<float> y(3);
  stowage_unary_f32(STOWAGE_UNARY_SOFTPLUS, x.data(), y.data(), 3, 0, 0);
  EXPECT_TRUE(allClose(y, {std::log1p(std::exp(-100.0)), 100.0, 200.0}, 1e-6, 1e-30));
  stowage_unary_f32(STOWAGE_UNARY_SIGMOID, x.data(), y.data(), 3, 0, 0);
  EXPECT_TRUE(allClose(y, {1 / (1 + std::exp(100.0)), 1.0, 1.0}, 1e-5, 1e-30));
}

}  // namespace
