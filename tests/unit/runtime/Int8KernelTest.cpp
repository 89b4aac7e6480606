// Int8 kernels (stowage_kernels_int8.h) against straightforward reference computations written here:
// requantization as exact rational rounding in int64, direct NHWC loops for conv/depthwise/FC/pooling,
// ADD/MUL in TFLite's documented steps, softmax and (de)quantization against float math.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "stowage_kernels.h"

namespace stowage {
namespace {

/// n / 2^e rounded half away from zero (exact, int64).
int64_t divPow2Away(int64_t n, int e) {
  if (e == 0) return n;
  const int64_t d = int64_t{1} << e;
  const int64_t q = (n >= 0 ? n + d / 2 : n - d / 2) / d;  // C++ truncates toward zero
  return q;
}

/// TFLite's MultiplyByQuantizedMultiplier spelled as two exact roundings: p = x * 2^left * m rounded to
/// p / 2^31 with ties up in magnitude for p >= 0 but toward zero for p < 0 (gemmlowp's 1 - 2^30 nudge), then
/// a division by 2^right with ties away from zero (saturation only for INT32_MIN * INT32_MIN).
int32_t refRequant(int32_t x, int32_t m, int32_t shift) {
  const int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
  const int64_t xs = static_cast<int32_t>(static_cast<uint32_t>(x) << left);
  const int64_t p = xs * m;
  const int64_t high = p >= 0 ? (p + (int64_t{1} << 30)) / (int64_t{1} << 31) : -((-p + (int64_t{1} << 30) - 1) / (int64_t{1} << 31));
  return static_cast<int32_t>(divPow2Away(high, right));
}

std::vector<int8_t> randomS8(size_t n, uint32_t seed, int lo = -128, int hi = 127) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<int8_t> v(n);
  for (auto& x : v) x = static_cast<int8_t>(d(rng));
  return v;
}

int8_t clampS8(int32_t v, int32_t lo, int32_t hi) { return static_cast<int8_t>(std::min(std::max(v, lo), hi)); }

TEST(Int8Kernels, RequantizeMatchesExactDoubleRounding) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int32_t> acc(-(1 << 24), 1 << 24);
  std::uniform_int_distribution<int32_t> mult(1 << 30, INT32_MAX);
  std::uniform_int_distribution<int32_t> shift(-20, 2);
  for (int i = 0; i < 20000; ++i) {
    const int32_t a = acc(rng), m = mult(rng), s = shift(rng);
    ASSERT_EQ(stowage_requantize_s32(a, m, s), refRequant(a, m, s)) << a << " " << m << " " << s;
  }
  // The high multiply rounds +1.5 up but -1.5 toward zero; the shift rounds -1.5 away from zero.
  EXPECT_EQ(stowage_requantize_s32(3, 1 << 30, 0), 2);
  EXPECT_EQ(stowage_requantize_s32(-3, 1 << 30, 0), -1);
  EXPECT_EQ(stowage_requantize_s32(-3, 1 << 30, -1), -1);  // -3 * 0.5 = -1.5 -> -1, then -1 / 2 = -0.5 -> -1
  EXPECT_EQ(stowage_requantize_s32(INT32_MIN, INT32_MIN, 0), INT32_MAX);  // the one saturating case
}

struct ConvCase {
  int n, h, w, c, m, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
};

void checkConv(const ConvCase& k, bool depthwise, uint32_t seed) {
  const int oh = (k.h + k.pt + k.pb - ((k.kh - 1) * k.dh + 1)) / k.sh + 1;
  const int ow = (k.w + k.pl + k.pr - ((k.kw - 1) * k.dw + 1)) / k.sw + 1;
  const int kc = depthwise ? 1 : k.c;
  auto x = randomS8(static_cast<size_t>(k.n * k.h * k.w * k.c), seed);
  auto w = randomS8(static_cast<size_t>(depthwise ? k.kh * k.kw * k.m : k.m * k.kh * k.kw * k.c), seed + 1, -127, 127);
  std::vector<int32_t> bias(static_cast<size_t>(k.m)), mult(static_cast<size_t>(k.m)), shift(static_cast<size_t>(k.m));
  std::mt19937 rng(seed + 2);
  for (int i = 0; i < k.m; ++i) {
    bias[static_cast<size_t>(i)] = static_cast<int32_t>(rng() % 4001) - 2000;
    mult[static_cast<size_t>(i)] = (1 << 30) + static_cast<int32_t>(rng() % (1u << 30));
    shift[static_cast<size_t>(i)] = -static_cast<int32_t>(6 + rng() % 6);
  }
  stowage_qconv_params p{};
  p.n = k.n, p.h = k.h, p.w = k.w, p.c = k.c, p.oh = oh, p.ow = ow, p.m = k.m, p.kh = k.kh, p.kw = k.kw, p.kc = kc;
  p.stride_h = k.sh, p.stride_w = k.sw, p.dil_h = k.dh, p.dil_w = k.dw, p.pad_top = k.pt, p.pad_left = k.pl;
  p.depth_multiplier = depthwise ? k.m / k.c : 1, p.per_channel = 1, p.input_offset = 5, p.output_offset = -3;
  p.act_min = -100, p.act_max = 120;
  std::vector<int8_t> y(static_cast<size_t>(k.n * oh * ow * k.m));
  if (depthwise) stowage_qdepthwise_conv2d_s8(x.data(), w.data(), bias.data(), mult.data(), shift.data(), y.data(), &p);
  else stowage_qconv2d_s8(x.data(), w.data(), bias.data(), mult.data(), shift.data(), y.data(), &p);
  for (int b = 0; b < k.n; ++b)
    for (int oy = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox)
        for (int oc = 0; oc < k.m; ++oc) {
          int32_t acc = 0;
          for (int fy = 0; fy < k.kh; ++fy)
            for (int fx = 0; fx < k.kw; ++fx) {
              const int iy = oy * k.sh - k.pt + fy * k.dh, ix = ox * k.sw - k.pl + fx * k.dw;
              if (iy < 0 || iy >= k.h || ix < 0 || ix >= k.w) continue;
              if (depthwise) {
                const int ic = oc / (k.m / k.c);
                acc += w[static_cast<size_t>((fy * k.kw + fx) * k.m + oc)] * (x[static_cast<size_t>(((b * k.h + iy) * k.w + ix) * k.c + ic)] + 5);
              } else {
                for (int ic = 0; ic < k.c; ++ic)
                  acc += w[static_cast<size_t>(((oc * k.kh + fy) * k.kw + fx) * k.c + ic)] *
                         (x[static_cast<size_t>(((b * k.h + iy) * k.w + ix) * k.c + ic)] + 5);
              }
            }
          const size_t o = static_cast<size_t>(oc);
          const int8_t want = clampS8(refRequant(acc + bias[o], mult[o], shift[o]) - 3, -100, 120);
          ASSERT_EQ(y[static_cast<size_t>(((b * oh + oy) * ow + ox) * k.m + oc)], want) << "at " << b << "," << oy << "," << ox << "," << oc;
        }
}

TEST(Int8Kernels, ConvMatchesDirectLoops) {
  checkConv({1, 7, 6, 3, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, false, 11);  // SAME-like padding
  checkConv({2, 9, 8, 2, 5, 3, 2, 2, 2, 1, 1, 0, 0, 0, 0}, false, 12);  // strided VALID
  checkConv({1, 9, 9, 3, 2, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2}, false, 13);  // dilated
}

TEST(Int8Kernels, DepthwiseConvMatchesDirectLoops) {
  checkConv({1, 8, 7, 4, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, true, 21);
  checkConv({1, 9, 9, 3, 6, 3, 3, 2, 2, 1, 1, 0, 1, 1, 1}, true, 22);  // depth multiplier 2, asymmetric pads
}

TEST(Int8Kernels, FullyConnectedPerTensorAndPerChannel) {
  const int batches = 2, k = 13, m = 5;
  auto x = randomS8(batches * k, 31), w = randomS8(m * k, 32, -127, 127);
  std::vector<int32_t> bias{100, -200, 0, 5, 7}, mult{1518500250, 1073741824, 2000000000, 1300000000, 1100000000},
      shift{-8, -7, -9, -8, -10};
  for (int perChannel = 0; perChannel < 2; ++perChannel) {
    stowage_qfc_params p{batches, k, m, perChannel, 17, -20, -128, 127, 0};
    std::vector<int8_t> y(batches * m);
    stowage_qfully_connected_s8(x.data(), w.data(), bias.data(), mult.data(), shift.data(), y.data(), &p);
    for (int b = 0; b < batches; ++b)
      for (int o = 0; o < m; ++o) {
        int32_t acc = bias[static_cast<size_t>(o)];
        for (int d = 0; d < k; ++d) acc += w[static_cast<size_t>(o * k + d)] * (x[static_cast<size_t>(b * k + d)] + 17);
        const size_t q = perChannel ? static_cast<size_t>(o) : 0;
        EXPECT_EQ(y[static_cast<size_t>(b * m + o)], clampS8(refRequant(acc, mult[q], shift[q]) - 20, -128, 127));
      }
  }
}

TEST(Int8Kernels, PoolingClipsWindowsAndRoundsAverageAwayFromZero) {
  const int h = 5, w = 4, c = 3, kh = 3, kw = 3, oh = 3, ow = 2;  // SAME, stride 2: pad 1 top/left
  auto x = randomS8(h * w * c, 41);
  stowage_qpool_params p{1, h, w, c, oh, ow, kh, kw, 2, 2, 1, 1, -128, 127};
  std::vector<int8_t> avg(oh * ow * c), mx(oh * ow * c);
  stowage_qavgpool2d_s8(x.data(), avg.data(), &p);
  stowage_qmaxpool2d_s8(x.data(), mx.data(), &p);
  for (int oy = 0; oy < oh; ++oy)
    for (int ox = 0; ox < ow; ++ox)
      for (int ch = 0; ch < c; ++ch) {
        int sum = 0, count = 0, best = -128;
        for (int fy = 0; fy < kh; ++fy)
          for (int fx = 0; fx < kw; ++fx) {
            const int iy = oy * 2 - 1 + fy, ix = ox * 2 - 1 + fx;
            if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
            const int v = x[static_cast<size_t>((iy * w + ix) * c + ch)];
            sum += v, ++count, best = std::max(best, v);
          }
        const int want = static_cast<int>(std::lround(static_cast<double>(sum) / count));  // half away from zero
        const size_t o = static_cast<size_t>((oy * ow + ox) * c + ch);
        EXPECT_EQ(avg[o], want);
        EXPECT_EQ(mx[o], best);
      }
}

TEST(Int8Kernels, AddAndMulBroadcastInTfliteSteps) {
  // a [2,3,4] + b [1,3,1] broadcast.
  auto a = randomS8(24, 51), b = randomS8(3, 52);
  stowage_qbinary_params p{};
  p.rank = 3;
  p.shape[0] = 2, p.shape[1] = 3, p.shape[2] = 4;
  p.a_stride[0] = 12, p.a_stride[1] = 4, p.a_stride[2] = 1;
  p.b_stride[0] = 0, p.b_stride[1] = 1, p.b_stride[2] = 0;
  p.a_offset = 10, p.b_offset = -7, p.output_offset = 3, p.left_shift = 20;
  p.a_multiplier = 1073741824, p.a_shift = 0, p.b_multiplier = 1500000000, p.b_shift = -1;
  p.output_multiplier = 1200000000, p.output_shift = -19, p.act_min = -128, p.act_max = 127;
  std::vector<int8_t> y(24), z(24);
  stowage_qadd_s8(a.data(), b.data(), y.data(), &p);
  stowage_qmul_s8(a.data(), b.data(), z.data(), &p);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) {
        const int32_t va = a[static_cast<size_t>(i * 12 + j * 4 + k)] + 10, vb = b[static_cast<size_t>(j)] - 7;
        const int32_t sum = refRequant(va * (1 << 20), p.a_multiplier, p.a_shift) + refRequant(vb * (1 << 20), p.b_multiplier, p.b_shift);
        EXPECT_EQ(y[static_cast<size_t>(i * 12 + j * 4 + k)], clampS8(refRequant(sum, p.output_multiplier, p.output_shift) + 3, -128, 127));
        EXPECT_EQ(z[static_cast<size_t>(i * 12 + j * 4 + k)],
                  clampS8(refRequant(va * vb, p.output_multiplier, p.output_shift) + 3, -128, 127));
      }
}

// ADD and SUB on random quantizations: offsets, multipliers, input and output shifts (positive ones too) and left
// shifts up to 30, so that both the narrow requantizations and TFLite's wrapping steps (too wide for them) run.
TEST(Int8Kernels, AddAndSubOnRandomQuantizationsFollowTflitesSteps) {
  std::mt19937 rng(71);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto wrap = [](int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v))); };
  for (int t = 0; t < 400; ++t) {
    // One trial in three large enough for the rescaling tables (STOWAGE_QBINARY_TABLE_ELEMENTS), some of those with a
    // broadcast second operand (step 0).
    const int n = t % 3 == 0 ? pick(STOWAGE_QBINARY_TABLE_ELEMENTS, 3000) : pick(1, 40);
    auto a = randomS8(n, 1000 + t), b = randomS8(n, 2000 + t);
    stowage_qbinary_params p{};
    p.rank = 1;
    p.shape[0] = n, p.a_stride[0] = 1, p.b_stride[0] = t % 6 == 0 ? 0 : 1;
    p.a_offset = pick(-127, 128), p.b_offset = pick(-127, 128), p.output_offset = pick(-128, 127);
    p.left_shift = t % 4 == 0 ? pick(0, 30) : 20;
    p.a_multiplier = (1 << 30) + pick(0, (1 << 30) - 1), p.b_multiplier = (1 << 30) + pick(0, (1 << 30) - 1);
    p.output_multiplier = (1 << 30) + pick(0, (1 << 30) - 1);
    p.a_shift = t % 5 == 0 ? pick(1, 3) : -pick(0, 10), p.b_shift = -pick(0, 10);
    p.output_shift = t % 7 == 0 ? pick(0, 2) : -pick(10, 24);
    // Half the trials clamp to the full int8 range (the contiguous table loop then folds the output offset into its
    // rounding where the output's right shift is at most 22).
    const bool full_range = pick(0, 1) == 1;
    p.act_min = full_range ? -128 : pick(-128, -20), p.act_max = full_range ? 127 : pick(20, 127);
    for (int subtract = 0; subtract < 2; ++subtract) {
      std::vector<int8_t> y(static_cast<size_t>(n));
      (subtract ? stowage_qsub_s8 : stowage_qadd_s8)(a.data(), b.data(), y.data(), &p);
      for (int i = 0; i < n; ++i) {
        const int32_t sa = wrap(int64_t{a[static_cast<size_t>(i)] + p.a_offset} * (int64_t{1} << p.left_shift));
        const int32_t sb = wrap(int64_t{b[static_cast<size_t>(i * p.b_stride[0])] + p.b_offset} * (int64_t{1} << p.left_shift));
        const int32_t ra = refRequant(sa, p.a_multiplier, p.a_shift), rb = refRequant(sb, p.b_multiplier, p.b_shift);
        const int32_t sum = wrap(subtract ? int64_t{ra} - rb : int64_t{ra} + rb);
        const int32_t want = clampS8(wrap(int64_t{refRequant(sum, p.output_multiplier, p.output_shift)} + p.output_offset),
                                     p.act_min, p.act_max);
        ASSERT_EQ(y[static_cast<size_t>(i)], want) << "trial " << t << (subtract ? " sub" : " add") << " element " << i;
      }
    }
  }
  stowage_qbinary_params p{};
  p.rank = 2, p.shape[0] = 32, p.shape[1] = 32, p.left_shift = 20;
  p.a_multiplier = p.b_multiplier = p.output_multiplier = 1 << 30;
  p.a_shift = p.b_shift = -1, p.output_shift = -20;
  EXPECT_EQ(stowage_qadd_s8_stack_bytes(&p), STOWAGE_QBINARY_STACK_BYTES) << "1,024 elements: the tables";
  p.shape[1] = 31;
  EXPECT_EQ(stowage_qadd_s8_stack_bytes(&p), 0);
}

TEST(Int8Kernels, SoftmaxWithinOneStepOfFloatSoftmax) {
  // Input scale 0.1, beta 1: multiplier/left shift as TFLite derives them (0.1 * 2^26 -> Q0.31 * 2^shift).
  const double real = 0.1 * static_cast<double>(1 << 26);
  int e = 0;
  const double frac = std::frexp(real, &e);
  stowage_qsoftmax_params p{};
  p.outer = 3, p.depth = 10;
  p.input_multiplier = static_cast<int32_t>(std::llround(frac * 2147483648.0));
  p.input_left_shift = e;
  p.diff_min = -static_cast<int32_t>(std::floor(31.0 * (1 << 26) / static_cast<double>(int64_t{1} << e)));
  auto x = randomS8(30, 61);
  std::vector<int8_t> y(30);
  stowage_qsoftmax_s8(x.data(), y.data(), &p);
  for (int r = 0; r < 3; ++r) {
    double mx = -1e9, sum = 0;
    for (int i = 0; i < 10; ++i) mx = std::max(mx, 0.1 * x[static_cast<size_t>(r * 10 + i)]);
    for (int i = 0; i < 10; ++i) sum += std::exp(0.1 * x[static_cast<size_t>(r * 10 + i)] - mx);
    for (int i = 0; i < 10; ++i) {
      const double prob = std::exp(0.1 * x[static_cast<size_t>(r * 10 + i)] - mx) / sum;
      const double want = std::min(127.0, std::round(prob * 256.0) - 128.0);
      EXPECT_NEAR(y[static_cast<size_t>(r * 10 + i)], want, 1.0) << "row " << r << " col " << i;
    }
  }
}

TEST(Int8Kernels, QuantizeRoundsHalfAwayAndClamps) {
  const std::vector<float> x{0.0f, 0.25f, -0.25f, 0.75f, 100.0f, -100.0f, 1.2f};
  stowage_quant_params p{static_cast<int32_t>(x.size()), 0.5f, 3};
  std::vector<int8_t> q(x.size());
  stowage_quantize_f32_s8(x.data(), q.data(), &p);
  EXPECT_EQ(q, (std::vector<int8_t>{3, 4, 2, 5, 127, -128, 5}));  // 0.5 -> 1, -0.5 -> -1, 1.5 -> 2, 2.4 -> 2
  std::vector<float> back(x.size());
  stowage_dequantize_s8_f32(q.data(), back.data(), &p);
  EXPECT_FLOAT_EQ(back[1], 0.5f);
  EXPECT_FLOAT_EQ(back[5], -65.5f);
}

TEST(Int8Kernels, PadFillsWithTheZeroPoint) {
  const std::vector<int8_t> x{1, 2, 3, 4, 5, 6};  // [2, 3]
  stowage_pad_params p{};
  p.rank = 2;
  p.in_shape[0] = 2, p.in_shape[1] = 3, p.out_shape[0] = 3, p.out_shape[1] = 5, p.pad_begin[0] = 1, p.pad_begin[1] = 0;
  p.mode = STOWAGE_PAD_CONSTANT, p.value = -7.0f;
  std::vector<int8_t> y(15);
  stowage_pad_s8(x.data(), y.data(), &p);
  EXPECT_EQ(y, (std::vector<int8_t>{-7, -7, -7, -7, -7, 1, 2, 3, -7, -7, 4, 5, 6, -7, -7}));
}

TEST(Int8Kernels, MeanOverHeightAndWidthRequantizesThenDivides) {
  const int n = 2, h = 3, w = 5, c = 4;
  auto x = randomS8(n * h * w * c, 71);
  stowage_qmean_params p{n, h, w, c, -3, 9, 1400000000, -1};
  std::vector<int8_t> y(n * c);
  stowage_qmean_hw_s8(x.data(), y.data(), &p);
  for (int b = 0; b < n; ++b)
    for (int ch = 0; ch < c; ++ch) {
      int32_t sum = 0;
      for (int i = 0; i < h * w; ++i) sum += x[static_cast<size_t>((b * h * w + i) * c + ch)] + 3;
      const int32_t scaled = refRequant(sum, p.multiplier, p.shift);
      const int32_t mean = static_cast<int32_t>(std::lround(static_cast<double>(scaled) / (h * w)));  // half away from zero
      EXPECT_EQ(y[static_cast<size_t>(b * c + ch)], clampS8(mean + 9, -128, 127));
    }
}

TEST(Int8Kernels, RequantizeBetweenInt8Tensors) {
  auto x = randomS8(300, 81);
  stowage_requant_params p{300, 5, -20, 1610612736, -1};  // scale ratio 0.375
  std::vector<int8_t> y(300);
  stowage_requantize_s8(x.data(), y.data(), &p);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], clampS8(refRequant(x[i] - 5, p.multiplier, p.shift) - 20, -128, 127));
}

TEST(NhwcFloatKernels, ConvDepthwiseAndPoolMatchDirectLoops) {
  const int h = 5, w = 4, c = 2, m = 3, k = 3;  // stride 1, pad 1 (SAME)
  std::vector<float> x(h * w * c), wt(m * k * k * c), dw(k * k * c), bias{0.5f, -0.25f, 1.0f};
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7) % 11) - 5.0f;
  for (size_t i = 0; i < wt.size(); ++i) wt[i] = static_cast<float>((i * 5) % 7) * 0.25f - 0.75f;
  for (size_t i = 0; i < dw.size(); ++i) dw[i] = static_cast<float>((i * 3) % 5) * 0.5f - 1.0f;
  stowage_nhwc_conv_params p{1, h, w, c, h, w, m, k, k, c, 1, 1, 1, 1, 1, 1, 1, 0.0f, 6.0f, 0};  // RELU6
  std::vector<float> y(h * w * m), yd(h * w * c), ya(h * w * c);
  stowage_conv2d_nhwc_f32(x.data(), wt.data(), bias.data(), y.data(), &p);
  stowage_nhwc_conv_params pd{1, h, w, c, h, w, c, k, k, 1, 1, 1, 1, 1, 1, 1, 1, -INFINITY, INFINITY, 0};
  stowage_depthwise_conv2d_nhwc_f32(x.data(), dw.data(), nullptr, yd.data(), &pd);
  stowage_nhwc_pool_params pp{1, h, w, c, h, w, k, k, 1, 1, 1, 1, -INFINITY, INFINITY};
  stowage_avgpool2d_nhwc_f32(x.data(), ya.data(), &pp);
  for (int oy = 0; oy < h; ++oy)
    for (int ox = 0; ox < w; ++ox) {
      for (int oc = 0; oc < m; ++oc) {
        double acc = bias[static_cast<size_t>(oc)];
        for (int fy = 0; fy < k; ++fy)
          for (int fx = 0; fx < k; ++fx)
            for (int ic = 0; ic < c; ++ic) {
              const int iy = oy - 1 + fy, ix = ox - 1 + fx;
              if (iy >= 0 && iy < h && ix >= 0 && ix < w)
                acc += x[static_cast<size_t>((iy * w + ix) * c + ic)] * wt[static_cast<size_t>(((oc * k + fy) * k + fx) * c + ic)];
            }
        EXPECT_NEAR(y[static_cast<size_t>((oy * w + ox) * m + oc)], std::min(std::max(acc, 0.0), 6.0), 1e-5);
      }
      for (int ch = 0; ch < c; ++ch) {
        double acc = 0, sum = 0;
        int count = 0;
        for (int fy = 0; fy < k; ++fy)
          for (int fx = 0; fx < k; ++fx) {
            const int iy = oy - 1 + fy, ix = ox - 1 + fx;
            if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
            acc += x[static_cast<size_t>((iy * w + ix) * c + ch)] * dw[static_cast<size_t>((fy * k + fx) * c + ch)];
            sum += x[static_cast<size_t>((iy * w + ix) * c + ch)];
            ++count;
          }
        EXPECT_NEAR(yd[static_cast<size_t>((oy * w + ox) * c + ch)], acc, 1e-5);
        EXPECT_NEAR(ya[static_cast<size_t>((oy * w + ox) * c + ch)], sum / count, 1e-5);
      }
    }
}

}  // namespace
}  // namespace stowage
