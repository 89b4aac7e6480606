// Random recipes written as int8 or float32 .tflite files (see RandomTflite.h).
#include "stowage/zoo/RandomTflite.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "stowage/zoo/OnnxGraphBuilder.h"
#include "stowage/zoo/TfliteWriter.h"

namespace stowage::zoo {
namespace random_tflite_detail {

using tflitewriter::OpSpec;
using tflitewriter::TensorSpec;

// BuiltinOperator codes and BuiltinOptions tags (docs/tflite-format-notes.md in ../shared).
enum Code : int32_t {
  kAdd = 0, kAvgPool = 1, kConcat = 2, kConv = 3, kDepthwise = 4, kFc = 9, kLogistic = 14, kMaxPool = 17, kMul = 18,
  kRelu = 19, kReluN1To1 = 20, kRelu6 = 21, kReshape = 22, kSoftmax = 25, kTanh = 28, kPad = 34, kTranspose = 39,
  kMean = 40, kLeakyRelu = 98, kHardSwish = 117,
};
enum Tag : uint8_t {
  kConvOptions = 1, kDepthwiseOptions = 2, kPoolOptions = 5, kFcOptions = 8, kSoftmaxOptions = 9, kConcatOptions = 10,
  kAddOptions = 11, kMulOptions = 21, kReducerOptions = 27, kLeakyReluOptions = 75,
};
constexpr int8_t kSame = 0, kValid = 1;

/// Per-tensor int8 parameters.
struct QParams {
  float scale = 1.0f / 128;
  int64_t zero = 0;
  bool operator==(const QParams& o) const { return scale == o.scale && zero == o.zero; }
};

/// An activation tensor of the model under construction: its index, NHWC shape, estimated range, parameters.
struct TValue {
  int32_t index = -1;
  std::vector<int32_t> shape;
  float lo = -1.0f, hi = 1.0f;
  QParams q;
};

class TfliteGraph {
 public:
  /// `float32`: float tensors, weights and biases without quantization tables (the same random draws as int8, so
  /// that the weights' values are those the int8 model quantizes).
  TfliteGraph(uint64_t seed, bool perChannel, bool symmetric, bool float32)
      : rng_(seed ^ 0x7F11E5EEDull), perChannel_(perChannel), symmetric_(symmetric), float_(float32) {}

  std::vector<TensorSpec> tensors;
  std::vector<OpSpec> ops;
  std::vector<int32_t> outputs;
  std::vector<TValue> values;  // 4-D activations so far (joins look back here)

  int64_t pick(int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(rng_.next() % static_cast<uint64_t>(hi - lo + 1)); }
  bool chance(int percent) { return static_cast<int>(rng_.next() % 100) < percent; }
  float jitter() { return 0.75f + 0.25f * (rng_.uniform() + 1.0f); }

  /// TFLite's asymmetric int8 parameters of [lo, hi] (widened to hold 0), or symmetric ones.
  QParams quant(float lo, float hi) const {
    lo = std::min(lo, 0.0f), hi = std::max(hi, 0.0f);
    if (hi - lo < 1e-3f) hi = lo + 1e-3f;
    QParams q;
    if (symmetric_) {
      q.scale = std::max(-lo, hi) / 127.0f;
      q.zero = 0;
      return q;
    }
    q.scale = (hi - lo) / 255.0f;
    q.zero = std::clamp<int64_t>(static_cast<int64_t>(std::lround(-128.0 - lo / q.scale)), -128, 127);
    return q;
  }

  TValue activation(const std::string& name, const std::vector<int32_t>& shape, float lo, float hi, const QParams* fixed = nullptr) {
    TValue v;
    v.shape = shape;
    v.lo = lo, v.hi = hi;
    v.q = fixed ? *fixed : quant(lo, hi);
    TensorSpec t;
    t.name = fmt::format("t{}_{}", tensors.size(), name);
    t.shape = shape;
    t.type = float_ ? 0 : 9;
    if (!float_) {
      t.scales = {v.q.scale};
      t.zeroPoints = {v.q.zero};
    }
    v.index = static_cast<int32_t>(tensors.size());
    tensors.push_back(std::move(t));
    if (shape.size() == 4) values.push_back(v);
    return v;
  }

  int32_t constantInts(const std::string& name, const std::vector<int32_t>& v, std::vector<int32_t> shape = {}) {
    TensorSpec t;
    t.name = fmt::format("t{}_{}", tensors.size(), name);
    t.shape = shape.empty() ? std::vector<int32_t>{static_cast<int32_t>(v.size())} : shape;
    t.type = 2;
    t.data = tflitewriter::bytesOf(v);
    tensors.push_back(std::move(t));
    return static_cast<int32_t>(tensors.size() - 1);
  }

  /// Random float weights of `shape`, uniform in +-halfWidth, quantized symmetric int8 along `axis` (per channel)
  /// or per tensor; returns the tensor and its scales (one per channel of `axis`).
  std::pair<int32_t, std::vector<float>> weights(const std::string& name, const std::vector<int32_t>& shape, int axis, float halfWidth) {
    int64_t n = 1;
    for (int32_t d : shape) n *= d;
    std::vector<float> w(static_cast<size_t>(n));
    for (float& x : w) x = halfWidth * rng_.uniform();
    const int64_t channels = shape[static_cast<size_t>(axis)];
    int64_t inner = 1;
    for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
    auto channelOf = [&](int64_t i) { return perChannel_ ? (i / inner) % channels : 0; };
    std::vector<float> maxAbs(perChannel_ ? static_cast<size_t>(channels) : 1, 0.0f);
    for (int64_t i = 0; i < n; ++i) {
      float& m = maxAbs[static_cast<size_t>(channelOf(i))];
      m = std::max(m, std::fabs(w[static_cast<size_t>(i)]));
    }
    std::vector<float> scales;
    for (float m : maxAbs) scales.push_back(std::max(m, 1e-6f) / 127.0f);
    std::vector<int8_t> q(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      const float s = scales[static_cast<size_t>(channelOf(i))];
      q[static_cast<size_t>(i)] = static_cast<int8_t>(std::clamp<long>(std::lround(w[static_cast<size_t>(i)] / s), -127, 127));
    }
    TensorSpec t;
    t.name = fmt::format("t{}_{}", tensors.size(), name);
    t.shape = shape;
    if (float_) {
      t.type = 0;
      t.data = tflitewriter::bytesOf(w);
    } else {
      t.type = 9;
      t.scales = scales;
      t.zeroPoints.assign(scales.size(), 0);
      if (perChannel_) t.quantizedDimension = axis;
      t.data = tflitewriter::bytesOf(q);
    }
    tensors.push_back(std::move(t));
    std::vector<float> perChannel(static_cast<size_t>(channels));
    for (int64_t c = 0; c < channels; ++c) perChannel[static_cast<size_t>(c)] = scales[perChannel_ ? static_cast<size_t>(c) : 0];
    return {static_cast<int32_t>(tensors.size() - 1), perChannel};
  }

  /// An int32 bias of `channels` entries (floats in +-0.1) at input_scale * weight_scale[c] (float32: the floats).
  int32_t bias(const std::string& name, float inScale, const std::vector<float>& wScales) {
    std::vector<int32_t> b;
    std::vector<float> f;
    for (float ws : wScales) {
      const double s = static_cast<double>(inScale) * static_cast<double>(ws);
      const double v = 0.1 * rng_.uniform();
      f.push_back(static_cast<float>(v));
      b.push_back(static_cast<int32_t>(std::clamp<double>(std::round(v / s), -1e9, 1e9)));
    }
    TensorSpec t;
    t.name = fmt::format("t{}_{}", tensors.size(), name);
    t.shape = {static_cast<int32_t>(b.size())};
    if (float_) {
      t.type = 0;
      t.data = tflitewriter::bytesOf(f);
    } else {
      t.type = 2;
      for (float ws : wScales) t.scales.push_back(inScale * ws);
      t.zeroPoints.assign(t.scales.size(), 0);
      t.data = tflitewriter::bytesOf(b);
    }
    tensors.push_back(std::move(t));
    return static_cast<int32_t>(tensors.size() - 1);
  }

  /// A float bias of zeros: TFLite's XNNPACK delegate rejects a float CONV_2D without one ("Tensor at index 2 was
  /// optional but was expected"), and converters always write one, so the float form has no bias-less convs.
  int32_t zeroBias(const std::string& name, int64_t channels) {
    TensorSpec t;
    t.name = fmt::format("t{}_{}", tensors.size(), name);
    t.shape = {static_cast<int32_t>(channels)};
    t.type = 0;
    t.data = tflitewriter::bytesOf(std::vector<float>(static_cast<size_t>(channels), 0.0f));
    tensors.push_back(std::move(t));
    return static_cast<int32_t>(tensors.size() - 1);
  }

  OpSpec& op(int32_t code, std::vector<int32_t> inputs, const TValue& out, uint8_t tag = 0) {
    OpSpec o;
    o.code = code;
    o.inputs = std::move(inputs);
    o.outputs = {out.index};
    o.optionsTag = tag;
    ops.push_back(std::move(o));
    return ops.back();
  }

  /// Conv of `step` on x (NHWC); false when it cannot apply. `fixedOut`: the output's parameters (a concatenated
  /// branch must be quantized like the tensor it joins); `allowFused`: may fuse RELU / RELU6.
  bool conv(const TValue& x, const RandomStep& step, TValue& out, const QParams* fixedOut = nullptr, bool allowFused = true) {
    if (x.shape.size() != 4) return false;
    const int64_t h = x.shape[1], w = x.shape[2], c = x.shape[3];
    int64_t oc = std::max<int64_t>(1, step.outChannels);
    const bool depthwise = step.groupMode == 1;
    if (depthwise) oc = c * std::max<int64_t>(1, std::min<int64_t>(2, oc / std::max<int64_t>(1, c)));
    int64_t kh = step.kernelH, kw = step.kernelW, dh = step.dilationH, dw = step.dilationW;
    int64_t pads[4];
    std::copy(step.pads, step.pads + 4, pads);
    auto fit = [](int64_t in, int64_t& k, int64_t& d, int64_t& pb, int64_t& pe) {
      if (d * (k - 1) + 1 > in + pb + pe) d = 1;
      if (k > in + pb + pe) k = std::max<int64_t>(1, in);
      pb = std::min(pb, d * (k - 1));
      pe = std::min(pe, d * (k - 1));
      return d * (k - 1) + 1 <= in + pb + pe;
    };
    if (!fit(h, kh, dh, pads[0], pads[2]) || !fit(w, kw, dw, pads[1], pads[3])) return false;
    const int64_t sh = step.strideH, sw = step.strideW;
    // SAME's pads for this input, kernel, stride and dilation: the recipe's pads may be them.
    auto samePads = [](int64_t in, int64_t k, int64_t s, int64_t d) {
      const int64_t out = (in + s - 1) / s, total = std::max<int64_t>((out - 1) * s + d * (k - 1) + 1 - in, 0);
      return std::pair{total / 2, total - total / 2};
    };
    const auto [sameTop, sameBottom] = samePads(h, kh, sh, dh);
    const auto [sameLeft, sameRight] = samePads(w, kw, sw, dw);
    int8_t padding = kValid;
    TValue in = x;
    if (pads[0] == 0 && pads[1] == 0 && pads[2] == 0 && pads[3] == 0) {
      padding = kValid;
    } else if (pads[0] == sameTop && pads[2] == sameBottom && pads[1] == sameLeft && pads[3] == sameRight) {
      padding = kSame;
    } else {  // explicit pads: a PAD (with the input's zero point) before a VALID conv, as converters write them
      const std::vector<int32_t> padded{x.shape[0], static_cast<int32_t>(h + pads[0] + pads[2]),
                                        static_cast<int32_t>(w + pads[1] + pads[3]), x.shape[3]};
      const int32_t paddings = constantInts("paddings", {0, 0, static_cast<int32_t>(pads[0]), static_cast<int32_t>(pads[2]),
                                                         static_cast<int32_t>(pads[1]), static_cast<int32_t>(pads[3]), 0, 0},
                                            {4, 2});
      in = activation("pad", padded, x.lo, x.hi, &x.q);
      op(kPad, {x.index, paddings}, in);
    }
    const int64_t ih = in.shape[1], iw = in.shape[2];
    const int64_t oh = padding == kSame ? (ih + sh - 1) / sh : (ih - dh * (kh - 1) - 1) / sh + 1;
    const int64_t ow = padding == kSame ? (iw + sw - 1) / sw : (iw - dw * (kw - 1) - 1) / sw + 1;
    if (oh < 1 || ow < 1) return false;
    const int64_t fanIn = (depthwise ? 1 : c) * kh * kw;
    const float mag = std::max(std::fabs(x.lo), std::fabs(x.hi));
    const int fused = allowFused && !fixedOut && chance(25) ? (chance(50) ? 1 : 3) : 0;  // RELU or RELU6
    float lo = -mag * jitter(), hi = mag * jitter();
    if (fused == 1) lo = 0;
    if (fused == 3) lo = 0, hi = std::min(hi, 6.0f);
    const std::vector<int32_t> wShape = depthwise ? std::vector<int32_t>{1, static_cast<int32_t>(kh), static_cast<int32_t>(kw), static_cast<int32_t>(oc)}
                                                  : std::vector<int32_t>{static_cast<int32_t>(oc), static_cast<int32_t>(kh), static_cast<int32_t>(kw), static_cast<int32_t>(c)};
    auto [wIndex, wScales] = weights("filter", wShape, depthwise ? 3 : 0, std::sqrt(6.0f / static_cast<float>(fanIn)));
    const int32_t b = step.bias ? bias("bias", in.q.scale, wScales) : float_ ? zeroBias("bias", oc) : -1;
    out = activation(depthwise ? "depthwise" : "conv", {x.shape[0], static_cast<int32_t>(oh), static_cast<int32_t>(ow), static_cast<int32_t>(oc)},
                     lo, hi, fixedOut);
    OpSpec& o = op(depthwise ? kDepthwise : kConv, {in.index, wIndex, b}, out, depthwise ? kDepthwiseOptions : kConvOptions);
    o.byteFields.push_back({0, padding});
    o.intFields.push_back({1, static_cast<int32_t>(sw)});
    o.intFields.push_back({2, static_cast<int32_t>(sh)});
    if (depthwise) {
      o.intFields.push_back({3, static_cast<int32_t>(oc / c)});
      o.byteFields.push_back({4, static_cast<int8_t>(fused)});
      o.intFields.push_back({5, static_cast<int32_t>(dw)});
      o.intFields.push_back({6, static_cast<int32_t>(dh)});
    } else {
      o.byteFields.push_back({3, static_cast<int8_t>(fused)});
      o.intFields.push_back({4, static_cast<int32_t>(dw)});
      o.intFields.push_back({5, static_cast<int32_t>(dh)});
    }
    return true;
  }

  /// A same-shape convolution (stride 1, SAME) with `outChannels` outputs, for branches.
  bool sameConv(const TValue& x, const RandomStep& step, int64_t outChannels, TValue& out, const QParams* fixedOut = nullptr) {
    RandomStep s = step;
    s.outChannels = outChannels;
    s.strideH = s.strideW = 1;
    s.kernelH = std::max<int64_t>(1, std::min<int64_t>(s.kernelH, x.shape[1]));
    s.kernelW = std::max<int64_t>(1, std::min<int64_t>(s.kernelW, x.shape[2]));
    s.pads[0] = s.pads[2] = s.dilationH * (s.kernelH - 1) / 2;  // only a hint: SAME pads odd kernels this way
    s.pads[1] = s.pads[3] = s.dilationW * (s.kernelW - 1) / 2;
    s.pads[2] += s.dilationH * (s.kernelH - 1) % 2;
    s.pads[3] += s.dilationW * (s.kernelW - 1) % 2;
    if (s.groupMode == 1 && outChannels != x.shape[3]) s.groupMode = 0;
    if (!conv(x, s, out, fixedOut)) return false;
    return out.shape == std::vector<int32_t>{x.shape[0], x.shape[1], x.shape[2], static_cast<int32_t>(outChannels)};
  }

  bool pool(const TValue& x, const RandomStep& step, TValue& out) {
    if (x.shape.size() != 4) return false;
    const bool isMax = step.kind == RandomStepKind::MaxPool;
    const int64_t h = x.shape[1], w = x.shape[2];
    const int64_t kh = std::min<int64_t>(step.kernelH, h), kw = std::min<int64_t>(step.kernelW, w);
    const bool padded = step.pads[0] || step.pads[1] || step.pads[2] || step.pads[3];
    const int64_t oh = padded ? (h + step.strideH - 1) / step.strideH : (h - kh) / step.strideH + 1;
    const int64_t ow = padded ? (w + step.strideW - 1) / step.strideW : (w - kw) / step.strideW + 1;
    if (oh < 1 || ow < 1) return false;
    out = activation(isMax ? "maxpool" : "avgpool", {x.shape[0], static_cast<int32_t>(oh), static_cast<int32_t>(ow), x.shape[3]}, x.lo, x.hi, &x.q);
    OpSpec& o = op(isMax ? kMaxPool : kAvgPool, {x.index}, out, kPoolOptions);
    o.byteFields.push_back({0, padded ? kSame : kValid});
    o.intFields.push_back({1, static_cast<int32_t>(step.strideW)});
    o.intFields.push_back({2, static_cast<int32_t>(step.strideH)});
    o.intFields.push_back({3, static_cast<int32_t>(kw)});
    o.intFields.push_back({4, static_cast<int32_t>(kh)});
    return true;
  }

  TValue unary(const TValue& x, const RandomStep& step) {
    const std::string& a = step.activation;
    if (a == "Relu") {
      TValue out = activation("relu", x.shape, 0, std::max(x.hi, 0.1f));
      op(kRelu, {x.index}, out);
      return out;
    }
    if (a == "Clip") {
      const bool six = step.clipMin >= 0;
      TValue out = activation(six ? "relu6" : "relu_n1_to_1", x.shape, six ? 0.0f : -1.0f, six ? 6.0f : 1.0f);
      op(six ? kRelu6 : kReluN1To1, {x.index}, out);
      return out;
    }
    if (a == "Sigmoid") {
      const QParams q{1.0f / 256, -128};
      TValue out = activation("logistic", x.shape, 0, 1, &q);
      op(kLogistic, {x.index}, out);
      return out;
    }
    if (a == "Tanh") {
      const QParams q{1.0f / 128, 0};
      TValue out = activation("tanh", x.shape, -1, 1, &q);
      op(kTanh, {x.index}, out);
      return out;
    }
    if (a == "LeakyRelu") {
      TValue out = activation("leaky_relu", x.shape, x.lo * step.alpha, x.hi);
      op(kLeakyRelu, {x.index}, out, kLeakyReluOptions).floatFields.push_back({0, step.alpha});
      return out;
    }
    TValue out = activation("hard_swish", x.shape, -0.375f, std::max(x.hi, 0.1f));
    op(kHardSwish, {x.index}, out);
    return out;
  }

  TValue binary(bool isMul, const TValue& a, const TValue& b) {
    float lo = a.lo + b.lo, hi = a.hi + b.hi;
    if (isMul) {
      const float m = std::max(std::fabs(a.lo), std::fabs(a.hi)) * std::max(std::fabs(b.lo), std::fabs(b.hi));
      lo = -m, hi = m;
    }
    const int fused = chance(20) ? 1 : 0;
    if (fused) lo = 0;
    TValue out = activation(isMul ? "mul" : "add", a.shape, lo, hi);
    op(isMul ? kMul : kAdd, {a.index, b.index}, out, isMul ? kMulOptions : kAddOptions).byteFields.push_back({0, static_cast<int8_t>(fused)});
    return out;
  }

  TValue reshape(const TValue& x, const std::vector<int32_t>& shape) {
    TValue out = activation("reshape", shape, x.lo, x.hi, &x.q);
    op(kReshape, {x.index, constantInts("shape", shape)}, out);
    return out;
  }

  TValue transpose(const TValue& x, const std::vector<int32_t>& perm) {
    std::vector<int32_t> shape(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) shape[i] = x.shape[static_cast<size_t>(perm[i])];
    TValue out = activation("transpose", shape, x.lo, x.hi, &x.q);
    op(kTranspose, {x.index, constantInts("perm", perm)}, out);
    return out;
  }

  TValue head(const TValue& x, const RandomStep& step) {
    int64_t k = 1;
    for (size_t d = 1; d < x.shape.size(); ++d) k *= x.shape[d];
    const TValue flat = step.variant == 0 ? reshape(x, {x.shape[0], static_cast<int32_t>(k)}) : x;
    const int32_t f = static_cast<int32_t>(std::max<int64_t>(1, step.outChannels));
    const float mag = std::max(std::fabs(x.lo), std::fabs(x.hi)) * 1.5f;
    auto [wIndex, wScales] = weights("fc_weights", {f, static_cast<int32_t>(k)}, 0, std::sqrt(3.0f / static_cast<float>(k)));
    const int32_t b = step.bias ? bias("fc_bias", flat.q.scale, wScales) : float_ ? zeroBias("fc_bias", f) : -1;
    TValue y = activation("fully_connected", {x.shape[0], f}, -mag, mag);
    op(kFc, {flat.index, wIndex, b}, y, kFcOptions);
    if (!step.softmax) return y;
    const QParams q{1.0f / 256, -128};
    TValue s = activation("softmax", y.shape, 0, 1, &q);
    op(kSoftmax, {y.index}, s, kSoftmaxOptions).floatFields.push_back({0, 1.0f});
    return s;
  }

  void output(const TValue& v) {
    if (std::find(outputs.begin(), outputs.end(), v.index) == outputs.end()) outputs.push_back(v.index);
  }

 private:
  SplitMix64 rng_;
  bool perChannel_, symmetric_, float_;
};

}  // namespace random_tflite_detail

Result<std::vector<uint8_t>> buildRandomTflite(const RandomRecipe& recipe) {
  using namespace random_tflite_detail;
  if (recipe.channels < 1 || recipe.height < 1 || recipe.width < 1)
    return makeError("random model", fmt::format("empty input {}x{}x{}", recipe.channels, recipe.height, recipe.width));
  TfliteGraph g(recipe.seed, recipe.perChannel, recipe.symmetric, !recipe.quantized);
  const QParams inQ{1.0f / 128, 0};
  TValue cur = g.activation("input", {1, static_cast<int32_t>(recipe.height), static_cast<int32_t>(recipe.width),
                                      static_cast<int32_t>(recipe.channels)},
                            -1.0f, 1.0f, &inQ);
  const int32_t input = cur.index;
  for (const RandomStep& step : recipe.steps) {
    const bool is4d = cur.shape.size() == 4;
    if (!is4d && step.kind != RandomStepKind::Activation && step.kind != RandomStepKind::ExtraOutput) continue;
    TValue out, branch;
    switch (step.kind) {
      case RandomStepKind::Conv:
        if (g.conv(cur, step, out)) cur = out;
        break;
      case RandomStepKind::MaxPool:
      case RandomStepKind::AveragePool:
        if (g.pool(cur, step, out)) cur = out;
        break;
      case RandomStepKind::GlobalAveragePool: {
        out = g.activation("mean", {cur.shape[0], 1, 1, cur.shape[3]}, cur.lo * g.jitter(), cur.hi * g.jitter());
        g.op(kMean, {cur.index, g.constantInts("axes", {1, 2})}, out, kReducerOptions).byteFields.push_back({0, 1});
        cur = out;
        break;
      }
      case RandomStepKind::Activation: cur = g.unary(cur, step); break;
      case RandomStepKind::ResidualAdd:
        if (g.sameConv(cur, step, cur.shape[3], branch)) cur = g.binary(false, cur, branch);
        break;
      case RandomStepKind::ResidualMul:
        if (g.sameConv(cur, step, cur.shape[3], branch)) {
          RandomStep sig;
          sig.activation = "Sigmoid";
          cur = g.binary(true, cur, g.unary(branch, sig));
        }
        break;
      case RandomStepKind::JoinEarlier:
        for (auto it = g.values.rbegin(); it != g.values.rend(); ++it)
          if (it->index != cur.index && it->shape == cur.shape) {
            const TValue other = *it;
            cur = g.binary(false, cur, other);
            break;
          }
        break;
      case RandomStepKind::ConcatBranch:
        // TFLite's int8 CONCATENATION wants every input quantized like the output: the branch writes cur's parameters.
        if (g.sameConv(cur, step, std::max<int64_t>(1, step.outChannels), branch, &cur.q)) {
          std::vector<int32_t> shape = cur.shape;
          shape[3] += branch.shape[3];
          out = g.activation("concat", shape, std::min(cur.lo, branch.lo), std::max(cur.hi, branch.hi), &cur.q);
          g.op(kConcat, step.variant ? std::vector{branch.index, cur.index} : std::vector{cur.index, branch.index}, out, kConcatOptions)
              .intFields.push_back({0, 3});
          cur = out;
        }
        break;
      case RandomStepKind::Transpose:
        cur = g.transpose(cur, step.variant ? std::vector<int32_t>{0, 3, 1, 2} : std::vector<int32_t>{0, 2, 1, 3});
        break;
      case RandomStepKind::Reshape:
        cur = g.reshape(cur, step.variant ? std::vector<int32_t>{cur.shape[0], cur.shape[1], cur.shape[2] * cur.shape[3], 1}
                                          : std::vector<int32_t>{cur.shape[0], cur.shape[1] * cur.shape[2], 1, cur.shape[3]});
        break;
      case RandomStepKind::ExtraOutput:
        if (cur.index != input) g.output(cur);
        break;
      case RandomStepKind::Head: cur = g.head(cur, step); break;
    }
  }
  if (cur.index == input || std::find(g.outputs.begin(), g.outputs.end(), cur.index) != g.outputs.end()) {
    RandomStep relu;  // every model has at least one op and a fresh output
    cur = g.unary(cur, relu);
  }
  g.output(cur);
  return tflitewriter::buildTfliteModel(g.tensors, g.ops, {input}, g.outputs);
}

}  // namespace stowage::zoo
