// Per-op shape rules (the ShapeRule column of Ops.def): output shapes from input shapes and canonical
// attributes. Used by the frontend to type every tensor and by the verifier to re-check every node.
#include <fmt/format.h>

#include <algorithm>

#include "stowage/ir/Graph.h"
#include "stowage/ir/Op.h"

namespace stowage {

namespace {

using Shapes = Result<std::vector<Shape>>;

std::string loc(const Node& n) { return fmt::format("node '{}' ({})", n.name, opName(n.op)); }

Diagnostic bad(const Node& n, std::string message) { return makeError(loc(n), std::move(message)); }

std::string intsToString(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

/// Input i's shape, or nullptr when the input is absent or the id is invalid.
const Shape* inShape(const Graph& g, const Node& n, size_t i) {
  TensorId id = n.input(i);
  if (id == kNoTensor || id < 0 || id >= static_cast<TensorId>(g.tensors.size())) return nullptr;
  return &g.tensor(id).shape;
}

Result<Shape> requireInput(const Graph& g, const Node& n, size_t i) {
  const Shape* s = inShape(g, n, i);
  if (!s) return bad(n, fmt::format("input {} is missing or has an invalid tensor id", i));
  return *s;
}

/// numpy broadcasting of two shapes, or nullopt when incompatible.
std::optional<Shape> broadcast(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == db || db == 1) out[i] = da;
    else if (da == 1) out[i] = db;
    else return std::nullopt;
  }
  return out;
}

/// Reads a per-spatial-dim attribute, defaulting to `fallback` repeated; checks its length.
Result<std::vector<int64_t>> spatialAttr(const Node& n, const char* name, size_t count, int64_t fallback, int64_t minValue) {
  std::vector<int64_t> v = n.attrs.getInts(name, std::vector<int64_t>(count, fallback));
  if (v.size() != count)
    return bad(n, fmt::format("attribute {} has {} entries {} but the op needs {}", name, v.size(), intsToString(v), count));
  for (int64_t x : v)
    if (x < minValue) return bad(n, fmt::format("attribute {} {} has a value below {}", name, intsToString(v), minValue));
  return v;
}

Shapes inferShapeSameAsInput(const Graph& g, const Node& n) {
  STOWAGE_ASSIGN_OR_RETURN(Shape x, requireInput(g, n, 0));
  const auto rank = static_cast<int64_t>(x.size());
  if (n.op == OpKind::Softmax || n.op == OpKind::LogSoftmax || n.op == OpKind::QLinearSoftmax) {
    int64_t axis = n.attrs.getInt("axis", rank - 1);
    if (axis < 0 || axis >= std::max<int64_t>(rank, 1))
      return bad(n, fmt::format("axis {} is out of range for an input of rank {}", axis, rank));
  }
  if (n.op == OpKind::BatchNormalization) {
    if (rank < 2) return bad(n, fmt::format("input has rank {}; BatchNormalization needs [N, C, ...]", rank));
    for (size_t i = 1; i < 5; ++i) {
      STOWAGE_ASSIGN_OR_RETURN(Shape p, requireInput(g, n, i));
      if (shapeElements(p) != x[1])
        return bad(n, fmt::format("parameter input {} has shape [{}] but the input has {} channels", i, shapeToString(p), x[1]));
    }
  }
  if (n.op == OpKind::LRN) {
    if (rank < 2) return bad(n, fmt::format("input has rank {}; LRN needs [N, C, ...]", rank));
    if (n.attrs.getInt("size", 0) < 1) return bad(n, "attribute size must be at least 1");
  }
  return std::vector<Shape>{x};
}

Shapes inferShapeBroadcast(const Graph& g, const Node& n) {
  STOWAGE_ASSIGN_OR_RETURN(Shape a, requireInput(g, n, 0));
  STOWAGE_ASSIGN_OR_RETURN(Shape b, requireInput(g, n, 1));
  auto out = broadcast(a, b);
  if (!out) return bad(n, fmt::format("input shapes [{}] and [{}] do not broadcast", shapeToString(a), shapeToString(b)));
  if (n.op == OpKind::PRelu && *out != a)
    return bad(n, fmt::format("slope shape [{}] does not broadcast to the input shape [{}]", shapeToString(b), shapeToString(a)));
  return std::vector<Shape>{*out};
}

/// Shared checks of Conv / ConvTranspose / Pool: rank and per-dim attributes.
struct Window {
  std::vector<int64_t> kernel, strides, pads, dilations;
};

Result<Window> windowAttrs(const Node& n, const Shape& x, const std::vector<int64_t>& kernel) {
  if (x.size() != 3 && x.size() != 4)
    return bad(n, fmt::format("input has shape [{}]; spatial rank 1 or 2 (input rank 3 or 4) is supported", shapeToString(x)));
  const size_t sp = x.size() - 2;
  Window w;
  w.kernel = kernel;
  if (w.kernel.size() != sp)
    return bad(n, fmt::format("kernel {} does not match the input's {} spatial dims", intsToString(kernel), sp));
  for (int64_t k : w.kernel)
    if (k < 1) return bad(n, fmt::format("kernel {} has a non-positive size", intsToString(kernel)));
  STOWAGE_ASSIGN_OR_RETURN(w.strides, spatialAttr(n, "strides", sp, 1, 1));
  STOWAGE_ASSIGN_OR_RETURN(w.pads, spatialAttr(n, "pads", 2 * sp, 0, 0));
  STOWAGE_ASSIGN_OR_RETURN(w.dilations, spatialAttr(n, "dilations", sp, 1, 1));
  return w;
}

Shapes inferShapeConv(const Graph& g, const Node& n) {
  STOWAGE_ASSIGN_OR_RETURN(Shape x, requireInput(g, n, 0));
  STOWAGE_ASSIGN_OR_RETURN(Shape w, requireInput(g, n, 1));
  if (w.size() != x.size())
    return bad(n, fmt::format("weight shape [{}] and input shape [{}] have different ranks", shapeToString(w), shapeToString(x)));
  STOWAGE_ASSIGN_OR_RETURN(Window win, windowAttrs(n, x, Shape(w.begin() + std::min<size_t>(2, w.size()), w.end())));
  const int64_t group = n.attrs.getInt("group", 1);
  if (group < 1 || w[0] % group != 0 || x[1] != w[1] * group)
    return bad(n, fmt::format("input has {} channels, weight [{}] with group {} expects {}", x[1], shapeToString(w), group,
                              w[1] * group));
  // The bias: input 2 of Conv, the last input of QLinearConv (after the quantization inputs), none in ConvInteger.
  const size_t biasInput = n.op == OpKind::QLinearConv ? 8 : (n.op == OpKind::ConvInteger ? n.inputs.size() : 2);
  if (const Shape* b = inShape(g, n, biasInput); b && shapeElements(*b) != w[0])
    return bad(n, fmt::format("bias has shape [{}] but the conv has {} output channels", shapeToString(*b), w[0]));
  Shape out{x[0], w[0]};
  const size_t sp = x.size() - 2;
  for (size_t i = 0; i < sp; ++i) {
    int64_t span = x[i + 2] + win.pads[i] + win.pads[i + sp] - ((win.kernel[i] - 1) * win.dilations[i] + 1);
    if (span < 0)
      return bad(n, fmt::format("kernel {} (dilations {}) is larger than the padded input [{}] in spatial dim {}",
                                intsToString(win.kernel), intsToString(win.dilations), shapeToString(x), i));
    out.push_back(span / win.strides[i] + 1);
  }
  return std::vector<Shape>{out};
}

Shapes inferShapeConvTranspose(const Graph& g, const Node& n) {
  STOWAGE_ASSIGN_OR_RETURN(Shape x, requireInput(g, n, 0));
  STOWAGE_ASSIGN_OR_RETURN(Shape w, requireInput(g, n, 1));
  if (w.size() != x.size())
    return bad(n, fmt::format("weight shape [{}] and input shape [{}] have different ranks", shapeToString(w), shapeToString(x)));
  STOWAGE_ASSIGN_OR_RETURN(Window win, windowAttrs(n, x, Shape(w.begin() + std::min<size_t>(2, w.size()), w.end())));
  const int64_t group = n.attrs.getInt("group", 1);
  if (group < 1 || x[1] != w[0] || w[0] % group != 0)
    return bad(n, fmt::format("input has {} channels but weight [{}] with group {} expects {}", x[1], shapeToString(w), group, w[0]));
  const size_t sp = x.size() - 2;
  STOWAGE_ASSIGN_OR_RETURN(auto outPad, spatialAttr(n, "output_padding", sp, 0, 0));
  const int64_t m = w[1] * group;
  if (const Shape* b = inShape(g, n, 2); b && shapeElements(*b) != m)
    return bad(n, fmt::format("bias has shape [{}] but the op has {} output channels", shapeToString(*b), m));
  Shape out{x[0], m};
  for (size_t i = 0; i < sp; ++i) {
    int64_t o = (x[i + 2] - 1) * win.strides[i] + (win.kernel[i] - 1) * win.dilations[i] + 1 - win.pads[i] - win.pads[i + sp] +
                outPad[i];
    if (o < 1) return bad(n, fmt::format("pads {} leave no output in spatial dim {}", intsToString(win.pads), i));
    out.push_back(o);
  }
  return std::vector<Shape>{out};
}

Shapes inferShapeGemm(const Graph& g, const Node& n) {
  STOWAGE_ASSIGN_OR_RETURN(Shape a, requireInput(g, n, 0));
  STOWAGE_ASSIGN_OR_RETURN(Shape b, requireInput(g, n, 1));
  if (a.size() != 2 || b.size() != 2)
    return bad(n, fmt::format("Gemm needs 2-D operands, got [{}] and [{}]", shapeToString(a), shapeToString(b)));
  const bool ta = n.attrs.getInt("transA", 0) != 0, tb = n.attrs.getInt("transB", 0) != 0;
  const int64_t m = ta ? a[1] : a[0], ka = ta ? a[0] : a[1];
  const int64_t kb = tb ? b[1] : b[0], nn = tb ? b[0] : b[1];
  if (ka != kb)
    return bad(n, fmt::format("inner dimensions differ: A [{}] (transA={}) and B [{}] (transB={})", shapeToString(a), ta ? 1 : 0,
                              shapeToString(b), tb ? 1 : 0));
  Shape out{m, nn};
  if (const Shape* s = inShape(g, n, 3); s && shapeElements(*s) != nn)
    return bad(n, fmt::format("B's scales have shape [{}]; an int8 B needs one per output column ({})", shapeToString(*s), nn));
  if (const Shape* c = inShape(g, n, 2)) {
    auto bc = broadcast(out, *c);
    if (!bc || *bc != out)
      return bad(n, fmt::format("C of shape [{}] does not broadcast to [{}]", shapeToString(*c), shapeToString(out)));
  }
  return std::vector<Shape>{out};
}

Shapes inferShapeMatMul(const Graph& g, const Node& n) {
  STOWAGE_ASSIGN_OR_RETURN(Shape a, requireInput(g, n, 0));
  STOWAGE_ASSIGN_OR_RETURN(Shape b, requireInput(g, n, 1));
  if (a.empty() || b.empty()) return bad(n, "MatMul operands must have rank at least 1");
  Shape pa = a.size() == 1 ? Shape{1, a[0]} : a;
  Shape pb = b.size() == 1 ? Shape{b[0], 1} : b;
  if (pa.back() != pb[pb.size() - 2])
    return bad(n, fmt::format("inner dimensions differ: [{}] x [{}]", shapeToString(a), shapeToString(b)));
  auto batch = broadcast(Shape(pa.begin(), pa.end() - 2), Shape(pb.begin(), pb.end() - 2));
  if (!batch) return bad(n, fmt::format("batch dimensions of [{}] and [{}] do not broadcast", shapeToString(a), shapeToString(b)));
  Shape out = *batch;
  if (a.size() > 1) out.push_back(pa[pa.size() - 2]);
  if (b.size() > 1) out.push_back(pb.back());
  return std::vector<Shape>{out};
}

Shapes inferShapePool(const Graph& g, const Node& n) {
  STOWAGE_ASSIGN_OR_RETURN(Shape x, requireInput(g, n, 0));
  STOWAGE_ASSIGN_OR_RETURN(Window win, windowAttrs(n, x, n.attrs.getInts("kernel_shape")));
  const bool ceilMode = n.attrs.getInt("ceil_mode", 0) != 0;
  const size_t sp = x.size() - 2;
  Shape out{x[0], x[1]};
  for (size_t i = 0; i < sp; ++i) {
    const int64_t padBegin = win.pads[i], padEnd = win.pads[i + sp];
    const int64_t span = x[i + 2] + padBegin + padEnd - ((win.kernel[i] - 1) * win.dilations[i] + 1);
    if (span < 0)
      return bad(n, fmt::format("kernel {} is larger than the padded input [{}] in spatial dim {}", intsToString(win.kernel),
                                shapeToString(x), i));
    const int64_t s = win.strides[i];
    int64_t o = (ceilMode ? (span + s - 1) / s : span / s) + 1;
    // ONNX (and PyTorch): with ceil_mode, a last window that would start in the end padding is dropped.
    if (ceilMode && (o - 1) * s >= x[i + 2] + padBegin) --o;
    out.push_back(o);
  }
  return std::vector<Shape>{out};
}

/// Output size of one NHWC spatial dim: in + pads - dilated kernel, strided.
Result<int64_t> nhwcOutDim(const Node& n, int64_t in, int64_t k, int64_t stride, int64_t dil, int64_t padBegin, int64_t padEnd) {
  const int64_t span = in + padBegin + padEnd - ((k - 1) * dil + 1);
  if (span < 0) return bad(n, fmt::format("kernel {} (dilation {}) is larger than the padded input ({})", k, dil, in + padBegin + padEnd));
  return span / stride + 1;
}

Shapes inferShapeQConv2d(const Graph& g, const Node& n) {
  STOWAGE_ASSIGN_OR_RETURN(Shape x, requireInput(g, n, 0));
  STOWAGE_ASSIGN_OR_RETURN(Shape w, requireInput(g, n, 1));
  if (x.size() != 4 || w.size() != 4)
    return bad(n, fmt::format("input [{}] and filter [{}] must both be 4-D (NHWC)", shapeToString(x), shapeToString(w)));
  STOWAGE_ASSIGN_OR_RETURN(auto strides, spatialAttr(n, "strides", 2, 1, 1));
  STOWAGE_ASSIGN_OR_RETURN(auto dil, spatialAttr(n, "dilations", 2, 1, 1));
  STOWAGE_ASSIGN_OR_RETURN(auto pads, spatialAttr(n, "pads", 4, 0, 0));
  int64_t m = 0;
  const bool quantized = n.op == OpKind::QConv2d || n.op == OpKind::QDepthwiseConv2d;
  if (n.op == OpKind::QDepthwiseConv2d || n.op == OpKind::DepthwiseConvNhwc) {
    m = w[3];
    if (w[0] != 1 || x[3] < 1 || m % x[3] != 0)
      return bad(n, fmt::format("depthwise filter [{}] does not fit an input with {} channels", shapeToString(w), x[3]));
  } else {
    m = w[0];
    if (w[3] < 1 || x[3] % w[3] != 0 || m % (x[3] / w[3]) != 0)
      return bad(n, fmt::format("filter [{}] does not fit an input with {} channels", shapeToString(w), x[3]));
  }
  // Float: (X, W, B?); quantized: (X, W, mult, shift, B?).
  if (const Shape* b = inShape(g, n, quantized ? 4 : 2); b && shapeElements(*b) != m)
    return bad(n, fmt::format("bias has shape [{}] but the conv has {} output channels", shapeToString(*b), m));
  if (const Shape* s = inShape(g, n, 3); !quantized && s && shapeElements(*s) != m)
    return bad(n, fmt::format("filter scales have shape [{}]; an int8 filter needs one per output channel ({})", shapeToString(*s), m));
  for (size_t i = 2; quantized && i < 4; ++i) {
    STOWAGE_ASSIGN_OR_RETURN(Shape q, requireInput(g, n, i));
    if (shapeElements(q) != m && shapeElements(q) != 1)
      return bad(n, fmt::format("requantization input {} has shape [{}]; needs 1 or {} entries", i, shapeToString(q), m));
  }
  STOWAGE_ASSIGN_OR_RETURN(int64_t oh, nhwcOutDim(n, x[1], w[1], strides[0], dil[0], pads[0], pads[2]));
  STOWAGE_ASSIGN_OR_RETURN(int64_t ow, nhwcOutDim(n, x[2], w[2], strides[1], dil[1], pads[1], pads[3]));
  return std::vector<Shape>{Shape{x[0], oh, ow, m}};
}

Shapes inferShapeQFullyConnected(const Graph& g, const Node& n) {
  STOWAGE_ASSIGN_OR_RETURN(Shape x, requireInput(g, n, 0));
  STOWAGE_ASSIGN_OR_RETURN(Shape w, requireInput(g, n, 1));
  if (w.size() != 2 || w[1] < 1 || x.empty() || shapeElements(x) % w[1] != 0)
    return bad(n, fmt::format("input [{}] does not fit weights [{}] (needs rows of K = weights dim 1)", shapeToString(x), shapeToString(w)));
  if (const Shape* b = inShape(g, n, 4); b && shapeElements(*b) != w[0])
    return bad(n, fmt::format("bias has shape [{}] but the layer has {} outputs", shapeToString(*b), w[0]));
  for (size_t i = 2; i < 4; ++i) {
    STOWAGE_ASSIGN_OR_RETURN(Shape q, requireInput(g, n, i));
    if (shapeElements(q) != w[0] && shapeElements(q) != 1)
      return bad(n, fmt::format("requantization input {} has shape [{}]; needs 1 or {} entries", i, shapeToString(q), w[0]));
  }
  if (n.attrs.getInt("keep_num_dims", 0) != 0) {
    if (x.back() != w[1]) return bad(n, fmt::format("keep_num_dims needs the input's last dim to be {}", w[1]));
    Shape out = x;
    out.back() = w[0];
    return std::vector<Shape>{out};
  }
  return std::vector<Shape>{Shape{shapeElements(x) / w[1], w[0]}};
}

Shapes inferShapeQPool2d(const Graph& g, const Node& n) {
  STOWAGE_ASSIGN_OR_RETURN(Shape x, requireInput(g, n, 0));
  if (x.size() != 4) return bad(n, fmt::format("input [{}] must be 4-D (NHWC)", shapeToString(x)));
  STOWAGE_ASSIGN_OR_RETURN(auto k, spatialAttr(n, "kernel_shape", 2, 0, 1));
  STOWAGE_ASSIGN_OR_RETURN(auto strides, spatialAttr(n, "strides", 2, 1, 1));
  STOWAGE_ASSIGN_OR_RETURN(auto pads, spatialAttr(n, "pads", 4, 0, 0));
  STOWAGE_ASSIGN_OR_RETURN(int64_t oh, nhwcOutDim(n, x[1], k[0], strides[0], 1, pads[0], pads[2]));
  STOWAGE_ASSIGN_OR_RETURN(int64_t ow, nhwcOutDim(n, x[2], k[1], strides[1], 1, pads[1], pads[3]));
  return std::vector<Shape>{Shape{x[0], oh, ow, x[3]}};
}

Shapes inferShapeQMean(const Graph& g, const Node& n) {
  STOWAGE_ASSIGN_OR_RETURN(Shape x, requireInput(g, n, 0));
  if (x.size() != 4) return bad(n, fmt::format("input [{}] must be 4-D (NHWC)", shapeToString(x)));
  if (n.attrs.getInt("keep_dims", 0) != 0) return std::vector<Shape>{Shape{x[0], 1, 1, x[3]}};
  return std::vector<Shape>{Shape{x[0], x[3]}};
}

Shapes inferShapeGlobalPool(const Graph& g, const Node& n) {
  STOWAGE_ASSIGN_OR_RETURN(Shape x, requireInput(g, n, 0));
  if (x.size() < 3) return bad(n, fmt::format("input has shape [{}]; global pooling needs [N, C, spatial...]", shapeToString(x)));
  Shape out = x;
  std::fill(out.begin() + 2, out.end(), 1);
  return std::vector<Shape>{out};
}

Shapes inferShapeShapeAttr(const Graph& g, const Node& n) {
  STOWAGE_ASSIGN_OR_RETURN(Shape x, requireInput(g, n, 0));
  if (!n.attrs.has("shape")) return bad(n, "attribute shape is missing");
  Shape s = n.attrs.getInts("shape");
  for (int64_t d : s)
    if (d < 0) return bad(n, fmt::format("attribute shape {} is not fully resolved (negative entry)", intsToString(s)));
  if (n.op == OpKind::Expand) {
    auto bc = broadcast(x, s);
    if (!bc || *bc != s)
      return bad(n, fmt::format("input shape [{}] does not broadcast to shape {}", shapeToString(x), intsToString(s)));
    return std::vector<Shape>{s};
  }
  if (shapeElements(s) != shapeElements(x))
    return bad(n, fmt::format("cannot reshape [{}] ({} elements) to {} ({} elements)", shapeToString(x), shapeElements(x),
                              intsToString(s), shapeElements(s)));
  return std::vector<Shape>{s};
}

Shapes inferShapeTranspose(const Graph& g, const Node& n) {
  STOWAGE_ASSIGN_OR_RETURN(Shape x, requireInput(g, n, 0));
  std::vector<int64_t> perm = n.attrs.getInts("perm");
  if (perm.size() != x.size())
    return bad(n, fmt::format("perm {} does not match the input rank {}", intsToString(perm), x.size()));
  std::vector<bool> seen(x.size(), false);
  Shape out;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(x.size()) || seen[static_cast<size_t>(p)])
      return bad(n, fmt::format("perm {} is not a permutation of 0..{}", intsToString(perm), x.size() - 1));
    seen[static_cast<size_t>(p)] = true;
    out.push_back(x[static_cast<size_t>(p)]);
  }
  return std::vector<Shape>{out};
}

Shapes inferShapeConcat(const Graph& g, const Node& n) {
  STOWAGE_ASSIGN_OR_RETURN(Shape first, requireInput(g, n, 0));
  const int64_t axis = n.attrs.getInt("axis", 0);
  if (axis < 0 || axis >= static_cast<int64_t>(first.size()))
    return bad(n, fmt::format("axis {} is out of range for inputs of rank {}", axis, first.size()));
  Shape out = first;
  const auto ax = static_cast<size_t>(axis);
  for (size_t i = 1; i < n.inputs.size(); ++i) {
    STOWAGE_ASSIGN_OR_RETURN(Shape s, requireInput(g, n, i));
    bool ok = s.size() == first.size();
    for (size_t d = 0; ok && d < s.size(); ++d) ok = d == ax || s[d] == first[d];
    if (!ok)
      return bad(n, fmt::format("input {} has shape [{}], incompatible with [{}] for concatenation on axis {}", i,
                                shapeToString(s), shapeToString(first), axis));
    out[ax] += s[ax];
  }
  return std::vector<Shape>{out};
}

Shapes inferShapeSlice(const Graph& g, const Node& n) {
  STOWAGE_ASSIGN_OR_RETURN(Shape x, requireInput(g, n, 0));
  auto starts = n.attrs.getInts("starts"), ends = n.attrs.getInts("ends");
  auto steps = n.attrs.getInts("steps", std::vector<int64_t>(x.size(), 1));
  if (starts.size() != x.size() || ends.size() != x.size() || steps.size() != x.size())
    return bad(n, fmt::format("starts {}, ends {} and steps {} need one entry per input dim ({})", intsToString(starts),
                              intsToString(ends), intsToString(steps), x.size()));
  Shape out;
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t s = starts[i], e = ends[i], st = steps[i], d = x[i];
    if (st == 0) return bad(n, fmt::format("steps {} contains 0", intsToString(steps)));
    const bool clamped = st > 0 ? (s >= 0 && s <= d && e >= 0 && e <= d) : (s >= -1 && s <= d - 1 && e >= -1 && e <= d - 1);
    if (!clamped)
      return bad(n, fmt::format("dim {}: start {} / end {} (step {}) are not clamped to the input size {}", i, s, e, st, d));
    int64_t len = st > 0 ? (e - s + st - 1) / st : (s - e + (-st) - 1) / (-st);
    out.push_back(std::max<int64_t>(0, len));
  }
  return std::vector<Shape>{out};
}

Shapes inferShapePad(const Graph& g, const Node& n) {
  STOWAGE_ASSIGN_OR_RETURN(Shape x, requireInput(g, n, 0));
  auto pads = n.attrs.getInts("pads");
  if (pads.size() != 2 * x.size())
    return bad(n, fmt::format("pads {} need 2 x rank = {} entries", intsToString(pads), 2 * x.size()));
  const std::string mode = n.attrs.getString("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge") return bad(n, fmt::format("unknown pad mode \"{}\"", mode));
  Shape out = x;
  for (size_t i = 0; i < x.size(); ++i) {
    if (pads[i] < 0 || pads[i + x.size()] < 0) return bad(n, fmt::format("pads {} contain a negative entry", intsToString(pads)));
    if (mode == "reflect" && (pads[i] >= x[i] || pads[i + x.size()] >= x[i]) && (pads[i] || pads[i + x.size()]))
      return bad(n, fmt::format("reflect pads {} must be smaller than the input dim {} ({})", intsToString(pads), i, x[i]));
    if (mode == "edge" && x[i] == 0 && (pads[i] || pads[i + x.size()]))
      return bad(n, fmt::format("edge padding of an empty dim {}", i));
    out[i] += pads[i] + pads[i + x.size()];
  }
  return std::vector<Shape>{out};
}

Shapes inferShapeReduce(const Graph& g, const Node& n) {
  STOWAGE_ASSIGN_OR_RETURN(Shape x, requireInput(g, n, 0));
  auto axes = n.attrs.getInts("axes");
  if (axes.empty()) return bad(n, "attribute axes is empty (canonical form lists every reduced axis)");
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < 0 || axes[i] >= static_cast<int64_t>(x.size()) || (i && axes[i] <= axes[i - 1]))
      return bad(n, fmt::format("axes {} must be sorted, unique and in [0, {})", intsToString(axes), x.size()));
  }
  const bool keep = n.attrs.getInt("keepdims", 1) != 0;
  Shape out;
  for (size_t d = 0; d < x.size(); ++d) {
    bool reduced = std::find(axes.begin(), axes.end(), static_cast<int64_t>(d)) != axes.end();
    if (!reduced) out.push_back(x[d]);
    else if (keep) out.push_back(1);
  }
  return std::vector<Shape>{out};
}

}  // namespace

Result<std::vector<Shape>> inferOutputShapes(const Graph& g, const Node& node) {
  const OpInfo& info = opInfo(node.op);
  const int numIn = static_cast<int>(node.inputs.size());
  if (numIn < info.minInputs || (info.maxInputs >= 0 && numIn > info.maxInputs))
    return bad(node, fmt::format("has {} inputs; {} takes {} to {}", numIn, info.name, info.minInputs,
                                 info.maxInputs < 0 ? std::string("any number") : std::to_string(info.maxInputs)));
  switch (node.op) {
#define STOWAGE_OP(Kind, MinIn, MaxIn, NumOut, ShapeRule, CostRule) \
  case OpKind::Kind: return inferShape##ShapeRule(g, node);
#include "stowage/ir/Ops.def"
#undef STOWAGE_OP
  }
  return bad(node, "unknown op kind");
}

}  // namespace stowage
