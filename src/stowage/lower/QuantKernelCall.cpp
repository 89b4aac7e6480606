// Kernel lowering of the quantized NHWC ops (QConv2d ... Dequantize in Ops.def) to the int8 kernels of
// runtime/include/stowage_kernels_int8.h: zero points come from the tensors' QuantParams, requantization
// multipliers from the node (constant inputs or attributes, computed by the frontend). See KernelCall.h.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "stowage/ir/LoweringAttributes.h"
#include "stowage/lower/KernelCall.h"
#include "stowage/lower/LoweringSupport.h"
#include "stowage/plan/ProgramPlan.h"

namespace stowage {

namespace {

using lowering::assignI32;
using lowering::broadcastStrides;
using lowering::BroadcastLoops;
using lowering::mergeBroadcastLoops;
using lowering::fitsI32;
using lowering::nodeLoc;
using lowering::Overloaded;
using lowering::tooBig;

Status requireDType(const Graph& g, const Node& n, TensorId id, DType want) {
  if (id == kNoTensor) return Status::success();
  const Tensor& t = g.tensor(id);
  if (t.dtype != want)
    return makeUnsupported(nodeLoc(n), fmt::format("tensor '{}' has dtype {}; the kernel needs {}", t.name, dtypeName(t.dtype), dtypeName(want)));
  return Status::success();
}

/// The per-tensor zero point of an int8 tensor.
Result<int64_t> zeroPoint(const Graph& g, const Node& n, TensorId id) {
  const Tensor& t = g.tensor(id);
  if (!t.quant || t.quant->zeroPoints.empty() || t.quant->scales.empty())
    return makeError(nodeLoc(n), fmt::format("tensor '{}' has no quantization parameters", t.name));
  if (t.quant->zeroPoints.size() != 1)
    return makeUnsupported(nodeLoc(n), fmt::format("tensor '{}' is quantized per channel; the kernel needs one zero point", t.name));
  return t.quant->zeroPoints[0];
}

Result<float> scaleOf(const Graph& g, const Node& n, TensorId id) {
  const Tensor& t = g.tensor(id);
  if (!t.quant || t.quant->scales.size() != 1)
    return makeError(nodeLoc(n), fmt::format("tensor '{}' needs one quantization scale", t.name));
  return t.quant->scales[0];
}

Status requireConstInt32(const Graph& g, const Node& n, TensorId id, const char* what) {
  if (id == kNoTensor) return Status::success();
  const Tensor& t = g.tensor(id);
  if (!t.isConstant() || t.dtype != DType::Int32)
    return makeError(nodeLoc(n), fmt::format("{} '{}' must be an int32 constant", what, t.name));
  return Status::success();
}

KernelCall single(QuantKernel k, auto params, std::vector<TensorId> inputs, TensorId out) {
  QuantCall c;
  c.kernel = k;
  c.params = params;
  return KernelCall{c, std::move(inputs), out};
}

Result<std::vector<KernelCall>> lowerQConv(const Graph& g, const Node& n) {
  const TensorId xId = n.inputs[0], wId = n.inputs[1], mId = n.inputs[2], sId = n.inputs[3], bId = n.input(4);
  for (TensorId id : {xId, wId, n.outputs[0]}) STOWAGE_TRY(requireDType(g, n, id, DType::Int8));
  STOWAGE_TRY(requireDType(g, n, bId, DType::Int32));
  STOWAGE_TRY(requireConstInt32(g, n, mId, "multiplier"));
  STOWAGE_TRY(requireConstInt32(g, n, sId, "shift"));
  const Shape& x = g.tensor(xId).shape;
  const Shape& w = g.tensor(wId).shape;
  const Shape& y = g.tensor(n.outputs[0]).shape;
  if (x.size() != 4 || w.size() != 4 || y.size() != 4) return makeError(nodeLoc(n), "input, filter and output must be 4-D (NHWC)");
  STOWAGE_ASSIGN_OR_RETURN(int64_t xz, zeroPoint(g, n, xId));
  STOWAGE_ASSIGN_OR_RETURN(int64_t yz, zeroPoint(g, n, n.outputs[0]));
  const auto strides = n.attrs.getInts("strides", {1, 1}), dil = n.attrs.getInts("dilations", {1, 1});
  const auto pads = n.attrs.getInts("pads", {0, 0, 0, 0});
  if (strides.size() != 2 || dil.size() != 2 || pads.size() != 4) return makeError(nodeLoc(n), "strides, dilations or pads malformed");
  const bool depthwise = n.op == OpKind::QDepthwiseConv2d;
  stowage_qconv_params p;
  std::memset(&p, 0, sizeof p);
  const int64_t m = y[3];
  STOWAGE_TRY(assignI32(n, {{&p.n, x[0]}, {&p.h, x[1]}, {&p.w, x[2]}, {&p.c, x[3]}, {&p.oh, y[1]}, {&p.ow, y[2]}, {&p.m, m},
                            {&p.kh, w[1]}, {&p.kw, w[2]}, {&p.kc, depthwise ? 1 : w[3]}, {&p.stride_h, strides[0]},
                            {&p.stride_w, strides[1]}, {&p.dil_h, dil[0]}, {&p.dil_w, dil[1]}, {&p.pad_top, pads[0]},
                            {&p.pad_left, pads[1]}, {&p.depth_multiplier, depthwise && x[3] > 0 ? m / x[3] : 1},
                            {&p.per_channel, g.tensor(mId).numElements() > 1 ? 1 : 0}, {&p.input_offset, -xz},
                            {&p.output_offset, yz}, {&p.act_min, n.attrs.getInt("act_min", -128)},
                            {&p.act_max, n.attrs.getInt("act_max", 127)}}));
  if (p.per_channel && (g.tensor(mId).numElements() != m || g.tensor(sId).numElements() != m))
    return makeError(nodeLoc(n), "per-channel multipliers and shifts need one entry per output channel");
  // ONNX Runtime's requantization (pass/QdqNhwc): the multipliers are float32 bits, the shifts unused.
  p.requant_f32 = n.attrs.getInt(kQdqRequantF32Attr, 0) != 0 ? 1 : 0;
  return std::vector<KernelCall>{
      single(depthwise ? QuantKernel::DepthwiseConv2d : QuantKernel::Conv2d, p, {xId, wId, bId, mId, sId}, n.outputs[0])};
}

Result<std::vector<KernelCall>> lowerQFullyConnected(const Graph& g, const Node& n) {
  const TensorId xId = n.inputs[0], wId = n.inputs[1], mId = n.inputs[2], sId = n.inputs[3], bId = n.input(4);
  for (TensorId id : {xId, wId, n.outputs[0]}) STOWAGE_TRY(requireDType(g, n, id, DType::Int8));
  STOWAGE_TRY(requireDType(g, n, bId, DType::Int32));
  STOWAGE_TRY(requireConstInt32(g, n, mId, "multiplier"));
  STOWAGE_TRY(requireConstInt32(g, n, sId, "shift"));
  const Shape& w = g.tensor(wId).shape;
  if (w.size() != 2 || w[1] < 1) return makeError(nodeLoc(n), "weights must be [M, K]");
  STOWAGE_ASSIGN_OR_RETURN(int64_t xz, zeroPoint(g, n, xId));
  STOWAGE_ASSIGN_OR_RETURN(int64_t yz, zeroPoint(g, n, n.outputs[0]));
  stowage_qfc_params p;
  std::memset(&p, 0, sizeof p);
  const int64_t m = w[0];
  STOWAGE_TRY(assignI32(n, {{&p.batches, g.tensor(xId).numElements() / w[1]}, {&p.k, w[1]}, {&p.m, m},
                            {&p.per_channel, g.tensor(mId).numElements() > 1 ? 1 : 0}, {&p.input_offset, -xz},
                            {&p.output_offset, yz}, {&p.act_min, n.attrs.getInt("act_min", -128)},
                            {&p.act_max, n.attrs.getInt("act_max", 127)}}));
  if (p.per_channel && (g.tensor(mId).numElements() != m || g.tensor(sId).numElements() != m))
    return makeError(nodeLoc(n), "per-channel multipliers and shifts need one entry per output");
  p.requant_f32 = n.attrs.getInt(kQdqRequantF32Attr, 0) != 0 ? 1 : 0;
  return std::vector<KernelCall>{single(QuantKernel::FullyConnected, p, {xId, wId, bId, mId, sId}, n.outputs[0])};
}

Result<std::vector<KernelCall>> lowerQPool(const Graph& g, const Node& n) {
  for (TensorId id : {n.inputs[0], n.outputs[0]}) STOWAGE_TRY(requireDType(g, n, id, DType::Int8));
  const Shape& x = g.tensor(n.inputs[0]).shape;
  const Shape& y = g.tensor(n.outputs[0]).shape;
  if (x.size() != 4 || y.size() != 4) return makeError(nodeLoc(n), "input and output must be 4-D (NHWC)");
  const auto k = n.attrs.getInts("kernel_shape"), strides = n.attrs.getInts("strides", {1, 1});
  const auto pads = n.attrs.getInts("pads", {0, 0, 0, 0});
  if (k.size() != 2 || strides.size() != 2 || pads.size() != 4) return makeError(nodeLoc(n), "kernel_shape, strides or pads malformed");
  stowage_qpool_params p;
  std::memset(&p, 0, sizeof p);
  STOWAGE_TRY(assignI32(n, {{&p.n, x[0]}, {&p.h, x[1]}, {&p.w, x[2]}, {&p.c, x[3]}, {&p.oh, y[1]}, {&p.ow, y[2]}, {&p.kh, k[0]},
                            {&p.kw, k[1]}, {&p.stride_h, strides[0]}, {&p.stride_w, strides[1]}, {&p.pad_top, pads[0]},
                            {&p.pad_left, pads[1]}, {&p.act_min, n.attrs.getInt("act_min", -128)},
                            {&p.act_max, n.attrs.getInt("act_max", 127)}}));
  return std::vector<KernelCall>{
      single(n.op == OpKind::QMaxPool2d ? QuantKernel::MaxPool2d : QuantKernel::AvgPool2d, p, {n.inputs[0]}, n.outputs[0])};
}

Result<std::vector<KernelCall>> lowerQBinary(const Graph& g, const Node& n) {
  for (TensorId id : {n.inputs[0], n.inputs[1], n.outputs[0]}) STOWAGE_TRY(requireDType(g, n, id, DType::Int8));
  const Shape& a = g.tensor(n.inputs[0]).shape;
  const Shape& b = g.tensor(n.inputs[1]).shape;
  Shape out = g.tensor(n.outputs[0]).shape;
  if (a.size() > out.size() || b.size() > out.size()) return makeError(nodeLoc(n), "operand rank exceeds output rank");
  std::vector<int64_t> sa = broadcastStrides(a, out), sb = broadcastStrides(b, out);
  const BroadcastLoops loops = mergeBroadcastLoops(out, sa, sb);
  const Shape& s = loops.sizes;
  const std::vector<int64_t>& ma = loops.aStrides;
  const std::vector<int64_t>& mb = loops.bStrides;
  if (s.size() > STOWAGE_QMAX_RANK)
    return makeUnsupported(nodeLoc(n), fmt::format("broadcast needs rank {}; the int8 kernels support {}", s.size(), STOWAGE_QMAX_RANK));
  STOWAGE_ASSIGN_OR_RETURN(int64_t az, zeroPoint(g, n, n.inputs[0]));
  STOWAGE_ASSIGN_OR_RETURN(int64_t bz, zeroPoint(g, n, n.inputs[1]));
  STOWAGE_ASSIGN_OR_RETURN(int64_t yz, zeroPoint(g, n, n.outputs[0]));
  stowage_qbinary_params p;
  std::memset(&p, 0, sizeof p);
  p.rank = static_cast<int32_t>(s.size());
  for (size_t d = 0; d < s.size(); ++d) {
    STOWAGE_TRY(assignI32(n, {{&p.shape[d], s[d]}}));
    p.a_stride[d] = ma[d];
    p.b_stride[d] = mb[d];
  }
  const Attributes& at = n.attrs;
  STOWAGE_TRY(assignI32(n, {{&p.a_offset, -az}, {&p.b_offset, -bz}, {&p.output_offset, yz},
                            {&p.left_shift, at.getInt("left_shift", 0)}, {&p.a_multiplier, at.getInt("a_multiplier", 0)},
                            {&p.a_shift, at.getInt("a_shift", 0)}, {&p.b_multiplier, at.getInt("b_multiplier", 0)},
                            {&p.b_shift, at.getInt("b_shift", 0)}, {&p.output_multiplier, at.getInt("output_multiplier", 0)},
                            {&p.output_shift, at.getInt("output_shift", 0)}, {&p.act_min, at.getInt("act_min", -128)},
                            {&p.act_max, at.getInt("act_max", 127)}}));
  if (p.left_shift < 0 || p.left_shift > 30) return makeError(nodeLoc(n), "left_shift must be in [0, 30]");
  const QuantKernel k = n.op == OpKind::QMul        ? QuantKernel::Mul
                        : n.op == OpKind::QSub      ? QuantKernel::Sub
                        : n.op == OpKind::QMaximum  ? QuantKernel::Maximum
                        : n.op == OpKind::QMinimum  ? QuantKernel::Minimum
                                                    : QuantKernel::Add;
  return std::vector<KernelCall>{single(k, p, {n.inputs[0], n.inputs[1]}, n.outputs[0])};
}

Result<std::vector<KernelCall>> lowerQSoftmax(const Graph& g, const Node& n) {
  for (TensorId id : {n.inputs[0], n.outputs[0]}) STOWAGE_TRY(requireDType(g, n, id, DType::Int8));
  const Shape& x = g.tensor(n.inputs[0]).shape;
  const int64_t depth = x.empty() ? 1 : x.back();
  stowage_qsoftmax_params p;
  std::memset(&p, 0, sizeof p);
  STOWAGE_TRY(assignI32(n, {{&p.outer, depth > 0 ? shapeElements(x) / depth : 0}, {&p.depth, depth},
                            {&p.input_multiplier, n.attrs.getInt("input_multiplier", 0)},
                            {&p.input_left_shift, n.attrs.getInt("input_left_shift", 0)},
                            {&p.diff_min, n.attrs.getInt("diff_min", 0)}}));
  if (p.input_left_shift < 0 || p.input_left_shift > 30) return makeError(nodeLoc(n), "input_left_shift must be in [0, 30]");
  return std::vector<KernelCall>{single(QuantKernel::Softmax, p, {n.inputs[0]}, n.outputs[0])};
}

Result<std::vector<KernelCall>> lowerQuantize(const Graph& g, const Node& n, bool quantize) {
  const TensorId q = quantize ? n.outputs[0] : n.inputs[0];
  STOWAGE_TRY(requireDType(g, n, q, DType::Int8));
  STOWAGE_TRY(requireDType(g, n, quantize ? n.inputs[0] : n.outputs[0], DType::Float32));
  STOWAGE_ASSIGN_OR_RETURN(int64_t zp, zeroPoint(g, n, q));
  STOWAGE_ASSIGN_OR_RETURN(float scale, scaleOf(g, n, q));
  stowage_quant_params p;
  std::memset(&p, 0, sizeof p);
  STOWAGE_TRY(assignI32(n, {{&p.count, g.tensor(q).numElements()}, {&p.zero_point, zp}}));
  p.scale = scale;
  return std::vector<KernelCall>{single(quantize ? QuantKernel::Quantize : QuantKernel::Dequantize, p, {n.inputs[0]}, n.outputs[0])};
}

Result<std::vector<KernelCall>> lowerQMean(const Graph& g, const Node& n) {
  for (TensorId id : {n.inputs[0], n.outputs[0]}) STOWAGE_TRY(requireDType(g, n, id, DType::Int8));
  const Shape& x = g.tensor(n.inputs[0]).shape;
  if (x.size() != 4) return makeError(nodeLoc(n), "input must be 4-D (NHWC)");
  STOWAGE_ASSIGN_OR_RETURN(int64_t xz, zeroPoint(g, n, n.inputs[0]));
  STOWAGE_ASSIGN_OR_RETURN(int64_t yz, zeroPoint(g, n, n.outputs[0]));
  stowage_qmean_params p;
  std::memset(&p, 0, sizeof p);
  STOWAGE_TRY(assignI32(n, {{&p.n, x[0]}, {&p.h, x[1]}, {&p.w, x[2]}, {&p.c, x[3]}, {&p.input_zero_point, xz},
                            {&p.output_zero_point, yz}, {&p.multiplier, n.attrs.getInt("multiplier", 0)},
                            {&p.shift, n.attrs.getInt("shift", 0)}}));
  if (static_cast<int64_t>(p.h) * p.w > (1 << 23)) return makeUnsupported(nodeLoc(n), "the mean window is too large for int32 sums");
  return std::vector<KernelCall>{single(QuantKernel::Mean, p, {n.inputs[0]}, n.outputs[0])};
}

Result<std::vector<KernelCall>> lowerRequantize(const Graph& g, const Node& n) {
  for (TensorId id : {n.inputs[0], n.outputs[0]}) STOWAGE_TRY(requireDType(g, n, id, DType::Int8));
  STOWAGE_ASSIGN_OR_RETURN(int64_t xz, zeroPoint(g, n, n.inputs[0]));
  STOWAGE_ASSIGN_OR_RETURN(int64_t yz, zeroPoint(g, n, n.outputs[0]));
  stowage_requant_params p;
  std::memset(&p, 0, sizeof p);
  STOWAGE_TRY(assignI32(n, {{&p.count, g.tensor(n.outputs[0]).numElements()}, {&p.input_zero_point, xz}, {&p.output_zero_point, yz},
                            {&p.multiplier, n.attrs.getInt("multiplier", 0)}, {&p.shift, n.attrs.getInt("shift", 0)}}));
  if (p.shift < -31 || p.shift > 30) return makeError(nodeLoc(n), "shift must be in [-31, 30]");
  return std::vector<KernelCall>{single(QuantKernel::Requantize, p, {n.inputs[0]}, n.outputs[0])};
}

/// QLogistic / QTanh: the fixed output quantization the kernels assume is checked here as well.
Result<std::vector<KernelCall>> lowerQSigmoid(const Graph& g, const Node& n) {
  for (TensorId id : {n.inputs[0], n.outputs[0]}) STOWAGE_TRY(requireDType(g, n, id, DType::Int8));
  STOWAGE_ASSIGN_OR_RETURN(int64_t xz, zeroPoint(g, n, n.inputs[0]));
  STOWAGE_ASSIGN_OR_RETURN(int64_t yz, zeroPoint(g, n, n.outputs[0]));
  STOWAGE_ASSIGN_OR_RETURN(float ys, scaleOf(g, n, n.outputs[0]));
  const bool logistic = n.op == OpKind::QLogistic;
  if (ys != (logistic ? 1.0f / 256.0f : 1.0f / 128.0f) || yz != (logistic ? -128 : 0))
    return makeUnsupported(nodeLoc(n), fmt::format("output '{}' must have scale {} and zero point {} (has {} and {})",
                                                   g.tensor(n.outputs[0]).name, logistic ? "1/256" : "1/128", logistic ? -128 : 0, ys, yz));
  stowage_qsigmoid_params p;
  std::memset(&p, 0, sizeof p);
  STOWAGE_TRY(assignI32(n, {{&p.count, g.tensor(n.outputs[0]).numElements()}, {&p.input_zero_point, xz},
                            {&p.input_multiplier, n.attrs.getInt("input_multiplier", 0)},
                            {&p.input_left_shift, n.attrs.getInt("input_left_shift", 0)},
                            {&p.input_range_radius, n.attrs.getInt("input_range_radius", 0)}}));
  if (p.input_left_shift < 0 || p.input_left_shift > 30) return makeError(nodeLoc(n), "input_left_shift must be in [0, 30]");
  return std::vector<KernelCall>{single(logistic ? QuantKernel::Logistic : QuantKernel::Tanh, p, {n.inputs[0]}, n.outputs[0])};
}

Result<std::vector<KernelCall>> lowerQHardSwish(const Graph& g, const Node& n) {
  for (TensorId id : {n.inputs[0], n.outputs[0]}) STOWAGE_TRY(requireDType(g, n, id, DType::Int8));
  STOWAGE_ASSIGN_OR_RETURN(int64_t xz, zeroPoint(g, n, n.inputs[0]));
  STOWAGE_ASSIGN_OR_RETURN(int64_t yz, zeroPoint(g, n, n.outputs[0]));
  stowage_qhardswish_params p;
  std::memset(&p, 0, sizeof p);
  const Attributes& a = n.attrs;
  STOWAGE_TRY(assignI32(n, {{&p.count, g.tensor(n.outputs[0]).numElements()}, {&p.input_zero_point, xz}, {&p.output_zero_point, yz},
                            {&p.output_multiplier, a.getInt("output_multiplier", 0)}, {&p.output_shift, a.getInt("output_shift", 0)},
                            {&p.reluish_multiplier, a.getInt("reluish_multiplier", 0)}, {&p.reluish_shift, a.getInt("reluish_shift", 0)}}));
  if (p.output_shift > 0 || p.output_shift < -15 || p.reluish_shift < -15 || p.reluish_shift > 15 || p.output_multiplier < 0 ||
      p.output_multiplier > 32767 || p.reluish_multiplier < 0 || p.reluish_multiplier > 32767)
    return makeError(nodeLoc(n), "hard-swish multipliers must be Q0.15 with shifts in [-15, 0] (output) and [-15, 15] (reluish)");
  return std::vector<KernelCall>{single(QuantKernel::HardSwish, p, {n.inputs[0]}, n.outputs[0])};
}

Result<std::vector<KernelCall>> lowerQRelu(const Graph& g, const Node& n) {
  for (TensorId id : {n.inputs[0], n.outputs[0]}) STOWAGE_TRY(requireDType(g, n, id, DType::Int8));
  STOWAGE_ASSIGN_OR_RETURN(int64_t xz, zeroPoint(g, n, n.inputs[0]));
  STOWAGE_ASSIGN_OR_RETURN(int64_t yz, zeroPoint(g, n, n.outputs[0]));
  stowage_qrelu_params p;
  std::memset(&p, 0, sizeof p);
  const Attributes& a = n.attrs;
  STOWAGE_TRY(assignI32(n, {{&p.count, g.tensor(n.outputs[0]).numElements()}, {&p.input_zero_point, xz}, {&p.output_zero_point, yz},
                            {&p.multiplier, a.getInt("multiplier", 0)}, {&p.shift, a.getInt("shift", 0)},
                            {&p.alpha_multiplier, a.getInt("alpha_multiplier", 0)}, {&p.alpha_shift, a.getInt("alpha_shift", 0)},
                            {&p.act_min, a.getInt("act_min", -128)}, {&p.act_max, a.getInt("act_max", 127)}}));
  for (int32_t sh : {p.shift, p.alpha_shift})
    if (sh < -31 || sh > 30) return makeError(nodeLoc(n), "shifts must be in [-31, 30]");
  return std::vector<KernelCall>{single(QuantKernel::Relu, p, {n.inputs[0]}, n.outputs[0])};
}

}  // namespace

Result<std::vector<KernelCall>> lowerQuantNode(const Graph& g, const Node& n) {
  switch (n.op) {
    case OpKind::QConv2d:
    case OpKind::QDepthwiseConv2d: return lowerQConv(g, n);
    case OpKind::QFullyConnected: return lowerQFullyConnected(g, n);
    case OpKind::QAveragePool2d:
    case OpKind::QMaxPool2d: return lowerQPool(g, n);
    case OpKind::QAdd:
    case OpKind::QSub:
    case OpKind::QMaximum:
    case OpKind::QMinimum:
    case OpKind::QMul: return lowerQBinary(g, n);
    case OpKind::QLogistic:
    case OpKind::QTanh: return lowerQSigmoid(g, n);
    case OpKind::QHardSwish: return lowerQHardSwish(g, n);
    case OpKind::QRelu: return lowerQRelu(g, n);
    case OpKind::QSoftmax: return lowerQSoftmax(g, n);
    case OpKind::Quantize: return lowerQuantize(g, n, true);
    case OpKind::Dequantize: return lowerQuantize(g, n, false);
    case OpKind::QMean: return lowerQMean(g, n);
    case OpKind::Requantize: return lowerRequantize(g, n);
    default: break;
  }
  return makeError(nodeLoc(n), "is not a quantized op");
}

std::string quantKernelFunctionName(const QuantCall& c) {
  // Layers with ONNX Runtime's requantization (pass/QdqNhwc) call the float32-epilogue copies of the int8 kernels.
  if (const auto* p = std::get_if<stowage_qconv_params>(&c.params); p != nullptr && p->requant_f32 != 0)
    return c.kernel == QuantKernel::DepthwiseConv2d ? "stowage_qdepthwise_conv2d_s8_rqf32" : "stowage_qconv2d_s8_rqf32";
  if (const auto* p = std::get_if<stowage_qfc_params>(&c.params); p != nullptr && p->requant_f32 != 0)
    return "stowage_qfully_connected_s8_rqf32";
  switch (c.kernel) {
    case QuantKernel::Conv2d: return "stowage_qconv2d_s8";
    case QuantKernel::DepthwiseConv2d: return "stowage_qdepthwise_conv2d_s8";
    case QuantKernel::FullyConnected: return "stowage_qfully_connected_s8";
    case QuantKernel::AvgPool2d: return "stowage_qavgpool2d_s8";
    case QuantKernel::MaxPool2d: return "stowage_qmaxpool2d_s8";
    case QuantKernel::Add: return "stowage_qadd_s8";
    case QuantKernel::Mul: return "stowage_qmul_s8";
    case QuantKernel::Softmax: return "stowage_qsoftmax_s8";
    case QuantKernel::Quantize: return "stowage_quantize_f32_s8";
    case QuantKernel::Dequantize: return "stowage_dequantize_s8_f32";
    case QuantKernel::Mean: return "stowage_qmean_hw_s8";
    case QuantKernel::Requantize: return "stowage_requantize_s8";
    case QuantKernel::Logistic: return "stowage_qlogistic_s8";
    case QuantKernel::Tanh: return "stowage_qtanh_s8";
    case QuantKernel::HardSwish: return "stowage_qhardswish_s8";
    case QuantKernel::Relu: return "stowage_qrelu_s8";
    case QuantKernel::Sub: return "stowage_qsub_s8";
    case QuantKernel::Maximum: return "stowage_qmaximum_s8";
    case QuantKernel::Minimum: return "stowage_qminimum_s8";
  }
  return "";
}

std::string quantParamsTypeName(const QuantCall& c) {
  return std::visit(Overloaded{
                        [](const stowage_qconv_params&) -> std::string { return "stowage_qconv_params"; },
                        [](const stowage_qfc_params&) -> std::string { return "stowage_qfc_params"; },
                        [](const stowage_qpool_params&) -> std::string { return "stowage_qpool_params"; },
                        [](const stowage_qbinary_params&) -> std::string { return "stowage_qbinary_params"; },
                        [](const stowage_qsoftmax_params&) -> std::string { return "stowage_qsoftmax_params"; },
                        [](const stowage_quant_params&) -> std::string { return "stowage_quant_params"; },
                        [](const stowage_qmean_params&) -> std::string { return "stowage_qmean_params"; },
                        [](const stowage_requant_params&) -> std::string { return "stowage_requant_params"; },
                        [](const stowage_qsigmoid_params&) -> std::string { return "stowage_qsigmoid_params"; },
                        [](const stowage_qhardswish_params&) -> std::string { return "stowage_qhardswish_params"; },
                        [](const stowage_qrelu_params&) -> std::string { return "stowage_qrelu_params"; },
                    },
                    c.params);
}

void executeQuantCall(const QuantCall& c, const std::vector<const void*>& in, void* out) {
  auto s8 = [&](size_t i) { return static_cast<const int8_t*>(i < in.size() ? in[i] : nullptr); };
  auto s32 = [&](size_t i) { return static_cast<const int32_t*>(i < in.size() ? in[i] : nullptr); };
  int8_t* y = static_cast<int8_t*>(out);
  std::visit(Overloaded{
                 [&](const stowage_qconv_params& p) {
                   if (c.kernel == QuantKernel::DepthwiseConv2d && p.requant_f32)
                     stowage_qdepthwise_conv2d_s8_rqf32(s8(0), s8(1), s32(2), s32(3), s32(4), y, &p);
                   else if (c.kernel == QuantKernel::DepthwiseConv2d) stowage_qdepthwise_conv2d_s8(s8(0), s8(1), s32(2), s32(3), s32(4), y, &p);
                   else if (p.requant_f32) stowage_qconv2d_s8_rqf32(s8(0), s8(1), s32(2), s32(3), s32(4), y, &p);
                   else stowage_qconv2d_s8(s8(0), s8(1), s32(2), s32(3), s32(4), y, &p);
                 },
                 [&](const stowage_qfc_params& p) {
                   if (p.requant_f32) stowage_qfully_connected_s8_rqf32(s8(0), s8(1), s32(2), s32(3), s32(4), y, &p);
                   else stowage_qfully_connected_s8(s8(0), s8(1), s32(2), s32(3), s32(4), y, &p);
                 },
                 [&](const stowage_qpool_params& p) {
                   if (c.kernel == QuantKernel::MaxPool2d) stowage_qmaxpool2d_s8(s8(0), y, &p);
                   else stowage_qavgpool2d_s8(s8(0), y, &p);
                 },
                 [&](const stowage_qbinary_params& p) {
                   switch (c.kernel) {
                     case QuantKernel::Mul: stowage_qmul_s8(s8(0), s8(1), y, &p); break;
                     case QuantKernel::Sub: stowage_qsub_s8(s8(0), s8(1), y, &p); break;
                     case QuantKernel::Maximum: stowage_qmaximum_s8(s8(0), s8(1), y, &p); break;
                     case QuantKernel::Minimum: stowage_qminimum_s8(s8(0), s8(1), y, &p); break;
                     default: stowage_qadd_s8(s8(0), s8(1), y, &p); break;
                   }
                 },
                 [&](const stowage_qsigmoid_params& p) {
                   if (c.kernel == QuantKernel::Tanh) stowage_qtanh_s8(s8(0), y, &p);
                   else stowage_qlogistic_s8(s8(0), y, &p);
                 },
                 [&](const stowage_qhardswish_params& p) { stowage_qhardswish_s8(s8(0), y, &p); },
                 [&](const stowage_qrelu_params& p) { stowage_qrelu_s8(s8(0), y, &p); },
                 [&](const stowage_qsoftmax_params& p) { stowage_qsoftmax_s8(s8(0), y, &p); },
                 [&](const stowage_qmean_params& p) { stowage_qmean_hw_s8(s8(0), y, &p); },
                 [&](const stowage_requant_params& p) { stowage_requantize_s8(s8(0), y, &p); },
                 [&](const stowage_quant_params& p) {
                   if (c.kernel == QuantKernel::Quantize) stowage_quantize_f32_s8(static_cast<const float*>(in[0]), y, &p);
                   else stowage_dequantize_s8_f32(s8(0), static_cast<float*>(out), &p);
                 },
             },
             c.params);
}

std::vector<size_t> kernelStackByStep(const Graph& g, const ProgramPlan& plan) {
  std::vector<size_t> bytes(g.nodes.size(), 0);
  for (size_t step = 0; step < g.nodes.size(); ++step) {
    if (plan.offloadedAt(static_cast<int>(step)) != nullptr) continue;
    auto calls = lowerNode(g, g.nodes[step]);
    if (!calls.ok()) continue;
    for (const KernelCall& call : *calls) {
      const auto* q = std::get_if<QuantCall>(&call.params);
      if (q == nullptr) continue;
      if (q->kernel == QuantKernel::Conv2d)
        bytes[step] = std::max(bytes[step], static_cast<size_t>(stowage_qconv2d_s8_stack_bytes(&std::get<stowage_qconv_params>(q->params))));
      else if (q->kernel == QuantKernel::DepthwiseConv2d)
        bytes[step] = std::max(bytes[step],
                               static_cast<size_t>(stowage_qdepthwise_conv2d_s8_stack_bytes(&std::get<stowage_qconv_params>(q->params))));
      else if (q->kernel == QuantKernel::Add || q->kernel == QuantKernel::Sub)
        bytes[step] = std::max(bytes[step], static_cast<size_t>(stowage_qadd_s8_stack_bytes(&std::get<stowage_qbinary_params>(q->params))));
      else if (q->kernel == QuantKernel::FullyConnected)
        bytes[step] = std::max(bytes[step], static_cast<size_t>(stowage_qfully_connected_s8_stack_bytes(&std::get<stowage_qfc_params>(q->params))));
    }
  }
  return bytes;
}

}  // namespace stowage
