// Kernel lowering of the ONNX integer ops (QuantizeLinear, DequantizeLinear, ConvInteger, QLinearConv,
// MatMulInteger, QLinearMatMul in Ops.def) to runtime/include/stowage_kernels_qlinear.h. Scales and zero points
// stay tensors (the kernels read them at run time), so here only geometry, element types and the number of
// quantization entries are fixed and checked. See KernelCall.h.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "stowage/lower/KernelCall.h"
#include "stowage/lower/LoweringSupport.h"
#include "stowage/ir/LoweringAttributes.h"

namespace stowage {

namespace {

using lowering::assignI32;
using lowering::broadcastStrides;
using lowering::intList;
using lowering::BroadcastLoops;
using lowering::mergeBroadcastLoops;
using lowering::fitsI32;
using lowering::nodeLoc;
using lowering::Overloaded;
using lowering::tooBig;

/// STOWAGE_ELEM_* code of tensor `id`, which must have one of the `allowed` dtypes.
Result<int32_t> elemType(const Graph& g, const Node& n, TensorId id, std::initializer_list<DType> allowed, const char* role) {
  const Tensor& t = g.tensor(id);
  if (std::find(allowed.begin(), allowed.end(), t.dtype) == allowed.end()) {
    std::string list;
    for (DType d : allowed) list += (list.empty() ? "" : " or ") + std::string(dtypeName(d));
    return makeUnsupported(nodeLoc(n), fmt::format("{} '{}' has dtype {}; the kernel supports {}", role, t.name, dtypeName(t.dtype), list));
  }
  switch (t.dtype) {
    case DType::Int8: return STOWAGE_ELEM_S8;
    case DType::UInt8: return STOWAGE_ELEM_U8;
    default: return STOWAGE_ELEM_S32;
  }
}

/// Checks a scale (f32) or zero point (dtype `want`) input: present when `required`, `count` elements or 1.
/// Returns its element count (0 when absent).
Result<int64_t> quantInput(const Graph& g, const Node& n, size_t index, DType want, bool isScale, bool required,
                           int64_t count, const char* role) {
  const TensorId id = n.input(index);
  if (id == kNoTensor) {
    if (required) return makeError(nodeLoc(n), fmt::format("{} (input {}) is missing", role, index));
    return int64_t{0};
  }
  const Tensor& t = g.tensor(id);
  if (t.dtype != (isScale ? DType::Float32 : want))
    return makeUnsupported(nodeLoc(n), fmt::format("{} '{}' has dtype {}; expected {}", role, t.name, dtypeName(t.dtype),
                                                   dtypeName(isScale ? DType::Float32 : want)));
  const int64_t e = t.numElements();
  if (t.shape.size() > 1 || (e != 1 && e != count))
    return makeError(nodeLoc(n), fmt::format("{} '{}' has shape [{}]; expected a scalar{}", role, t.name, shapeToString(t.shape),
                                             count > 1 ? fmt::format(" or {} entries", count) : ""));
  return e;
}

KernelCall single(QLinearKernel k, auto params, std::vector<TensorId> inputs, TensorId out) {
  QLinearCall c;
  c.kernel = k;
  c.params = params;
  return KernelCall{c, std::move(inputs), out};
}

Result<std::vector<KernelCall>> lowerQuantizeLinear(const Graph& g, const Node& n) {
  const bool quantize = n.op == OpKind::QuantizeLinear;
  const TensorId qId = quantize ? n.outputs[0] : n.inputs[0];
  const TensorId fId = quantize ? n.inputs[0] : n.outputs[0];
  if (g.tensor(fId).dtype != DType::Float32)
    return makeUnsupported(nodeLoc(n), fmt::format("tensor '{}' has dtype {}; the kernel supports f32", g.tensor(fId).name,
                                                   dtypeName(g.tensor(fId).dtype)));
  STOWAGE_ASSIGN_OR_RETURN(int32_t qType, quantize ? elemType(g, n, qId, {DType::Int8, DType::UInt8}, "output")
                                                   : elemType(g, n, qId, {DType::Int8, DType::UInt8, DType::Int32}, "input"));
  const Shape& x = g.tensor(n.inputs[0]).shape;
  const int64_t rank = static_cast<int64_t>(x.size());
  const int64_t axis = n.attrs.getInt("axis", rank > 1 ? 1 : 0);
  const int64_t scaleCount = g.tensor(n.inputs[1]).numElements();
  // A 1-D scale quantizes per axis; one with a single entry is the same as a per-tensor one.
  const bool perAxis = g.tensor(n.inputs[1]).shape.size() == 1 && scaleCount != 1 && rank > 0;
  if (perAxis && (axis < 0 || axis >= rank)) return makeError(nodeLoc(n), fmt::format("axis {} is out of range for rank {}", axis, rank));
  const int64_t axisLen = perAxis ? x[static_cast<size_t>(axis)] : 1;
  if (scaleCount != axisLen)
    return makeError(nodeLoc(n), fmt::format("scale has {} entries; per-axis quantization along axis {} needs {}", scaleCount, axis, axisLen));
  STOWAGE_TRY(quantInput(g, n, 1, DType::Float32, true, true, axisLen, "scale"));
  STOWAGE_ASSIGN_OR_RETURN(int64_t zpCount, quantInput(g, n, 2, g.tensor(qId).dtype, false, false, axisLen, "zero point"));
  if (zpCount != 0 && zpCount != scaleCount)
    return makeError(nodeLoc(n), fmt::format("zero point has {} entries but the scale {}", zpCount, scaleCount));
  stowage_qlinear_quant_params p;
  std::memset(&p, 0, sizeof p);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (perAxis && d < axis) outer *= x[static_cast<size_t>(d)];
    if (perAxis && d > axis) inner *= x[static_cast<size_t>(d)];
    if (!perAxis) inner *= x[static_cast<size_t>(d)];
  }
  p.outer = outer;
  p.inner = inner;
  STOWAGE_TRY(assignI32(n, {{&p.axis_len, axisLen}, {&p.q_type, qType}}));
  return std::vector<KernelCall>{single(quantize ? QLinearKernel::QuantizeLinear : QLinearKernel::DequantizeLinear, p,
                                        {n.inputs[0], n.inputs[1], n.input(2)}, n.outputs[0])};
}

/// The requantization fields (STOWAGE_QLINEAR_REQUANT_FIELDS) from a QLinearConv / QLinearMatMul node's attributes
/// (Ops.def: requant_f32, y_min / y_max; set by the QDQ pass).
template <typename Params>
void setRequantMode(const Node& n, Params& p) {
  p.requant_f32 = n.attrs.getInt(kQdqRequantF32Attr, 0) != 0 ? 1 : 0;
  if (n.attrs.has(kQdqOutputMinAttr) || n.attrs.has(kQdqOutputMaxAttr)) {
    p.clamp = 1;
    p.y_min = static_cast<int32_t>(n.attrs.getInt(kQdqOutputMinAttr, p.y_type == STOWAGE_ELEM_U8 ? 0 : -128));
    p.y_max = static_cast<int32_t>(n.attrs.getInt(kQdqOutputMaxAttr, p.y_type == STOWAGE_ELEM_U8 ? 255 : 127));
  }
}

Result<std::vector<KernelCall>> lowerQLinearConv(const Graph& g, const Node& n) {
  const bool qlinear = n.op == OpKind::QLinearConv;
  const TensorId xId = n.inputs[0], wId = n.inputs[1];
  const Shape& x = g.tensor(xId).shape;
  const Shape& w = g.tensor(wId).shape;
  const Shape& y = g.tensor(n.outputs[0]).shape;
  if (x.size() < 3 || x.size() > 4 || w.size() != x.size() || y.size() != x.size())
    return makeUnsupported(nodeLoc(n), fmt::format("input rank {}: the kernels support 1-D and 2-D convolution", x.size()));
  STOWAGE_ASSIGN_OR_RETURN(int32_t xType, elemType(g, n, xId, {DType::Int8, DType::UInt8}, "input"));
  STOWAGE_ASSIGN_OR_RETURN(int32_t wType, elemType(g, n, wId, {DType::Int8, DType::UInt8}, "weight"));
  int32_t yType = STOWAGE_ELEM_S32;
  if (qlinear) {
    STOWAGE_ASSIGN_OR_RETURN(yType, elemType(g, n, n.outputs[0], {DType::Int8, DType::UInt8}, "output"));
  } else {
    STOWAGE_TRY(elemType(g, n, n.outputs[0], {DType::Int32}, "output"));
  }
  const int64_t m = w[0];
  const DType xd = g.tensor(xId).dtype, wd = g.tensor(wId).dtype, yd = g.tensor(n.outputs[0]).dtype;
  int64_t wCount = 0;
  if (qlinear) {
    STOWAGE_TRY(quantInput(g, n, 2, xd, true, true, 1, "x_scale"));
    STOWAGE_TRY(quantInput(g, n, 3, xd, false, true, 1, "x_zero_point"));
    STOWAGE_ASSIGN_OR_RETURN(int64_t wScales, quantInput(g, n, 4, wd, true, true, m, "w_scale"));
    STOWAGE_ASSIGN_OR_RETURN(wCount, quantInput(g, n, 5, wd, false, true, m, "w_zero_point"));
    if (wScales != wCount)
      return makeUnsupported(nodeLoc(n), fmt::format("w_scale has {} entries but w_zero_point {}; both must be per tensor or "
                                                     "per output channel",
                                                     wScales, wCount));
    STOWAGE_TRY(quantInput(g, n, 6, yd, true, true, 1, "y_scale"));
    STOWAGE_TRY(quantInput(g, n, 7, yd, false, true, 1, "y_zero_point"));
    if (TensorId b = n.input(8); b != kNoTensor && g.tensor(b).dtype != DType::Int32)
      return makeError(nodeLoc(n), fmt::format("bias '{}' has dtype {}; QLinearConv needs int32", g.tensor(b).name, dtypeName(g.tensor(b).dtype)));
  } else {
    STOWAGE_TRY(quantInput(g, n, 2, xd, false, false, 1, "x_zero_point"));
    STOWAGE_ASSIGN_OR_RETURN(wCount, quantInput(g, n, 3, wd, false, false, m, "w_zero_point"));
  }
  const size_t sp = x.size() - 2;
  const auto strides = n.attrs.getInts("strides", std::vector<int64_t>(sp, 1));
  const auto dil = n.attrs.getInts("dilations", std::vector<int64_t>(sp, 1));
  const auto pads = n.attrs.getInts("pads", std::vector<int64_t>(2 * sp, 0));
  if (strides.size() != sp || dil.size() != sp || pads.size() != 2 * sp) return makeError(nodeLoc(n), "strides, dilations or pads malformed");
  const bool twoD = sp == 2;
  stowage_qlinear_conv_params p;
  std::memset(&p, 0, sizeof p);
  STOWAGE_TRY(assignI32(n, {{&p.n, x[0]}, {&p.c, x[1]}, {&p.h, twoD ? x[2] : 1}, {&p.w, x.back()}, {&p.m, m},
                            {&p.oh, twoD ? y[2] : 1}, {&p.ow, y.back()}, {&p.kh, twoD ? w[2] : 1}, {&p.kw, w.back()},
                            {&p.group, n.attrs.getInt("group", 1)}, {&p.stride_h, twoD ? strides[0] : 1}, {&p.stride_w, strides.back()},
                            {&p.dil_h, twoD ? dil[0] : 1}, {&p.dil_w, dil.back()}, {&p.pad_top, twoD ? pads[0] : 0},
                            {&p.pad_left, twoD ? pads[1] : pads[0]}, {&p.x_type, xType}, {&p.w_type, wType}, {&p.y_type, yType},
                            {&p.w_quant_count, std::max<int64_t>(wCount, 1)}}));
  if (p.group <= 0 || p.c % p.group != 0 || p.m % p.group != 0)
    return makeError(nodeLoc(n), fmt::format("group {} does not divide {} input and {} output channels", p.group, p.c, p.m));
  if (qlinear) {
    setRequantMode(n, p);
    return std::vector<KernelCall>{single(QLinearKernel::QLinearConv, p,
                                          {xId, wId, n.inputs[2], n.inputs[3], n.inputs[4], n.inputs[5], n.inputs[6], n.inputs[7], n.input(8)},
                                          n.outputs[0])};
  }
  return std::vector<KernelCall>{single(QLinearKernel::ConvInteger, p, {xId, wId, n.input(2), n.input(3)}, n.outputs[0])};
}

Result<std::vector<KernelCall>> lowerQLinearMatMul(const Graph& g, const Node& n) {
  const bool qlinear = n.op == OpKind::QLinearMatMul;
  const TensorId aId = n.inputs[0], bId = n.inputs[1];
  Shape a = g.tensor(aId).shape, b = g.tensor(bId).shape;
  if (a.empty() || b.empty()) return makeError(nodeLoc(n), "operands must have rank >= 1");
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  const int64_t m = a[a.size() - 2], k = a.back(), nn = b.back();
  if (b[b.size() - 2] != k) return makeError(nodeLoc(n), fmt::format("inner dims differ ({} vs {})", k, b[b.size() - 2]));
  STOWAGE_ASSIGN_OR_RETURN(int32_t aType, elemType(g, n, aId, {DType::Int8, DType::UInt8}, "A"));
  STOWAGE_ASSIGN_OR_RETURN(int32_t bType, elemType(g, n, bId, {DType::Int8, DType::UInt8}, "B"));
  int32_t yType = STOWAGE_ELEM_S32;
  if (qlinear) {
    STOWAGE_ASSIGN_OR_RETURN(yType, elemType(g, n, n.outputs[0], {DType::Int8, DType::UInt8}, "output"));
  } else {
    STOWAGE_TRY(elemType(g, n, n.outputs[0], {DType::Int32}, "output"));
  }
  const DType ad = g.tensor(aId).dtype, bd = g.tensor(bId).dtype, yd = g.tensor(n.outputs[0]).dtype;
  int64_t aCount = 0, bCount = 0, yCount = 1;
  if (qlinear) {
    STOWAGE_ASSIGN_OR_RETURN(int64_t aScales, quantInput(g, n, 2, ad, true, true, m, "a_scale"));
    STOWAGE_ASSIGN_OR_RETURN(aCount, quantInput(g, n, 3, ad, false, true, m, "a_zero_point"));
    STOWAGE_ASSIGN_OR_RETURN(int64_t bScales, quantInput(g, n, 4, bd, true, true, nn, "b_scale"));
    STOWAGE_ASSIGN_OR_RETURN(bCount, quantInput(g, n, 5, bd, false, true, nn, "b_zero_point"));
    STOWAGE_ASSIGN_OR_RETURN(int64_t yScales, quantInput(g, n, 6, yd, true, true, m, "y_scale"));
    STOWAGE_ASSIGN_OR_RETURN(yCount, quantInput(g, n, 7, yd, false, true, m, "y_zero_point"));
    if (aScales != aCount || bScales != bCount || yScales != yCount)
      return makeUnsupported(nodeLoc(n), "each scale and its zero point must have the same number of entries");
  } else {
    STOWAGE_ASSIGN_OR_RETURN(aCount, quantInput(g, n, 2, ad, false, false, m, "a_zero_point"));
    STOWAGE_ASSIGN_OR_RETURN(bCount, quantInput(g, n, 3, bd, false, false, nn, "b_zero_point"));
  }
  Shape batchA(a.begin(), a.end() - 2), batchB(b.begin(), b.end() - 2);
  const size_t rank = std::max(batchA.size(), batchB.size());
  Shape batch(rank, 1);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t da = d + batchA.size() >= rank ? batchA[d + batchA.size() - rank] : 1;
    const int64_t db = d + batchB.size() >= rank ? batchB[d + batchB.size() - rank] : 1;
    if (da != db && da != 1 && db != 1) return makeError(nodeLoc(n), "batch dims do not broadcast");
    batch[d] = std::max(da, db);
  }
  std::vector<int64_t> sa = broadcastStrides(batchA, batch), sb = broadcastStrides(batchB, batch);
  const BroadcastLoops loops = mergeBroadcastLoops(batch, sa, sb);
  const Shape& s = loops.sizes;
  const std::vector<int64_t>& ma = loops.aStrides;
  const std::vector<int64_t>& mb = loops.bStrides;
  if (s.size() > STOWAGE_MAX_RANK)
    return makeUnsupported(nodeLoc(n), fmt::format("needs {} batch dims but the kernels support at most {}", s.size(), STOWAGE_MAX_RANK));
  stowage_qlinear_matmul_params p;
  std::memset(&p, 0, sizeof p);
  p.batch_rank = static_cast<int32_t>(s.size());
  for (size_t d = 0; d < s.size(); ++d) {
    STOWAGE_TRY(assignI32(n, {{&p.batch_shape[d], s[d]}}));
    p.a_stride[d] = ma[d] * m * k;
    p.b_stride[d] = mb[d] * k * nn;
  }
  STOWAGE_TRY(assignI32(n, {{&p.m, m}, {&p.n, nn}, {&p.k, k}, {&p.a_type, aType}, {&p.b_type, bType}, {&p.y_type, yType},
                            {&p.a_quant_count, std::max<int64_t>(aCount, 1)}, {&p.b_quant_count, std::max<int64_t>(bCount, 1)},
                            {&p.y_quant_count, std::max<int64_t>(yCount, 1)}}));
  if (qlinear) {
    setRequantMode(n, p);
    return std::vector<KernelCall>{single(QLinearKernel::QLinearMatMul, p,
                                          {aId, bId, n.inputs[2], n.inputs[3], n.inputs[4], n.inputs[5], n.inputs[6], n.inputs[7]},
                                          n.outputs[0])};
  }
  return std::vector<KernelCall>{single(QLinearKernel::MatMulInteger, p, {aId, bId, n.input(2), n.input(3)}, n.outputs[0])};
}

/// QLinearAdd / QLinearMul: numpy broadcasting of a and b, per-tensor scales and zero points.
Result<std::vector<KernelCall>> lowerQLinearBinary(const Graph& g, const Node& n) {
  const TensorId aId = n.inputs[0], bId = n.inputs[1], yId = n.outputs[0];
  stowage_qlinear_binary_params p;
  std::memset(&p, 0, sizeof p);
  STOWAGE_ASSIGN_OR_RETURN(p.a_type, elemType(g, n, aId, {DType::Int8, DType::UInt8}, "A"));
  STOWAGE_ASSIGN_OR_RETURN(p.b_type, elemType(g, n, bId, {DType::Int8, DType::UInt8}, "B"));
  STOWAGE_ASSIGN_OR_RETURN(p.y_type, elemType(g, n, yId, {DType::Int8, DType::UInt8}, "output"));
  const DType ad = g.tensor(aId).dtype, bd = g.tensor(bId).dtype, yd = g.tensor(yId).dtype;
  STOWAGE_TRY(quantInput(g, n, 2, ad, true, true, 1, "a_scale"));
  STOWAGE_TRY(quantInput(g, n, 3, ad, false, true, 1, "a_zero_point"));
  STOWAGE_TRY(quantInput(g, n, 4, bd, true, true, 1, "b_scale"));
  STOWAGE_TRY(quantInput(g, n, 5, bd, false, true, 1, "b_zero_point"));
  STOWAGE_TRY(quantInput(g, n, 6, yd, true, true, 1, "y_scale"));
  STOWAGE_TRY(quantInput(g, n, 7, yd, false, true, 1, "y_zero_point"));
  STOWAGE_ASSIGN_OR_RETURN(stowage_broadcast_params walk, broadcastGeometry(g, n));
  p.rank = walk.rank;
  for (int32_t d = 0; d < walk.rank; ++d) {
    p.shape[d] = walk.shape[d];
    p.a_stride[d] = walk.a_stride[d];
    p.b_stride[d] = walk.b_stride[d];
  }
  p.mul = n.op == OpKind::QLinearMul ? 1 : 0;
  setRequantMode(n, p);
  p.requant_f32 = 0;
  return std::vector<KernelCall>{single(QLinearKernel::QLinearBinary, p, {aId, bId, n.inputs[2], n.inputs[3], n.inputs[4], n.inputs[5],
                                                                         n.inputs[6], n.inputs[7]},
                                        yId)};
}

/// QLinearAveragePool / QLinearMaxPool: the pool's window on int8 / uint8, per-tensor scales and zero points.
Result<std::vector<KernelCall>> lowerQLinearPool(const Graph& g, const Node& n) {
  const TensorId xId = n.inputs[0], yId = n.outputs[0];
  const Shape& x = g.tensor(xId).shape;
  if (x.size() < 3 || x.size() > 4)
    return makeUnsupported(nodeLoc(n), fmt::format("input rank {}: the pool kernels support 1-D and 2-D pooling", x.size()));
  stowage_qlinear_pool_params p;
  std::memset(&p, 0, sizeof p);
  STOWAGE_ASSIGN_OR_RETURN(p.x_type, elemType(g, n, xId, {DType::Int8, DType::UInt8}, "input"));
  STOWAGE_ASSIGN_OR_RETURN(p.y_type, elemType(g, n, yId, {DType::Int8, DType::UInt8}, "output"));
  const DType xd = g.tensor(xId).dtype, yd = g.tensor(yId).dtype;
  STOWAGE_TRY(quantInput(g, n, 1, xd, true, true, 1, "x_scale"));
  STOWAGE_TRY(quantInput(g, n, 2, xd, false, true, 1, "x_zero_point"));
  STOWAGE_TRY(quantInput(g, n, 3, yd, true, true, 1, "y_scale"));
  STOWAGE_TRY(quantInput(g, n, 4, yd, false, true, 1, "y_zero_point"));
  STOWAGE_ASSIGN_OR_RETURN(p.pool, poolGeometry(g, n));
  setRequantMode(n, p);
  p.requant_f32 = 1;
  const QLinearKernel kernel = n.op == OpKind::QLinearMaxPool ? QLinearKernel::QLinearMaxPool : QLinearKernel::QLinearAveragePool;
  return std::vector<KernelCall>{single(kernel, p, {xId, n.inputs[1], n.inputs[2], n.inputs[3], n.inputs[4]}, yId)};
}

/// QLinearLookup: one byte in, one byte out, through the node's constant 256-entry table (input 1).
Result<std::vector<KernelCall>> lowerQLinearLookup(const Graph& g, const Node& n) {
  const TensorId xId = n.inputs[0], tableId = n.inputs[1], yId = n.outputs[0];
  STOWAGE_TRY(elemType(g, n, xId, {DType::Int8, DType::UInt8}, "input"));
  STOWAGE_TRY(elemType(g, n, yId, {DType::Int8, DType::UInt8}, "output"));
  const Tensor& table = g.tensor(tableId);
  if (table.dtype != g.tensor(yId).dtype || table.numElements() != 256)
    return makeError(nodeLoc(n), fmt::format("table '{}' must hold 256 entries of the output's type, not {} of {}", table.name,
                                             table.numElements(), dtypeName(table.dtype)));
  stowage_qlinear_lookup_params p;
  std::memset(&p, 0, sizeof p);
  p.count = g.tensor(xId).numElements();
  return std::vector<KernelCall>{single(QLinearKernel::QLinearLookup, p, {xId, tableId}, yId)};
}

/// QLinearSoftmax: rows along the axis (Softmax's geometry), the float32 exponential table (input 1), y_factor and
/// y_zero_point from the attributes.
Result<std::vector<KernelCall>> lowerQLinearSoftmax(const Graph& g, const Node& n) {
  const TensorId xId = n.inputs[0], tableId = n.inputs[1], yId = n.outputs[0];
  stowage_qlinear_softmax_params p;
  std::memset(&p, 0, sizeof p);
  STOWAGE_ASSIGN_OR_RETURN(p.x_type, elemType(g, n, xId, {DType::Int8, DType::UInt8}, "input"));
  STOWAGE_ASSIGN_OR_RETURN(p.y_type, elemType(g, n, yId, {DType::Int8, DType::UInt8}, "output"));
  const Tensor& table = g.tensor(tableId);
  if (table.dtype != DType::Float32 || table.numElements() != 256)
    return makeError(nodeLoc(n), fmt::format("exponential table '{}' must hold 256 float32 entries", table.name));
  const Shape& s = g.tensor(xId).shape;
  const int64_t rank = static_cast<int64_t>(s.size());
  const int64_t axis = n.attrs.getInt("axis", rank - 1);
  if (rank == 0 || axis < 0 || axis >= rank) return makeError(nodeLoc(n), fmt::format("axis {} is out of range for rank {}", axis, rank));
  const auto ax = static_cast<size_t>(axis);
  auto product = [&](size_t from, size_t to) {
    int64_t v = 1;
    for (size_t d = from; d < to; ++d) v *= s[d];
    return v;
  };
  p.outer = product(0, ax);
  const bool coerce2d = n.attrs.getInt("coerce2d", 0) != 0;
  p.len = coerce2d ? product(ax, s.size()) : s[ax];
  p.inner = coerce2d ? 1 : product(ax + 1, s.size());
  p.y_factor = n.attrs.getFloat("y_factor", 0.0f);
  if (!(p.y_factor >= 0.0f && p.y_factor < 4194304.0f))
    return makeError(nodeLoc(n), fmt::format("y_factor {} is outside [0, 2^22)", p.y_factor));
  STOWAGE_TRY(assignI32(n, {{&p.y_zero_point, n.attrs.getInt("y_zero_point", 0)}}));
  return std::vector<KernelCall>{single(QLinearKernel::QLinearSoftmax, p, {xId, tableId}, yId)};
}

}  // namespace

Result<std::vector<KernelCall>> lowerQLinearNode(const Graph& g, const Node& n) {
  switch (n.op) {
    case OpKind::QuantizeLinear:
    case OpKind::DequantizeLinear: return lowerQuantizeLinear(g, n);
    case OpKind::ConvInteger:
    case OpKind::QLinearConv: return lowerQLinearConv(g, n);
    case OpKind::MatMulInteger:
    case OpKind::QLinearMatMul: return lowerQLinearMatMul(g, n);
    case OpKind::QLinearAdd:
    case OpKind::QLinearMul: return lowerQLinearBinary(g, n);
    case OpKind::QLinearAveragePool:
    case OpKind::QLinearMaxPool: return lowerQLinearPool(g, n);
    case OpKind::QLinearLookup: return lowerQLinearLookup(g, n);
    case OpKind::QLinearSoftmax: return lowerQLinearSoftmax(g, n);
    default: break;
  }
  return makeError(nodeLoc(n), "is not an ONNX integer op");
}

std::string qlinearKernelFunctionName(const QLinearCall& c) {
  switch (c.kernel) {
    case QLinearKernel::QuantizeLinear: return "stowage_quantize_linear_f32";
    case QLinearKernel::DequantizeLinear: return "stowage_dequantize_linear_f32";
    case QLinearKernel::ConvInteger: return "stowage_conv_integer";
    case QLinearKernel::QLinearConv: return "stowage_qlinear_conv";
    case QLinearKernel::MatMulInteger: return "stowage_matmul_integer";
    case QLinearKernel::QLinearMatMul: return "stowage_qlinear_matmul";
    case QLinearKernel::QLinearBinary: return "stowage_qlinear_binary";
    case QLinearKernel::QLinearAveragePool: return "stowage_qlinear_avgpool2d";
    case QLinearKernel::QLinearMaxPool: return "stowage_qlinear_maxpool2d";
    case QLinearKernel::QLinearLookup: return "stowage_qlinear_lookup";
    case QLinearKernel::QLinearSoftmax: return "stowage_qlinear_softmax";
  }
  return "";
}

std::string qlinearParamsTypeName(const QLinearCall& c) {
  return std::visit(Overloaded{
                        [](const stowage_qlinear_quant_params&) -> std::string { return "stowage_qlinear_quant_params"; },
                        [](const stowage_qlinear_conv_params&) -> std::string { return "stowage_qlinear_conv_params"; },
                        [](const stowage_qlinear_matmul_params&) -> std::string { return "stowage_qlinear_matmul_params"; },
                        [](const stowage_qlinear_binary_params&) -> std::string { return "stowage_qlinear_binary_params"; },
                        [](const stowage_qlinear_pool_params&) -> std::string { return "stowage_qlinear_pool_params"; },
                        [](const stowage_qlinear_lookup_params&) -> std::string { return "stowage_qlinear_lookup_params"; },
                        [](const stowage_qlinear_softmax_params&) -> std::string { return "stowage_qlinear_softmax_params"; },
                    },
                    c.params);
}

void executeQLinearCall(const QLinearCall& c, const std::vector<const void*>& in, void* out) {
  auto v = [&](size_t i) { return i < in.size() ? in[i] : nullptr; };
  auto f = [&](size_t i) { return static_cast<const float*>(v(i)); };
  std::visit(Overloaded{
                 [&](const stowage_qlinear_quant_params& p) {
                   if (c.kernel == QLinearKernel::QuantizeLinear) stowage_quantize_linear_f32(f(0), f(1), v(2), out, &p);
                   else stowage_dequantize_linear_f32(v(0), f(1), v(2), static_cast<float*>(out), &p);
                 },
                 [&](const stowage_qlinear_conv_params& p) {
                   if (c.kernel == QLinearKernel::ConvInteger) stowage_conv_integer(v(0), v(1), v(2), v(3), static_cast<int32_t*>(out), &p);
                   else
                     stowage_qlinear_conv(v(0), v(1), f(2), v(3), f(4), v(5), f(6), v(7), static_cast<const int32_t*>(v(8)), out, &p);
                 },
                 [&](const stowage_qlinear_matmul_params& p) {
                   if (c.kernel == QLinearKernel::MatMulInteger) stowage_matmul_integer(v(0), v(1), v(2), v(3), static_cast<int32_t*>(out), &p);
                   else stowage_qlinear_matmul(v(0), v(1), f(2), v(3), f(4), v(5), f(6), v(7), out, &p);
                 },
                 [&](const stowage_qlinear_binary_params& p) { stowage_qlinear_binary(v(0), v(1), f(2), v(3), f(4), v(5), f(6), v(7), out, &p); },
                 [&](const stowage_qlinear_pool_params& p) {
                   if (c.kernel == QLinearKernel::QLinearMaxPool) stowage_qlinear_maxpool2d(v(0), f(1), v(2), f(3), v(4), out, &p);
                   else stowage_qlinear_avgpool2d(v(0), f(1), v(2), f(3), v(4), out, &p);
                 },
                 [&](const stowage_qlinear_lookup_params& p) { stowage_qlinear_lookup(v(0), v(1), out, &p); },
                 [&](const stowage_qlinear_softmax_params& p) { stowage_qlinear_softmax(v(0), f(1), out, &p); },
             },
             c.params);
}

}  // namespace stowage
