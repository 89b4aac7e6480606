// Checks the softmax / batchnorm / LRN and pooling C kernels against double-precision references, including
// ceil-mode edge windows with and without count_include_pad.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "KernelTestUtil.h"
#include "stowage_kernels.h"

namespace {

using stowage::kerneltest::allClose;
using stowage::kerneltest::randomVec;

// ---------------------------------------------------------------- softmax

std::vector<double> softmaxRef(const std::vector<float>& x, int64_t outer, int64_t len, int64_t inner, bool log) {
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      auto at = [&](int64_t i) { return size_t((o * len + i) * inner + j); };
      double mx = -INFINITY, sum = 0;
      for (int64_t i = 0; i < len; ++i) mx = std::max(mx, double(x[at(i)]));
      for (int64_t i = 0; i < len; ++i) sum += std::exp(x[at(i)] - mx);
      for (int64_t i = 0; i < len; ++i)
        y[at(i)] = log ? (x[at(i)] - mx) - std::log(sum) : std::exp(x[at(i)] - mx) / sum;
    }
  return y;
}

TEST(SoftmaxKernel, ShapesWithInnerDims) {
  struct S {
    int64_t outer, len, inner;
    float scale;
  };
  const S shapes[] = {{3, 5, 4, 3.0f}, {1, 1000, 1, 10.0f}, {2, 1, 3, 1.0f}, {1, 7, 1, 100.0f}, {4, 6, 9, 50.0f}};
  for (const S s : shapes)
    for (int log = 0; log < 2; ++log) {
      const auto x = randomVec(size_t(s.outer * s.len * s.inner), 81, -s.scale, s.scale);
      std::vector<float> y(x.size(), -999.0f);
      stowage_softmax_f32(x.data(), y.data(), s.outer, s.len, s.inner, log);
      EXPECT_TRUE(allClose(y, softmaxRef(x, s.outer, s.len, s.inner, log), 1e-5, 1e-7))
          << "outer " << s.outer << " len " << s.len << " inner " << s.inner << " log " << log;
      // In place gives the same result.
      std::vector<float> z = x;
      stowage_softmax_f32(z.data(), z.data(), s.outer, s.len, s.inner, log);
      EXPECT_TRUE(allClose(z, softmaxRef(x, s.outer, s.len, s.inner, log), 1e-5, 1e-7)) << "in place";
    }
}

// ---------------------------------------------------------------- batchnorm, LRN

TEST(BatchnormKernel, MatchesFormula) {
  const int64_t n = 2, c = 3, sp = 7;
  const auto x = randomVec(size_t(n * c * sp), 91, -3, 3);
  const auto scale = randomVec(size_t(c), 92);
  const auto bias = randomVec(size_t(c), 93);
  const auto mean = randomVec(size_t(c), 94);
  const auto var = randomVec(size_t(c), 95, 0.1f, 2.0f);
  const float eps = 1e-3f;
  std::vector<float> y(x.size(), -999.0f);
  stowage_batchnorm_f32(x.data(), scale.data(), bias.data(), mean.data(), var.data(), y.data(), n, c, sp, eps);
  std::vector<double> want(x.size());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t i = 0; i < sp; ++i) {
        const size_t k = size_t((b * c + ch) * sp + i);
        want[k] = scale[size_t(ch)] * (x[k] - mean[size_t(ch)]) / std::sqrt(double(var[size_t(ch)]) + eps) +
                  bias[size_t(ch)];
      }
  EXPECT_TRUE(allClose(y, want, 1e-5, 1e-6));
}

TEST(LrnKernel, OddAndEvenSizes) {
  const int64_t n = 2, c = 7, sp = 5;
  const auto x = randomVec(size_t(n * c * sp), 101, -2, 2);
  for (int size : {1, 3, 4, 5, 9}) {
    const float alpha = 0.3f, beta = 0.75f, bias = 1.5f;
    std::vector<float> y(x.size(), -999.0f);
    stowage_lrn_f32(x.data(), y.data(), n, c, sp, size, alpha, beta, bias);
    std::vector<double> want(x.size());
    for (int64_t b = 0; b < n; ++b)
      for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t i = 0; i < sp; ++i) {
          double sq = 0;
          const int64_t lo = std::max<int64_t>(0, ch - (size - 1) / 2);
          const int64_t hi = std::min<int64_t>(c - 1, ch + (size - 1 + 1) / 2);  // ceil((size-1)/2)
          for (int64_t k = lo; k <= hi; ++k) {
            const double v = x[size_t((b * c + k) * sp + i)];
            sq += v * v;
          }
          const size_t at = size_t((b * c + ch) * sp + i);
          want[at] = x[at] / std::pow(bias + alpha / size * sq, beta);
        }
    EXPECT_TRUE(allClose(y, want, 1e-5, 1e-6)) << "size " << size;
  }
}

// ---------------------------------------------------------------- pooling

struct PoolCase {
  int n, c, h, w, kh, kw, sh, sw, pt, pl, pb, pr, dh, dw;
  bool ceil_mode;
};

stowage_pool2d_params poolParams(const PoolCase& k) {
  auto outDim = [&](int in, int pad, int kern, int dil, int stride) {
    const int span = in + pad - ((kern - 1) * dil + 1);
    return (k.ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  };
  stowage_pool2d_params p{};
  p.n = k.n;
  p.c = k.c;
  p.h = k.h;
  p.w = k.w;
  p.oh = outDim(k.h, k.pt + k.pb, k.kh, k.dh, k.sh);
  p.ow = outDim(k.w, k.pl + k.pr, k.kw, k.dw, k.sw);
  p.kh = k.kh;
  p.kw = k.kw;
  p.stride_h = k.sh;
  p.stride_w = k.sw;
  p.pad_top = k.pt;
  p.pad_left = k.pl;
  p.pad_bottom = k.pb;
  p.pad_right = k.pr;
  p.dil_h = k.dh;
  p.dil_w = k.dw;
  return p;
}

// kind 0: max, 1: average excluding pads, 2: average including pads (clipped at the padded extent).
std::vector<double> poolRef(const std::vector<float>& x, const stowage_pool2d_params& p, int kind) {
  std::vector<double> y(size_t(p.n) * p.c * p.oh * p.ow);
  for (int pl = 0; pl < p.n * p.c; ++pl)
    for (int oy = 0; oy < p.oh; ++oy)
      for (int ox = 0; ox < p.ow; ++ox) {
        double mx = -INFINITY, sum = 0;
        int inside = 0, padded = 0;
        for (int ky = 0; ky < p.kh; ++ky)
          for (int kx = 0; kx < p.kw; ++kx) {
            const int iy = oy * p.stride_h - p.pad_top + ky * p.dil_h;
            const int ix = ox * p.stride_w - p.pad_left + kx * p.dil_w;
            if (iy >= -p.pad_top && iy < p.h + p.pad_bottom && ix >= -p.pad_left && ix < p.w + p.pad_right) ++padded;
            if (iy < 0 || iy >= p.h || ix < 0 || ix >= p.w) continue;
            const double v = x[(size_t(pl) * p.h + iy) * p.w + ix];
            mx = std::max(mx, v);
            sum += v;
            ++inside;
          }
        y[(size_t(pl) * p.oh + oy) * p.ow + ox] = kind == 0 ? mx : sum / (kind == 1 ? inside : padded);
      }
  return y;
}

class PoolTest : public ::testing::TestWithParam<PoolCase> {};

TEST_P(PoolTest, MaxAndAverageMatchReference) {
  const PoolCase k = GetParam();
  stowage_pool2d_params p = poolParams(k);
  const auto x = randomVec(size_t(k.n) * k.c * k.h * k.w, 111, -3, 3);
  std::vector<float> y(size_t(p.n) * p.c * p.oh * p.ow, -999.0f);
  stowage_maxpool2d_f32(x.data(), y.data(), &p);
  EXPECT_TRUE(allClose(y, poolRef(x, p, 0), 0, 0)) << "max";
  for (int include = 0; include < 2; ++include) {
    p.count_include_pad = include;
    std::fill(y.begin(), y.end(), -999.0f);
    stowage_avgpool2d_f32(x.data(), y.data(), &p);
    EXPECT_TRUE(allClose(y, poolRef(x, p, include ? 2 : 1), 1e-5, 1e-6)) << "avg include_pad " << include;
  }
}

// n, c, h, w, kh, kw, sh, sw, pt, pl, pb, pr, dh, dw, ceil_mode
INSTANTIATE_TEST_SUITE_P(
    Cases, PoolTest,
    ::testing::Values(PoolCase{1, 2, 8, 8, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, false},   // plain 2x2/2
                      PoolCase{2, 3, 7, 9, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, false},   // pads 1
                      PoolCase{1, 2, 8, 8, 3, 3, 2, 2, 0, 0, 0, 0, 1, 1, true},    // ceil mode, no pads
                      PoolCase{1, 2, 8, 13, 3, 2, 2, 3, 1, 0, 1, 1, 1, 1, true},   // ceil mode past trailing pad
                      PoolCase{1, 1, 9, 10, 3, 3, 1, 2, 2, 1, 0, 2, 2, 2, false},  // dilation, asym pads
                      PoolCase{1, 2, 1, 14, 1, 4, 1, 3, 0, 2, 0, 2, 1, 1, true})); // 1-D, ceil

TEST(PoolKernel, HandComputedCeilModeAverages) {
  // 1-D x = 1..6, kernel 3, stride 2, right pad 1, ceil mode: windows [1,2,3], [3,4,5], [5,6,pad].
  const std::vector<float> x{1, 2, 3, 4, 5, 6};
  stowage_pool2d_params p{};
  p.n = p.c = p.h = 1;
  p.w = 6;
  p.oh = 1;
  p.ow = 3;
  p.kh = 1;
  p.kw = 3;
  p.stride_h = 1;
  p.stride_w = 2;
  p.pad_right = 1;
  p.dil_h = p.dil_w = 1;
  std::vector<float> y(3);
  stowage_avgpool2d_f32(x.data(), y.data(), &p);
  EXPECT_TRUE(allClose(y, {2.0, 4.0, 5.5}, 1e-6, 0));
  p.count_include_pad = 1;
  stowage_avgpool2d_f32(x.data(), y.data(), &p);
  EXPECT_TRUE(allClose(y, {2.0, 4.0, 11.0 / 3.0}, 1e-6, 0));
  // Without the right pad but with a ceil-mode window running past the input, the window is clipped.
  p.pad_right = 0;
  p.ow = 3;
  stowage_avgpool2d_f32(x.data(), y.data(), &p);
  EXPECT_TRUE(allClose(y, {2.0, 4.0, 5.5}, 1e-6, 0));
  stowage_maxpool2d_f32(x.data(), y.data(), &p);
  EXPECT_TRUE(allClose(y, {3.0, 5.0, 6.0}, 0, 0));
}

TEST(PoolKernel, GlobalPools) {
  const int64_t ch = 5, sp = 37;
  const auto x = randomVec(size_t(ch * sp), 121, -4, 4);
  std::vector<float> y(static_cast<size_t>(ch));
  std::vector<double> avg(static_cast<size_t>(ch)), mx(static_cast<size_t>(ch), -INFINITY);
  for (int64_t c = 0; c < ch; ++c) {
    double s = 0;
    for (int64_t i = 0; i < sp; ++i) {
      s += x[size_t(c * sp + i)];
      mx[size_t(c)] = std::max(mx[size_t(c)], double(x[size_t(c * sp + i)]));
    }
    avg[size_t(c)] = s / sp;
  }
  stowage_global_avgpool_f32(x.data(), y.data(), ch, sp);
  EXPECT_TRUE(allClose(y, avg, 1e-5, 1e-6));
  stowage_global_maxpool_f32(x.data(), y.data(), ch, sp);
  EXPECT_TRUE(allClose(y, mx, 0, 0));
}

}  // namespace
