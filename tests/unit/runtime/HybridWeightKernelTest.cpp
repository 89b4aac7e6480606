// The int8-weight ("_w8") float kernels of TFLite dynamic-range models against the float32 kernels on the
// weights dequantized the way the TFLite importer expands them (scale * (float)q): the results must be
// bit-identical (memcmp), for grouped and depthwise convolutions with padding, stride and dilation, and for
// Gemm with both layouts of B, a broadcast C and a clamp (sizes reaching the float Gemm's full 4 x 8 tiles).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "stowage_kernels.h"

namespace stowage {
namespace {

struct HybridData {
  std::vector<float> x, bias, scales, wf;
  std::vector<int8_t> wq;
};

/// Random activations, int8 weights, per-channel scales (not powers of two) and their float expansion;
/// `channelOf(i)` is weight i's output channel.
template <typename ChannelOf>
HybridData hybridData(size_t xs, size_t ws, size_t channels, uint32_t seed, ChannelOf channelOf) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> fx(-3.0f, 3.0f), fs(0.001f, 0.05f);
  std::uniform_int_distribution<int> q(-127, 127);
  HybridData d;
  for (size_t i = 0; i < xs; ++i) d.x.push_back(fx(rng));
  for (size_t i = 0; i < channels; ++i) d.bias.push_back(fx(rng));
  for (size_t i = 0; i < channels; ++i) d.scales.push_back(fs(rng) * 1.37f);
  for (size_t i = 0; i < ws; ++i) d.wq.push_back(static_cast<int8_t>(q(rng)));
  // As the importer's floatWeights: scale * float(q - zero_point), zero point 0.
  for (size_t i = 0; i < ws; ++i) d.wf.push_back(d.scales[channelOf(i)] * static_cast<float>(static_cast<int64_t>(d.wq[i]) - 0));
  return d;
}

bool hybridSameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(HybridWeightKernels, GroupedConvMatchesFloatKernelBitForBit) {
  // x [1, 9, 7, 6], 2 groups (kc = 3), m = 8, 3x3 filter, stride 2x1, dilation 1x2, padding 1.
  const int32_t h = 9, w = 7, c = 6, m = 8, kh = 3, kw = 3, kc = 3;
  stowage_nhwc_conv_params p{1, h, w, c, 5, 5, m, kh, kw, kc, 2, 1, 1, 2, 1, 1, 1, -1.5f, 2.5f, 0};
  const size_t per = static_cast<size_t>(kh * kw * kc);
  HybridData d = hybridData(static_cast<size_t>(h * w * c), per * m, m, 7u, [&](size_t i) { return i / per; });
  std::vector<float> yf(5 * 5 * m), yq(5 * 5 * m);
  stowage_conv2d_nhwc_f32(d.x.data(), d.wf.data(), d.bias.data(), yf.data(), &p);
  stowage_conv2d_nhwc_w8_f32(d.x.data(), d.wq.data(), d.scales.data(), d.bias.data(), yq.data(), &p);
  EXPECT_TRUE(hybridSameBits(yf, yq));
  stowage_conv2d_nhwc_f32(d.x.data(), d.wf.data(), nullptr, yf.data(), &p);
  stowage_conv2d_nhwc_w8_f32(d.x.data(), d.wq.data(), d.scales.data(), nullptr, yq.data(), &p);
  EXPECT_TRUE(hybridSameBits(yf, yq));
}

TEST(HybridWeightKernels, DepthwiseConvMatchesFloatKernelBitForBit) {
  // x [2, 8, 6, 4], depth multiplier 2 (m = 8), 3x3, stride 1, padding 1, no clamp.
  const int32_t h = 8, w = 6, c = 4, m = 8;
  stowage_nhwc_conv_params p{2, h, w, c, h, w, m, 3, 3, 1, 1, 1, 1, 1, 1, 1, 2, -INFINITY, INFINITY, 0};
  HybridData d = hybridData(static_cast<size_t>(2 * h * w * c), 9 * m, m, 11u, [&](size_t i) { return i % m; });
  std::vector<float> yf(2 * h * w * m), yq(2 * h * w * m);
  stowage_depthwise_conv2d_nhwc_f32(d.x.data(), d.wf.data(), d.bias.data(), yf.data(), &p);
  stowage_depthwise_conv2d_nhwc_w8_f32(d.x.data(), d.wq.data(), d.scales.data(), d.bias.data(), yq.data(), &p);
  EXPECT_TRUE(hybridSameBits(yf, yq));
}

TEST(HybridWeightKernels, GemmMatchesFloatKernelBitForBit) {
  for (int transB = 0; transB < 2; ++transB) {
    // y [9, 19] = x [9, 37] * B: full 4 x 8 tiles and ragged ones; C per column; Relu6 clamp.
    const int32_t m = 9, n = 19, k = 37;
    HybridData d = hybridData(static_cast<size_t>(m * k), static_cast<size_t>(n * k), n, 13u + transB,
                              [&](size_t i) { return transB ? i / k : i % n; });
    stowage_gemm_params p;
    std::memset(&p, 0, sizeof p);
    p.m = m, p.n = n, p.k = k, p.trans_b = transB, p.alpha = 1.0f, p.beta = 1.0f, p.c_rows = 1, p.c_cols = n;
    p.clamp = 1, p.clamp_min = 0.0f, p.clamp_max = 6.0f;
    std::vector<float> yf(static_cast<size_t>(m * n)), yq(static_cast<size_t>(m * n));
    stowage_gemm_f32(d.x.data(), d.wf.data(), d.bias.data(), yf.data(), &p);
    stowage_gemm_w8_f32(d.x.data(), d.wq.data(), d.scales.data(), d.bias.data(), yq.data(), &p);
    EXPECT_TRUE(hybridSameBits(yf, yq)) << "transB " << transB;
    p.clamp = 0;
    stowage_gemm_f32(d.x.data(), d.wf.data(), nullptr, yf.data(), &p);
    stowage_gemm_w8_f32(d.x.data(), d.wq.data(), d.scales.data(), nullptr, yq.data(), &p);
    EXPECT_TRUE(hybridSameBits(yf, yq)) << "transB " << transB << " without C";
  }
}

}  // namespace
}  // namespace stowage
