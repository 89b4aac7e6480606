// Per-op converters of the ONNX frontend for the integer ops: QuantizeLinear, DequantizeLinear, ConvInteger,
// QLinearConv, MatMulInteger, QLinearMatMul. Each checks element types and the shapes of scales and zero points
// (per tensor, per axis / output channel / row / column), reorders the inputs into the canonical IR form of
// Ops.def (operands first, then quantization inputs) and emits one IR node with its output dtype.
#include <fmt/format.h>

#include "stowage/frontend/OnnxConverters.h"
#include "stowage/frontend/OnnxTensor.h"

namespace stowage::onnxfe {

namespace {

std::string dtypeList(std::initializer_list<DType> allowed) {
  std::string s;
  for (DType d : allowed) s += (s.empty() ? "" : " or ") + std::string(dtypeName(d));
  return s;
}

/// Element type of input i, which must be one of `allowed`.
Result<DType> inputDType(Context& ctx, NodeRef& node, int i, std::initializer_list<DType> allowed, const char* role) {
  const std::string name = node.input(i);
  if (name.empty()) return makeError(node.loc, fmt::format("required input {} ({}) is missing", i, role));
  auto dt = ctx.dtypeOf(name);
  if (!dt) return makeError(node.loc, fmt::format("reads value '{}', which no earlier node, input or initializer defines", name));
  if (std::find(allowed.begin(), allowed.end(), *dt) == allowed.end())
    return makeUnsupported(node.loc, fmt::format("input {} ({}) '{}' has element type {}; {} supports {}", i, role, name, dtypeName(*dt),
                                                 node.opType(), dtypeList(allowed)));
  return *dt;
}

/// Checks a scale (float32) or zero point (dtype `want`) input: a scalar, or a 1-D tensor of `count` entries
/// when count > 1 (per axis, channel, row or column). Returns its element count; 0 when the optional input is
/// absent.
Result<int64_t> quantParam(Context& ctx, NodeRef& node, int i, DType want, int64_t count, bool required, const char* role,
                           const char* perWhat) {
  const std::string name = node.input(i);
  if (name.empty()) {
    if (required) return makeError(node.loc, fmt::format("required input {} ({}) is missing", i, role));
    return int64_t{0};
  }
  STOWAGE_ASSIGN_OR_RETURN(DType dt, inputDType(ctx, node, i, {DType::Float32, DType::Int8, DType::UInt8, DType::Int32}, role));
  if (dt != want)
    return makeUnsupported(node.loc, fmt::format("input {} ({}) '{}' has element type {}; expected {}", i, role, name, dtypeName(dt),
                                                 dtypeName(want)));
  STOWAGE_ASSIGN_OR_RETURN(Shape s, inputShape(ctx, node, i));
  const int64_t e = shapeElements(s);
  if (s.size() > 1 || (e != 1 && e != count))
    return makeError(node.loc, fmt::format("input {} ({}) '{}' has shape [{}]; expected a scalar{}", i, role, name, shapeToString(s),
                                           count > 1 ? fmt::format(" or {} entries ({})", count, perWhat) : ""));
  return e;
}

/// A scale and its zero point must both be per tensor or both per axis.
Status sameCount(NodeRef& node, int64_t scaleCount, int64_t zpCount, const char* what) {
  if (zpCount != 0 && zpCount != scaleCount)
    return makeError(node.loc, fmt::format("{} scale has {} entries but its zero point {}", what, scaleCount, zpCount));
  return Status::success();
}

/// Name of a constant zero of `dtype` (an absent zero point that a later input forces to be explicit).
std::string zeroConstant(Context& ctx, NodeRef& node, DType dtype) {
  const std::string name = ctx.freshName(node.name + "_zero_point");
  ctx.consts[name] = makeConstInts(name, dtype, {}, {0});
  ctx.consts[name].kind = TensorKind::Constant;
  ctx.names.insert(name);
  return name;
}

Status convertQuantizeLinear(Context& ctx, NodeRef& node) {
  const bool quantize = node.opType() == "QuantizeLinear";
  if (attrInt(node.proto, "block_size", 0) != 0)
    return makeUnsupported(node.loc, "blocked quantization (block_size != 0) is not supported");
  STOWAGE_ASSIGN_OR_RETURN(Shape x, inputShape(ctx, node, 0));
  DType qType = DType::UInt8;
  if (quantize) {
    STOWAGE_TRY(inputDType(ctx, node, 0, {DType::Float32}, "x"));
    if (!node.input(2).empty()) {
      STOWAGE_ASSIGN_OR_RETURN(qType, inputDType(ctx, node, 2, {DType::Int8, DType::UInt8}, "y_zero_point"));
    } else if (hasAttr(node.proto, "output_dtype")) {
      const auto to = static_cast<int32_t>(attrInt(node.proto, "output_dtype", 0));
      auto dt = dtypeFromOnnx(to);
      if (!dt || (*dt != DType::Int8 && *dt != DType::UInt8))
        return makeUnsupported(node.loc, fmt::format("output_dtype {} is not supported (int8 and uint8 are)", onnxDtypeName(to)));
      qType = *dt;
    }
  } else {
    STOWAGE_ASSIGN_OR_RETURN(qType, inputDType(ctx, node, 0, {DType::Int8, DType::UInt8, DType::Int32}, "x"));
  }
  STOWAGE_ASSIGN_OR_RETURN(Shape scale, inputShape(ctx, node, 1));
  const auto rank = static_cast<int64_t>(x.size());
  const int64_t scaleCount = shapeElements(scale);
  const bool perAxis = scale.size() == 1 && scaleCount != 1;
  int64_t axis = 0;
  if (perAxis) {
    if (ctx.opset < 13) return makeError(node.loc, "per-axis scales need opset 13 or later (the axis attribute)");
    STOWAGE_ASSIGN_OR_RETURN(axis, normalizeAxis(node, attrInt(node.proto, "axis", 1), rank));
  }
  const int64_t axisLen = perAxis ? x[static_cast<size_t>(axis)] : 1;
  STOWAGE_ASSIGN_OR_RETURN(int64_t sc, quantParam(ctx, node, 1, DType::Float32, axisLen, true, quantize ? "y_scale" : "x_scale",
                                                  "one per element along the axis"));
  STOWAGE_ASSIGN_OR_RETURN(int64_t zc, quantParam(ctx, node, 2, qType, axisLen, false, quantize ? "y_zero_point" : "x_zero_point",
                                                  "one per element along the axis"));
  STOWAGE_TRY(sameCount(node, sc, zc, quantize ? "y" : "x"));
  if (!quantize && qType == DType::Int32 && !node.input(2).empty()) {
    // ONNX: an int32 input has no zero point (or zero).
    const Tensor* zp = ctx.constant(node.input(2));
    bool zero = zp != nullptr;
    if (zp)
      for (int64_t v : constInts(*zp)) zero = zero && v == 0;
    if (!zero) return makeError(node.loc, "an int32 input of DequantizeLinear must have no zero point, or a constant 0");
  }
  Attributes a;
  a.set("axis", axis);
  return emit(ctx, node, quantize ? OpKind::QuantizeLinear : OpKind::DequantizeLinear, {node.input(0), node.input(1), node.input(2)},
              std::move(a), node.output(0), quantize ? qType : DType::Float32);
}

/// Conv attributes (ConvInteger, QLinearConv) for input shape `x` and weight shape `w`.
Result<Attributes> convAttrs(Context& ctx, NodeRef& node, const Shape& x, const Shape& w) {
  if (w.size() < 3 || w.size() != x.size())
    return makeError(node.loc, fmt::format("weight shape [{}] does not match input shape [{}]", shapeToString(w), shapeToString(x)));
  std::vector<int64_t> wk(w.begin() + 2, w.end());
  auto kernel = attrInts(node.proto, "kernel_shape").value_or(wk);
  if (kernel != wk)
    return makeError(node.loc, fmt::format("kernel_shape {} differs from the weight's spatial dims {}", intsString(kernel), intsString(wk)));
  STOWAGE_ASSIGN_OR_RETURN(WindowSpec win, readWindow(ctx, node, x, kernel));
  Attributes a;
  a.set("strides", win.strides);
  a.set("pads", win.pads);
  a.set("dilations", win.dilations);
  a.set("group", attrInt(node.proto, "group", 1));
  return a;
}

Status convertConvInteger(Context& ctx, NodeRef& node) {
  STOWAGE_ASSIGN_OR_RETURN(DType xd, inputDType(ctx, node, 0, {DType::Int8, DType::UInt8}, "x"));
  STOWAGE_ASSIGN_OR_RETURN(DType wd, inputDType(ctx, node, 1, {DType::Int8, DType::UInt8}, "w"));
  STOWAGE_ASSIGN_OR_RETURN(Shape x, inputShape(ctx, node, 0));
  STOWAGE_ASSIGN_OR_RETURN(Shape w, inputShape(ctx, node, 1));
  STOWAGE_ASSIGN_OR_RETURN(Attributes a, convAttrs(ctx, node, x, w));
  STOWAGE_TRY(quantParam(ctx, node, 2, xd, 1, false, "x_zero_point", ""));
  STOWAGE_TRY(quantParam(ctx, node, 3, wd, w[0], false, "w_zero_point", "one per output channel"));
  std::string xzp = node.input(2);
  if (xzp.empty() && !node.input(3).empty()) xzp = zeroConstant(ctx, node, xd);
  return emit(ctx, node, OpKind::ConvInteger, {node.input(0), node.input(1), xzp, node.input(3)}, std::move(a), node.output(0),
              DType::Int32);
}

Status convertQLinearConv(Context& ctx, NodeRef& node) {
  // ONNX order: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B.
  STOWAGE_ASSIGN_OR_RETURN(DType xd, inputDType(ctx, node, 0, {DType::Int8, DType::UInt8}, "x"));
  STOWAGE_ASSIGN_OR_RETURN(DType wd, inputDType(ctx, node, 3, {DType::Int8, DType::UInt8}, "w"));
  STOWAGE_ASSIGN_OR_RETURN(DType yd, inputDType(ctx, node, 7, {DType::Int8, DType::UInt8}, "y_zero_point"));
  STOWAGE_ASSIGN_OR_RETURN(Shape x, inputShape(ctx, node, 0));
  STOWAGE_ASSIGN_OR_RETURN(Shape w, inputShape(ctx, node, 3));
  STOWAGE_ASSIGN_OR_RETURN(Attributes a, convAttrs(ctx, node, x, w));
  const int64_t m = w[0];
  STOWAGE_TRY(quantParam(ctx, node, 1, DType::Float32, 1, true, "x_scale", ""));
  STOWAGE_TRY(quantParam(ctx, node, 2, xd, 1, true, "x_zero_point", ""));
  STOWAGE_ASSIGN_OR_RETURN(int64_t ws, quantParam(ctx, node, 4, DType::Float32, m, true, "w_scale", "one per output channel"));
  STOWAGE_ASSIGN_OR_RETURN(int64_t wz, quantParam(ctx, node, 5, wd, m, true, "w_zero_point", "one per output channel"));
  if (ws != wz)
    return makeUnsupported(node.loc, fmt::format("w_scale has {} entries but w_zero_point {}; both must be per tensor or per output "
                                                 "channel",
                                                 ws, wz));
  STOWAGE_TRY(quantParam(ctx, node, 6, DType::Float32, 1, true, "y_scale", ""));
  STOWAGE_TRY(quantParam(ctx, node, 7, yd, 1, true, "y_zero_point", ""));
  if (!node.input(8).empty()) {
    STOWAGE_TRY(inputDType(ctx, node, 8, {DType::Int32}, "B"));
    STOWAGE_ASSIGN_OR_RETURN(Shape b, inputShape(ctx, node, 8));
    if (b.size() != 1 || b[0] != m)
      return makeError(node.loc, fmt::format("bias B has shape [{}]; expected [{}] (one per output channel)", shapeToString(b), m));
  }
  return emit(ctx, node, OpKind::QLinearConv,
              {node.input(0), node.input(3), node.input(1), node.input(2), node.input(4), node.input(5), node.input(6), node.input(7),
               node.input(8)},
              std::move(a), node.output(0), yd);
}

/// Rows of A and columns of B of a MatMul (1-D operands promoted as numpy does).
struct MatDims {
  int64_t m = 1, n = 1;
};

Result<MatDims> matDims(Context& ctx, NodeRef& node, int ai, int bi) {
  STOWAGE_ASSIGN_OR_RETURN(Shape a, inputShape(ctx, node, ai));
  STOWAGE_ASSIGN_OR_RETURN(Shape b, inputShape(ctx, node, bi));
  if (a.empty() || b.empty()) return makeError(node.loc, "MatMul operands must have rank at least 1");
  MatDims d;
  d.m = a.size() > 1 ? a[a.size() - 2] : 1;
  d.n = b.size() > 1 ? b.back() : 1;
  return d;
}

Status convertMatMulInteger(Context& ctx, NodeRef& node) {
  STOWAGE_ASSIGN_OR_RETURN(DType ad, inputDType(ctx, node, 0, {DType::Int8, DType::UInt8}, "A"));
  STOWAGE_ASSIGN_OR_RETURN(DType bd, inputDType(ctx, node, 1, {DType::Int8, DType::UInt8}, "B"));
  STOWAGE_ASSIGN_OR_RETURN(MatDims d, matDims(ctx, node, 0, 1));
  STOWAGE_TRY(quantParam(ctx, node, 2, ad, d.m, false, "a_zero_point", "one per row of A"));
  STOWAGE_TRY(quantParam(ctx, node, 3, bd, d.n, false, "b_zero_point", "one per column of B"));
  std::string azp = node.input(2);
  if (azp.empty() && !node.input(3).empty()) azp = zeroConstant(ctx, node, ad);
  return emit(ctx, node, OpKind::MatMulInteger, {node.input(0), node.input(1), azp, node.input(3)}, {}, node.output(0), DType::Int32);
}

Status convertQLinearMatMul(Context& ctx, NodeRef& node) {
  // ONNX order: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point.
  STOWAGE_ASSIGN_OR_RETURN(DType ad, inputDType(ctx, node, 0, {DType::Int8, DType::UInt8}, "a"));
  STOWAGE_ASSIGN_OR_RETURN(DType bd, inputDType(ctx, node, 3, {DType::Int8, DType::UInt8}, "b"));
  STOWAGE_ASSIGN_OR_RETURN(DType yd, inputDType(ctx, node, 7, {DType::Int8, DType::UInt8}, "y_zero_point"));
  STOWAGE_ASSIGN_OR_RETURN(MatDims d, matDims(ctx, node, 0, 3));
  STOWAGE_ASSIGN_OR_RETURN(int64_t as, quantParam(ctx, node, 1, DType::Float32, d.m, true, "a_scale", "one per row of a"));
  STOWAGE_ASSIGN_OR_RETURN(int64_t az, quantParam(ctx, node, 2, ad, d.m, true, "a_zero_point", "one per row of a"));
  STOWAGE_ASSIGN_OR_RETURN(int64_t bs, quantParam(ctx, node, 4, DType::Float32, d.n, true, "b_scale", "one per column of b"));
  STOWAGE_ASSIGN_OR_RETURN(int64_t bz, quantParam(ctx, node, 5, bd, d.n, true, "b_zero_point", "one per column of b"));
  STOWAGE_ASSIGN_OR_RETURN(int64_t ys, quantParam(ctx, node, 6, DType::Float32, d.m, true, "y_scale", "one per row of y"));
  STOWAGE_ASSIGN_OR_RETURN(int64_t yz, quantParam(ctx, node, 7, yd, d.m, true, "y_zero_point", "one per row of y"));
  STOWAGE_TRY(sameCount(node, as, az, "a"));
  STOWAGE_TRY(sameCount(node, bs, bz, "b"));
  STOWAGE_TRY(sameCount(node, ys, yz, "y"));
  return emit(ctx, node, OpKind::QLinearMatMul,
              {node.input(0), node.input(3), node.input(1), node.input(2), node.input(4), node.input(5), node.input(6), node.input(7)}, {},
              node.output(0), yd);
}

}  // namespace

void addQuantConverters(ConverterTable& t) {
  t["QuantizeLinear"] = &convertQuantizeLinear;
  t["DequantizeLinear"] = &convertQuantizeLinear;
  t["ConvInteger"] = &convertConvInteger;
  t["QLinearConv"] = &convertQLinearConv;
  t["MatMulInteger"] = &convertMatMulInteger;
  t["QLinearMatMul"] = &convertQLinearMatMul;
}

}  // namespace stowage::onnxfe
