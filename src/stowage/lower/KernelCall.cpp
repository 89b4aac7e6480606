// Kernel lowering (see KernelCall.h): per-op parameter computation and host execution of the C kernels.
#include "stowage/lower/KernelCall.h"
#include "stowage/lower/LoweringSupport.h"
#include "stowage/ir/LoweringAttributes.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

namespace stowage {

namespace {

/// The clamp of a Relu or Clip that pass/FuseActivation.h fused into node `n`: sets clamp, clamp_min, clamp_max.
template <class Params>
void setFusedClamp(const Node& n, Params& p) {
  if (!n.attrs.has(kFusedActivationAttr)) return;
  p.clamp = 1;
  p.clamp_min = n.attrs.getFloat(kFusedMinAttr, -std::numeric_limits<float>::infinity());
  p.clamp_max = n.attrs.getFloat(kFusedMaxAttr, std::numeric_limits<float>::infinity());
}


using lowering::assignI32;
using lowering::broadcastStrides;
using lowering::fitsI32;
using lowering::nodeLoc;
using lowering::Overloaded;
using lowering::requireFloat;
using lowering::tooBig;

/// Row-major element strides of `shape`.
std::vector<int64_t> contiguousStrides(const Shape& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

int64_t product(const Shape& s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to && i < s.size(); ++i) p *= s[i];
  return p;
}

/// Drops size-1 dims and merges adjacent dims that are contiguous in every operand, so broadcasting and
/// gathers run with the fewest loop levels (and rarely exceed STOWAGE_MAX_RANK).
void coalesce(Shape& shape, std::vector<std::vector<int64_t>*> strides) {
  Shape s;
  std::vector<std::vector<int64_t>> st(strides.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    bool merge = !s.empty();
    for (size_t k = 0; merge && k < strides.size(); ++k) merge = st[k].back() == (*strides[k])[d] * shape[d];
    if (merge) {
      s.back() *= shape[d];
      for (size_t k = 0; k < strides.size(); ++k) st[k].back() = (*strides[k])[d];
    } else {
      s.push_back(shape[d]);
      for (size_t k = 0; k < strides.size(); ++k) st[k].push_back((*strides[k])[d]);
    }
  }
  shape = s;
  for (size_t k = 0; k < strides.size(); ++k) *strides[k] = st[k];
}

Status checkRank(const Node& n, size_t rank) {
  if (rank > STOWAGE_MAX_RANK)
    return makeUnsupported(nodeLoc(n), fmt::format("needs rank {} but the kernels support at most {}", rank, STOWAGE_MAX_RANK));
  return Status::success();
}

Status fillShape(const Node& n, int32_t* dst, const Shape& s) {
  for (size_t d = 0; d < s.size(); ++d) {
    if (!fitsI32(s[d])) return tooBig(n, "a dimension");
    dst[d] = static_cast<int32_t>(s[d]);
  }
  return Status::success();
}

/// Spatial attributes of a 1-D or 2-D conv/pool as 2-D values (h first), 1-D mapped to h = 1.
struct Spatial2d {
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1, padTop = 0, padLeft = 0, padBottom = 0, padRight = 0;
};

Result<Spatial2d> spatialAttrs(const Node& n, size_t spatialRank, const std::vector<int64_t>& kernel) {
  if (spatialRank != 1 && spatialRank != 2)
    return makeUnsupported(nodeLoc(n), fmt::format("has {} spatial dims; the kernels support 1-D and 2-D", spatialRank));
  std::vector<int64_t> strides = n.attrs.getInts("strides", std::vector<int64_t>(spatialRank, 1));
  std::vector<int64_t> dil = n.attrs.getInts("dilations", std::vector<int64_t>(spatialRank, 1));
  std::vector<int64_t> pads = n.attrs.getInts("pads", std::vector<int64_t>(2 * spatialRank, 0));
  if (strides.size() != spatialRank || dil.size() != spatialRank || pads.size() != 2 * spatialRank ||
      kernel.size() != spatialRank)
    return makeError(nodeLoc(n), "strides, dilations, pads or kernel size do not match the spatial rank");
  Spatial2d s;
  if (spatialRank == 2) {
    s.kh = kernel[0], s.kw = kernel[1], s.sh = strides[0], s.sw = strides[1], s.dh = dil[0], s.dw = dil[1];
    s.padTop = pads[0], s.padLeft = pads[1], s.padBottom = pads[2], s.padRight = pads[3];
  } else {
    s.kw = kernel[0], s.sw = strides[0], s.dw = dil[0], s.padLeft = pads[0], s.padRight = pads[1];
  }
  return s;
}

/// [N, C, H, W] of a 3-D or 4-D tensor (1-D spatial gets H = 1).
std::array<int64_t, 4> nchw(const Shape& s) {
  if (s.size() == 3) return {s[0], s[1], 1, s[2]};
  return {s[0], s[1], s[2], s[3]};
}

Result<std::vector<KernelCall>> lowerConv(const Graph& g, const Node& n) {
  STOWAGE_TRY(requireFloat(g, n));
  const Shape& x = g.tensor(n.inputs[0]).shape;
  const Shape& w = g.tensor(n.inputs[1]).shape;
  const Shape& y = g.tensor(n.outputs[0]).shape;
  if (x.size() < 3 || x.size() > 4 || w.size() != x.size() || y.size() != x.size())
    return makeUnsupported(nodeLoc(n), fmt::format("input rank {}: the conv kernels support 1-D and 2-D convolution", x.size()));
  std::vector<int64_t> kernel(w.begin() + 2, w.end());
  STOWAGE_ASSIGN_OR_RETURN(Spatial2d s, spatialAttrs(n, x.size() - 2, kernel));
  auto [xn, xc, xh, xw] = nchw(x);
  auto [yn, ym, yh, yw] = nchw(y);
  (void)yn;
  ConvCall c;
  c.transpose = n.op == OpKind::ConvTranspose;
  stowage_conv2d_params& p = c.params;
  std::memset(&p, 0, sizeof p);
  STOWAGE_TRY(assignI32(n, {{&p.n, xn}, {&p.c, xc}, {&p.h, xh}, {&p.w, xw}, {&p.m, ym}, {&p.kh, s.kh}, {&p.kw, s.kw},
                              {&p.oh, yh}, {&p.ow, yw}, {&p.stride_h, s.sh}, {&p.stride_w, s.sw}, {&p.pad_top, s.padTop},
                              {&p.pad_left, s.padLeft}, {&p.dil_h, s.dh}, {&p.dil_w, s.dw},
                              {&p.group, n.attrs.getInt("group", 1)}}));
  if (p.group <= 0 || p.c % p.group != 0 || p.m % p.group != 0)
    return makeError(nodeLoc(n), fmt::format("group {} does not divide {} input and {} output channels", p.group, p.c, p.m));
  // A Relu or Clip fused by pass/FuseActivation.h (Conv only: the transposed kernel has no activation).
  if (c.transpose && n.attrs.has(kFusedActivationAttr))
    return makeError(nodeLoc(n), "a fused activation on ConvTranspose (an internal compiler error)");
  setFusedClamp(n, p);
  return std::vector<KernelCall>{KernelCall{c, {n.inputs[0], n.inputs[1], n.input(2)}, n.outputs[0]}};
}

Result<std::vector<KernelCall>> lowerGemm(const Graph& g, const Node& n) {
  STOWAGE_ASSIGN_OR_RETURN(const bool w8, lowering::requireFloatOrInt8Weights(g, n));
  const Shape& a = g.tensor(n.inputs[0]).shape;
  const Shape& b = g.tensor(n.inputs[1]).shape;
  if (a.size() != 2 || b.size() != 2) return makeError(nodeLoc(n), "Gemm operands must be 2-D");
  GemmCall c;
  stowage_gemm_params& p = c.params;
  std::memset(&p, 0, sizeof p);
  const int64_t transA = n.attrs.getInt("transA", 0) != 0, transB = n.attrs.getInt("transB", 0) != 0;
  const int64_t m = transA ? a[1] : a[0], k = transA ? a[0] : a[1], nn = transB ? b[0] : b[1];
  int64_t cRows = 1, cCols = 1;
  TensorId cId = n.input(2);
  if (cId != kNoTensor) {
    const Shape& cs = g.tensor(cId).shape;
    if (cs.size() == 2) cRows = cs[0], cCols = cs[1];
    else if (cs.size() == 1) cCols = cs[0];
    else if (cs.size() > 2) return makeError(nodeLoc(n), "Gemm C must have rank 0, 1 or 2");
    if ((cRows != 1 && cRows != m) || (cCols != 1 && cCols != nn))
      return makeError(nodeLoc(n), fmt::format("C of shape {} does not broadcast to {}x{}", shapeToString(cs), m, nn));
  }
  STOWAGE_TRY(assignI32(n, {{&p.m, m}, {&p.n, nn}, {&p.k, k}, {&p.trans_a, transA}, {&p.trans_b, transB},
                              {&p.c_rows, cRows}, {&p.c_cols, cCols}}));
  p.alpha = n.attrs.getFloat("alpha", 1.0f);
  p.beta = n.attrs.getFloat("beta", 1.0f);
  setFusedClamp(n, p);
  if (w8) {
    if (g.tensor(n.inputs[3]).numElements() != nn) return makeError(nodeLoc(n), "the int8 B needs one scale per output column");
    c.w8 = true;
    return std::vector<KernelCall>{KernelCall{c, {n.inputs[0], n.inputs[1], n.inputs[3], cId}, n.outputs[0]}};
  }
  return std::vector<KernelCall>{KernelCall{c, {n.inputs[0], n.inputs[1], cId}, n.outputs[0]}};
}

Result<std::vector<KernelCall>> lowerMatMul(const Graph& g, const Node& n) {
  STOWAGE_TRY(requireFloat(g, n));
  Shape a = g.tensor(n.inputs[0]).shape;
  Shape b = g.tensor(n.inputs[1]).shape;
  if (a.empty() || b.empty()) return makeError(nodeLoc(n), "MatMul operands must have rank >= 1");
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  const int64_t m = a[a.size() - 2], k = a.back(), nn = b.back();
  if (b[b.size() - 2] != k) return makeError(nodeLoc(n), fmt::format("inner dims differ ({} vs {})", k, b[b.size() - 2]));
  Shape batchA(a.begin(), a.end() - 2), batchB(b.begin(), b.end() - 2);
  const size_t rank = std::max(batchA.size(), batchB.size());
  Shape batch(rank, 1);
  for (size_t d = 0; d < rank; ++d) {
    int64_t da = d + batchA.size() >= rank ? batchA[d + batchA.size() - rank] : 1;
    int64_t db = d + batchB.size() >= rank ? batchB[d + batchB.size() - rank] : 1;
    if (da != db && da != 1 && db != 1) return makeError(nodeLoc(n), "batch dims do not broadcast");
    batch[d] = std::max(da, db);
  }
  std::vector<int64_t> sa = broadcastStrides(batchA, batch), sb = broadcastStrides(batchB, batch);
  for (auto& v : sa) v *= m * k;
  for (auto& v : sb) v *= k * nn;
  coalesce(batch, {&sa, &sb});
  STOWAGE_TRY(checkRank(n, batch.size()));
  MatMulCall c;
  stowage_matmul_params& p = c.params;
  std::memset(&p, 0, sizeof p);
  p.batch_rank = static_cast<int32_t>(batch.size());
  STOWAGE_TRY(fillShape(n, p.batch_shape, batch));
  for (size_t d = 0; d < batch.size(); ++d) p.a_stride[d] = sa[d], p.b_stride[d] = sb[d];
  STOWAGE_TRY(assignI32(n, {{&p.m, m}, {&p.n, nn}, {&p.k, k}}));
  return std::vector<KernelCall>{KernelCall{c, {n.inputs[0], n.inputs[1]}, n.outputs[0]}};
}

}  // namespace

Result<stowage_broadcast_params> broadcastGeometry(const Graph& g, const Node& n) {
  Shape out = g.tensor(n.outputs[0]).shape;
  const Shape& a = g.tensor(n.inputs[0]).shape;
  const Shape& b = g.tensor(n.inputs[1]).shape;
  if (a.size() > out.size() || b.size() > out.size()) return makeError(nodeLoc(n), "operand rank exceeds output rank");
  std::vector<int64_t> sa = broadcastStrides(a, out), sb = broadcastStrides(b, out);
  coalesce(out, {&sa, &sb});
  STOWAGE_TRY(checkRank(n, out.size()));
  stowage_broadcast_params p;
  std::memset(&p, 0, sizeof p);
  p.rank = static_cast<int32_t>(out.size());
  STOWAGE_TRY(fillShape(n, p.shape, out));
  for (size_t d = 0; d < out.size(); ++d) p.a_stride[d] = sa[d], p.b_stride[d] = sb[d];
  return p;
}

namespace {

Result<std::vector<KernelCall>> lowerBinary(const Graph& g, const Node& n, stowage_binary_op op) {
  STOWAGE_TRY(requireFloat(g, n));
  BinaryCall c;
  c.op = op;
  STOWAGE_ASSIGN_OR_RETURN(c.params, broadcastGeometry(g, n));
  setFusedClamp(n, c.params);
  return std::vector<KernelCall>{KernelCall{c, {n.inputs[0], n.inputs[1]}, n.outputs[0]}};
}

Result<std::vector<KernelCall>> lowerUnary(const Graph& g, const Node& n, stowage_unary_op op, float alpha, float beta) {
  STOWAGE_TRY(requireFloat(g, n));
  UnaryCall c{op, g.tensor(n.outputs[0]).numElements(), alpha, beta};
  return std::vector<KernelCall>{KernelCall{c, {n.inputs[0]}, n.outputs[0]}};
}

Result<std::vector<KernelCall>> lowerSoftmax(const Graph& g, const Node& n) {
  STOWAGE_TRY(requireFloat(g, n));
  const Shape& s = g.tensor(n.inputs[0]).shape;
  const int64_t rank = static_cast<int64_t>(s.size());
  const int64_t axis = n.attrs.getInt("axis", rank - 1);
  if (rank == 0) return std::vector<KernelCall>{KernelCall{SoftmaxCall{1, 1, 1, n.op == OpKind::LogSoftmax}, {n.inputs[0]}, n.outputs[0]}};
  if (axis < 0 || axis >= rank) return makeError(nodeLoc(n), fmt::format("axis {} is out of range for rank {}", axis, rank));
  SoftmaxCall c;
  c.log = n.op == OpKind::LogSoftmax ? 1 : 0;
  const auto ax = static_cast<size_t>(axis);
  c.outer = product(s, 0, ax);
  if (n.attrs.getInt("coerce2d", 0) != 0) {
    c.len = product(s, ax, s.size());
    c.inner = 1;
  } else {
    c.len = s[ax];
    c.inner = product(s, ax + 1, s.size());
  }
  return std::vector<KernelCall>{KernelCall{c, {n.inputs[0]}, n.outputs[0]}};
}

}  // namespace

Result<stowage_pool2d_params> poolGeometry(const Graph& g, const Node& n) {
  const Shape& x = g.tensor(n.inputs[0]).shape;
  const Shape& y = g.tensor(n.outputs[0]).shape;
  if (x.size() < 3 || x.size() > 4)
    return makeUnsupported(nodeLoc(n), fmt::format("input rank {}: the pool kernels support 1-D and 2-D pooling", x.size()));
  STOWAGE_ASSIGN_OR_RETURN(Spatial2d s, spatialAttrs(n, x.size() - 2, n.attrs.getInts("kernel_shape")));
  auto [xn, xc, xh, xw] = nchw(x);
  auto [yn, yc, yh, yw] = nchw(y);
  (void)yn, (void)yc;
  stowage_pool2d_params p;
  std::memset(&p, 0, sizeof p);
  STOWAGE_TRY(assignI32(n, {{&p.n, xn}, {&p.c, xc}, {&p.h, xh}, {&p.w, xw}, {&p.oh, yh}, {&p.ow, yw}, {&p.kh, s.kh},
                              {&p.kw, s.kw}, {&p.stride_h, s.sh}, {&p.stride_w, s.sw}, {&p.pad_top, s.padTop},
                              {&p.pad_left, s.padLeft}, {&p.pad_bottom, s.padBottom}, {&p.pad_right, s.padRight},
                              {&p.dil_h, s.dh}, {&p.dil_w, s.dw},
                              {&p.count_include_pad, n.attrs.getInt("count_include_pad", 0) != 0}}));
  return p;
}

namespace {

Result<std::vector<KernelCall>> lowerPool(const Graph& g, const Node& n) {
  STOWAGE_TRY(requireFloat(g, n));
  PoolCall c;
  c.max = n.op == OpKind::MaxPool;
  STOWAGE_ASSIGN_OR_RETURN(c.params, poolGeometry(g, n));
  return std::vector<KernelCall>{KernelCall{c, {n.inputs[0]}, n.outputs[0]}};
}

/// Strided gather for any dtype; `strides`/`offset` in input elements for each output dim.
Result<std::vector<KernelCall>> gather(const Graph& g, const Node& n, Shape out, std::vector<int64_t> strides, int64_t offset) {
  coalesce(out, {&strides});
  STOWAGE_TRY(checkRank(n, out.size()));
  GatherCall c;
  c.elemSize = dtypeSize(g.tensor(n.inputs[0]).dtype);
  stowage_strided_params& p = c.params;
  std::memset(&p, 0, sizeof p);
  p.rank = static_cast<int32_t>(out.size());
  STOWAGE_TRY(fillShape(n, p.out_shape, out));
  for (size_t d = 0; d < out.size(); ++d) p.in_stride[d] = strides[d];
  p.in_offset = offset;
  return std::vector<KernelCall>{KernelCall{c, {n.inputs[0]}, n.outputs[0]}};
}

Result<std::vector<KernelCall>> lowerTranspose(const Graph& g, const Node& n) {
  const Shape& in = g.tensor(n.inputs[0]).shape;
  std::vector<int64_t> perm = n.attrs.getInts("perm");
  if (perm.empty())
    for (size_t d = in.size(); d-- > 0;) perm.push_back(static_cast<int64_t>(d));
  if (perm.size() != in.size()) return makeError(nodeLoc(n), "perm does not match the input rank");
  std::vector<int64_t> inStrides = contiguousStrides(in), strides;
  Shape out;
  for (int64_t pd : perm) {
    if (pd < 0 || pd >= static_cast<int64_t>(in.size())) return makeError(nodeLoc(n), "perm entry out of range");
    out.push_back(in[static_cast<size_t>(pd)]);
    strides.push_back(inStrides[static_cast<size_t>(pd)]);
  }
  return gather(g, n, out, strides, 0);
}

Result<std::vector<KernelCall>> lowerSlice(const Graph& g, const Node& n) {
  const Shape& in = g.tensor(n.inputs[0]).shape;
  const Shape& out = g.tensor(n.outputs[0]).shape;
  std::vector<int64_t> starts = n.attrs.getInts("starts"), steps = n.attrs.getInts("steps", std::vector<int64_t>(in.size(), 1));
  if (starts.size() != in.size() || steps.size() != in.size() || out.size() != in.size())
    return makeError(nodeLoc(n), "starts/steps must have one entry per input dim");
  std::vector<int64_t> inStrides = contiguousStrides(in), strides(in.size());
  int64_t offset = 0;
  for (size_t d = 0; d < in.size(); ++d) {
    if (out[d] > 0 && (starts[d] < 0 || starts[d] >= in[d])) return makeError(nodeLoc(n), fmt::format("start of dim {} is out of range", d));
    if (out[d] > 0) offset += starts[d] * inStrides[d];
    strides[d] = steps[d] * inStrides[d];
  }
  return gather(g, n, out, strides, offset);
}

Result<std::vector<KernelCall>> lowerExpand(const Graph& g, const Node& n) {
  const Shape& in = g.tensor(n.inputs[0]).shape;
  const Shape& out = g.tensor(n.outputs[0]).shape;
  if (in.size() > out.size()) return makeError(nodeLoc(n), "input rank exceeds output rank");
  return gather(g, n, out, broadcastStrides(in, out), 0);
}

Result<std::vector<KernelCall>> lowerConcat(const Graph& g, const Node& n) {
  const Shape& out = g.tensor(n.outputs[0]).shape;
  const int64_t axis = n.attrs.getInt("axis", 0);
  if (axis < 0 || axis >= static_cast<int64_t>(out.size())) return makeError(nodeLoc(n), "axis out of range");
  const auto ax = static_cast<size_t>(axis);
  const int64_t outer = product(out, 0, ax), outBlock = product(out, ax, out.size());
  const DType dt = g.tensor(n.outputs[0]).dtype;
  std::vector<KernelCall> calls;
  int64_t offset = 0;
  for (TensorId id : n.inputs) {
    const Tensor& t = g.tensor(id);
    if (t.dtype != dt) return makeError(nodeLoc(n), "inputs have different dtypes");
    const int64_t inBlock = product(t.shape, ax, t.shape.size());
    if (inBlock > 0 && outer > 0)
      calls.push_back(KernelCall{ConcatPartCall{dtypeSize(dt), outer, inBlock, outBlock, offset}, {id}, n.outputs[0]});
    offset += inBlock;
  }
  if (offset != outBlock) return makeError(nodeLoc(n), "input sizes along the axis do not add up to the output");
  return calls;
}

Result<std::vector<KernelCall>> lowerPad(const Graph& g, const Node& n) {
  const bool int8 = g.tensor(n.inputs[0]).dtype == DType::Int8 && g.tensor(n.outputs[0]).dtype == DType::Int8;
  if (!int8) STOWAGE_TRY(requireFloat(g, n));
  const Shape& in = g.tensor(n.inputs[0]).shape;
  const Shape& out = g.tensor(n.outputs[0]).shape;
  STOWAGE_TRY(checkRank(n, in.size()));
  std::vector<int64_t> pads = n.attrs.getInts("pads", std::vector<int64_t>(2 * in.size(), 0));
  if (pads.size() != 2 * in.size() || out.size() != in.size()) return makeError(nodeLoc(n), "pads must hold 2 entries per dim");
  PadCall c;
  stowage_pad_params& p = c.params;
  std::memset(&p, 0, sizeof p);
  p.rank = static_cast<int32_t>(in.size());
  STOWAGE_TRY(fillShape(n, p.in_shape, in));
  STOWAGE_TRY(fillShape(n, p.out_shape, out));
  STOWAGE_TRY(fillShape(n, p.pad_begin, Shape(pads.begin(), pads.begin() + static_cast<ptrdiff_t>(in.size()))));
  const std::string mode = n.attrs.getString("mode", "constant");
  if (mode == "constant") p.mode = STOWAGE_PAD_CONSTANT;
  else if (mode == "reflect") p.mode = STOWAGE_PAD_REFLECT;
  else if (mode == "edge") p.mode = STOWAGE_PAD_EDGE;
  else return makeUnsupported(nodeLoc(n), fmt::format("pad mode \"{}\" is not supported", mode));
  p.value = n.attrs.getFloat("value", 0.0f);
  c.int8 = int8;
  if (int8 && p.mode != STOWAGE_PAD_CONSTANT) return makeUnsupported(nodeLoc(n), "int8 Pad supports constant mode only");
  return std::vector<KernelCall>{KernelCall{c, {n.inputs[0]}, n.outputs[0]}};
}

Result<std::vector<KernelCall>> lowerReduce(const Graph& g, const Node& n, stowage_reduce_op op) {
  STOWAGE_TRY(requireFloat(g, n));
  const Shape& in = g.tensor(n.inputs[0]).shape;
  STOWAGE_TRY(checkRank(n, in.size()));
  ReduceCall c;
  c.op = op;
  stowage_reduce_params& p = c.params;
  std::memset(&p, 0, sizeof p);
  p.rank = static_cast<int32_t>(in.size());
  STOWAGE_TRY(fillShape(n, p.in_shape, in));
  for (int64_t a : n.attrs.getInts("axes")) {
    if (a < 0 || a >= static_cast<int64_t>(in.size())) return makeError(nodeLoc(n), fmt::format("axis {} out of range", a));
    p.reduce[static_cast<size_t>(a)] = 1;
  }
  return std::vector<KernelCall>{KernelCall{c, {n.inputs[0]}, n.outputs[0]}};
}

}  // namespace

std::string kernelFunctionName(const KernelCall& call) {
  return std::visit(Overloaded{
                        [](const ConvCall& c) -> std::string { return c.transpose ? "stowage_conv_transpose2d_f32" : "stowage_conv2d_f32"; },
                        [](const GemmCall& c) -> std::string { return c.w8 ? "stowage_gemm_w8_f32" : "stowage_gemm_f32"; },
                        [](const MatMulCall&) -> std::string { return "stowage_matmul_f32"; },
                        [](const BinaryCall&) -> std::string { return "stowage_binary_f32"; },
                        [](const UnaryCall&) -> std::string { return "stowage_unary_f32"; },
                        [](const SoftmaxCall&) -> std::string { return "stowage_softmax_f32"; },
                        [](const BatchNormCall&) -> std::string { return "stowage_batchnorm_f32"; },
                        [](const LrnCall&) -> std::string { return "stowage_lrn_f32"; },
                        [](const PoolCall& c) -> std::string { return c.max ? "stowage_maxpool2d_f32" : "stowage_avgpool2d_f32"; },
                        [](const GlobalPoolCall& c) -> std::string { return c.max ? "stowage_global_maxpool_f32" : "stowage_global_avgpool_f32"; },
                        [](const GatherCall&) -> std::string { return "stowage_gather_strided"; },
                        [](const ConcatPartCall&) -> std::string { return "stowage_concat_part"; },
                        [](const PadCall& c) -> std::string { return c.int8 ? "stowage_pad_s8" : "stowage_pad_f32"; },
                        [](const ReduceCall&) -> std::string { return "stowage_reduce_f32"; },
                        [](const CopyCall&) -> std::string { return "memcpy"; },
                        [](const QuantCall& c) -> std::string { return quantKernelFunctionName(c); },
                        [](const NhwcCall& c) -> std::string { return nhwcKernelFunctionName(c); },
                        [](const QLinearCall& c) -> std::string { return qlinearKernelFunctionName(c); },
                    },
                    call.params);
}

std::string kernelParamsTypeName(const KernelCall& call) {
  return std::visit(Overloaded{
                        [](const ConvCall&) -> std::string { return "stowage_conv2d_params"; },
                        [](const GemmCall&) -> std::string { return "stowage_gemm_params"; },
                        [](const MatMulCall&) -> std::string { return "stowage_matmul_params"; },
                        [](const BinaryCall&) -> std::string { return "stowage_broadcast_params"; },
                        [](const PoolCall&) -> std::string { return "stowage_pool2d_params"; },
                        [](const GatherCall&) -> std::string { return "stowage_strided_params"; },
                        [](const PadCall&) -> std::string { return "stowage_pad_params"; },
                        [](const ReduceCall&) -> std::string { return "stowage_reduce_params"; },
                        [](const QuantCall& c) -> std::string { return quantParamsTypeName(c); },
                        [](const NhwcCall& c) -> std::string { return nhwcParamsTypeName(c); },
                        [](const QLinearCall& c) -> std::string { return qlinearParamsTypeName(c); },
                        [](const auto&) -> std::string { return ""; },
                    },
                    call.params);
}

Result<std::vector<KernelCall>> lowerNode(const Graph& g, const Node& n) {
  const OpInfo& info = opInfo(n.op);
  if (static_cast<int>(n.inputs.size()) < info.minInputs || n.outputs.size() != 1 || n.outputs[0] == kNoTensor)
    return makeError(nodeLoc(n), "has the wrong number of inputs or outputs");
  for (int i = 0; i < info.minInputs; ++i)
    if (n.inputs[static_cast<size_t>(i)] == kNoTensor) return makeError(nodeLoc(n), fmt::format("required input {} is missing", i));
  const Tensor& out = g.tensor(n.outputs[0]);
  if (out.numElements() == 0) return std::vector<KernelCall>{};
  const float inf = std::numeric_limits<float>::infinity();
  auto unary = [&](stowage_unary_op op, float alpha = 0.0f, float beta = 0.0f) { return lowerUnary(g, n, op, alpha, beta); };
  const Attributes& a = n.attrs;
  switch (n.op) {
    case OpKind::Conv:
    case OpKind::ConvTranspose: return lowerConv(g, n);
    case OpKind::Gemm: return lowerGemm(g, n);
    case OpKind::MatMul: return lowerMatMul(g, n);
    case OpKind::Add: return lowerBinary(g, n, STOWAGE_BINARY_ADD);
    case OpKind::Sub: return lowerBinary(g, n, STOWAGE_BINARY_SUB);
    case OpKind::Mul: return lowerBinary(g, n, STOWAGE_BINARY_MUL);
    case OpKind::Div: return lowerBinary(g, n, STOWAGE_BINARY_DIV);
    case OpKind::Pow: return lowerBinary(g, n, STOWAGE_BINARY_POW);
    case OpKind::Max: return lowerBinary(g, n, STOWAGE_BINARY_MAX);
    case OpKind::Min: return lowerBinary(g, n, STOWAGE_BINARY_MIN);
    case OpKind::PRelu: return lowerBinary(g, n, STOWAGE_BINARY_PRELU);
    case OpKind::Relu: return unary(STOWAGE_UNARY_RELU);
    case OpKind::LeakyRelu: return unary(STOWAGE_UNARY_LEAKY_RELU, a.getFloat("alpha", 0.01f));
    case OpKind::Clip: return unary(STOWAGE_UNARY_CLIP, a.getFloat("min", -inf), a.getFloat("max", inf));
    case OpKind::Sigmoid: return unary(STOWAGE_UNARY_SIGMOID);
    case OpKind::Tanh: return unary(STOWAGE_UNARY_TANH);
    case OpKind::Abs: return unary(STOWAGE_UNARY_ABS);
    case OpKind::Neg: return unary(STOWAGE_UNARY_NEG);
    case OpKind::Exp: return unary(STOWAGE_UNARY_EXP);
    case OpKind::Log: return unary(STOWAGE_UNARY_LOG);
    case OpKind::Sqrt: return unary(STOWAGE_UNARY_SQRT);
    case OpKind::Reciprocal: return unary(STOWAGE_UNARY_RECIPROCAL);
    case OpKind::Floor: return unary(STOWAGE_UNARY_FLOOR);
    case OpKind::Ceil: return unary(STOWAGE_UNARY_CEIL);
    case OpKind::Elu: return unary(STOWAGE_UNARY_ELU, a.getFloat("alpha", 1.0f));
    case OpKind::Selu:
      return unary(STOWAGE_UNARY_SELU, a.getFloat("alpha", 1.67326319217681884765625f), a.getFloat("gamma", 1.05070102214813232421875f));
    case OpKind::HardSigmoid: return unary(STOWAGE_UNARY_HARD_SIGMOID, a.getFloat("alpha", 0.2f), a.getFloat("beta", 0.5f));
    case OpKind::HardSwish: return unary(STOWAGE_UNARY_HARD_SWISH);
    case OpKind::Softplus: return unary(STOWAGE_UNARY_SOFTPLUS);
    case OpKind::Softsign: return unary(STOWAGE_UNARY_SOFTSIGN);
    case OpKind::Sign: return unary(STOWAGE_UNARY_SIGN);
    case OpKind::Erf: return unary(STOWAGE_UNARY_ERF);
    case OpKind::Sin: return unary(STOWAGE_UNARY_SIN);
    case OpKind::Cos: return unary(STOWAGE_UNARY_COS);
    case OpKind::Softmax:
    case OpKind::LogSoftmax: return lowerSoftmax(g, n);
    case OpKind::BatchNormalization: {
      STOWAGE_TRY(requireFloat(g, n));
      const Shape& s = g.tensor(n.inputs[0]).shape;
      if (s.size() < 2) return makeError(nodeLoc(n), "BatchNormalization input needs rank >= 2");
      BatchNormCall c{s[0], s[1], product(s, 2, s.size()), a.getFloat("epsilon", 1e-5f)};
      return std::vector<KernelCall>{KernelCall{c, {n.inputs[0], n.inputs[1], n.inputs[2], n.inputs[3], n.inputs[4]}, n.outputs[0]}};
    }
    case OpKind::LRN: {
      STOWAGE_TRY(requireFloat(g, n));
      const Shape& s = g.tensor(n.inputs[0]).shape;
      if (s.size() < 2) return makeError(nodeLoc(n), "LRN input needs rank >= 2");
      const int64_t size = a.getInt("size", 0);
      if (size <= 0 || !fitsI32(size)) return makeError(nodeLoc(n), "LRN size must be positive");
      LrnCall c{s[0], s[1], product(s, 2, s.size()), static_cast<int32_t>(size), a.getFloat("alpha", 1e-4f),
                a.getFloat("beta", 0.75f), a.getFloat("bias", 1.0f)};
      return std::vector<KernelCall>{KernelCall{c, {n.inputs[0]}, n.outputs[0]}};
    }
    case OpKind::MaxPool:
    case OpKind::AveragePool: return lowerPool(g, n);
    case OpKind::GlobalAveragePool:
    case OpKind::GlobalMaxPool: {
      STOWAGE_TRY(requireFloat(g, n));
      const Shape& s = g.tensor(n.inputs[0]).shape;
      if (s.size() < 2) return makeError(nodeLoc(n), "global pooling input needs rank >= 2");
      GlobalPoolCall c{s[0] * s[1], product(s, 2, s.size()), n.op == OpKind::GlobalMaxPool};
      return std::vector<KernelCall>{KernelCall{c, {n.inputs[0]}, n.outputs[0]}};
    }
    case OpKind::Reshape: {
      const Tensor& in = g.tensor(n.inputs[0]);
      if (in.byteSize() != out.byteSize()) return makeError(nodeLoc(n), "input and output sizes differ");
      return std::vector<KernelCall>{KernelCall{CopyCall{out.byteSize()}, {n.inputs[0]}, n.outputs[0]}};
    }
    case OpKind::Expand: return lowerExpand(g, n);
    case OpKind::Transpose: return lowerTranspose(g, n);
    case OpKind::Concat: return lowerConcat(g, n);
    case OpKind::Slice: return lowerSlice(g, n);
    case OpKind::Pad: return lowerPad(g, n);
    case OpKind::ReduceMean: return lowerReduce(g, n, STOWAGE_REDUCE_MEAN);
    case OpKind::ReduceSum: return lowerReduce(g, n, STOWAGE_REDUCE_SUM);
    case OpKind::ReduceMax: return lowerReduce(g, n, STOWAGE_REDUCE_MAX);
    case OpKind::ReduceMin: return lowerReduce(g, n, STOWAGE_REDUCE_MIN);
    case OpKind::ReduceProd: return lowerReduce(g, n, STOWAGE_REDUCE_PROD);
    case OpKind::ReduceSumSquare: return lowerReduce(g, n, STOWAGE_REDUCE_SUM_SQUARE);
    case OpKind::ReduceL1: return lowerReduce(g, n, STOWAGE_REDUCE_L1);
    case OpKind::ReduceL2: return lowerReduce(g, n, STOWAGE_REDUCE_L2);
    case OpKind::QConv2d:
    case OpKind::QDepthwiseConv2d:
    case OpKind::QFullyConnected:
    case OpKind::QAveragePool2d:
    case OpKind::QMaxPool2d:
    case OpKind::QAdd:
    case OpKind::QMul:
    case OpKind::QSoftmax:
    case OpKind::Quantize:
    case OpKind::Dequantize:
    case OpKind::QMean:
    case OpKind::Requantize:
    case OpKind::QLogistic:
    case OpKind::QTanh:
    case OpKind::QHardSwish:
    case OpKind::QRelu:
    case OpKind::QSub:
    case OpKind::QMaximum:
    case OpKind::QMinimum: return lowerQuantNode(g, n);
    case OpKind::ConvNhwc:
    case OpKind::DepthwiseConvNhwc:
    case OpKind::AveragePoolNhwc:
    case OpKind::MaxPoolNhwc: return lowerNhwcNode(g, n);
    case OpKind::QuantizeLinear:
    case OpKind::DequantizeLinear:
    case OpKind::ConvInteger:
    case OpKind::QLinearConv:
    case OpKind::MatMulInteger:
    case OpKind::QLinearMatMul:
    case OpKind::QLinearAdd:
    case OpKind::QLinearMul:
    case OpKind::QLinearAveragePool:
    case OpKind::QLinearMaxPool:
    case OpKind::QLinearLookup:
    case OpKind::QLinearSoftmax: return lowerQLinearNode(g, n);
  }
  return makeUnsupported(nodeLoc(n), "has no kernel");
}

bool setRowBand(KernelCall& call, int band) {
  auto* q = std::get_if<QuantCall>(&call.params);
  if (q == nullptr || (q->kernel != QuantKernel::Conv2d && q->kernel != QuantKernel::DepthwiseConv2d)) return false;
  auto* p = std::get_if<stowage_qconv_params>(&q->params);
  if (p == nullptr || band == 0 || p->n != 1) return false;
  p->row_band = band;
  return true;
}

bool setOutputPixelStride(KernelCall& call, int64_t stride, int64_t channels) {
  auto set = [&](auto& p) {
    if (channels != p.m || stride < p.m || stride > std::numeric_limits<int32_t>::max()) return false;
    p.out_pixel_stride = static_cast<int32_t>(stride);
    return true;
  };
  if (auto* q = std::get_if<QuantCall>(&call.params)) {
    if (q->kernel != QuantKernel::Conv2d && q->kernel != QuantKernel::DepthwiseConv2d) return false;
    auto* p = std::get_if<stowage_qconv_params>(&q->params);
    return p != nullptr && set(*p);
  }
  if (auto* nc = std::get_if<NhwcCall>(&call.params)) {
    if (nc->kernel != NhwcKernel::Conv2d && nc->kernel != NhwcKernel::DepthwiseConv2d) return false;
    auto* p = std::get_if<stowage_nhwc_conv_params>(&nc->params);
    return p != nullptr && set(*p);
  }
  return false;
}

void executeKernelCall(const KernelCall& call, const std::vector<const void*>& in, void* out) {
  auto f = [&](size_t i) { return static_cast<const float*>(in[i]); };
  float* y = static_cast<float*>(out);
  std::visit(Overloaded{
                 [&](const ConvCall& c) {
                   if (c.transpose) stowage_conv_transpose2d_f32(f(0), f(1), f(2), y, &c.params);
                   else stowage_conv2d_f32(f(0), f(1), f(2), y, &c.params);
                 },
                 [&](const GemmCall& c) {
                   if (c.w8) stowage_gemm_w8_f32(f(0), static_cast<const int8_t*>(in[1]), f(2), f(3), y, &c.params);
                   else stowage_gemm_f32(f(0), f(1), f(2), y, &c.params);
                 },
                 [&](const MatMulCall& c) { stowage_matmul_f32(f(0), f(1), y, &c.params); },
                 [&](const BinaryCall& c) { stowage_binary_f32(c.op, f(0), f(1), y, &c.params); },
                 [&](const UnaryCall& c) { stowage_unary_f32(c.op, f(0), y, c.count, c.alpha, c.beta); },
                 [&](const SoftmaxCall& c) { stowage_softmax_f32(f(0), y, c.outer, c.len, c.inner, c.log); },
                 [&](const BatchNormCall& c) { stowage_batchnorm_f32(f(0), f(1), f(2), f(3), f(4), y, c.n, c.c, c.spatial, c.epsilon); },
                 [&](const LrnCall& c) { stowage_lrn_f32(f(0), y, c.n, c.c, c.spatial, c.size, c.alpha, c.beta, c.bias); },
                 [&](const PoolCall& c) {
                   if (c.max) stowage_maxpool2d_f32(f(0), y, &c.params);
                   else stowage_avgpool2d_f32(f(0), y, &c.params);
                 },
                 [&](const GlobalPoolCall& c) {
                   if (c.max) stowage_global_maxpool_f32(f(0), y, c.channels, c.spatial);
                   else stowage_global_avgpool_f32(f(0), y, c.channels, c.spatial);
                 },
                 [&](const GatherCall& c) { stowage_gather_strided(in[0], out, c.elemSize, &c.params); },
                 [&](const ConcatPartCall& c) { stowage_concat_part(in[0], out, c.elemSize, c.outer, c.inBlock, c.outBlock, c.outOffset); },
                 [&](const PadCall& c) {
                   if (c.int8) stowage_pad_s8(static_cast<const int8_t*>(in[0]), static_cast<int8_t*>(out), &c.params);
                   else stowage_pad_f32(f(0), y, &c.params);
                 },
                 [&](const ReduceCall& c) { stowage_reduce_f32(c.op, f(0), y, &c.params); },
                 [&](const CopyCall& c) {
                   if (c.bytes) std::memcpy(out, in[0], c.bytes);
                 },
                 [&](const QuantCall& c) { executeQuantCall(c, in, out); },
                 [&](const NhwcCall& c) { executeNhwcCall(c, in, out); },
                 [&](const QLinearCall& c) { executeQLinearCall(c, in, out); },
             },
             call.params);
}

}  // namespace stowage
