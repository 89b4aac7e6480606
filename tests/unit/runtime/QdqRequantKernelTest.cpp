// The NHWC int8 kernels with ONNX Runtime's requantization (requant_f32 = 1: what pass/QdqNhwc makes of the QDQ
// layers) against the NCHW QLinear kernel they replace (stowage_qlinear_conv with requant_f32, onnx_qlinear.c): the
// same bytes on every path (im2col, general, pointwise, depthwise, fully connected, the reference loops of grouped
// shapes), as the host builds them and with the Arm DSP instructions emulated (Int8DspEmulation.c).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
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
void stowage_emu_dsp_qconv2d_s8_rqf32(const int8_t*, const int8_t*, const int32_t*, const int32_t*, const int32_t*, int8_t*,
                                      const stowage_qconv_params*);
void stowage_emu_dsp_qdepthwise_conv2d_s8_rqf32(const int8_t*, const int8_t*, const int32_t*, const int32_t*, const int32_t*,
                                                int8_t*, const stowage_qconv_params*);
void stowage_emu_dsp_qfully_connected_s8_rqf32(const int8_t*, const int8_t*, const int32_t*, const int32_t*, const int32_t*,
                                               int8_t*, const stowage_qfc_params*);
}

namespace stowage {
namespace {

struct QdqLayerShape {
  int c, h, w, m, k, stride, pad;
  bool depthwise, perChannel;
};

/// Runs one layer both ways; returns the number of differing outputs (NHWC host, NHWC with DSP emulated).
std::pair<int, int> qdqCompareLayer(const QdqLayerShape& s, std::mt19937& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int kc = s.depthwise ? 1 : s.c;
  const int oh = (s.h + 2 * s.pad - s.k) / s.stride + 1, ow = (s.w + 2 * s.pad - s.k) / s.stride + 1;
  std::vector<int8_t> x(static_cast<size_t>(s.c * s.h * s.w)), xn(x.size()), w(static_cast<size_t>(s.m * kc * s.k * s.k)), wn(w.size());
  std::vector<int32_t> bias(static_cast<size_t>(s.m)), mult(static_cast<size_t>(s.m)), shift(static_cast<size_t>(s.m), 0);
  std::vector<float> ws(static_cast<size_t>(s.m));
  std::vector<int8_t> wz(static_cast<size_t>(s.m), 0);
  const float xs = 0.01f + static_cast<float>(pick(0, 1000)) * 1e-5f, ys = 0.02f + static_cast<float>(pick(0, 1000)) * 1e-4f;
  const int8_t xz = static_cast<int8_t>(pick(-128, 127)), yz = static_cast<int8_t>(pick(-30, 30));
  for (auto& v : x) v = static_cast<int8_t>(pick(-128, 127));
  for (auto& v : w) v = static_cast<int8_t>(pick(-127, 127));
  for (int i = 0; i < s.m; ++i) {
    bias[static_cast<size_t>(i)] = pick(-5000, 5000);
    ws[static_cast<size_t>(i)] = s.perChannel ? 0.0005f + static_cast<float>(pick(0, 1000)) * 1e-5f : 0.004f;
  }
  for (int c = 0; c < s.c; ++c)
    for (int h = 0; h < s.h; ++h)
      for (int v = 0; v < s.w; ++v) xn[static_cast<size_t>((h * s.w + v) * s.c + c)] = x[static_cast<size_t>((c * s.h + h) * s.w + v)];
  for (int o = 0; o < s.m; ++o)
    for (int c = 0; c < kc; ++c)
      for (int a = 0; a < s.k; ++a)
        for (int b = 0; b < s.k; ++b) {
          const int from = ((o * kc + c) * s.k + a) * s.k + b;
          const int to = s.depthwise ? (a * s.k + b) * s.m + o : ((o * s.k + a) * s.k + b) * kc + c;
          wn[static_cast<size_t>(to)] = w[static_cast<size_t>(from)];
        }
  for (int o = 0; o < (s.perChannel ? s.m : 1); ++o) {
    const float xw = xs * ws[static_cast<size_t>(o)];
    const float m = xw / ys;
    std::memcpy(&mult[static_cast<size_t>(o)], &m, 4);
  }
  // A Relu absorbed into the output range on every other layer.
  const bool relu = pick(0, 1) == 1;
  std::vector<int8_t> want(static_cast<size_t>(s.m * oh * ow)), got(want.size()), dsp(want.size());
  stowage_qlinear_conv_params q;
  std::memset(&q, 0, sizeof q);
  q.n = 1, q.c = s.c, q.h = s.h, q.w = s.w, q.m = s.m, q.oh = oh, q.ow = ow, q.kh = s.k, q.kw = s.k;
  q.group = s.depthwise ? s.c : 1, q.stride_h = q.stride_w = s.stride, q.dil_h = q.dil_w = 1, q.pad_top = q.pad_left = s.pad;
  q.x_type = q.w_type = q.y_type = STOWAGE_ELEM_S8, q.w_quant_count = s.perChannel ? s.m : 1, q.requant_f32 = 1;
  q.clamp = relu ? 1 : 0, q.y_min = yz, q.y_max = 127;
  stowage_qlinear_conv(x.data(), w.data(), &xs, &xz, ws.data(), wz.data(), &ys, &yz, bias.data(), want.data(), &q);
  int bad = 0, badDsp = 0;
  auto countBad = [&](const std::vector<int8_t>& y, int& n) {
    for (int o = 0; o < s.m; ++o)
      for (int i = 0; i < oh * ow; ++i) n += want[static_cast<size_t>(o * oh * ow + i)] != y[static_cast<size_t>(i * s.m + o)];
  };
  if (s.k == 1 && s.h == 1 && s.w == 1 && !s.depthwise) {
    stowage_qfc_params f;
    std::memset(&f, 0, sizeof f);
    f.batches = 1, f.k = s.c, f.m = s.m, f.per_channel = s.perChannel, f.input_offset = -xz, f.output_offset = yz;
    f.act_min = relu ? yz : -128, f.act_max = 127, f.requant_f32 = 1;
    stowage_qfully_connected_s8_rqf32(xn.data(), wn.data(), bias.data(), mult.data(), shift.data(), got.data(), &f);
    stowage_emu_dsp_qfully_connected_s8_rqf32(xn.data(), wn.data(), bias.data(), mult.data(), shift.data(), dsp.data(), &f);
  } else {
    stowage_qconv_params p;
    std::memset(&p, 0, sizeof p);
    p.n = 1, p.h = s.h, p.w = s.w, p.c = s.c, p.oh = oh, p.ow = ow, p.m = s.m, p.kh = p.kw = s.k, p.kc = kc;
    p.stride_h = p.stride_w = s.stride, p.dil_h = p.dil_w = 1, p.pad_top = p.pad_left = s.pad, p.depth_multiplier = 1;
    p.per_channel = s.perChannel, p.input_offset = -xz, p.output_offset = yz, p.act_min = relu ? yz : -128, p.act_max = 127;
    p.requant_f32 = 1;
    if (s.depthwise) {
      stowage_qdepthwise_conv2d_s8_rqf32(xn.data(), wn.data(), bias.data(), mult.data(), shift.data(), got.data(), &p);
      stowage_emu_dsp_qdepthwise_conv2d_s8_rqf32(xn.data(), wn.data(), bias.data(), mult.data(), shift.data(), dsp.data(), &p);
    } else {
      stowage_qconv2d_s8_rqf32(xn.data(), wn.data(), bias.data(), mult.data(), shift.data(), got.data(), &p);
      stowage_emu_dsp_qconv2d_s8_rqf32(xn.data(), wn.data(), bias.data(), mult.data(), shift.data(), dsp.data(), &p);
    }
  }
  countBad(got, bad);
  countBad(dsp, badDsp);
  return {bad, badDsp};
}

TEST(QdqRequantKernel, NhwcInt8KernelsGiveTheQLinearConvBytes) {
  std::mt19937 rng(28);
  const std::vector<QdqLayerShape> shapes = {
      {3, 32, 32, 16, 3, 1, 1, false, true},    // first layer: im2col
      {16, 16, 16, 32, 3, 2, 1, false, true},   // general fast path, strided
      {16, 16, 16, 32, 3, 1, 1, false, false},  // per tensor
      {32, 8, 8, 64, 1, 1, 0, false, true},     // pointwise
      {32, 8, 8, 300, 1, 1, 0, false, true},    // pointwise, more channels than its buffers
      {200, 5, 5, 16, 1, 1, 0, false, false},   // pointwise, long inputs
      {32, 12, 12, 32, 3, 1, 1, true, true},    // depthwise
      {30, 13, 11, 30, 3, 2, 1, true, false},   // depthwise, odd sizes
      {8, 10, 10, 8, 10, 1, 0, false, true},    // the window is the whole input
      {64, 1, 1, 10, 1, 1, 0, false, true},     // fully connected
      {250, 1, 1, 37, 1, 1, 0, false, false},   // fully connected, per tensor
  };
  for (const QdqLayerShape& s : shapes) {
    for (int round = 0; round < 3; ++round) {
      const auto [bad, badDsp] = qdqCompareLayer(s, rng);
      EXPECT_EQ(bad, 0) << "c " << s.c << " h " << s.h << " m " << s.m << " k " << s.k << (s.depthwise ? " depthwise" : "");
      EXPECT_EQ(badDsp, 0) << "DSP emulated: c " << s.c << " h " << s.h << " m " << s.m << " k " << s.k;
    }
  }
}

// QuantizeLinear rounds in float32 only (a Cortex-M4F emulates double in software): the bytes of
// round_half_even((double)(x / scale)) + zero point, saturated, for every kind of float (ties, huge, NaN, infinities).
TEST(QdqRequantKernel, QuantizeLinearInFloat32GivesTheDoubleRoundingsBytes) {
  std::mt19937 rng(28);
  std::vector<float> x(60000);
  for (size_t i = 0; i < x.size(); ++i) {
    const uint32_t bits = static_cast<uint32_t>(rng());
    if (i % 3 == 0) std::memcpy(&x[i], &bits, 4);                                        // any float
    else if (i % 3 == 1) x[i] = static_cast<float>(static_cast<int>(bits % 4000) - 2000) * 0.03125f;  // ties
    else x[i] = static_cast<float>(static_cast<int>(bits % 100000) - 50000) * 1e-3f;
  }
  x[0] = std::numeric_limits<float>::quiet_NaN(), x[1] = std::numeric_limits<float>::infinity(), x[2] = -x[1], x[3] = 1e30f;
  for (int type : {STOWAGE_ELEM_S8, STOWAGE_ELEM_U8})
    for (float scale : {0.0625f, 0.0137f, 3.0f}) {
      const int32_t zp = type == STOWAGE_ELEM_U8 ? 128 : -3;
      const int8_t zs = static_cast<int8_t>(zp);
      const uint8_t zu = static_cast<uint8_t>(zp);
      const stowage_qlinear_quant_params p{1, 1, static_cast<int64_t>(x.size()), type};
      std::vector<uint8_t> got(x.size());
      stowage_quantize_linear_f32(x.data(), &scale, type == STOWAGE_ELEM_U8 ? static_cast<const void*>(&zu) : &zs, got.data(), &p);
      int bad = 0;
      for (size_t i = 0; i < x.size(); ++i) {
        const double v = stowage_round_half_even(static_cast<double>(x[i] / scale)) + zp;
        const double lo = type == STOWAGE_ELEM_U8 ? 0.0 : -128.0, hi = type == STOWAGE_ELEM_U8 ? 255.0 : 127.0;
        const double c = !(v >= lo) ? lo : (v > hi ? hi : v);
        const uint8_t want = type == STOWAGE_ELEM_U8 ? static_cast<uint8_t>(c) : static_cast<uint8_t>(static_cast<int8_t>(c));
        bad += got[i] != want;
      }
      EXPECT_EQ(bad, 0) << "type " << type << " scale " << scale;
    }
}

}  // namespace
}  // namespace stowage
