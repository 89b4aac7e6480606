// Per-op converters of the ONNX frontend for compute ops (Conv, Gemm, elementwise, activations, pooling,
// normalization): each resolves its ONNX form for the model's opset (auto_pad, defaults, optional inputs that
// carry attributes) into the canonical IR attributes of Ops.def and emits IR nodes. Also the dispatch
// (convertOnnxNode) and the helpers shared with OnnxLayoutConverters.cpp.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "stowage/frontend/OnnxConverters.h"
#include "stowage/frontend/OnnxTensor.h"

namespace stowage::onnxfe {

// ---- shared helpers ----

Result<Shape> inputShape(Context& ctx, NodeRef& node, int i) {
  const std::string name = node.input(i);
  if (name.empty()) return makeError(node.loc, fmt::format("required input {} is missing", i));
  auto s = ctx.shapeOf(name);
  if (!s)
    return makeError(node.loc, fmt::format("reads value '{}', which no earlier node, input or initializer defines", name),
                     "ONNX requires nodes in topological order; re-export or sort the model");
  return *s;
}

Result<const Tensor*> constInput(Context& ctx, NodeRef& node, int i, const std::string& role) {
  const std::string name = node.input(i);
  if (name.empty()) return makeError(node.loc, fmt::format("required input {} ({}) is missing", i, role));
  if (const Tensor* t = ctx.constant(name)) return t;
  if (!ctx.known(name))
    return makeError(node.loc, fmt::format("reads value '{}', which no earlier node, input or initializer defines", name));
  auto it = ctx.ids.find(name);
  const bool isGraphInput = it != ctx.ids.end() && ctx.graph.tensor(it->second).kind == TensorKind::Input;
  return makeUnsupported(
      node.loc,
      fmt::format("input '{}' ({}) must be known at compile time, but it {}", name, role,
                  isGraphInput ? "is a graph input" : "is computed from run-time values"),
      isGraphInput ? fmt::format("freeze it with --bind {}=file.pb", name)
                   : "freeze the graph inputs it depends on with --bind NAME=file.pb");
}

Result<std::vector<int64_t>> constIntsInput(Context& ctx, NodeRef& node, int i, const std::string& role) {
  STOWAGE_ASSIGN_OR_RETURN(const Tensor* t, constInput(ctx, node, i, role));
  return constInts(*t);
}

Result<int64_t> normalizeAxis(NodeRef& node, int64_t axis, int64_t rank, const std::string& what) {
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) return makeError(node.loc, fmt::format("{} {} is out of range for rank {}", what, axis, rank));
  return a;
}

Status emitReshape(Context& ctx, NodeRef& node, const std::string& in, const Shape& shape, const std::string& out) {
  Attributes a;
  a.set("shape", shape);
  return emit(ctx, node, OpKind::Reshape, {in}, std::move(a), out);
}

namespace {

Diagnostic unsupportedAttr(NodeRef& node, const std::string& what) {
  return makeUnsupported(node.loc, what);
}

// ---- elementwise ----

struct UnaryInfo {
  OpKind op;
  std::vector<std::pair<const char*, float>> floatAttrs;  ///< canonical attributes and ONNX defaults
};

const std::map<std::string, UnaryInfo>& unaryOps() {
  static const std::map<std::string, UnaryInfo> ops = {
      {"Relu", {OpKind::Relu, {}}},
      {"LeakyRelu", {OpKind::LeakyRelu, {{"alpha", 0.01f}}}},
      {"Sigmoid", {OpKind::Sigmoid, {}}},
      {"Tanh", {OpKind::Tanh, {}}},
      {"Abs", {OpKind::Abs, {}}},
      {"Neg", {OpKind::Neg, {}}},
      {"Exp", {OpKind::Exp, {}}},
      {"Log", {OpKind::Log, {}}},
      {"Sqrt", {OpKind::Sqrt, {}}},
      {"Reciprocal", {OpKind::Reciprocal, {}}},
      {"Floor", {OpKind::Floor, {}}},
      {"Ceil", {OpKind::Ceil, {}}},
      {"Elu", {OpKind::Elu, {{"alpha", 1.0f}}}},
      {"Selu", {OpKind::Selu, {{"alpha", 1.67326319217681884765625f}, {"gamma", 1.05070102214813232421875f}}}},
      {"HardSigmoid", {OpKind::HardSigmoid, {{"alpha", 0.2f}, {"beta", 0.5f}}}},
      {"HardSwish", {OpKind::HardSwish, {}}},
      {"Softplus", {OpKind::Softplus, {}}},
      {"Softsign", {OpKind::Softsign, {}}},
      {"Sign", {OpKind::Sign, {}}},
      {"Erf", {OpKind::Erf, {}}},
      {"Sin", {OpKind::Sin, {}}},
      {"Cos", {OpKind::Cos, {}}},
  };
  return ops;
}

Status convertUnary(Context& ctx, NodeRef& node) {
  const UnaryInfo& info = unaryOps().at(node.opType());
  Attributes a;
  for (const auto& [name, def] : info.floatAttrs) a.set(name, attrFloat(node.proto, name, def));
  return emit(ctx, node, info.op, {node.input(0)}, std::move(a), node.output(0));
}

OpKind binaryKind(const std::string& t) {
  if (t == "Add" || t == "Sum" || t == "Mean") return OpKind::Add;
  if (t == "Sub") return OpKind::Sub;
  if (t == "Mul") return OpKind::Mul;
  if (t == "Div") return OpKind::Div;
  if (t == "Pow") return OpKind::Pow;
  if (t == "Max") return OpKind::Max;
  if (t == "Min") return OpKind::Min;
  return OpKind::PRelu;
}

/// Opset < 7 `broadcast`/`axis`: accepted when the legacy alignment equals numpy's (B aligned to A's end).
Status checkLegacyBroadcast(Context& ctx, NodeRef& node) {
  if (ctx.opset >= 7 || attrInt(node.proto, "broadcast", 0) == 0 || !hasAttr(node.proto, "axis")) return Status::success();
  STOWAGE_ASSIGN_OR_RETURN(Shape a, inputShape(ctx, node, 0));
  STOWAGE_ASSIGN_OR_RETURN(Shape b, inputShape(ctx, node, 1));
  const auto ra = static_cast<int64_t>(a.size()), rb = static_cast<int64_t>(b.size());
  int64_t axis = attrInt(node.proto, "axis", 0);
  if (axis < 0) axis += ra;
  if (axis + rb != ra)
    return unsupportedAttr(node, fmt::format("legacy broadcast with axis={} (B [{}] aligned inside A [{}]) differs from numpy "
                                             "broadcasting and is not supported",
                                             attrInt(node.proto, "axis", 0), shapeToString(b), shapeToString(a)));
  return Status::success();
}

Status convertBinary(Context& ctx, NodeRef& node) {
  STOWAGE_TRY(checkLegacyBroadcast(ctx, node));
  std::string slope = node.input(1);
  if (node.opType() == "PRelu" && ctx.opset < 7) {
    // Old PRelu: a [C] slope applies per channel of [N, C, ...].
    STOWAGE_ASSIGN_OR_RETURN(Shape x, inputShape(ctx, node, 0));
    STOWAGE_ASSIGN_OR_RETURN(Shape s, inputShape(ctx, node, 1));
    if (s.size() == 1 && x.size() > 2 && s[0] == x[1] && s[0] != x.back()) {
      Shape to(x.size() - 1, 1);
      to[0] = s[0];
      std::string r = ctx.freshName(slope + "_per_channel");
      STOWAGE_TRY(emitReshape(ctx, node, slope, to, r));
      slope = r;
    }
  }
  return emit(ctx, node, binaryKind(node.opType()), {node.input(0), slope}, {}, node.output(0));
}

/// Sum / Mean / Max / Min with any number of inputs: a chain of binary nodes (Mean then scales by 1/n).
Status convertVariadic(Context& ctx, NodeRef& node) {
  const int n = node.proto.input_size();
  if (n < 1) return makeError(node.loc, "needs at least one input");
  if (n == 2 && node.opType() != "Mean") return convertBinary(ctx, node);
  const OpKind k = binaryKind(node.opType());
  const bool mean = node.opType() == "Mean";
  if (n == 1 && !mean) {
    STOWAGE_ASSIGN_OR_RETURN(Shape s, inputShape(ctx, node, 0));
    return emitReshape(ctx, node, node.input(0), s, node.output(0));
  }
  std::string acc = node.input(0);
  for (int i = 1; i < n; ++i) {
    const bool last = i == n - 1 && !mean;
    std::string out = last ? node.output(0) : ctx.freshName(node.output(0) + "_acc");
    STOWAGE_TRY(emit(ctx, node, k, {acc, node.input(i)}, {}, out));
    acc = out;
  }
  if (mean) {
    const std::string scale = ctx.freshName(node.output(0) + "_inv_count");
    ctx.consts[scale] = makeConst(scale, DType::Float32, {}, {1.0 / n});
    STOWAGE_TRY(emit(ctx, node, OpKind::Mul, {acc, scale}, {}, node.output(0)));
  }
  return Status::success();
}

Status convertClip(Context& ctx, NodeRef& node) {
  float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
  if (ctx.opset < 11) {
    lo = attrFloat(node.proto, "min", lo);
    hi = attrFloat(node.proto, "max", hi);
  } else {
    for (int i = 1; i <= 2; ++i) {
      if (node.input(i).empty()) continue;
      STOWAGE_ASSIGN_OR_RETURN(const Tensor* t, constInput(ctx, node, i, i == 1 ? "min" : "max"));
      if (t->numElements() != 1) return makeError(node.loc, fmt::format("input {} of Clip must be a scalar", i));
      (i == 1 ? lo : hi) = static_cast<float>(constDoubles(*t)[0]);
    }
  }
  Attributes a;
  a.set("min", lo);
  a.set("max", hi);
  return emit(ctx, node, OpKind::Clip, {node.input(0)}, std::move(a), node.output(0));
}

Status convertSoftmax(Context& ctx, NodeRef& node) {
  STOWAGE_ASSIGN_OR_RETURN(Shape x, inputShape(ctx, node, 0));
  const bool legacy = ctx.opset < 13;
  const auto rank = static_cast<int64_t>(x.size());
  STOWAGE_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(node, attrInt(node.proto, "axis", legacy ? 1 : -1), std::max<int64_t>(rank, 1)));
  Attributes a;
  a.set("axis", axis);
  a.set("coerce2d", int64_t{legacy ? 1 : 0});
  return emit(ctx, node, node.opType() == "Softmax" ? OpKind::Softmax : OpKind::LogSoftmax, {node.input(0)}, std::move(a),
              node.output(0));
}

// ---- windows: conv and pool ----

/// Floor division as Python does it (the ONNX reference formulas use it).
int64_t floorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

}  // namespace

Result<WindowSpec> readWindow(Context& ctx, NodeRef& node, const Shape& x, std::vector<int64_t> kernel) {
  if (x.size() < 3) return makeError(node.loc, fmt::format("input has shape [{}]; expected [N, C, spatial...]", shapeToString(x)));
  if (x.size() > 4)
    return unsupportedAttr(node, fmt::format("input has shape [{}]; only 1-D and 2-D spatial windows are supported", shapeToString(x)));
  const size_t sp = x.size() - 2;
  WindowSpec w;
  w.kernel = std::move(kernel);
  w.strides = attrInts(node.proto, "strides").value_or(std::vector<int64_t>(sp, 1));
  w.dilations = attrInts(node.proto, "dilations").value_or(std::vector<int64_t>(sp, 1));
  w.pads = attrInts(node.proto, "pads").value_or(std::vector<int64_t>(2 * sp, 0));
  if (w.kernel.size() != sp || w.strides.size() != sp || w.dilations.size() != sp || w.pads.size() != 2 * sp)
    return makeError(node.loc, fmt::format("kernel {}, strides {}, dilations {} and pads {} do not match the {} spatial dims of the "
                                           "input [{}]",
                                           intsString(w.kernel), intsString(w.strides), intsString(w.dilations),
                                           intsString(w.pads), sp, shapeToString(x)));
  for (size_t i = 0; i < sp; ++i) {
    if (w.kernel[i] < 1 || w.strides[i] < 1 || w.dilations[i] < 1 || w.kernel[i] > (1 << 24) || w.strides[i] > (1 << 24) ||
        w.dilations[i] > (1 << 24))
      return makeError(node.loc, fmt::format("kernel {}, strides {} and dilations {} must be positive", intsString(w.kernel),
                                             intsString(w.strides), intsString(w.dilations)));
  }
  for (int64_t p : w.pads)
    if (p < 0) return unsupportedAttr(node, fmt::format("negative pads {} are not supported", intsString(w.pads)));
  const std::string autoPad = attrString(node.proto, "auto_pad", "NOTSET");
  if (autoPad == "VALID") {
    std::fill(w.pads.begin(), w.pads.end(), 0);
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (size_t i = 0; i < sp; ++i) {
      const int64_t in = x[i + 2], s = w.strides[i];
      const int64_t out = (in + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (out - 1) * s + (w.kernel[i] - 1) * w.dilations[i] + 1 - in);
      const int64_t small = total / 2, large = total - small;
      w.pads[i] = autoPad == "SAME_UPPER" ? small : large;
      w.pads[i + sp] = autoPad == "SAME_UPPER" ? large : small;
    }
  } else if (autoPad != "NOTSET" && !autoPad.empty()) {
    return makeError(node.loc, fmt::format("unknown auto_pad value \"{}\"", autoPad));
  }
  (void)ctx;
  return w;
}

namespace {

Status convertConv(Context& ctx, NodeRef& node) {
  STOWAGE_ASSIGN_OR_RETURN(Shape x, inputShape(ctx, node, 0));
  STOWAGE_ASSIGN_OR_RETURN(Shape w, inputShape(ctx, node, 1));
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
  return emit(ctx, node, OpKind::Conv, {node.input(0), node.input(1), node.input(2)}, std::move(a), node.output(0));
}

Status convertConvTranspose(Context& ctx, NodeRef& node) {
  STOWAGE_ASSIGN_OR_RETURN(Shape x, inputShape(ctx, node, 0));
  STOWAGE_ASSIGN_OR_RETURN(Shape w, inputShape(ctx, node, 1));
  if (w.size() < 3 || w.size() != x.size())
    return makeError(node.loc, fmt::format("weight shape [{}] does not match input shape [{}]", shapeToString(w), shapeToString(x)));
  std::vector<int64_t> wk(w.begin() + 2, w.end());
  auto kernel = attrInts(node.proto, "kernel_shape").value_or(wk);
  if (kernel != wk)
    return makeError(node.loc, fmt::format("kernel_shape {} differs from the weight's spatial dims {}", intsString(kernel), intsString(wk)));
  const std::string autoPad = attrString(node.proto, "auto_pad", "NOTSET");
  STOWAGE_ASSIGN_OR_RETURN(WindowSpec win, readWindow(ctx, node, x, kernel));
  const size_t sp = x.size() - 2;
  auto outPad = attrInts(node.proto, "output_padding").value_or(std::vector<int64_t>(sp, 0));
  if (outPad.size() != sp) return makeError(node.loc, fmt::format("output_padding {} needs {} entries", intsString(outPad), sp));
  std::vector<int64_t> outShape;
  if (auto os = attrInts(node.proto, "output_shape")) {
    if (os->size() < sp) return makeError(node.loc, fmt::format("output_shape {} needs {} spatial entries", intsString(*os), sp));
    outShape.assign(os->end() - static_cast<std::ptrdiff_t>(sp), os->end());
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (size_t i = 0; i < sp; ++i) outShape.push_back(x[i + 2] * win.strides[i]);
  }
  if (autoPad == "VALID" && outShape.empty()) std::fill(win.pads.begin(), win.pads.end(), 0);
  if (!outShape.empty()) {
    for (size_t i = 0; i < sp; ++i) {
      if (outShape[i] < 1 || outShape[i] > kMaxElements) return makeError(node.loc, fmt::format("output_shape {} is invalid", intsString(outShape)));
      const int64_t total = win.strides[i] * (x[i + 2] - 1) + outPad[i] + ((kernel[i] - 1) * win.dilations[i] + 1) - outShape[i];
      int64_t begin, end;
      if (autoPad == "SAME_UPPER") {
        begin = floorDiv(total, 2);
        end = total - floorDiv(total, 2);
      } else {
        begin = total - floorDiv(total, 2);
        end = floorDiv(total, 2);
      }
      if (end < 0) {  // a negative end pad extends the output: that is output padding
        outPad[i] += -end;
        end = 0;
      }
      if (begin < 0)
        return unsupportedAttr(node, fmt::format("output_shape {} needs negative begin padding", intsString(outShape)));
      win.pads[i] = begin;
      win.pads[i + sp] = end;
    }
  }
  Attributes a;
  a.set("strides", win.strides);
  a.set("pads", win.pads);
  a.set("dilations", win.dilations);
  a.set("group", attrInt(node.proto, "group", 1));
  a.set("output_padding", outPad);
  return emit(ctx, node, OpKind::ConvTranspose, {node.input(0), node.input(1), node.input(2)}, std::move(a), node.output(0));
}

Status convertPool(Context& ctx, NodeRef& node) {
  const bool isMax = node.opType() == "MaxPool";
  if (isMax && ctx.used(node.output(1)))
    return unsupportedAttr(node, "the Indices output of MaxPool is not supported");
  if (isMax && attrInt(node.proto, "storage_order", 0) != 0)
    return unsupportedAttr(node, "storage_order=1 (column-major indices) is not supported");
  STOWAGE_ASSIGN_OR_RETURN(Shape x, inputShape(ctx, node, 0));
  auto kernel = attrInts(node.proto, "kernel_shape");
  if (!kernel) return makeError(node.loc, "attribute kernel_shape is missing");
  STOWAGE_ASSIGN_OR_RETURN(WindowSpec win, readWindow(ctx, node, x, *kernel));
  Attributes a;
  a.set("kernel_shape", win.kernel);
  a.set("strides", win.strides);
  a.set("pads", win.pads);
  a.set("dilations", win.dilations);
  a.set("ceil_mode", attrInt(node.proto, "ceil_mode", 0) != 0 ? int64_t{1} : int64_t{0});
  if (!isMax) a.set("count_include_pad", attrInt(node.proto, "count_include_pad", 0) != 0 ? int64_t{1} : int64_t{0});
  return emit(ctx, node, isMax ? OpKind::MaxPool : OpKind::AveragePool, {node.input(0)}, std::move(a), node.output(0));
}

Status convertGlobalPool(Context& ctx, NodeRef& node) {
  return emit(ctx, node, node.opType() == "GlobalMaxPool" ? OpKind::GlobalMaxPool : OpKind::GlobalAveragePool,
              {node.input(0)}, {}, node.output(0));
}

// ---- matrix ops ----

Status convertGemm(Context& ctx, NodeRef& node) {
  Attributes a;
  a.set("transA", attrInt(node.proto, "transA", 0) != 0 ? int64_t{1} : int64_t{0});
  a.set("transB", attrInt(node.proto, "transB", 0) != 0 ? int64_t{1} : int64_t{0});
  a.set("alpha", attrFloat(node.proto, "alpha", 1.0f));
  a.set("beta", attrFloat(node.proto, "beta", 1.0f));
  return emit(ctx, node, OpKind::Gemm, {node.input(0), node.input(1), node.input(2)}, std::move(a), node.output(0));
}

Status convertMatMul(Context& ctx, NodeRef& node) {
  return emit(ctx, node, OpKind::MatMul, {node.input(0), node.input(1)}, {}, node.output(0));
}

// ---- normalization ----

Status convertBatchNorm(Context& ctx, NodeRef& node) {
  for (int i = 1; i < node.proto.output_size(); ++i)
    if (ctx.used(node.output(i)))
      return unsupportedAttr(node, fmt::format("training output {} ('{}') of BatchNormalization is used; only inference is "
                                               "supported",
                                               i, node.output(i)));
  if (attrInt(node.proto, "training_mode", 0) != 0)
    return unsupportedAttr(node, "training_mode=1 is not supported (inference only)");
  if (ctx.opset < 9 && attrInt(node.proto, "spatial", 1) == 0)
    return unsupportedAttr(node, "spatial=0 (per-element statistics) is not supported");
  Attributes a;
  a.set("epsilon", attrFloat(node.proto, "epsilon", 1e-5f));
  return emit(ctx, node, OpKind::BatchNormalization,
              {node.input(0), node.input(1), node.input(2), node.input(3), node.input(4)}, std::move(a), node.output(0));
}

Status convertLRN(Context& ctx, NodeRef& node) {
  if (!hasAttr(node.proto, "size")) return makeError(node.loc, "attribute size is missing");
  Attributes a;
  a.set("alpha", attrFloat(node.proto, "alpha", 1e-4f));
  a.set("beta", attrFloat(node.proto, "beta", 0.75f));
  a.set("bias", attrFloat(node.proto, "bias", 1.0f));
  a.set("size", attrInt(node.proto, "size", 1));
  return emit(ctx, node, OpKind::LRN, {node.input(0)}, std::move(a), node.output(0));
}

// ---- constants ----

Status convertConstant(Context& ctx, NodeRef& node) {
  const std::string out = node.output(0);
  const auto& p = node.proto;
  Tensor t;
  if (const auto* a = findAttr(p, "value"); a && a->has_t()) {
    STOWAGE_ASSIGN_OR_RETURN(t, tensorFromOnnx(a->t(), node.loc));
  } else if (const auto* f = findAttr(p, "value_float")) {
    t = makeConst(out, DType::Float32, {}, {f->f()});
  } else if (const auto* fs = findAttr(p, "value_floats")) {
    std::vector<double> v(fs->floats().begin(), fs->floats().end());
    t = makeConst(out, DType::Float32, {static_cast<int64_t>(v.size())}, v);
  } else if (const auto* i = findAttr(p, "value_int")) {
    t = makeConstInts(out, DType::Int64, {}, {i->i()});
  } else if (const auto* is = findAttr(p, "value_ints")) {
    std::vector<int64_t> v(is->ints().begin(), is->ints().end());
    t = makeConstInts(out, DType::Int64, {static_cast<int64_t>(v.size())}, v);
  } else {
    return unsupportedAttr(node, "only dense numeric Constant values are supported (not sparse_value or strings)");
  }
  if (!checkedElements(t.shape)) return makeError(node.loc, "constant shape is too large");
  t.name = out;
  t.kind = TensorKind::Constant;
  ctx.consts[out] = std::move(t);
  ctx.names.insert(out);
  return Status::success();
}

Status convertCast(Context& ctx, NodeRef& node) {
  const auto to = static_cast<int32_t>(attrInt(node.proto, "to", 0));
  auto dt = dtypeFromOnnx(to);
  auto from = ctx.dtypeOf(node.input(0));
  if (dt && from && *dt == *from) {
    STOWAGE_ASSIGN_OR_RETURN(Shape s, inputShape(ctx, node, 0));
    return emitReshape(ctx, node, node.input(0), s, node.output(0));
  }
  return makeUnsupported(node.loc, fmt::format("Cast of a run-time tensor to {} is not supported (only float32 compute)",
                                               onnxDtypeName(to)));
}

}  // namespace

void addComputeConverters(ConverterTable& t) {
  for (const auto& [name, info] : unaryOps()) t[name] = &convertUnary;
  for (const char* n : {"Add", "Sub", "Mul", "Div", "Pow", "PRelu"}) t[n] = &convertBinary;
  for (const char* n : {"Sum", "Mean", "Max", "Min"}) t[n] = &convertVariadic;
  t["Clip"] = &convertClip;
  t["Softmax"] = &convertSoftmax;
  t["LogSoftmax"] = &convertSoftmax;
  t["Conv"] = &convertConv;
  t["ConvTranspose"] = &convertConvTranspose;
  t["MaxPool"] = &convertPool;
  t["AveragePool"] = &convertPool;
  t["GlobalAveragePool"] = &convertGlobalPool;
  t["GlobalMaxPool"] = &convertGlobalPool;
  t["Gemm"] = &convertGemm;
  t["MatMul"] = &convertMatMul;
  t["BatchNormalization"] = &convertBatchNorm;
  t["LRN"] = &convertLRN;
  t["Constant"] = &convertConstant;
  t["Cast"] = &convertCast;
}

namespace {
const ConverterTable& converters() {
  static const ConverterTable table = [] {
    ConverterTable t;
    addComputeConverters(t);
    addLayoutConverters(t);
    addQuantConverters(t);
    return t;
  }();
  return table;
}
}  // namespace

const std::set<std::string>& convertibleOnnxOps() {
  static const std::set<std::string> ops = [] {
    std::set<std::string> s;
    for (const auto& [name, fn] : converters()) s.insert(name);
    return s;
  }();
  return ops;
}

Status convertOnnxNode(Context& ctx, NodeRef& node) {
  auto it = converters().find(node.opType());
  if (it == converters().end()) {
    std::string list;
    for (const auto& op : convertibleOnnxOps()) list += (list.empty() ? "" : ", ") + op;
    Diagnostic d = makeUnsupported(node.loc, fmt::format("op {} is not supported", node.opType()),
                                   "rewrite the model without it, or ask for the op to be added");
    d.notes.push_back("supported ops: " + list);
    if (foldableOnnxOps().count(node.opType()))
      d.message = fmt::format("op {} is only supported when its inputs are known at compile time (it is evaluated "
                              "during import); here they are computed at run time",
                              node.opType());
    return d;
  }
  return it->second(ctx, node);
}

}  // namespace stowage::onnxfe
