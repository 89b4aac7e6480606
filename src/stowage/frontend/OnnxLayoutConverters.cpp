// Per-op converters of the ONNX frontend for layout ops: the Reshape family (Flatten, Squeeze, Unsqueeze,
// Identity, Dropout, Reshape), Transpose, Concat, Split, Slice, Expand, Pad and the Reduce* ops. Inputs that
// carry attributes (shape, axes, starts, pads, ...) must be compile-time constants; results are canonical.
#include <fmt/format.h>

#include <algorithm>

#include "stowage/frontend/OnnxConverters.h"

namespace stowage::onnxfe {

namespace {

/// Axes from the attribute (opset < `inputSince`) or the optional input `inputIndex`; nullopt when absent.
Result<std::optional<std::vector<int64_t>>> readAxes(Context& ctx, NodeRef& node, int64_t inputSince, int inputIndex) {
  if (ctx.opset < inputSince) return attrInts(node.proto, "axes");
  if (node.input(inputIndex).empty()) return attrInts(node.proto, "axes");
  STOWAGE_ASSIGN_OR_RETURN(auto v, constIntsInput(ctx, node, inputIndex, "axes"));
  return std::optional<std::vector<int64_t>>(std::move(v));
}

/// Sorted unique non-negative axes; errors on duplicates or out-of-range entries.
Result<std::vector<int64_t>> normalizeAxes(NodeRef& node, const std::vector<int64_t>& axes, int64_t rank) {
  std::vector<int64_t> out;
  for (int64_t a : axes) {
    STOWAGE_ASSIGN_OR_RETURN(int64_t n, normalizeAxis(node, a, rank, "axes entry"));
    out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end())
    return makeError(node.loc, fmt::format("axes {} contain a duplicate", intsString(axes)));
  return out;
}

Status convertFlatten(Context& ctx, NodeRef& node) {
  STOWAGE_ASSIGN_OR_RETURN(Shape x, inputShape(ctx, node, 0));
  const auto rank = static_cast<int64_t>(x.size());
  int64_t axis = attrInt(node.proto, "axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) return makeError(node.loc, fmt::format("axis {} is out of range for rank {}", attrInt(node.proto, "axis", 1), rank));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) (d < axis ? outer : inner) *= x[static_cast<size_t>(d)];
  return emitReshape(ctx, node, node.input(0), {outer, inner}, node.output(0));
}

Status convertSqueeze(Context& ctx, NodeRef& node) {
  STOWAGE_ASSIGN_OR_RETURN(Shape x, inputShape(ctx, node, 0));
  STOWAGE_ASSIGN_OR_RETURN(auto axes, readAxes(ctx, node, 13, 1));
  std::vector<bool> drop(x.size(), false);
  if (!axes || axes->empty()) {
    for (size_t d = 0; d < x.size(); ++d) drop[d] = x[d] == 1;
  } else {
    STOWAGE_ASSIGN_OR_RETURN(auto norm, normalizeAxes(node, *axes, static_cast<int64_t>(x.size())));
    for (int64_t a : norm) {
      if (x[static_cast<size_t>(a)] != 1)
        return makeError(node.loc, fmt::format("cannot squeeze axis {} of shape [{}]: its size is not 1", a, shapeToString(x)));
      drop[static_cast<size_t>(a)] = true;
    }
  }
  Shape out;
  for (size_t d = 0; d < x.size(); ++d)
    if (!drop[d]) out.push_back(x[d]);
  return emitReshape(ctx, node, node.input(0), out, node.output(0));
}

Status convertUnsqueeze(Context& ctx, NodeRef& node) {
  STOWAGE_ASSIGN_OR_RETURN(Shape x, inputShape(ctx, node, 0));
  STOWAGE_ASSIGN_OR_RETURN(auto axes, readAxes(ctx, node, 13, 1));
  if (!axes) return makeError(node.loc, "axes are missing");
  const auto outRank = static_cast<int64_t>(x.size() + axes->size());
  STOWAGE_ASSIGN_OR_RETURN(auto norm, normalizeAxes(node, *axes, outRank));
  Shape out;
  size_t next = 0;
  for (int64_t d = 0; d < outRank; ++d) {
    if (std::binary_search(norm.begin(), norm.end(), d)) out.push_back(1);
    else if (next < x.size()) out.push_back(x[next++]);
  }
  return emitReshape(ctx, node, node.input(0), out, node.output(0));
}

Status convertIdentity(Context& ctx, NodeRef& node) {
  STOWAGE_ASSIGN_OR_RETURN(Shape x, inputShape(ctx, node, 0));
  return emitReshape(ctx, node, node.input(0), x, node.output(0));
}

Status convertDropout(Context& ctx, NodeRef& node) {
  if (ctx.used(node.output(1)))
    return makeUnsupported(node.loc, fmt::format("the mask output '{}' of Dropout is used; only inference is supported", node.output(1)));
  if (ctx.opset >= 12 && !node.input(2).empty()) {
    STOWAGE_ASSIGN_OR_RETURN(const Tensor* training, constInput(ctx, node, 2, "training_mode"));
    double ratio = 0.5;
    if (!node.input(1).empty()) {
      STOWAGE_ASSIGN_OR_RETURN(const Tensor* r, constInput(ctx, node, 1, "ratio"));
      if (r->numElements() == 1) ratio = constDoubles(*r)[0];
    }
    if (training->numElements() == 1 && constInts(*training)[0] != 0 && ratio != 0)
      return makeUnsupported(node.loc, "Dropout in training mode (random masking) is not supported");
  }
  return convertIdentity(ctx, node);
}

Status convertReshape(Context& ctx, NodeRef& node) {
  STOWAGE_ASSIGN_OR_RETURN(Shape x, inputShape(ctx, node, 0));
  std::vector<int64_t> spec;
  if (ctx.opset < 5) {
    spec = attrInts(node.proto, "shape").value_or(std::vector<int64_t>{});
  } else {
    STOWAGE_ASSIGN_OR_RETURN(spec, constIntsInput(ctx, node, 1, "shape"));
  }
  const bool allowZero = attrInt(node.proto, "allowzero", 0) != 0;
  Shape out(spec.size());
  int inferAt = -1;
  int64_t known = 1;
  for (size_t i = 0; i < spec.size(); ++i) {
    int64_t v = spec[i];
    if (v == 0 && !allowZero) {
      if (i >= x.size()) return makeError(node.loc, fmt::format("shape {} copies dim {} (0) but the input has rank {}", intsString(spec), i, x.size()));
      v = x[i];
    }
    if (v == -1) {
      if (inferAt >= 0) return makeError(node.loc, fmt::format("shape {} has more than one -1", intsString(spec)));
      inferAt = static_cast<int>(i);
      continue;
    }
    if (v < 0 || v > kMaxElements) return makeError(node.loc, fmt::format("shape {} has an invalid entry {}", intsString(spec), v));
    out[i] = v;
    if (v != 0 && known > kMaxElements / v) return makeError(node.loc, fmt::format("shape {} is too large", intsString(spec)));
    known *= v;
  }
  const int64_t total = shapeElements(x);
  if (inferAt >= 0) {
    if (known == 0 || total % known != 0)
      return makeError(node.loc, fmt::format("cannot infer the -1 in shape {} for an input of shape [{}]", intsString(spec), shapeToString(x)));
    out[static_cast<size_t>(inferAt)] = total / known;
  } else if (known != total) {
    return makeError(node.loc, fmt::format("cannot reshape [{}] ({} elements) to {} ({} elements)", shapeToString(x), total,
                                           intsString(spec), known));
  }
  return emitReshape(ctx, node, node.input(0), out, node.output(0));
}

Status convertTranspose(Context& ctx, NodeRef& node) {
  STOWAGE_ASSIGN_OR_RETURN(Shape x, inputShape(ctx, node, 0));
  std::vector<int64_t> perm;
  for (size_t i = x.size(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
  if (auto p = attrInts(node.proto, "perm")) perm = *p;
  Attributes a;
  a.set("perm", perm);
  return emit(ctx, node, OpKind::Transpose, {node.input(0)}, std::move(a), node.output(0));
}

Status convertConcat(Context& ctx, NodeRef& node) {
  if (node.proto.input_size() < 1) return makeError(node.loc, "needs at least one input");
  STOWAGE_ASSIGN_OR_RETURN(Shape x, inputShape(ctx, node, 0));
  STOWAGE_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(node, attrInt(node.proto, "axis", ctx.opset < 4 ? 1 : 0), static_cast<int64_t>(x.size())));
  std::vector<std::string> ins;
  for (int i = 0; i < node.proto.input_size(); ++i) {
    if (node.input(i).empty()) return makeError(node.loc, "Concat has an empty input name");
    ins.push_back(node.input(i));
  }
  Attributes a;
  a.set("axis", axis);
  return emit(ctx, node, OpKind::Concat, ins, std::move(a), node.output(0));
}

Status emitSlice(Context& ctx, NodeRef& node, const std::string& in, std::vector<int64_t> starts, std::vector<int64_t> ends,
                 std::vector<int64_t> steps, const std::string& out) {
  Attributes a;
  a.set("starts", std::move(starts));
  a.set("ends", std::move(ends));
  a.set("steps", std::move(steps));
  return emit(ctx, node, OpKind::Slice, {in}, std::move(a), out);
}

Status convertSplit(Context& ctx, NodeRef& node) {
  STOWAGE_ASSIGN_OR_RETURN(Shape x, inputShape(ctx, node, 0));
  STOWAGE_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(node, attrInt(node.proto, "axis", 0), static_cast<int64_t>(x.size())));
  const int n = node.proto.output_size();
  if (n < 1) return makeError(node.loc, "Split has no outputs");
  const int64_t dim = x[static_cast<size_t>(axis)];
  std::vector<int64_t> sizes;
  if (ctx.opset < 13) {
    sizes = attrInts(node.proto, "split").value_or(std::vector<int64_t>{});
  } else if (!node.input(1).empty()) {
    STOWAGE_ASSIGN_OR_RETURN(sizes, constIntsInput(ctx, node, 1, "split"));
  }
  if (sizes.empty()) {
    if (dim % n != 0) return makeError(node.loc, fmt::format("cannot split a dim of size {} into {} equal parts", dim, n));
    sizes.assign(static_cast<size_t>(n), dim / n);
  }
  int64_t sum = 0;
  for (int64_t s : sizes) {
    if (s < 0 || s > dim) return makeError(node.loc, fmt::format("split sizes {} are invalid", intsString(sizes)));
    sum += s;
  }
  if (static_cast<int>(sizes.size()) != n || sum != dim)
    return makeError(node.loc, fmt::format("split sizes {} must give {} parts summing to {}", intsString(sizes), n, dim));
  int64_t offset = 0;
  for (int k = 0; k < n; ++k) {
    std::vector<int64_t> starts(x.size(), 0), ends(x.begin(), x.end()), steps(x.size(), 1);
    starts[static_cast<size_t>(axis)] = offset;
    ends[static_cast<size_t>(axis)] = offset + sizes[static_cast<size_t>(k)];
    offset += sizes[static_cast<size_t>(k)];
    if (node.output(k).empty()) continue;
    STOWAGE_TRY(emitSlice(ctx, node, node.input(0), starts, ends, steps, node.output(k)));
  }
  return Status::success();
}

Status convertSlice(Context& ctx, NodeRef& node) {
  STOWAGE_ASSIGN_OR_RETURN(Shape x, inputShape(ctx, node, 0));
  const auto rank = static_cast<int64_t>(x.size());
  std::vector<int64_t> starts, ends, axes, steps;
  if (ctx.opset < 10) {
    starts = attrInts(node.proto, "starts").value_or(std::vector<int64_t>{});
    ends = attrInts(node.proto, "ends").value_or(std::vector<int64_t>{});
    axes = attrInts(node.proto, "axes").value_or(std::vector<int64_t>{});
  } else {
    STOWAGE_ASSIGN_OR_RETURN(starts, constIntsInput(ctx, node, 1, "starts"));
    STOWAGE_ASSIGN_OR_RETURN(ends, constIntsInput(ctx, node, 2, "ends"));
    if (!node.input(3).empty()) { STOWAGE_ASSIGN_OR_RETURN(axes, constIntsInput(ctx, node, 3, "axes")); }
    if (!node.input(4).empty()) { STOWAGE_ASSIGN_OR_RETURN(steps, constIntsInput(ctx, node, 4, "steps")); }
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (starts.size() != ends.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return makeError(node.loc, fmt::format("starts {}, ends {}, axes {} and steps {} differ in length", intsString(starts),
                                           intsString(ends), intsString(axes), intsString(steps)));
  std::vector<int64_t> cs(x.size(), 0), ce(x.begin(), x.end()), cst(x.size(), 1);
  std::vector<bool> seen(x.size(), false);
  for (size_t i = 0; i < axes.size(); ++i) {
    STOWAGE_ASSIGN_OR_RETURN(int64_t ax, normalizeAxis(node, axes[i], rank, "axes entry"));
    const auto a = static_cast<size_t>(ax);
    if (seen[a]) return makeError(node.loc, fmt::format("axes {} contain a duplicate", intsString(axes)));
    seen[a] = true;
    const int64_t d = x[a], step = steps[i];
    if (step == 0) return makeError(node.loc, "a step is 0");
    // ONNX clamping: negative indices count from the end; then clamp to [0, d] (positive step) or
    // [0, d-1] for starts and [-1, d-1] for ends (negative step).
    int64_t s = starts[i], e = ends[i];
    if (s < 0) s = s < -d ? -1 - d : s + d;
    if (e < 0) e = e < -d ? -1 - d : e + d;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, d);
      e = std::clamp<int64_t>(e, 0, d);
    } else {
      s = std::clamp<int64_t>(s, 0, d - 1);
      e = std::clamp<int64_t>(e, -1, d - 1);
    }
    cs[a] = s;
    ce[a] = e;
    cst[a] = std::clamp<int64_t>(step, -kMaxElements, kMaxElements);
  }
  return emitSlice(ctx, node, node.input(0), cs, ce, cst, node.output(0));
}

Status convertExpand(Context& ctx, NodeRef& node) {
  STOWAGE_ASSIGN_OR_RETURN(Shape x, inputShape(ctx, node, 0));
  STOWAGE_ASSIGN_OR_RETURN(auto target, constIntsInput(ctx, node, 1, "shape"));
  if (!checkedElements(target)) return makeError(node.loc, fmt::format("shape {} is invalid", intsString(target)));
  auto out = broadcastShapes(x, target);
  if (!out) return makeError(node.loc, fmt::format("input [{}] does not broadcast with shape {}", shapeToString(x), intsString(target)));
  Attributes a;
  a.set("shape", *out);
  return emit(ctx, node, OpKind::Expand, {node.input(0)}, std::move(a), node.output(0));
}

Status convertPad(Context& ctx, NodeRef& node) {
  STOWAGE_ASSIGN_OR_RETURN(Shape x, inputShape(ctx, node, 0));
  std::vector<int64_t> pads;
  float value = 0.0f;
  if (ctx.opset < 11) {
    pads = attrInts(node.proto, ctx.opset < 2 ? "paddings" : "pads").value_or(std::vector<int64_t>{});
    value = attrFloat(node.proto, "value", 0.0f);
  } else {
    STOWAGE_ASSIGN_OR_RETURN(pads, constIntsInput(ctx, node, 1, "pads"));
    if (!node.input(2).empty()) {
      STOWAGE_ASSIGN_OR_RETURN(const Tensor* v, constInput(ctx, node, 2, "constant_value"));
      if (v->numElements() != 1) return makeError(node.loc, "constant_value must be a scalar");
      value = static_cast<float>(constDoubles(*v)[0]);
    }
    if (!node.input(3).empty()) return makeUnsupported(node.loc, "the axes input of Pad (opset 18) is not supported");
  }
  if (pads.size() != 2 * x.size())
    return makeError(node.loc, fmt::format("pads {} need 2 x rank = {} entries", intsString(pads), 2 * x.size()));
  for (int64_t p : pads)
    if (p < 0) return makeUnsupported(node.loc, fmt::format("negative pads {} (cropping) are not supported", intsString(pads)));
  const std::string mode = attrString(node.proto, "mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    return makeUnsupported(node.loc, fmt::format("pad mode \"{}\" is not supported (constant, reflect, edge are)", mode));
  Attributes a;
  a.set("pads", pads);
  a.set("mode", mode);
  a.set("value", value);
  return emit(ctx, node, OpKind::Pad, {node.input(0)}, std::move(a), node.output(0));
}

Status convertReduce(Context& ctx, NodeRef& node) {
  STOWAGE_ASSIGN_OR_RETURN(Shape x, inputShape(ctx, node, 0));
  const std::string t = node.opType();
  auto kind = opKindFromName(t);
  if (!kind) return makeUnsupported(node.loc, fmt::format("op {} is not supported", t));
  // ReduceSum takes axes as an input from opset 13, the others from opset 18.
  STOWAGE_ASSIGN_OR_RETURN(auto axes, readAxes(ctx, node, t == "ReduceSum" ? 13 : 18, 1));
  const bool keep = attrInt(node.proto, "keepdims", 1) != 0;
  std::vector<int64_t> norm;
  if (!axes || axes->empty()) {
    if (attrInt(node.proto, "noop_with_empty_axes", 0) != 0) return emitReshape(ctx, node, node.input(0), x, node.output(0));
    for (size_t d = 0; d < x.size(); ++d) norm.push_back(static_cast<int64_t>(d));
  } else {
    STOWAGE_ASSIGN_OR_RETURN(norm, normalizeAxes(node, *axes, static_cast<int64_t>(x.size())));
  }
  if (norm.empty()) return emitReshape(ctx, node, node.input(0), x, node.output(0));  // rank-0 input
  Attributes a;
  a.set("axes", norm);
  a.set("keepdims", int64_t{keep ? 1 : 0});
  return emit(ctx, node, *kind, {node.input(0)}, std::move(a), node.output(0));
}

}  // namespace

void addLayoutConverters(ConverterTable& t) {
  t["Flatten"] = &convertFlatten;
  t["Squeeze"] = &convertSqueeze;
  t["Unsqueeze"] = &convertUnsqueeze;
  t["Identity"] = &convertIdentity;
  t["Dropout"] = &convertDropout;
  t["Reshape"] = &convertReshape;
  t["Transpose"] = &convertTranspose;
  t["Concat"] = &convertConcat;
  t["Split"] = &convertSplit;
  t["Slice"] = &convertSlice;
  t["Expand"] = &convertExpand;
  t["Pad"] = &convertPad;
  for (const char* r : {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSumSquare", "ReduceL1", "ReduceL2"})
    t[r] = &convertReduce;
}

}  // namespace stowage::onnxfe
