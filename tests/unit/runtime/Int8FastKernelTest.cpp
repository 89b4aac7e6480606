// The fast int8 convolution, depthwise and fully connected paths (runtime/kernels/int8_conv.c, int8_dot.h) against
// direct loops with TFLite's arithmetic, on randomly drawn shapes (odd channel counts, strides, dilations, paddings,
// depth multipliers, channel-slice outputs, every input offset), once as the host builds them and once with the Arm
// DSP instructions emulated (Int8DspEmulation.c), and the cheap requantization against gemmlowp's literal steps.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <vector>

#include "stowage_kernels.h"

extern "C" {
void stowage_emu_dsp_qconv2d_s8(const int8_t*, const int8_t*, const int32_t*, const int32_t*, const int32_t*, int8_t*,
                                const stowage_qconv_params*);
void stowage_emu_dsp_qdepthwise_conv2d_s8(const int8_t*, const int8_t*, const int32_t*, const int32_t*, const int32_t*,
                                          int8_t*, const stowage_qconv_params*);
void stowage_emu_dsp_qfully_connected_s8(const int8_t*, const int8_t*, const int32_t*, const int32_t*, const int32_t*,
                                         int8_t*, const stowage_qfc_params*);
int32_t stowage_emu_requant_gemmlowp(int32_t acc, int32_t multiplier, int32_t shift);
int32_t stowage_emu_rq_apply(int32_t acc, int32_t multiplier, int32_t shift);
int32_t stowage_emu_rq_apply_narrow(int32_t acc, int32_t multiplier, int32_t shift);
int64_t stowage_emu_rq_narrow_bound(int32_t shift);
}

namespace stowage {
namespace {

using ConvFn = void (*)(const int8_t*, const int8_t*, const int32_t*, const int32_t*, const int32_t*, int8_t*,
                        const stowage_qconv_params*);
using FcFn = void (*)(const int8_t*, const int8_t*, const int32_t*, const int32_t*, const int32_t*, int8_t*,
                      const stowage_qfc_params*);

int8_t finishRef(int32_t acc, int32_t bias, int32_t m, int32_t s, const stowage_qconv_params& p) {
  const int32_t v = stowage_requantize_s32(static_cast<int32_t>(static_cast<uint32_t>(acc) + static_cast<uint32_t>(bias)), m, s);
  const int32_t o = v + p.output_offset;
  return static_cast<int8_t>(o < p.act_min ? p.act_min : (o > p.act_max ? p.act_max : o));
}

struct Drawn {
  stowage_qconv_params p{};
  std::vector<int8_t> x, w;
  std::vector<int32_t> bias, mult, shift;
  bool depthwise = false;
};

Drawn draw(std::mt19937& rng, bool depthwise) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Drawn d;
  d.depthwise = depthwise;
  stowage_qconv_params& p = d.p;
  p.n = pick(1, 2);
  p.kh = pick(1, 4);
  p.kw = pick(1, 4);
  p.dil_h = pick(1, 3) == 3 ? 2 : 1;
  p.dil_w = depthwise && pick(1, 4) == 4 ? 2 : 1;
  p.stride_h = pick(1, 2);
  p.stride_w = pick(1, 2);
  p.h = pick(1 + (p.kh - 1) * p.dil_h, 12);
  p.w = pick(1 + (p.kw - 1) * p.dil_w, 12);
  p.c = pick(1, 2) == 1 ? pick(1, 9) : 4 * pick(1, 6);
  p.depth_multiplier = depthwise && pick(1, 4) == 4 ? 2 : 1;
  p.m = depthwise ? p.c * p.depth_multiplier : pick(1, 9);
  p.kc = depthwise ? 1 : p.c;
  p.pad_top = pick(0, p.kh - 1);
  p.pad_left = pick(0, p.kw - 1);
  const int pb = pick(0, p.kh - 1), pr = pick(0, p.kw - 1);
  p.oh = (p.h + p.pad_top + pb - ((p.kh - 1) * p.dil_h + 1)) / p.stride_h + 1;
  p.ow = (p.w + p.pad_left + pr - ((p.kw - 1) * p.dil_w + 1)) / p.stride_w + 1;
  p.per_channel = pick(0, 1);
  p.input_offset = pick(-127, 128);
  p.output_offset = pick(-128, 127);
  // Half the draws clamp to the full int8 range (no activation: the requantization folds the output offset into its
  // rounding and saturates, when every right shift is at most 22), half to a narrower one.
  const bool full_range = pick(0, 1) == 1;
  p.act_min = full_range ? -128 : pick(-128, -60);
  p.act_max = full_range ? 127 : pick(60, 127);
  p.out_pixel_stride = pick(1, 4) == 4 ? p.m + pick(1, 3) : 0;
  std::uniform_int_distribution<int> s8(-128, 127), w8(-127, 127);
  d.x.resize(static_cast<size_t>(p.n * p.h * p.w * p.c));
  for (auto& v : d.x) v = static_cast<int8_t>(s8(rng));
  d.w.resize(static_cast<size_t>(depthwise ? p.kh * p.kw * p.m : p.m * p.kh * p.kw * p.c));
  for (auto& v : d.w) v = static_cast<int8_t>(w8(rng));
  // One draw in eight has a bias near 2^29 (accumulators outside the narrow requantization's range: the exact wide
  // path), one in eight left shifts (positive exponents, as TFLite gives a scale ratio above 1), one in eight right
  // shifts around 22 (where folding the output offset into the rounding constant stops being exact in 32 bits).
  const bool wide = pick(1, 8) == 1, left = pick(1, 8) == 1, deep = pick(1, 8) == 1;
  for (int i = 0; i < p.m; ++i) {
    d.bias.push_back(wide ? pick(-(1 << 29), 1 << 29) : pick(-30000, 30000));
    d.mult.push_back((1 << 30) + pick(0, (1 << 30) - 1));
    d.shift.push_back(left ? pick(-1, 4) : (deep ? -pick(19, 26) : -pick(5, 12)));
  }
  // One draw in six has one dead channel, as quantized models have: bias near 2^30 (and with per-channel quantization
  // a right shift of 31), while the others stay narrow: the kernels decide the narrow requantization per channel.
  if (pick(1, 6) == 1) {
    const size_t dead = static_cast<size_t>(pick(0, p.m - 1));
    d.bias[dead] = pick(0, 1) == 1 ? (1 << 30) + pick(0, 1000) : -(1 << 30) - pick(0, 1000);
    if (p.per_channel) d.shift[dead] = -31;
  }
  // Half of the single-image draws ask for the band order of an overlapping layer (stowage_qconv_params.row_band),
  // ascending or descending.
  p.row_band = p.n == 1 && pick(0, 1) == 1 ? pick(1, std::max(1, p.oh)) * (pick(0, 1) == 1 ? 1 : -1) : 0;
  return d;
}

std::vector<int8_t> reference(const Drawn& d) {
  const stowage_qconv_params& p = d.p;
  const int stride = p.out_pixel_stride > 0 ? p.out_pixel_stride : p.m;
  std::vector<int8_t> y(static_cast<size_t>(p.n * p.oh * p.ow * stride), 77);
  for (int b = 0; b < p.n; ++b)
    for (int oy = 0; oy < p.oh; ++oy)
      for (int ox = 0; ox < p.ow; ++ox)
        for (int oc = 0; oc < p.m; ++oc) {
          int32_t acc = 0;
          for (int fy = 0; fy < p.kh; ++fy)
            for (int fx = 0; fx < p.kw; ++fx) {
              const int iy = oy * p.stride_h - p.pad_top + fy * p.dil_h, ix = ox * p.stride_w - p.pad_left + fx * p.dil_w;
              if (iy < 0 || iy >= p.h || ix < 0 || ix >= p.w) continue;
              const int base = ((b * p.h + iy) * p.w + ix) * p.c;
              if (d.depthwise) {
                acc += d.w[static_cast<size_t>((fy * p.kw + fx) * p.m + oc)] *
                       (d.x[static_cast<size_t>(base + oc / p.depth_multiplier)] + p.input_offset);
              } else {
                for (int ic = 0; ic < p.c; ++ic)
                  acc += d.w[static_cast<size_t>(((oc * p.kh + fy) * p.kw + fx) * p.c + ic)] *
                         (d.x[static_cast<size_t>(base + ic)] + p.input_offset);
              }
            }
          const size_t q = p.per_channel ? static_cast<size_t>(oc) : 0;
          y[static_cast<size_t>(((b * p.oh + oy) * p.ow + ox) * stride + oc)] =
              finishRef(acc, d.bias[static_cast<size_t>(oc)], d.mult[q], d.shift[q], p);
        }
  return y;
}

void expectSame(const Drawn& d, ConvFn fn, const char* what, int trial) {
  const std::vector<int8_t> want = reference(d);
  std::vector<int8_t> got(want.size(), 77);
  fn(d.x.data(), d.w.data(), d.bias.data(), d.mult.data(), d.shift.data(), got.data(), &d.p);
  const stowage_qconv_params& p = d.p;
  ASSERT_EQ(got, want) << what << " trial " << trial << ": n" << p.n << " h" << p.h << " w" << p.w << " c" << p.c << " m" << p.m
                       << " k" << p.kh << "x" << p.kw << " s" << p.stride_h << "," << p.stride_w << " d" << p.dil_h << ","
                       << p.dil_w << " pad" << p.pad_top << "," << p.pad_left << " stride " << p.out_pixel_stride << " band " << p.row_band;
}

TEST(Int8FastKernels, ConvOnRandomShapesMatchesDirectLoops) {
  std::mt19937 rng(101);
  for (int t = 0; t < 300; ++t) {
    const Drawn d = draw(rng, false);
    expectSame(d, stowage_qconv2d_s8, "host", t);
    expectSame(d, stowage_emu_dsp_qconv2d_s8, "dsp", t);
  }
}

// Pointwise layers take their own kernel (pixel pairs through every filter pair, inputs widened once per pair with the
// DSP extension): channel counts around its limits (widened up to 128 input channels, buffered up to 212 output
// channels), band orders, channel-slice outputs, and accumulators outside the narrow requantization's range.
TEST(Int8FastKernels, PointwiseOnRandomShapesMatchesDirectLoops) {
  std::mt19937 rng(505);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int t = 0; t < 150; ++t) {
    Drawn d = draw(rng, false);
    stowage_qconv_params& p = d.p;
    p.kh = p.kw = p.stride_h = p.stride_w = p.dil_h = p.dil_w = 1;
    p.pad_top = p.pad_left = 0;
    p.oh = p.h;
    p.ow = p.w;
    p.c = p.kc = pick(1, 3) == 1 ? pick(120, 140) : pick(1, 70);
    const int m = pick(1, 6) == 1 ? pick(205, 220) : pick(1, 40);
    d.bias.resize(static_cast<size_t>(m), d.bias.empty() ? 0 : d.bias.back());
    d.mult.resize(static_cast<size_t>(m), d.mult.back());
    d.shift.resize(static_cast<size_t>(m), d.shift.back());
    p.m = m;
    if (p.out_pixel_stride > 0) p.out_pixel_stride = m + pick(1, 3);
    if (p.row_band != 0) p.row_band = pick(1, p.oh) * (p.row_band > 0 ? 1 : -1);
    d.x.resize(static_cast<size_t>(p.n * p.h * p.w * p.c));
    for (auto& v : d.x) v = static_cast<int8_t>(pick(-128, 127));
    d.w.resize(static_cast<size_t>(p.m * p.c));
    for (auto& v : d.w) v = static_cast<int8_t>(pick(-127, 127));
    expectSame(d, stowage_qconv2d_s8, "host", t);
    expectSame(d, stowage_emu_dsp_qconv2d_s8, "dsp", t);
  }
}

TEST(Int8FastKernels, StackBytesNameTheBuffersOfEachPath) {
  stowage_qconv_params p{};
  p.n = 1, p.h = p.w = p.oh = p.ow = 16, p.m = 8, p.kh = p.kw = 3, p.stride_h = p.stride_w = p.dil_h = p.dil_w = 1;
  p.pad_top = p.pad_left = 1;
  p.c = p.kc = 1;  // a first layer: 3-byte window rows
  EXPECT_EQ(stowage_qconv2d_s8_stack_bytes(&p), STOWAGE_IM2COL_STACK_BYTES);
  p.c = p.kc = 16;  // 48-byte rows: the direct loops over a widened filter pair (3 x 48 = 144 window elements)
  EXPECT_EQ(stowage_qconv2d_s8_stack_bytes(&p), STOWAGE_CONV_FILTER_STACK_BYTES);
  p.c = p.kc = 160;  // 3 x 480 window elements: more than the widened pair holds, the byte-wise loop (same frame)
  EXPECT_EQ(stowage_qconv2d_s8_stack_bytes(&p), STOWAGE_CONV_FILTER_STACK_BYTES);
  p.c = p.kc = 16;
  p.c = p.kc = 1, p.kh = p.kw = 1, p.pad_top = p.pad_left = 0;  // pointwise: folded biases and two pixels' outputs
  EXPECT_EQ(stowage_qconv2d_s8_stack_bytes(&p), STOWAGE_POINTWISE_STACK_BYTES);
  p.m = 214;  // more channels than that buffer holds: the filter-pair loops over one long row, a widened pair
  EXPECT_EQ(stowage_qconv2d_s8_stack_bytes(&p), STOWAGE_CONV_FILTER_STACK_BYTES);
  p.m = 8;
  p.kh = p.kw = 3, p.pad_top = p.pad_left = 1, p.dil_w = 2;  // dilated across the row: the reference loops
  EXPECT_EQ(stowage_qconv2d_s8_stack_bytes(&p), 0);
  // Depthwise, up to 7x7 taps: pixel after pixel (a group's widened filters, requantizations and one gathered window);
  // ONNX Runtime's float requantization and an input offset whose fill byte is no int8 take the strip of widened
  // window rows and the four channels' widened filters.
  p.kh = p.kw = 3, p.pad_top = p.pad_left = 1, p.dil_w = 1, p.c = p.m = 8, p.kc = 1, p.depth_multiplier = 1;
  EXPECT_EQ(stowage_qdepthwise_conv2d_s8_stack_bytes(&p), STOWAGE_DW_PIXEL_BYTES);
  EXPECT_EQ(stowage_qdepthwise_conv2d_s8_paths(&p), STOWAGE_QDW_PATH_PIXELS);
  p.requant_f32 = 1;
  EXPECT_EQ(stowage_qdepthwise_conv2d_s8_stack_bytes(&p), STOWAGE_DW_STRIP_BYTES + 8 * 9);
  EXPECT_EQ(stowage_qdepthwise_conv2d_s8_paths(&p), STOWAGE_QDW_PATH_STRIP);
  p.requant_f32 = 0, p.input_offset = 129;
  EXPECT_EQ(stowage_qdepthwise_conv2d_s8_paths(&p), STOWAGE_QDW_PATH_STRIP);
  p.input_offset = 0;
  p.kh = p.kw = 9;  // larger windows: the reference loops, no buffer
  EXPECT_EQ(stowage_qdepthwise_conv2d_s8_stack_bytes(&p), 0);
  EXPECT_EQ(stowage_qdepthwise_conv2d_s8_is_fast(&p), 0);
  // Fully connected: the widened batch row (any length: a longer one is widened in chunks into the same buffer).
  stowage_qfc_params f{};
  f.batches = 1, f.k = 640, f.m = 128;
  EXPECT_EQ(stowage_qfully_connected_s8_stack_bytes(&f), STOWAGE_FC_STACK_BYTES);
  f.k = 3000;
  EXPECT_EQ(stowage_qfully_connected_s8_stack_bytes(&f), STOWAGE_FC_STACK_BYTES);
}

TEST(Int8FastKernels, DepthwiseOnRandomShapesMatchesDirectLoops) {
  std::mt19937 rng(202);
  for (int t = 0; t < 300; ++t) {
    const Drawn d = draw(rng, true);
    expectSame(d, stowage_qdepthwise_conv2d_s8, "host", t);
    expectSame(d, stowage_emu_dsp_qdepthwise_conv2d_s8, "dsp", t);
  }
}

TEST(Int8FastKernels, DepthwiseOnWideRowsAndLargeWindowsMatchesDirectLoops) {
  // Rows wider than one strip chunk (the DSP path's column chunks), windows up to 7x7 (the largest the fast path takes),
  // channel counts that are not a multiple of 4 (a partial last block), bands of an overlapping layer.
  std::mt19937 rng(707);
  for (int t = 0; t < 120; ++t) {
    Drawn d = draw(rng, true);
    stowage_qconv_params& p = d.p;
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    p.depth_multiplier = 1;
    p.kh = pick(1, 7), p.kw = pick(1, 7);
    p.dil_w = pick(1, 4) == 4 ? 2 : 1;
    p.h = pick(1 + (p.kh - 1) * p.dil_h, 14);
    p.w = pick(std::max(1 + (p.kw - 1) * p.dil_w, 20), 100);
    p.c = p.m = pick(1, 3) == 1 ? pick(1, 11) : 4 * pick(1, 5);
    p.pad_top = pick(0, p.kh - 1), p.pad_left = pick(0, p.kw - 1);
    p.oh = (p.h + p.pad_top + pick(0, p.kh - 1) - ((p.kh - 1) * p.dil_h + 1)) / p.stride_h + 1;
    p.ow = (p.w + p.pad_left + pick(0, p.kw - 1) - ((p.kw - 1) * p.dil_w + 1)) / p.stride_w + 1;
    p.out_pixel_stride = pick(1, 4) == 4 ? p.m + pick(1, 3) : 0;
    p.row_band = p.n == 1 && pick(0, 1) == 1 ? pick(1, std::max(1, p.oh)) * (pick(0, 1) == 1 ? 1 : -1) : 0;
    d.x.resize(static_cast<size_t>(p.n * p.h * p.w * p.c));
    for (auto& v : d.x) v = static_cast<int8_t>(pick(-128, 127));
    d.w.resize(static_cast<size_t>(p.kh * p.kw * p.m));
    for (auto& v : d.w) v = static_cast<int8_t>(pick(-127, 127));
    d.bias.resize(static_cast<size_t>(p.m), pick(-30000, 30000));
    d.mult.resize(static_cast<size_t>(p.m), (1 << 30) + pick(0, (1 << 30) - 1));
    d.shift.resize(static_cast<size_t>(p.m), -pick(5, 12));
    ASSERT_TRUE(stowage_qdepthwise_conv2d_s8_is_fast(&p)) << "trial " << t;
    expectSame(d, stowage_qdepthwise_conv2d_s8, "host", t);
    expectSame(d, stowage_emu_dsp_qdepthwise_conv2d_s8, "dsp", t);
  }
}

TEST(Int8FastKernels, DepthwiseOnManyChannelsMatchesDirectLoops) {
  // More channels than one group of the pixel path (64 of a 3x3 window, 20 of 5x5, 8 of 7x7), so that each pixel runs
  // through several groups, band by band in an overlapping layer; channel counts with a tail past a multiple of 4;
  // short rows (KWS's 25x5); input offsets at the ends of the int8 fill (-127 and 128); narrower clamps.
  std::mt19937 rng(909);
  for (int t = 0; t < 80; ++t) {
    Drawn d = draw(rng, true);
    stowage_qconv_params& p = d.p;
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    p.n = 1;
    p.depth_multiplier = 1;
    p.kh = p.kw = pick(1, 4) == 4 ? 2 * pick(2, 3) + 1 : 3;
    p.dil_h = p.dil_w = 1;
    p.h = pick(p.kh, 9), p.w = pick(p.kw, 9);
    p.c = p.m = pick(1, 2) == 1 ? 4 * pick(16, 50) : pick(60, 200);
    p.pad_top = pick(0, p.kh - 1), p.pad_left = pick(0, p.kw - 1);
    p.oh = (p.h + p.pad_top + pick(0, p.kh - 1) - p.kh) / p.stride_h + 1;
    p.ow = (p.w + p.pad_left + pick(0, p.kw - 1) - p.kw) / p.stride_w + 1;
    p.out_pixel_stride = pick(1, 4) == 4 ? p.m + pick(1, 3) : 0;
    p.row_band = pick(0, 1) == 1 ? pick(1, 2) * (pick(0, 1) == 1 ? 1 : -1) : 0;
    const int edge = pick(1, 4);
    p.input_offset = edge == 1 ? -127 : (edge == 2 ? 128 : p.input_offset);
    d.x.resize(static_cast<size_t>(p.h * p.w * p.c));
    for (auto& v : d.x) v = static_cast<int8_t>(pick(-128, 127));
    d.w.resize(static_cast<size_t>(p.kh * p.kw * p.m));
    for (auto& v : d.w) v = static_cast<int8_t>(pick(-127, 127));
    d.bias.resize(static_cast<size_t>(p.m));
    for (auto& v : d.bias) v = pick(-30000, 30000);
    d.mult.resize(static_cast<size_t>(p.m));
    for (auto& v : d.mult) v = (1 << 30) + pick(0, (1 << 30) - 1);
    d.shift.resize(static_cast<size_t>(p.m));
    for (auto& v : d.shift) v = pick(1, 8) == 1 ? pick(0, 2) : -pick(5, 12);
    ASSERT_EQ(stowage_qdepthwise_conv2d_s8_paths(&p), STOWAGE_QDW_PATH_PIXELS) << "trial " << t;
    expectSame(d, stowage_qdepthwise_conv2d_s8, "host", t);
    expectSame(d, stowage_emu_dsp_qdepthwise_conv2d_s8, "dsp", t);
  }
}

// Windows too large to widen whole (more than 384 elements) whose rows are not (3x3 over 44 to 128 channels, as
// ResNet-8's last stack): with the DSP extension one filter row is widened at a time; border rows, border columns,
// strides, row dilation, bands and channel-slice outputs.
TEST(Int8FastKernels, ConvOnWindowsLargerThanTheFilterBufferMatchesDirectLoops) {
  std::mt19937 rng(909);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int by_rows = 0;
  for (int t = 0; t < 60; ++t) {
    Drawn d = draw(rng, false);
    stowage_qconv_params& p = d.p;
    p.kw = pick(1, 3);
    p.c = p.kc = 4 * pick(11, 32);
    p.kh = std::max(pick(2, 5), 384 / (p.kw * p.c) + 1);
    p.dil_w = 1;
    p.h = pick(1 + (p.kh - 1) * p.dil_h, 1 + (p.kh - 1) * p.dil_h + 6);
    p.w = pick(p.kw, 10);
    p.pad_top = pick(0, p.kh - 1), p.pad_left = pick(0, p.kw - 1);
    p.oh = (p.h + p.pad_top + pick(0, p.kh - 1) - ((p.kh - 1) * p.dil_h + 1)) / p.stride_h + 1;
    p.ow = (p.w + p.pad_left + pick(0, p.kw - 1) - p.kw) / p.stride_w + 1;
    if (p.out_pixel_stride > 0) p.out_pixel_stride = p.m + pick(1, 3);
    if (p.row_band != 0) p.row_band = pick(1, std::max(1, p.oh)) * (p.row_band > 0 ? 1 : -1);
    d.x.resize(static_cast<size_t>(p.n * p.h * p.w * p.c));
    for (auto& v : d.x) v = static_cast<int8_t>(pick(-128, 127));
    d.w.resize(static_cast<size_t>(p.m * p.kh * p.kw * p.c));
    for (auto& v : d.w) v = static_cast<int8_t>(pick(-127, 127));
    ASSERT_TRUE(stowage_qconv2d_s8_is_fast(&p)) << "trial " << t;
    by_rows += p.kh * p.kw * p.c > 384 && p.kw * p.c <= 384;
    expectSame(d, stowage_qconv2d_s8, "host", t);
    expectSame(d, stowage_emu_dsp_qconv2d_s8, "dsp", t);
  }
  EXPECT_GT(by_rows, 40);
}

TEST(Int8FastKernels, FullyConnectedOnRandomShapesMatchesDirectLoops) {
  std::mt19937 rng(303);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int t = 0; t < 200; ++t) {
    stowage_qfc_params p{};
    p.batches = pick(1, 3);
    // Every tenth row longer than the 1,024 inputs the DSP path widens at once (it then widens in chunks).
    p.k = t % 10 == 9 ? pick(1000, 2100) : pick(1, 70);
    p.m = pick(1, 9);
    p.per_channel = pick(0, 1);
    p.input_offset = pick(-127, 128);
    p.output_offset = pick(-128, 127);
    p.act_min = -128;
    p.act_max = pick(0, 127);
    std::vector<int8_t> x(static_cast<size_t>(p.batches * p.k)), w(static_cast<size_t>(p.m * p.k));
    for (auto& v : x) v = static_cast<int8_t>(pick(-128, 127));
    for (auto& v : w) v = static_cast<int8_t>(pick(-127, 127));
    std::vector<int32_t> bias, mult, shift;
    for (int i = 0; i < p.m; ++i) {
      bias.push_back(pick(-30000, 30000));
      mult.push_back((1 << 30) + pick(0, (1 << 30) - 1));
      shift.push_back(-pick(3, 12));
    }
    std::vector<int8_t> want(static_cast<size_t>(p.batches * p.m));
    for (int b = 0; b < p.batches; ++b)
      for (int o = 0; o < p.m; ++o) {
        int32_t acc = 0;
        for (int i = 0; i < p.k; ++i) acc += w[static_cast<size_t>(o * p.k + i)] * (x[static_cast<size_t>(b * p.k + i)] + p.input_offset);
        const size_t q = p.per_channel ? static_cast<size_t>(o) : 0;
        const int32_t v = stowage_requantize_s32(acc + bias[static_cast<size_t>(o)], mult[q], shift[q]) + p.output_offset;
        want[static_cast<size_t>(b * p.m + o)] = static_cast<int8_t>(v < p.act_min ? p.act_min : (v > p.act_max ? p.act_max : v));
      }
    for (FcFn fn : {FcFn{stowage_qfully_connected_s8}, FcFn{stowage_emu_dsp_qfully_connected_s8}}) {
      std::vector<int8_t> got(want.size());
      fn(x.data(), w.data(), bias.data(), mult.data(), shift.data(), got.data(), &p);
      ASSERT_EQ(got, want) << "trial " << t << " batches " << p.batches << " k " << p.k << " m " << p.m;
    }
  }
}

TEST(Int8FastKernels, CheapRequantizationEqualsTflitesDoubleRounding) {
  std::mt19937 rng(404);
  std::uniform_int_distribution<int32_t> acc(INT32_MIN, INT32_MAX), small(-(1 << 20), 1 << 20);
  std::uniform_int_distribution<int32_t> mult(1 << 30, INT32_MAX), shift(-31, 0), lshift(1, 8);
  for (int i = 0; i < 200000; ++i) {
    const int32_t a = i % 2 ? acc(rng) : small(rng), m = mult(rng), s = i % 10 == 0 ? lshift(rng) : shift(rng);
    ASSERT_EQ(stowage_emu_requant_gemmlowp(a, m, s), stowage_requantize_s32(a, m, s)) << a << " " << m << " " << s;
    ASSERT_EQ(stowage_emu_rq_apply(a, m, s), stowage_requantize_s32(a, m, s)) << a << " " << m << " " << s;
  }
  // The narrow form, on every accumulator within its bound: random ones, the bound itself, ties.
  for (int i = 0; i < 200000; ++i) {
    const int32_t m = mult(rng), s = i % 10 == 0 ? lshift(rng) : shift(rng);
    const int64_t bound = stowage_emu_rq_narrow_bound(s);
    const int32_t a = static_cast<int32_t>(std::uniform_int_distribution<int64_t>(-bound, bound)(rng));
    ASSERT_EQ(stowage_emu_rq_apply_narrow(a, m, s), stowage_requantize_s32(a, m, s)) << a << " " << m << " " << s;
  }
  for (int32_t s : {0, -1, -2, -7, -31, 1, 3, 29}) {
    const int32_t b = static_cast<int32_t>(stowage_emu_rq_narrow_bound(s));
    EXPECT_EQ(stowage_emu_rq_narrow_bound(s), (int64_t{1} << (30 - std::max(s, 0))) - 1);
    for (int32_t a : {b, -b, b - 1, -b + 1, 3, -3, 1, -1, 5, -5, 0})
      for (int32_t m : {1 << 30, INT32_MAX, 0, 1518500250})
        if (std::abs(int64_t{a}) <= b) {
          EXPECT_EQ(stowage_emu_rq_apply_narrow(a, m, s), stowage_requantize_s32(a, m, s)) << a << " " << m << " " << s;
        }
  }
  EXPECT_EQ(stowage_emu_rq_narrow_bound(30), 0);
  // Ties of the high multiply and of the shift, both signs, and a zero multiplier.
  for (int32_t a : {3, -3, 1, -1, 5, -5, INT32_MIN, INT32_MAX, 0})
    for (int32_t s : {0, -1, -2, -31, 1})
      for (int32_t m : {1 << 30, INT32_MAX, 0}) {
        EXPECT_EQ(stowage_emu_requant_gemmlowp(a, m, s), stowage_requantize_s32(a, m, s)) << a << " " << m << " " << s;
        EXPECT_EQ(stowage_emu_rq_apply(a, m, s), stowage_requantize_s32(a, m, s)) << a << " " << m << " " << s;
      }
}

}  // namespace
}  // namespace stowage
