// Checks the conv2d / conv_transpose2d / gemm / matmul C kernels against naive double-precision references on
// small random tensors (groups, dilation, asymmetric pads, strides, transposes, broadcasts).
#include <gtest/gtest.h>

#include "KernelTestUtil.h"
#include "stowage_kernels.h"

namespace {

using stowage::kerneltest::allClose;
using stowage::kerneltest::randomVec;

struct ConvCase {
  int n, c, h, w, m, kh, kw, sh, sw, pt, pl, pb, pr, dh, dw, group;
  bool bias;
};

stowage_conv2d_params convParams(const ConvCase& k) {
  stowage_conv2d_params p{};
  p.n = k.n;
  p.c = k.c;
  p.h = k.h;
  p.w = k.w;
  p.m = k.m;
  p.kh = k.kh;
  p.kw = k.kw;
  p.oh = (k.h + k.pt + k.pb - ((k.kh - 1) * k.dh + 1)) / k.sh + 1;
  p.ow = (k.w + k.pl + k.pr - ((k.kw - 1) * k.dw + 1)) / k.sw + 1;
  p.stride_h = k.sh;
  p.stride_w = k.sw;
  p.pad_top = k.pt;
  p.pad_left = k.pl;
  p.dil_h = k.dh;
  p.dil_w = k.dw;
  p.group = k.group;
  return p;
}

std::vector<double> convRef(const std::vector<float>& x, const std::vector<float>& w, const float* bias,
                            const stowage_conv2d_params& p) {
  const int cpg = p.c / p.group, mpg = p.m / p.group;
  std::vector<double> y(static_cast<size_t>(p.n) * p.m * p.oh * p.ow);
  for (int n = 0; n < p.n; ++n)
    for (int m = 0; m < p.m; ++m)
      for (int oy = 0; oy < p.oh; ++oy)
        for (int ox = 0; ox < p.ow; ++ox) {
          double acc = bias ? bias[m] : 0.0;
          const int g = m / mpg;
          for (int ci = 0; ci < cpg; ++ci)
            for (int ky = 0; ky < p.kh; ++ky)
              for (int kx = 0; kx < p.kw; ++kx) {
                const int iy = oy * p.stride_h - p.pad_top + ky * p.dil_h;
                const int ix = ox * p.stride_w - p.pad_left + kx * p.dil_w;
                if (iy < 0 || iy >= p.h || ix < 0 || ix >= p.w) continue;
                acc += double(w[((size_t(m) * cpg + ci) * p.kh + ky) * p.kw + kx]) *
                       x[((size_t(n) * p.c + g * cpg + ci) * p.h + iy) * p.w + ix];
              }
          y[((size_t(n) * p.m + m) * p.oh + oy) * p.ow + ox] = acc;
        }
  return y;
}

class Conv2dTest : public ::testing::TestWithParam<ConvCase> {};

TEST_P(Conv2dTest, MatchesNaiveReference) {
  const ConvCase k = GetParam();
  const stowage_conv2d_params p = convParams(k);
  ASSERT_GT(p.oh, 0);
  ASSERT_GT(p.ow, 0);
  const auto x = randomVec(size_t(k.n) * k.c * k.h * k.w, 1);
  const auto w = randomVec(size_t(k.m) * (k.c / k.group) * k.kh * k.kw, 2);
  const auto b = randomVec(size_t(k.m), 3);
  std::vector<float> y(size_t(p.n) * p.m * p.oh * p.ow, -999.0f);
  stowage_conv2d_f32(x.data(), w.data(), k.bias ? b.data() : nullptr, y.data(), &p);
  EXPECT_TRUE(allClose(y, convRef(x, w, k.bias ? b.data() : nullptr, p), 1e-4, 1e-5));
}

// n, c, h, w, m, kh, kw, sh, sw, pt, pl, pb, pr, dh, dw, group, bias
INSTANTIATE_TEST_SUITE_P(
    Cases, Conv2dTest,
    ::testing::Values(ConvCase{1, 3, 9, 10, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true},      // small, pad 1
                      ConvCase{1, 4, 12, 37, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true},     // interior 4x8 tiles
                      ConvCase{2, 5, 11, 29, 6, 3, 5, 2, 2, 0, 2, 1, 0, 1, 1, 1, true},     // strides, asym pads
                      ConvCase{1, 3, 13, 40, 4, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1, false},    // dilation 2
                      ConvCase{1, 3, 13, 40, 5, 3, 2, 2, 3, 1, 0, 0, 3, 2, 3, 1, true},     // dilation + stride
                      ConvCase{1, 6, 8, 25, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, true},      // groups 2
                      ConvCase{1, 8, 9, 26, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 8, true},      // depthwise
                      ConvCase{1, 6, 9, 19, 12, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 3, false},    // groups, 4 out/grp
                      ConvCase{2, 7, 6, 9, 6, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, true},       // 1x1 flattened GEMM
                      ConvCase{1, 8, 10, 21, 9, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1, true},     // 1x1 stride 2
                      ConvCase{1, 4, 1, 50, 5, 1, 5, 1, 1, 0, 2, 0, 2, 1, 1, 1, true},      // 1-D
                      ConvCase{1, 3, 5, 6, 4, 3, 3, 1, 1, 4, 4, 4, 4, 1, 1, 1, true},       // pads > kernel
                      ConvCase{1, 3, 20, 31, 4, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1, true},     // 7x7 stride 2
                      ConvCase{1, 2, 4, 4, 3, 4, 4, 1, 1, 0, 0, 0, 0, 1, 1, 1, true}));     // kernel == input

struct ConvTCase {
  int n, c, h, w, m, kh, kw, sh, sw, pt, pl, pb, pr, dh, dw, group, out_pad_h, out_pad_w;
  bool bias;
};

std::vector<double> convTransposeRef(const std::vector<float>& x, const std::vector<float>& w, const float* bias,
                                     const stowage_conv2d_params& p) {
  const int cpg = p.c / p.group, mpg = p.m / p.group;
  std::vector<double> y(size_t(p.n) * p.m * p.oh * p.ow, 0.0);
  for (int n = 0; n < p.n; ++n) {
    for (int m = 0; m < p.m; ++m)
      for (int i = 0; i < p.oh * p.ow; ++i) y[(size_t(n) * p.m + m) * p.oh * p.ow + i] = bias ? bias[m] : 0.0;
    for (int c = 0; c < p.c; ++c) {
      const int g = c / cpg;
      for (int iy = 0; iy < p.h; ++iy)
        for (int ix = 0; ix < p.w; ++ix)
          for (int mo = 0; mo < mpg; ++mo)
            for (int ky = 0; ky < p.kh; ++ky)
              for (int kx = 0; kx < p.kw; ++kx) {
                const int oy = iy * p.stride_h - p.pad_top + ky * p.dil_h;
                const int ox = ix * p.stride_w - p.pad_left + kx * p.dil_w;
                if (oy < 0 || oy >= p.oh || ox < 0 || ox >= p.ow) continue;
                const int m = g * mpg + mo;
                y[((size_t(n) * p.m + m) * p.oh + oy) * p.ow + ox] +=
                    double(x[((size_t(n) * p.c + c) * p.h + iy) * p.w + ix]) *
                    w[((size_t(c) * mpg + mo) * p.kh + ky) * p.kw + kx];
              }
    }
  }
  return y;
}

class ConvTransposeTest : public ::testing::TestWithParam<ConvTCase> {};

TEST_P(ConvTransposeTest, MatchesNaiveReference) {
  const ConvTCase k = GetParam();
  stowage_conv2d_params p{};
  p.n = k.n;
  p.c = k.c;
  p.h = k.h;
  p.w = k.w;
  p.m = k.m;
  p.kh = k.kh;
  p.kw = k.kw;
  p.oh = k.sh * (k.h - 1) + k.out_pad_h + (k.kh - 1) * k.dh + 1 - k.pt - k.pb;
  p.ow = k.sw * (k.w - 1) + k.out_pad_w + (k.kw - 1) * k.dw + 1 - k.pl - k.pr;
  p.stride_h = k.sh;
  p.stride_w = k.sw;
  p.pad_top = k.pt;
  p.pad_left = k.pl;
  p.dil_h = k.dh;
  p.dil_w = k.dw;
  p.group = k.group;
  const auto x = randomVec(size_t(k.n) * k.c * k.h * k.w, 11);
  const auto w = randomVec(size_t(k.c) * (k.m / k.group) * k.kh * k.kw, 12);
  const auto b = randomVec(size_t(k.m), 13);
  std::vector<float> y(size_t(p.n) * p.m * p.oh * p.ow, -999.0f);
  stowage_conv_transpose2d_f32(x.data(), w.data(), k.bias ? b.data() : nullptr, y.data(), &p);
  EXPECT_TRUE(allClose(y, convTransposeRef(x, w, k.bias ? b.data() : nullptr, p), 1e-4, 1e-5));
}

// n, c, h, w, m, kh, kw, sh, sw, pt, pl, pb, pr, dh, dw, group, out_pad_h, out_pad_w, bias
INSTANTIATE_TEST_SUITE_P(
    Cases, ConvTransposeTest,
    ::testing::Values(ConvTCase{1, 3, 5, 6, 4, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0, true},   // plain
                      ConvTCase{2, 4, 5, 7, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, true},   // stride 2, pads, out pad
                      ConvTCase{1, 4, 4, 5, 6, 3, 2, 2, 3, 1, 0, 2, 1, 1, 1, 2, 0, 2, false},  // groups, asym
                      ConvTCase{1, 6, 4, 4, 6, 3, 3, 1, 2, 0, 1, 0, 1, 2, 2, 3, 0, 0, true},   // dilation, groups
                      ConvTCase{1, 2, 1, 9, 3, 1, 4, 1, 2, 0, 1, 0, 1, 1, 1, 1, 0, 1, true})); // 1-D

// ---------------------------------------------------------------- gemm

std::vector<double> gemmRef(const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>* c,
                            const stowage_gemm_params& p) {
  std::vector<double> y(size_t(p.m) * p.n);
  for (int i = 0; i < p.m; ++i)
    for (int j = 0; j < p.n; ++j) {
      double acc = 0;
      for (int k = 0; k < p.k; ++k) {
        const double av = p.trans_a ? a[size_t(k) * p.m + i] : a[size_t(i) * p.k + k];
        const double bv = p.trans_b ? b[size_t(j) * p.k + k] : b[size_t(k) * p.n + j];
        acc += av * bv;
      }
      double cv = 0;
      if (c) cv = (*c)[size_t(p.c_rows == 1 ? 0 : i) * p.c_cols + (p.c_cols == 1 ? 0 : j)];
      y[size_t(i) * p.n + j] = p.alpha * acc + p.beta * cv;
    }
  return y;
}

TEST(GemmKernel, AllTransposesAndCShapes) {
  struct Dims {
    int m, n, k;
  };
  const Dims dims[] = {{7, 13, 9}, {8, 16, 5}, {1, 20, 33}, {12, 3, 1}};
  // c shapes: none, scalar, row [1][n], column [m][1], full [m][n]
  for (const Dims d : dims)
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb)
        for (int cs = 0; cs < 5; ++cs) {
          stowage_gemm_params p{};
          p.m = d.m;
          p.n = d.n;
          p.k = d.k;
          p.trans_a = ta;
          p.trans_b = tb;
          p.alpha = cs % 2 ? 0.75f : 1.0f;
          p.beta = cs == 4 ? 1.0f : -1.5f;
          p.c_rows = (cs == 3 || cs == 4) ? d.m : 1;
          p.c_cols = (cs == 2 || cs == 4) ? d.n : 1;
          const auto a = randomVec(size_t(d.m) * d.k, 21);
          const auto b = randomVec(size_t(d.k) * d.n, 22);
          const auto c = randomVec(size_t(p.c_rows) * p.c_cols, 23);
          std::vector<float> y(size_t(d.m) * d.n, -999.0f);
          stowage_gemm_f32(a.data(), b.data(), cs ? c.data() : nullptr, y.data(), &p);
          EXPECT_TRUE(allClose(y, gemmRef(a, b, cs ? &c : nullptr, p), 1e-4, 1e-5))
              << "m" << d.m << " n" << d.n << " k" << d.k << " ta" << ta << " tb" << tb << " c" << cs;
        }
}

// ---------------------------------------------------------------- matmul

TEST(MatmulKernel, BroadcastBatchDims) {
  // a: [2][1][m][k], b: [3][k][n] -> y: [2][3][m][n]
  const int m = 5, n = 11, k = 7;
  stowage_matmul_params p{};
  p.batch_rank = 2;
  p.batch_shape[0] = 2;
  p.batch_shape[1] = 3;
  p.a_stride[0] = m * k;
  p.a_stride[1] = 0;
  p.b_stride[0] = 0;
  p.b_stride[1] = k * n;
  p.m = m;
  p.n = n;
  p.k = k;
  const auto a = randomVec(size_t(2) * m * k, 31);
  const auto b = randomVec(size_t(3) * k * n, 32);
  std::vector<float> y(size_t(6) * m * n, -999.0f);
  stowage_matmul_f32(a.data(), b.data(), y.data(), &p);
  std::vector<double> want(y.size());
  for (int i0 = 0; i0 < 2; ++i0)
    for (int i1 = 0; i1 < 3; ++i1)
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
          double acc = 0;
          for (int kk = 0; kk < k; ++kk)
            acc += double(a[(size_t(i0) * m + i) * k + kk]) * b[(size_t(i1) * k + kk) * n + j];
          want[((size_t(i0) * 3 + i1) * m + i) * n + j] = acc;
        }
  EXPECT_TRUE(allClose(y, want, 1e-4, 1e-5));
}

TEST(MatmulKernel, SingleMatrixAndVector) {
  // batch_rank 0: one [9][16] x [16][24] product (hits full 4x8 tiles and an edge row), then a row vector.
  for (int m : {9, 1}) {
    const int n = 24, k = 16;
    stowage_matmul_params p{};
    p.batch_rank = 0;
    p.m = m;
    p.n = n;
    p.k = k;
    const auto a = randomVec(size_t(m) * k, 41);
    const auto b = randomVec(size_t(k) * n, 42);
    std::vector<float> y(size_t(m) * n, -999.0f);
    stowage_matmul_f32(a.data(), b.data(), y.data(), &p);
    std::vector<double> want(y.size());
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        double acc = 0;
        for (int kk = 0; kk < k; ++kk) acc += double(a[size_t(i) * k + kk]) * b[size_t(kk) * n + j];
        want[size_t(i) * n + j] = acc;
      }
    EXPECT_TRUE(allClose(y, want, 1e-4, 1e-5)) << "m=" << m;
  }
}

TEST(MatmulKernel, BatchStrideOnBothSides) {
  // a: [4][m][k] and b: [4][k][n] (no broadcast), batch_rank 1.
  const int m = 3, n = 4, k = 2;
  stowage_matmul_params p{};
  p.batch_rank = 1;
  p.batch_shape[0] = 4;
  p.a_stride[0] = m * k;
  p.b_stride[0] = k * n;
  p.m = m;
  p.n = n;
  p.k = k;
  const auto a = randomVec(size_t(4) * m * k, 51);
  const auto b = randomVec(size_t(4) * k * n, 52);
  std::vector<float> y(size_t(4) * m * n);
  stowage_matmul_f32(a.data(), b.data(), y.data(), &p);
  std::vector<double> want(y.size());
  for (int t = 0; t < 4; ++t)
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        double acc = 0;
        for (int kk = 0; kk < k; ++kk) acc += double(a[(size_t(t) * m + i) * k + kk]) * b[(size_t(t) * k + kk) * n + j];
        want[(size_t(t) * m + i) * n + j] = acc;
      }
  EXPECT_TRUE(allClose(y, want, 1e-4, 1e-5));
}

}  // namespace
