// TFLite op converters: one function per builtin op, turning an operator (tensors + builtin options with
// schema defaults applied) into quantized NHWC IR nodes with TFLite's integer parameters precomputed
// (TfliteQuant), or into float32 NHWC nodes for float models (int8 weights of hybrid models stay int8).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "stowage/frontend/TfliteContext.h"
#include "stowage/frontend/TfliteQuant.h"

namespace stowage::tflite {

namespace {

// BuiltinOptions union tags (docs/tflite-format-notes.md section 3).
enum OptionsTag : uint8_t {
  kConv2DOptions = 1, kDepthwiseConv2DOptions = 2, kPool2DOptions = 5, kFullyConnectedOptions = 8, kSoftmaxOptions = 9,
  kConcatenationOptions = 10, kAddOptions = 11, kReshapeOptions = 17, kMulOptions = 21, kPadOptions = 22,
  kTransposeOptions = 26, kReducerOptions = 27, kSubOptions = 28, kSqueezeOptions = 30, kStridedSliceOptions = 32,
  kMaximumMinimumOptions = 39, kLeakyReluOptions = 75,
};

constexpr int8_t kPaddingSame = 0, kPaddingValid = 1;

/// The operator's options table if it has the expected tag (or none: every field takes its default).
Result<OptionsTable> options(const OpRef& op, uint8_t tag) {
  const OptionsTable& o = op.op.options;
  if (o.present() && o.type() != tag)
    return makeError(op.loc, fmt::format("carries builtin options of union type {}, expected {}", o.type(), tag));
  return o;
}

Result<TensorId> input(OpRef& op, size_t i) {
  const int32_t idx = op.inputIndex(i);
  if (idx < 0) return makeError(op.loc, fmt::format("required input {} is missing", i));
  return op.ctx.tensor(idx);
}

Result<TensorId> output(OpRef& op) {
  if (op.op.outputs.size() != 1 || op.op.outputs[0] < 0) return makeError(op.loc, "must have exactly one output");
  STOWAGE_ASSIGN_OR_RETURN(TensorId id, op.ctx.tensor(op.op.outputs[0]));
  if (op.ctx.graph().tensor(id).kind != TensorKind::Activation)
    return makeError(op.loc, fmt::format("writes tensor '{}', which is an input or constant", op.ctx.graph().tensor(id).name));
  return id;
}

const Tensor& T(OpRef& op, TensorId id) { return op.ctx.graph().tensor(id); }

/// Per-tensor (scale, zero point) of an int8 activation.
Result<std::pair<float, int64_t>> perTensor(OpRef& op, TensorId id) {
  const Tensor& t = T(op, id);
  if (!t.quant || t.quant->scales.size() != 1)
    return makeUnsupported(op.loc, fmt::format("tensor '{}' must have per-tensor quantization", t.name));
  if (t.quant->zeroPoints[0] < -128 || t.quant->zeroPoints[0] > 127)
    return makeError(op.loc, fmt::format("tensor '{}' has zero point {} outside int8", t.name, t.quant->zeroPoints[0]));
  return std::make_pair(t.quant->scales[0], t.quant->zeroPoints[0]);
}

Status requireInt8(OpRef& op, std::initializer_list<TensorId> ids) {
  for (TensorId id : ids) {
    const Tensor& t = T(op, id);
    if (t.dtype == DType::Float32)
      return makeUnsupported(op.loc, fmt::format("float32 {} is not supported yet (tensor '{}'); only int8-quantized models",
                                                 builtinOpName(op.code), t.name));
    if (t.dtype != DType::Int8)
      return makeUnsupported(op.loc, fmt::format("tensor '{}' has dtype {}; {} is supported for int8", t.name, dtypeName(t.dtype),
                                                 builtinOpName(op.code)));
  }
  return Status::success();
}

Result<ActivationRange> activation(OpRef& op, int8_t act, TensorId out) {
  STOWAGE_ASSIGN_OR_RETURN(auto q, perTensor(op, out));
  ActivationRange r = activationRangeInt8(act, q.first, q.second);
  if (!r.ok) return makeUnsupported(op.loc, fmt::format("fused activation {} is not supported (NONE, RELU, RELU_N1_TO_1, RELU6 are)", act));
  return r;
}

void addNode(OpRef& op, OpKind kind, std::vector<TensorId> inputs, TensorId out, Attributes attrs) {
  Node n;
  n.name = op.name;
  n.op = kind;
  n.inputs = std::move(inputs);
  n.outputs = {out};
  n.attrs = std::move(attrs);
  op.ctx.addNode(std::move(n));
}

bool isFloat(OpRef& op, TensorId id) { return T(op, id).dtype == DType::Float32; }

/// Float tensors of a float op; int8 weights with float activations (hybrid models) are named as such.
Status requireFloat(OpRef& op, std::initializer_list<TensorId> ids) {
  for (TensorId id : ids) {
    if (id == kNoTensor) continue;  // an absent bias
    const Tensor& t = T(op, id);
    if (t.dtype == DType::Int8)
      return makeUnsupported(op.loc, fmt::format("tensor '{}' is int8 in a float32 op: of hybrid (dynamic-range) models only "
                                                 "constant int8 weights of CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED are "
                                                 "supported; use the fully int8 or the pure float32 model",
                                                 t.name));
    if (t.dtype != DType::Float32)
      return makeUnsupported(op.loc, fmt::format("tensor '{}' has dtype {}; float {} needs float32", t.name, dtypeName(t.dtype),
                                                 builtinOpName(op.code)));
  }
  return Status::success();
}

/// The weights of a float op: `w` itself when float32; an int8 constant with (per-tensor or per-channel)
/// quantization, as in hybrid "dynamic-range" models, becomes a float32 constant scale * (q - zero_point) (only
/// the weights hybridWeightScales cannot keep int8: nonzero zero points, scales on another axis).
/// TFLite's hybrid kernels instead quantize the activations on the fly and accumulate in int32, so results
/// agree to float rounding and that activation quantization, not bit for bit.
Result<TensorId> floatWeights(OpRef& op, TensorId w) {
  const Tensor& t = T(op, w);
  if (t.dtype != DType::Int8 || !t.isConstant()) return w;
  if (!t.quant || t.quant->scales.empty() || t.quant->scales.size() != t.quant->zeroPoints.size())
    return makeError(op.loc, fmt::format("int8 weights '{}' of a float op have no usable quantization", t.name));
  const size_t n = static_cast<size_t>(t.numElements()), channels = t.quant->scales.size();
  size_t inner = 1;
  if (channels > 1) {
    if (t.quant->axis < 0 || static_cast<size_t>(t.quant->axis) >= t.shape.size() || t.shape[static_cast<size_t>(t.quant->axis)] !=
                                                                                          static_cast<int64_t>(channels))
      return makeError(op.loc, fmt::format("int8 weights '{}' have {} scales that do not match axis {} of shape [{}]", t.name, channels,
                                           t.quant->axis, shapeToString(t.shape)));
    for (size_t d = static_cast<size_t>(t.quant->axis) + 1; d < t.shape.size(); ++d) inner *= static_cast<size_t>(t.shape[d]);
  }
  Tensor f;
  f.name = t.name + "/dequantized";
  f.dtype = DType::Float32;
  f.shape = t.shape;
  f.kind = TensorKind::Constant;
  f.data.resize(n * sizeof(float));
  const int8_t* q = t.dataAs<int8_t>();
  float* v = reinterpret_cast<float*>(f.data.data());
  for (size_t i = 0; i < n; ++i) {
    const size_t c = channels > 1 ? (i / inner) % channels : 0;
    v[i] = t.quant->scales[c] * static_cast<float>(static_cast<int64_t>(q[i]) - t.quant->zeroPoints[c]);
  }
  return op.ctx.graph().addTensor(std::move(f));
}

/// Int8 weights of a float op (hybrid "dynamic-range" models) kept int8: a float32 constant [channels] of their
/// scales (a per-tensor scale repeated), the 4th input of ConvNhwc / DepthwiseConvNhwc / Gemm, whose kernels
/// compute scale * (float)q per weight: the product floatWeights evaluates, so outputs stay bit-identical to the
/// float expansion. kNoTensor when `w` is not such a weight, or when its quantization has a nonzero zero point or
/// scales along another axis than the output channels (`channelAxis`): floatWeights expands those.
TensorId hybridWeightScales(OpRef& op, TensorId w, int32_t channelAxis) {
  const Tensor& t = T(op, w);
  if (t.dtype != DType::Int8 || !t.isConstant() || !t.quant || t.quant->scales.empty() ||
      t.quant->scales.size() != t.quant->zeroPoints.size() || channelAxis < 0 || static_cast<size_t>(channelAxis) >= t.shape.size())
    return kNoTensor;
  for (int64_t zp : t.quant->zeroPoints)
    if (zp != 0) return kNoTensor;
  const int64_t channels = t.shape[static_cast<size_t>(channelAxis)];
  const size_t count = t.quant->scales.size();
  if (count > 1 && (t.quant->axis != channelAxis || static_cast<int64_t>(count) != channels)) return kNoTensor;
  Tensor s;
  s.name = t.name + "/scales";
  s.dtype = DType::Float32;
  s.shape = {channels};
  s.kind = TensorKind::Constant;
  s.data.resize(static_cast<size_t>(channels) * sizeof(float));
  float* v = reinterpret_cast<float*>(s.data.data());
  for (int64_t c = 0; c < channels; ++c) v[c] = t.quant->scales[count > 1 ? static_cast<size_t>(c) : 0];
  return op.ctx.graph().addTensor(std::move(s));
}

/// Float clamp of a fused activation; ok = false for activations that are not clamps.
struct FloatRange {
  float min = -std::numeric_limits<float>::infinity(), max = std::numeric_limits<float>::infinity();
  bool ok = true;
};
FloatRange floatActivation(int8_t act) {
  FloatRange r;
  switch (act) {
    case 0: break;
    case 1: r.min = 0.0f; break;
    case 2: r.min = -1.0f, r.max = 1.0f; break;
    case 3: r.min = 0.0f, r.max = 6.0f; break;
    default: r.ok = false; break;
  }
  return r;
}

/// A new float activation tensor between two nodes of one operator.
TensorId addTemp(OpRef& op, const std::string& suffix, const Shape& shape) {
  Tensor t;
  t.name = op.name + "/" + suffix;
  t.dtype = DType::Float32;
  t.shape = shape;
  t.kind = TensorKind::Activation;
  return op.ctx.graph().addTensor(std::move(t));
}

/// Writes `pre` clamped by fused activation `act` into `y` (a Clip node), or returns false when `act` is
/// NONE and the caller should have written `y` directly.
Status emitFloatActivation(OpRef& op, int8_t act, TensorId pre, TensorId y) {
  FloatRange r = floatActivation(act);
  if (!r.ok) return makeUnsupported(op.loc, fmt::format("fused activation {} is not supported (NONE, RELU, RELU_N1_TO_1, RELU6 are)", act));
  Attributes a;
  a.set("min", r.min);
  a.set("max", r.max);
  Node n;
  n.name = op.name + "/activation";
  n.op = OpKind::Clip;
  n.inputs = {pre};
  n.outputs = {y};
  n.attrs = std::move(a);
  op.ctx.addNode(std::move(n));
  return Status::success();
}

/// TFLite's output size and leading padding of one spatial dim; errors when it disagrees with `out`.
Result<std::pair<int64_t, int64_t>> padding(OpRef& op, int8_t pad, int64_t in, int64_t k, int64_t stride, int64_t dil, int64_t out) {
  if (stride < 1 || dil < 1) return makeError(op.loc, fmt::format("stride {} / dilation {} must be positive", stride, dil));
  if (pad != kPaddingSame && pad != kPaddingValid) return makeError(op.loc, fmt::format("padding {} is neither SAME nor VALID", pad));
  const int64_t dk = (k - 1) * dil + 1;
  const int64_t want = pad == kPaddingSame ? (in + stride - 1) / stride : (in - dk + stride) / stride;
  if (want != out || out < 1)
    return makeError(op.loc, fmt::format("output size {} does not match {} padding of input {} with kernel {} stride {} dilation {} ({})",
                                         out, pad == kPaddingSame ? "SAME" : "VALID", in, k, stride, dil, want));
  const int64_t total = std::max<int64_t>((out - 1) * stride + dk - in, 0);
  return std::make_pair(total / 2, total - total / 2);
}

/// Per-channel requantization constants: input_scale * weight_scale[c] / output_scale (in double).
/// `floatProduct`: the product input_scale * weight_scale is taken in float first (TFLite's per-tensor
/// fully-connected path).
std::pair<TensorId, TensorId> requantConstants(OpRef& op, float inScale, const std::vector<float>& wScales, float outScale,
                                               bool floatProduct) {
  std::vector<int32_t> mult, shift;
  for (float ws : wScales) {
    const double prod = floatProduct ? static_cast<double>(inScale * ws) : static_cast<double>(inScale) * static_cast<double>(ws);
    QuantizedMultiplier q = quantizeMultiplier(prod / static_cast<double>(outScale));
    mult.push_back(q.multiplier);
    shift.push_back(q.shift);
  }
  return {op.ctx.addInt32Constant(op.name + "/multiplier", mult), op.ctx.addInt32Constant(op.name + "/shift", shift)};
}

/// Weight and bias checks shared by conv, depthwise conv and fully connected; returns the weight scales.
Result<std::vector<float>> weightScales(OpRef& op, TensorId w, TensorId bias, int64_t channels, int32_t axis) {
  const Tensor& wt = T(op, w);
  if (!wt.isConstant()) return makeUnsupported(op.loc, fmt::format("weights '{}' are not constant", wt.name));
  if (!wt.quant) return makeError(op.loc, fmt::format("int8 weights '{}' have no quantization", wt.name));
  for (int64_t z : wt.quant->zeroPoints)
    if (z != 0) return makeUnsupported(op.loc, fmt::format("weights '{}' have a non-zero zero point ({})", wt.name, z));
  std::vector<float> scales = wt.quant->scales;
  if (scales.size() != 1 && (static_cast<int64_t>(scales.size()) != channels || wt.quant->axis != axis))
    return makeUnsupported(op.loc, fmt::format("weights '{}' have {} scales along axis {}; expected 1 or {} along axis {}", wt.name,
                                               scales.size(), wt.quant->axis, channels, axis));
  if (bias != kNoTensor) {
    const Tensor& b = T(op, bias);
    if (b.dtype != DType::Int32 || !b.isConstant())
      return makeUnsupported(op.loc, fmt::format("bias '{}' must be an int32 constant (it is {})", b.name, dtypeName(b.dtype)));
    if (b.numElements() != channels)
      return makeError(op.loc, fmt::format("bias '{}' has {} entries for {} output channels", b.name, b.numElements(), channels));
  }
  return scales;
}

Status convertConv(OpRef& op, bool depthwise) {
  STOWAGE_ASSIGN_OR_RETURN(OptionsTable o, options(op, depthwise ? kDepthwiseConv2DOptions : kConv2DOptions));
  STOWAGE_ASSIGN_OR_RETURN(TensorId x, input(op, 0));
  STOWAGE_ASSIGN_OR_RETURN(TensorId w, input(op, 1));
  TensorId bias = kNoTensor;
  if (op.inputIndex(2) >= 0) {
    STOWAGE_ASSIGN_OR_RETURN(bias, input(op, 2));
  }
  STOWAGE_ASSIGN_OR_RETURN(TensorId y, output(op));
  const bool flt = isFloat(op, x);
  TensorId hybridScales = kNoTensor;
  if (flt) {
    hybridScales = hybridWeightScales(op, w, depthwise ? 3 : 0);
    if (hybridScales == kNoTensor) {
      STOWAGE_ASSIGN_OR_RETURN(w, floatWeights(op, w));
    }
    STOWAGE_TRY(requireFloat(op, {x, hybridScales == kNoTensor ? w : hybridScales, bias, y}));
  } else {
    STOWAGE_TRY(requireInt8(op, {x, w, y}));
  }
  const Shape xs = T(op, x).shape;
  const Shape ws = T(op, w).shape;
  const Shape ys = T(op, y).shape;
  if (xs.size() != 4 || ws.size() != 4 || ys.size() != 4) return makeError(op.loc, "input, filter and output must be 4-D (NHWC)");
  const int8_t pad = o.getByte(0, kPaddingSame);
  const int64_t strideW = o.getInt(1, 0), strideH = o.getInt(2, 0);
  const int8_t act = o.getByte(depthwise ? 4 : 3, 0);
  const int64_t dilW = o.getInt(depthwise ? 5 : 4, 1), dilH = o.getInt(depthwise ? 6 : 5, 1);
  STOWAGE_ASSIGN_OR_RETURN(auto ph, padding(op, pad, xs[1], ws[1], strideH, dilH, ys[1]));
  STOWAGE_ASSIGN_OR_RETURN(auto pw, padding(op, pad, xs[2], ws[2], strideW, dilW, ys[2]));
  const int64_t m = depthwise ? ws[3] : ws[0];
  if (ys[3] != m) return makeError(op.loc, fmt::format("output has {} channels, the filter {}", ys[3], m));
  if (flt) {
    FloatRange r = floatActivation(act);
    if (!r.ok) return makeUnsupported(op.loc, fmt::format("fused activation {} is not supported", act));
    if (bias != kNoTensor && T(op, bias).numElements() != m) return makeError(op.loc, "bias size does not match the output channels");
    Attributes a;
    a.set("strides", std::vector<int64_t>{strideH, strideW});
    a.set("dilations", std::vector<int64_t>{dilH, dilW});
    a.set("pads", std::vector<int64_t>{ph.first, pw.first, ph.second, pw.second});
    a.set("clip_min", r.min);
    a.set("clip_max", r.max);
    std::vector<TensorId> in{x, w, bias};
    if (hybridScales != kNoTensor) in.push_back(hybridScales);
    addNode(op, depthwise ? OpKind::DepthwiseConvNhwc : OpKind::ConvNhwc, std::move(in), y, std::move(a));
    return Status::success();
  }
  STOWAGE_ASSIGN_OR_RETURN(auto inQ, perTensor(op, x));
  STOWAGE_ASSIGN_OR_RETURN(auto outQ, perTensor(op, y));
  STOWAGE_ASSIGN_OR_RETURN(std::vector<float> wScales, weightScales(op, w, bias, m, depthwise ? 3 : 0));
  STOWAGE_ASSIGN_OR_RETURN(ActivationRange r, activation(op, act, y));
  auto [mult, shift] = requantConstants(op, inQ.first, wScales, outQ.first, false);
  Attributes a;
  a.set("strides", std::vector<int64_t>{strideH, strideW});
  a.set("dilations", std::vector<int64_t>{dilH, dilW});
  a.set("pads", std::vector<int64_t>{ph.first, pw.first, ph.second, pw.second});
  a.set("act_min", int64_t{r.min});
  a.set("act_max", int64_t{r.max});
  addNode(op, depthwise ? OpKind::QDepthwiseConv2d : OpKind::QConv2d, {x, w, mult, shift, bias}, y, std::move(a));
  return Status::success();
}

Status convertFullyConnected(OpRef& op) {
  STOWAGE_ASSIGN_OR_RETURN(OptionsTable o, options(op, kFullyConnectedOptions));
  STOWAGE_ASSIGN_OR_RETURN(TensorId x, input(op, 0));
  STOWAGE_ASSIGN_OR_RETURN(TensorId w, input(op, 1));
  TensorId bias = kNoTensor;
  if (op.inputIndex(2) >= 0) {
    STOWAGE_ASSIGN_OR_RETURN(bias, input(op, 2));
  }
  STOWAGE_ASSIGN_OR_RETURN(TensorId y, output(op));
  if (o.getByte(1, 0) != 0) return makeUnsupported(op.loc, "shuffled weights format is not supported");
  const Shape ws = T(op, w).shape;
  if (ws.size() != 2) return makeError(op.loc, fmt::format("weights must be 2-D [out, in], got [{}]", shapeToString(ws)));
  if (isFloat(op, x)) {
    // y = x W^T + b as Gemm(transB) over rows of K, then the fused activation and the output's own shape.
    const TensorId hybridScales = hybridWeightScales(op, w, 0);
    if (hybridScales == kNoTensor) {
      STOWAGE_ASSIGN_OR_RETURN(w, floatWeights(op, w));
    }
    STOWAGE_TRY(requireFloat(op, {x, hybridScales == kNoTensor ? w : hybridScales, bias, y}));
    const int64_t k = ws[1], rows = k > 0 ? T(op, x).numElements() / k : 0;
    if (k < 1 || rows * k != T(op, x).numElements() || rows * ws[0] != T(op, y).numElements())
      return makeError(op.loc, "input, weights and output sizes do not agree");
    TensorId a2 = x;
    if (T(op, x).shape != Shape{rows, k}) {
      a2 = addTemp(op, "rows", {rows, k});
      Attributes r;
      r.set("shape", Shape{rows, k});
      Node n{op.name + "/rows", OpKind::Reshape, {x}, {a2}, std::move(r)};
      op.ctx.addNode(std::move(n));
    }
    const int8_t act = o.getByte(0, 0);
    const bool directOut = act == 0 && T(op, y).shape == Shape{rows, ws[0]};
    TensorId g = directOut ? y : addTemp(op, "gemm", {rows, ws[0]});
    Attributes ga;
    ga.set("transB", int64_t{1});
    std::vector<TensorId> gin{a2, w, bias};
    if (hybridScales != kNoTensor) gin.push_back(hybridScales);
    Node gemm{directOut ? op.name : op.name + "/gemm", OpKind::Gemm, std::move(gin), {g}, std::move(ga)};
    op.ctx.addNode(std::move(gemm));
    if (directOut) return Status::success();
    TensorId pre = g;
    if (T(op, y).shape != Shape{rows, ws[0]}) {
      TensorId shaped = act == 0 ? y : addTemp(op, "shaped", T(op, y).shape);
      Attributes r;
      r.set("shape", T(op, y).shape);
      Node n{op.name + "/reshape", OpKind::Reshape, {g}, {shaped}, std::move(r)};
      op.ctx.addNode(std::move(n));
      if (act == 0) return Status::success();
      pre = shaped;
    }
    return emitFloatActivation(op, act, pre, y);
  }
  STOWAGE_TRY(requireInt8(op, {x, w, y}));
  STOWAGE_ASSIGN_OR_RETURN(auto inQ, perTensor(op, x));
  STOWAGE_ASSIGN_OR_RETURN(auto outQ, perTensor(op, y));
  STOWAGE_ASSIGN_OR_RETURN(std::vector<float> wScales, weightScales(op, w, bias, ws[0], 0));
  STOWAGE_ASSIGN_OR_RETURN(ActivationRange r, activation(op, o.getByte(0, 0), y));
  auto [mult, shift] = requantConstants(op, inQ.first, wScales, outQ.first, wScales.size() == 1);
  Attributes a;
  a.set("act_min", int64_t{r.min});
  a.set("act_max", int64_t{r.max});
  if (o.getByte(2, 0) != 0) a.set("keep_num_dims", int64_t{1});
  addNode(op, OpKind::QFullyConnected, {x, w, mult, shift, bias}, y, std::move(a));
  return Status::success();
}

Status convertPool(OpRef& op, bool isMax) {
  STOWAGE_ASSIGN_OR_RETURN(OptionsTable o, options(op, kPool2DOptions));
  STOWAGE_ASSIGN_OR_RETURN(TensorId x, input(op, 0));
  STOWAGE_ASSIGN_OR_RETURN(TensorId y, output(op));
  const bool flt = isFloat(op, x);
  if (flt) STOWAGE_TRY(requireFloat(op, {x, y}));
  else STOWAGE_TRY(requireInt8(op, {x, y}));
  const Shape xs = T(op, x).shape;
  const Shape ys = T(op, y).shape;
  if (xs.size() != 4 || ys.size() != 4) return makeError(op.loc, "input and output must be 4-D (NHWC)");
  if (!flt) {
    STOWAGE_ASSIGN_OR_RETURN(auto inQ, perTensor(op, x));
    STOWAGE_ASSIGN_OR_RETURN(auto outQ, perTensor(op, y));
    if (inQ != outQ) return makeUnsupported(op.loc, "input and output quantization differ; TFLite int8 pooling requires them equal");
  }
  const int8_t pad = o.getByte(0, kPaddingSame);
  const int64_t strideW = o.getInt(1, 0), strideH = o.getInt(2, 0), kw = o.getInt(3, 0), kh = o.getInt(4, 0);
  if (kw < 1 || kh < 1) return makeError(op.loc, fmt::format("filter size {}x{} must be positive", kh, kw));
  STOWAGE_ASSIGN_OR_RETURN(auto ph, padding(op, pad, xs[1], kh, strideH, 1, ys[1]));
  STOWAGE_ASSIGN_OR_RETURN(auto pw, padding(op, pad, xs[2], kw, strideW, 1, ys[2]));
  if (flt) {
    FloatRange fr = floatActivation(o.getByte(5, 0));
    if (!fr.ok) return makeUnsupported(op.loc, "fused activation is not supported");
    Attributes a;
    a.set("kernel_shape", std::vector<int64_t>{kh, kw});
    a.set("strides", std::vector<int64_t>{strideH, strideW});
    a.set("pads", std::vector<int64_t>{ph.first, pw.first, ph.second, pw.second});
    a.set("clip_min", fr.min);
    a.set("clip_max", fr.max);
    addNode(op, isMax ? OpKind::MaxPoolNhwc : OpKind::AveragePoolNhwc, {x}, y, std::move(a));
    return Status::success();
  }
  STOWAGE_ASSIGN_OR_RETURN(ActivationRange r, activation(op, o.getByte(5, 0), y));
  Attributes a;
  a.set("kernel_shape", std::vector<int64_t>{kh, kw});
  a.set("strides", std::vector<int64_t>{strideH, strideW});
  a.set("pads", std::vector<int64_t>{ph.first, pw.first, ph.second, pw.second});
  a.set("act_min", int64_t{r.min});
  a.set("act_max", int64_t{r.max});
  addNode(op, isMax ? OpKind::QMaxPool2d : OpKind::QAveragePool2d, {x}, y, std::move(a));
  return Status::success();
}

Status convertAddMul(OpRef& op, bool isMul) {
  STOWAGE_ASSIGN_OR_RETURN(OptionsTable o, options(op, isMul ? kMulOptions : kAddOptions));
  STOWAGE_ASSIGN_OR_RETURN(TensorId a, input(op, 0));
  STOWAGE_ASSIGN_OR_RETURN(TensorId b, input(op, 1));
  STOWAGE_ASSIGN_OR_RETURN(TensorId y, output(op));
  if (isFloat(op, a)) {
    STOWAGE_TRY(requireFloat(op, {a, b, y}));
    const int8_t act = o.getByte(0, 0);
    TensorId pre = act == 0 ? y : addTemp(op, "sum", T(op, y).shape);
    Node n{act == 0 ? op.name : op.name + "/op", isMul ? OpKind::Mul : OpKind::Add, {a, b}, {pre}, {}};
    op.ctx.addNode(std::move(n));
    return act == 0 ? Status::success() : emitFloatActivation(op, act, pre, y);
  }
  STOWAGE_TRY(requireInt8(op, {a, b, y}));
  STOWAGE_ASSIGN_OR_RETURN(auto qa, perTensor(op, a));
  STOWAGE_ASSIGN_OR_RETURN(auto qb, perTensor(op, b));
  STOWAGE_ASSIGN_OR_RETURN(auto qy, perTensor(op, y));
  STOWAGE_ASSIGN_OR_RETURN(ActivationRange r, activation(op, o.getByte(0, 0), y));
  Attributes at;
  if (isMul) {
    QuantizedMultiplier q = quantizeMultiplier(static_cast<double>(qa.first) * static_cast<double>(qb.first) / static_cast<double>(qy.first));
    at.set("output_multiplier", int64_t{q.multiplier});
    at.set("output_shift", int64_t{q.shift});
  } else {
    constexpr int kLeftShift = 20;
    const double twiceMax = 2.0 * static_cast<double>(std::max(qa.first, qb.first));
    QuantizedMultiplier ma = quantizeMultiplier(static_cast<double>(qa.first) / twiceMax);
    QuantizedMultiplier mb = quantizeMultiplier(static_cast<double>(qb.first) / twiceMax);
    QuantizedMultiplier my = quantizeMultiplier(twiceMax / (static_cast<double>(1 << kLeftShift) * static_cast<double>(qy.first)));
    at.set("left_shift", int64_t{kLeftShift});
    at.set("a_multiplier", int64_t{ma.multiplier});
    at.set("a_shift", int64_t{ma.shift});
    at.set("b_multiplier", int64_t{mb.multiplier});
    at.set("b_shift", int64_t{mb.shift});
    at.set("output_multiplier", int64_t{my.multiplier});
    at.set("output_shift", int64_t{my.shift});
  }
  at.set("act_min", int64_t{r.min});
  at.set("act_max", int64_t{r.max});
  addNode(op, isMul ? OpKind::QMul : OpKind::QAdd, {a, b}, y, std::move(at));
  return Status::success();
}

Status convertSoftmax(OpRef& op) {
  STOWAGE_ASSIGN_OR_RETURN(OptionsTable o, options(op, kSoftmaxOptions));
  STOWAGE_ASSIGN_OR_RETURN(TensorId x, input(op, 0));
  STOWAGE_ASSIGN_OR_RETURN(TensorId y, output(op));
  if (isFloat(op, x)) {
    STOWAGE_TRY(requireFloat(op, {x, y}));
    if (o.getFloat(0, 0.0f) != 1.0f) return makeUnsupported(op.loc, fmt::format("float softmax with beta {} (only 1.0)", o.getFloat(0, 0.0f)));
    Attributes a;
    a.set("axis", static_cast<int64_t>(std::max<size_t>(T(op, x).shape.size(), 1) - 1));
    addNode(op, OpKind::Softmax, {x}, y, std::move(a));
    return Status::success();
  }
  STOWAGE_TRY(requireInt8(op, {x, y}));
  STOWAGE_ASSIGN_OR_RETURN(auto qx, perTensor(op, x));
  STOWAGE_ASSIGN_OR_RETURN(auto qy, perTensor(op, y));
  if (qy.first != 1.0f / 256.0f || qy.second != -128)
    return makeUnsupported(op.loc, fmt::format("int8 softmax output must have scale 1/256 and zero point -128 (has {} and {})", qy.first,
                                               qy.second));
  SoftmaxScaling s = softmaxScalingInt8(static_cast<double>(o.getFloat(0, 0.0f)), static_cast<double>(qx.first));
  Attributes a;
  a.set("input_multiplier", int64_t{s.multiplier});
  a.set("input_left_shift", int64_t{s.leftShift});
  a.set("diff_min", int64_t{s.diffMin});
  addNode(op, OpKind::QSoftmax, {x}, y, std::move(a));
  return Status::success();
}

Status convertReshape(OpRef& op) {
  STOWAGE_ASSIGN_OR_RETURN(TensorId x, input(op, 0));
  STOWAGE_ASSIGN_OR_RETURN(TensorId y, output(op));
  const Tensor& xt = T(op, x);
  const Tensor& yt = T(op, y);
  if (xt.dtype != yt.dtype) return makeError(op.loc, "input and output dtypes differ");
  if (xt.quant != yt.quant) return makeUnsupported(op.loc, "input and output quantization differ");
  if (xt.numElements() != yt.numElements())
    return makeError(op.loc, fmt::format("cannot reshape [{}] to [{}]", shapeToString(xt.shape), shapeToString(yt.shape)));
  Attributes a;
  a.set("shape", yt.shape);
  addNode(op, OpKind::Reshape, {x}, y, std::move(a));
  return Status::success();
}

Status convertConcatenation(OpRef& op) {
  STOWAGE_ASSIGN_OR_RETURN(OptionsTable o, options(op, kConcatenationOptions));
  STOWAGE_ASSIGN_OR_RETURN(TensorId y, output(op));
  if (o.getByte(1, 0) != 0) return makeUnsupported(op.loc, "a fused activation on CONCATENATION is not supported");
  std::vector<TensorId> ins;
  for (size_t i = 0; i < op.op.inputs.size(); ++i) {
    STOWAGE_ASSIGN_OR_RETURN(TensorId x, input(op, i));
    if (T(op, x).dtype != T(op, y).dtype || T(op, x).quant != T(op, y).quant)
      return makeUnsupported(op.loc, "inputs with a dtype or quantization different from the output are not supported");
    ins.push_back(x);
  }
  if (ins.empty()) return makeError(op.loc, "has no inputs");
  const auto rank = static_cast<int64_t>(T(op, y).shape.size());
  int64_t axis = o.getInt(0, 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return makeError(op.loc, fmt::format("axis {} is out of range for rank {}", o.getInt(0, 0), rank));
  Attributes a;
  a.set("axis", axis);
  addNode(op, OpKind::Concat, ins, y, std::move(a));
  return Status::success();
}

Status convertQuantize(OpRef& op, bool quantize) {
  STOWAGE_ASSIGN_OR_RETURN(TensorId x, input(op, 0));
  STOWAGE_ASSIGN_OR_RETURN(TensorId y, output(op));
  if (quantize && T(op, x).dtype == DType::Int8 && T(op, y).dtype == DType::Int8) {
    // Requantization between int8 tensors: multiplier from input_scale / output_scale in double.
    STOWAGE_ASSIGN_OR_RETURN(auto qx, perTensor(op, x));
    STOWAGE_ASSIGN_OR_RETURN(auto qy, perTensor(op, y));
    QuantizedMultiplier m = quantizeMultiplier(static_cast<double>(qx.first) / static_cast<double>(qy.first));
    Attributes a;
    a.set("multiplier", int64_t{m.multiplier});
    a.set("shift", int64_t{m.shift});
    addNode(op, OpKind::Requantize, {x}, y, std::move(a));
    return Status::success();
  }
  const TensorId q = quantize ? y : x, f = quantize ? x : y;
  if (T(op, f).dtype != DType::Float32 || T(op, q).dtype != DType::Int8)
    return makeUnsupported(op.loc, fmt::format("{} from {} to {} is not supported (float32 <-> int8 is)", builtinOpName(op.code),
                                               dtypeName(T(op, x).dtype), dtypeName(T(op, y).dtype)));
  STOWAGE_TRY(perTensor(op, q));
  addNode(op, quantize ? OpKind::Quantize : OpKind::Dequantize, {x}, y, {});
  return Status::success();
}

/// The values of a constant int32 or int64 input (PAD's paddings, TRANSPOSE's perm, MEAN's axes).
Result<std::vector<int64_t>> constantInts(OpRef& op, size_t i) {
  STOWAGE_ASSIGN_OR_RETURN(TensorId id, input(op, i));
  const Tensor& t = T(op, id);
  if (!t.isConstant()) return makeUnsupported(op.loc, fmt::format("input {} ('{}') must be a constant", i, t.name));
  std::vector<int64_t> v;
  if (t.dtype == DType::Int32)
    for (int64_t k = 0; k < t.numElements(); ++k) v.push_back(t.dataAs<int32_t>()[k]);
  else if (t.dtype == DType::Int64)
    v.assign(t.dataAs<int64_t>(), t.dataAs<int64_t>() + t.numElements());
  else
    return makeError(op.loc, fmt::format("input {} ('{}') must be int32 or int64, not {}", i, t.name, dtypeName(t.dtype)));
  return v;
}

Status requireSameQuant(OpRef& op, TensorId x, TensorId y) {
  if (T(op, x).dtype != T(op, y).dtype) return makeError(op.loc, "input and output dtypes differ");
  if (T(op, x).quant != T(op, y).quant) return makeUnsupported(op.loc, "input and output quantization differ");
  return Status::success();
}

Status convertPad(OpRef& op) {
  STOWAGE_TRY(options(op, kPadOptions));
  STOWAGE_ASSIGN_OR_RETURN(TensorId x, input(op, 0));
  STOWAGE_ASSIGN_OR_RETURN(TensorId y, output(op));
  STOWAGE_TRY(requireSameQuant(op, x, y));
  const DType dt = T(op, x).dtype;
  if (dt != DType::Int8 && dt != DType::Float32) return makeUnsupported(op.loc, fmt::format("PAD of {} is not supported", dtypeName(dt)));
  STOWAGE_ASSIGN_OR_RETURN(std::vector<int64_t> pads, constantInts(op, 1));
  const Shape xs = T(op, x).shape;
  const Shape ys = T(op, y).shape;
  if (pads.size() != 2 * xs.size() || ys.size() != xs.size()) return makeError(op.loc, "paddings must be [rank, 2]");
  std::vector<int64_t> canonical(2 * xs.size());
  for (size_t d = 0; d < xs.size(); ++d) {
    const int64_t before = pads[2 * d], after = pads[2 * d + 1];
    if (before < 0 || after < 0 || xs[d] + before + after != ys[d])
      return makeError(op.loc, fmt::format("paddings of dim {} ({}, {}) do not turn {} into {}", d, before, after, xs[d], ys[d]));
    canonical[d] = before;
    canonical[d + xs.size()] = after;
  }
  Attributes a;
  a.set("pads", canonical);
  a.set("mode", std::string("constant"));
  // Quantized tensors pad with the zero point (the quantized 0.0).
  a.set("value", dt == DType::Int8 && T(op, y).quant ? static_cast<float>(T(op, y).quant->zeroPoints[0]) : 0.0f);
  addNode(op, OpKind::Pad, {x}, y, std::move(a));
  return Status::success();
}

Status convertTranspose(OpRef& op) {
  STOWAGE_TRY(options(op, kTransposeOptions));
  STOWAGE_ASSIGN_OR_RETURN(TensorId x, input(op, 0));
  STOWAGE_ASSIGN_OR_RETURN(TensorId y, output(op));
  STOWAGE_TRY(requireSameQuant(op, x, y));
  STOWAGE_ASSIGN_OR_RETURN(std::vector<int64_t> perm, constantInts(op, 1));
  const Shape xs = T(op, x).shape;
  const Shape ys = T(op, y).shape;
  if (perm.size() != xs.size() || ys.size() != xs.size()) return makeError(op.loc, "perm must have one entry per dim");
  std::vector<bool> used(xs.size(), false);
  for (size_t d = 0; d < perm.size(); ++d) {
    if (perm[d] < 0 || perm[d] >= static_cast<int64_t>(xs.size()) || used[static_cast<size_t>(perm[d])] ||
        xs[static_cast<size_t>(perm[d])] != ys[d])
      return makeError(op.loc, "perm is not a permutation matching the output shape");
    used[static_cast<size_t>(perm[d])] = true;
  }
  Attributes a;
  a.set("perm", perm);
  addNode(op, OpKind::Transpose, {x}, y, std::move(a));
  return Status::success();
}

Status convertMean(OpRef& op) {
  STOWAGE_ASSIGN_OR_RETURN(OptionsTable o, options(op, kReducerOptions));
  STOWAGE_ASSIGN_OR_RETURN(TensorId x, input(op, 0));
  STOWAGE_ASSIGN_OR_RETURN(TensorId y, output(op));
  STOWAGE_ASSIGN_OR_RETURN(std::vector<int64_t> axes, constantInts(op, 1));
  const Shape xs = T(op, x).shape;
  for (int64_t& a : axes) {
    if (a < 0) a += static_cast<int64_t>(xs.size());
    if (a < 0 || a >= static_cast<int64_t>(xs.size())) return makeError(op.loc, "axis out of range");
  }
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  const bool keepDims = o.getByte(0, 0) != 0;
  if (isFloat(op, x)) {
    STOWAGE_TRY(requireFloat(op, {x, y}));
    if (axes.empty()) return makeUnsupported(op.loc, "MEAN over no axes is not supported");
    Attributes a;
    a.set("axes", axes);
    a.set("keepdims", int64_t{keepDims ? 1 : 0});
    addNode(op, OpKind::ReduceMean, {x}, y, std::move(a));
    return Status::success();
  }
  STOWAGE_TRY(requireInt8(op, {x, y}));
  if (xs.size() != 4 || axes != std::vector<int64_t>{1, 2})
    return makeUnsupported(op.loc, fmt::format("int8 MEAN is supported over axes 1 and 2 of a 4-D NHWC tensor (input [{}])",
                                               shapeToString(xs)));
  STOWAGE_ASSIGN_OR_RETURN(auto qx, perTensor(op, x));
  STOWAGE_ASSIGN_OR_RETURN(auto qy, perTensor(op, y));
  QuantizedMultiplier q = quantizeMultiplier(static_cast<double>(qx.first) / static_cast<double>(qy.first));
  Attributes a;
  a.set("keep_dims", int64_t{keepDims ? 1 : 0});
  a.set("multiplier", int64_t{q.multiplier});
  a.set("shift", int64_t{q.shift});
  addNode(op, OpKind::QMean, {x}, y, std::move(a));
  return Status::success();
}

// ---- Activations and elementwise ops (LOGISTIC, TANH, HARD_SWISH, RELU*, LEAKY_RELU, SUB, MAXIMUM/MINIMUM,
// SQUEEZE, STRIDED_SLICE). Int8 parameters follow TFLite Micro's Prepare functions; float32 ops become the
// generic elementwise IR ops. ----

/// x and y of a one-input op, checked to be both float32 (returns true) or both int8 (false).
Result<std::pair<TensorId, TensorId>> unaryTensors(OpRef& op, bool& flt) {
  STOWAGE_ASSIGN_OR_RETURN(TensorId x, input(op, 0));
  STOWAGE_ASSIGN_OR_RETURN(TensorId y, output(op));
  flt = isFloat(op, x);
  if (flt) STOWAGE_TRY(requireFloat(op, {x, y}));
  else STOWAGE_TRY(requireInt8(op, {x, y}));
  return std::make_pair(x, y);
}

Status convertLogisticTanh(OpRef& op, bool tanh) {
  bool flt = false;
  STOWAGE_ASSIGN_OR_RETURN(auto xy, unaryTensors(op, flt));
  auto [x, y] = xy;
  if (flt) {
    addNode(op, tanh ? OpKind::Tanh : OpKind::Sigmoid, {x}, y, {});
    return Status::success();
  }
  STOWAGE_ASSIGN_OR_RETURN(auto qx, perTensor(op, x));
  STOWAGE_ASSIGN_OR_RETURN(auto qy, perTensor(op, y));
  const float wantScale = tanh ? 1.0f / 128.0f : 1.0f / 256.0f;
  const int64_t wantZero = tanh ? 0 : -128;
  if (qy.first != wantScale || qy.second != wantZero)
    return makeUnsupported(op.loc, fmt::format("int8 {} output '{}' must have scale {} and zero point {} (has {} and {})", builtinOpName(op.code),
                                               T(op, y).name, tanh ? "1/128" : "1/256", wantZero, qy.first, qy.second));
  SigmoidInputScaling s = sigmoidInputScalingInt8(qx.first);
  if (!s.ok)
    return makeUnsupported(op.loc, fmt::format("input '{}' has scale {}, outside what the int8 {} kernel can rescale", T(op, x).name,
                                               qx.first, builtinOpName(op.code)));
  Attributes a;
  a.set("input_multiplier", int64_t{s.multiplier});
  a.set("input_left_shift", int64_t{s.leftShift});
  a.set("input_range_radius", int64_t{s.rangeRadius});
  addNode(op, tanh ? OpKind::QTanh : OpKind::QLogistic, {x}, y, std::move(a));
  return Status::success();
}

Status convertHardSwish(OpRef& op) {
  bool flt = false;
  STOWAGE_ASSIGN_OR_RETURN(auto xy, unaryTensors(op, flt));
  auto [x, y] = xy;
  if (flt) {
    addNode(op, OpKind::HardSwish, {x}, y, {});
    return Status::success();
  }
  STOWAGE_ASSIGN_OR_RETURN(auto qx, perTensor(op, x));
  STOWAGE_ASSIGN_OR_RETURN(auto qy, perTensor(op, y));
  HardSwishScaling h = hardSwishScalingInt8(qx.first, qy.first);
  if (h.outputShift > 0 || h.outputShift < -15 || h.reluishShift < -15 || h.reluishShift > 15)
    return makeUnsupported(op.loc, fmt::format("scales of input '{}' ({}) and output '{}' ({}) are too far apart for the int8 "
                                               "HARD_SWISH kernel (output exponent {}, reluish exponent {})",
                                               T(op, x).name, qx.first, T(op, y).name, qy.first, h.outputShift, h.reluishShift));
  Attributes a;
  a.set("output_multiplier", int64_t{h.outputMultiplier});
  a.set("output_shift", int64_t{h.outputShift});
  a.set("reluish_multiplier", int64_t{h.reluishMultiplier});
  a.set("reluish_shift", int64_t{h.reluishShift});
  addNode(op, OpKind::QHardSwish, {x}, y, std::move(a));
  return Status::success();
}

/// RELU (act 1), RELU_N1_TO_1 (2), RELU6 (3), and LEAKY_RELU (leaky = true).
Status convertRelu(OpRef& op, int8_t act, bool leaky) {
  float alpha = 0.0f;
  if (leaky) {
    STOWAGE_ASSIGN_OR_RETURN(OptionsTable o, options(op, kLeakyReluOptions));
    alpha = o.getFloat(0, 0.0f);
  }
  bool flt = false;
  STOWAGE_ASSIGN_OR_RETURN(auto xy, unaryTensors(op, flt));
  auto [x, y] = xy;
  if (flt) {
    Attributes a;
    if (leaky) {
      a.set("alpha", alpha);
      addNode(op, OpKind::LeakyRelu, {x}, y, std::move(a));
    } else if (act == 1) {
      addNode(op, OpKind::Relu, {x}, y, {});
    } else {
      FloatRange r = floatActivation(act);
      a.set("min", r.min);
      a.set("max", r.max);
      addNode(op, OpKind::Clip, {x}, y, std::move(a));
    }
    return Status::success();
  }
  STOWAGE_ASSIGN_OR_RETURN(auto qx, perTensor(op, x));
  STOWAGE_ASSIGN_OR_RETURN(auto qy, perTensor(op, y));
  QuantizedMultiplier identity, negative;
  ActivationRange r;
  if (leaky) {
    // TFLite Micro's LeakyRelu Prepare combines the scales in float.
    identity = quantizeMultiplier(static_cast<double>(qx.first / qy.first));
    negative = quantizeMultiplier(static_cast<double>(qx.first * alpha / qy.first));
  } else {
    identity = negative = quantizeMultiplier(static_cast<double>(qx.first) / static_cast<double>(qy.first));
    r = activationRangeInt8(act, qy.first, qy.second);
  }
  Attributes a;
  a.set("multiplier", int64_t{identity.multiplier});
  a.set("shift", int64_t{identity.shift});
  a.set("alpha_multiplier", int64_t{negative.multiplier});
  a.set("alpha_shift", int64_t{negative.shift});
  a.set("act_min", int64_t{r.min});
  a.set("act_max", int64_t{r.max});
  addNode(op, OpKind::QRelu, {x}, y, std::move(a));
  return Status::success();
}

Status convertSub(OpRef& op) {
  STOWAGE_ASSIGN_OR_RETURN(OptionsTable o, options(op, kSubOptions));
  STOWAGE_ASSIGN_OR_RETURN(TensorId a, input(op, 0));
  STOWAGE_ASSIGN_OR_RETURN(TensorId b, input(op, 1));
  STOWAGE_ASSIGN_OR_RETURN(TensorId y, output(op));
  const int8_t act = o.getByte(0, 0);
  if (isFloat(op, a)) {
    STOWAGE_TRY(requireFloat(op, {a, b, y}));
    TensorId pre = act == 0 ? y : addTemp(op, "difference", T(op, y).shape);
    op.ctx.addNode(Node{act == 0 ? op.name : op.name + "/op", OpKind::Sub, {a, b}, {pre}, {}});
    return act == 0 ? Status::success() : emitFloatActivation(op, act, pre, y);
  }
  STOWAGE_TRY(requireInt8(op, {a, b, y}));
  STOWAGE_ASSIGN_OR_RETURN(auto qa, perTensor(op, a));
  STOWAGE_ASSIGN_OR_RETURN(auto qb, perTensor(op, b));
  STOWAGE_ASSIGN_OR_RETURN(auto qy, perTensor(op, y));
  STOWAGE_ASSIGN_OR_RETURN(ActivationRange r, activation(op, act, y));
  // TFLite Micro's SUB Prepare: the same 20-bit common scale as ADD, with the scales combined in float.
  constexpr int kLeftShift = 20;
  const float twiceMax = 2 * std::max(qa.first, qb.first);
  QuantizedMultiplier ma = quantizeMultiplier(static_cast<double>(qa.first / twiceMax));
  QuantizedMultiplier mb = quantizeMultiplier(static_cast<double>(qb.first / twiceMax));
  QuantizedMultiplier my = quantizeMultiplier(static_cast<double>(twiceMax / (static_cast<float>(1 << kLeftShift) * qy.first)));
  Attributes at;
  at.set("left_shift", int64_t{kLeftShift});
  at.set("a_multiplier", int64_t{ma.multiplier});
  at.set("a_shift", int64_t{ma.shift});
  at.set("b_multiplier", int64_t{mb.multiplier});
  at.set("b_shift", int64_t{mb.shift});
  at.set("output_multiplier", int64_t{my.multiplier});
  at.set("output_shift", int64_t{my.shift});
  at.set("act_min", int64_t{r.min});
  at.set("act_max", int64_t{r.max});
  addNode(op, OpKind::QSub, {a, b}, y, std::move(at));
  return Status::success();
}

Status convertMaximumMinimum(OpRef& op, bool isMax) {
  STOWAGE_TRY(options(op, kMaximumMinimumOptions));
  STOWAGE_ASSIGN_OR_RETURN(TensorId a, input(op, 0));
  STOWAGE_ASSIGN_OR_RETURN(TensorId b, input(op, 1));
  STOWAGE_ASSIGN_OR_RETURN(TensorId y, output(op));
  if (isFloat(op, a)) {
    STOWAGE_TRY(requireFloat(op, {a, b, y}));
    addNode(op, isMax ? OpKind::Max : OpKind::Min, {a, b}, y, {});
    return Status::success();
  }
  STOWAGE_TRY(requireInt8(op, {a, b, y}));
  for (TensorId id : {a, b}) {
    STOWAGE_TRY(perTensor(op, id));
    if (T(op, id).quant != T(op, y).quant)
      return makeUnsupported(op.loc, fmt::format("int8 {} needs inputs quantized like the output; '{}' differs from '{}'",
                                                 builtinOpName(op.code), T(op, id).name, T(op, y).name));
  }
  addNode(op, isMax ? OpKind::QMaximum : OpKind::QMinimum, {a, b}, y, {});
  return Status::success();
}

/// TFLite's StartForAxis / StopForAxis (no offset, no ellipsis or new axes): begin/end masks take the full
/// range, negative indices count from the end, and values are clamped to [0, dim] ([-1, dim - 1] for negative
/// strides); a shrunk axis takes one element.
Status convertStridedSlice(OpRef& op) {
  STOWAGE_ASSIGN_OR_RETURN(OptionsTable o, options(op, kStridedSliceOptions));
  STOWAGE_ASSIGN_OR_RETURN(TensorId x, input(op, 0));
  STOWAGE_ASSIGN_OR_RETURN(TensorId y, output(op));
  STOWAGE_TRY(requireSameQuant(op, x, y));
  const DType dt = T(op, x).dtype;
  if (dt != DType::Int8 && dt != DType::Float32)
    return makeUnsupported(op.loc, fmt::format("STRIDED_SLICE of {} tensor '{}' is not supported (int8 and float32 are)", dtypeName(dt),
                                               T(op, x).name));
  const int64_t beginMask = o.getInt(0, 0), endMask = o.getInt(1, 0), ellipsisMask = o.getInt(2, 0), newAxisMask = o.getInt(3, 0);
  const int64_t shrinkMask = o.getInt(4, 0);
  if (ellipsisMask != 0 || newAxisMask != 0 || o.getByte(5, 0) != 0)
    return makeUnsupported(op.loc, "STRIDED_SLICE with ellipsis_mask, new_axis_mask or offset is not supported");
  STOWAGE_ASSIGN_OR_RETURN(std::vector<int64_t> begin, constantInts(op, 1));
  STOWAGE_ASSIGN_OR_RETURN(std::vector<int64_t> end, constantInts(op, 2));
  STOWAGE_ASSIGN_OR_RETURN(std::vector<int64_t> strides, constantInts(op, 3));
  const Shape xs = T(op, x).shape;
  if (begin.size() != xs.size() || end.size() != xs.size() || strides.size() != xs.size())
    return makeError(op.loc, fmt::format("begin, end and strides need one entry per input dim ({})", xs.size()));
  std::vector<int64_t> starts(xs.size()), ends(xs.size());
  Shape full, shrunk;
  for (size_t d = 0; d < xs.size(); ++d) {
    const int64_t dim = xs[d], st = strides[d];
    if (st == 0) return makeError(op.loc, fmt::format("stride of dim {} is 0", d));
    const int64_t lo = st > 0 ? 0 : -1, hi = st > 0 ? dim : dim - 1;
    auto clampIndex = [&](int64_t v) { return std::clamp(v < 0 ? v + dim : v, lo, hi); };
    const bool shrink = (shrinkMask >> d) & 1;
    const int64_t start = (beginMask >> d) & 1 && !shrink ? (st > 0 ? lo : hi) : clampIndex(begin[d]);
    const int64_t stop = shrink ? start + 1 : (endMask >> d) & 1 ? (st > 0 ? hi : lo) : clampIndex(end[d]);
    if (shrink && (st < 0 || start >= dim)) return makeError(op.loc, fmt::format("shrunk dim {} has no element at {}", d, begin[d]));
    starts[d] = start;
    ends[d] = stop;
    const int64_t len = std::max<int64_t>(0, st > 0 ? (stop - start + st - 1) / st : (start - stop - st - 1) / -st);
    full.push_back(len);
    if (!shrink) shrunk.push_back(len);
  }
  if (shapeElements(full) != T(op, y).numElements() || (shrunk != T(op, y).shape && full != T(op, y).shape))
    return makeError(op.loc, fmt::format("slice has shape [{}], the output tensor [{}]", shapeToString(shrinkMask ? shrunk : full),
                                         shapeToString(T(op, y).shape)));
  Attributes a;
  a.set("starts", starts);
  a.set("ends", ends);
  a.set("steps", strides);
  if (full == T(op, y).shape) {
    addNode(op, OpKind::Slice, {x}, y, std::move(a));
    return Status::success();
  }
  Tensor t;
  t.name = op.name + "/unshrunk";
  t.dtype = dt;
  t.shape = full;
  t.quant = T(op, y).quant;
  t.kind = TensorKind::Activation;
  const TensorId mid = op.ctx.graph().addTensor(std::move(t));
  op.ctx.addNode(Node{op.name + "/slice", OpKind::Slice, {x}, {mid}, std::move(a)});
  Attributes r;
  r.set("shape", T(op, y).shape);
  addNode(op, OpKind::Reshape, {mid}, y, std::move(r));
  return Status::success();
}

}  // namespace

const std::vector<int32_t>& supportedBuiltinCodes() {
  static const std::vector<int32_t> codes = {kAdd,        kAveragePool2d, kConcatenation, kConv2d,    kDepthwiseConv2d,
                                             kDequantize, kFullyConnected, kMaxPool2d,    kMul,       kReshape,
                                             kSoftmax,    kQuantize,       kPad,          kTranspose, kMean,
                                             kLogistic,   kTanh,           kHardSwish,    kRelu,      kReluN1To1,
                                             kRelu6,      kLeakyRelu,      kSub,          kMaximum,   kMinimum,
                                             kSqueeze,    kStridedSlice};
  return codes;
}

bool isSupportedBuiltin(int32_t code) {
  const auto& c = supportedBuiltinCodes();
  return std::find(c.begin(), c.end(), code) != c.end();
}

Status convertOperator(OpRef& op) {
  switch (op.code) {
    case kConv2d: return convertConv(op, false);
    case kDepthwiseConv2d: return convertConv(op, true);
    case kFullyConnected: return convertFullyConnected(op);
    case kAveragePool2d: return convertPool(op, false);
    case kMaxPool2d: return convertPool(op, true);
    case kAdd: return convertAddMul(op, false);
    case kMul: return convertAddMul(op, true);
    case kSoftmax: return convertSoftmax(op);
    case kReshape: return convertReshape(op);
    case kConcatenation: return convertConcatenation(op);
    case kQuantize: return convertQuantize(op, true);
    case kDequantize: return convertQuantize(op, false);
    case kPad: return convertPad(op);
    case kTranspose: return convertTranspose(op);
    case kMean: return convertMean(op);
    case kLogistic: return convertLogisticTanh(op, false);
    case kTanh: return convertLogisticTanh(op, true);
    case kHardSwish: return convertHardSwish(op);
    case kRelu: return convertRelu(op, 1, false);
    case kReluN1To1: return convertRelu(op, 2, false);
    case kRelu6: return convertRelu(op, 3, false);
    case kLeakyRelu: return convertRelu(op, 0, true);
    case kSub: return convertSub(op);
    case kMaximum: return convertMaximumMinimum(op, true);
    case kMinimum: return convertMaximumMinimum(op, false);
    case kSqueeze: return convertReshape(op);
    case kStridedSlice: return convertStridedSlice(op);
    default: break;
  }
  return makeUnsupported(op.loc, fmt::format("builtin op {} (version {}) is not supported", builtinOpName(op.code), op.version));
}

}  // namespace stowage::tflite
