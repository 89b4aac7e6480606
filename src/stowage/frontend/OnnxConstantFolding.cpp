// ONNX-level constant evaluation: a small interpreter for the shape and index arithmetic that exporters
// leave in models (Shape -> Gather -> Unsqueeze -> Concat -> Reshape, ConstantOfShape weights, Range, Cast,
// Where, ...) and for data-movement IR ops on constants of any dtype. Results become known constants, so
// the IR never sees int64 shape tensors. IR compute ops on float constants are left to pass/FoldConstants.
#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "stowage/frontend/OnnxContext.h"
#include "stowage/frontend/OnnxTensor.h"

namespace stowage::onnxfe {

namespace {

/// Row-major strides of `s` (in elements).
std::vector<int64_t> stridesOf(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

/// Strides of `in` seen through broadcasting to `out` (0 on broadcast dims), aligned to out's rank.
std::vector<int64_t> broadcastStrides(const Shape& in, const Shape& out) {
  std::vector<int64_t> st(out.size(), 0);
  auto inSt = stridesOf(in);
  const size_t off = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) st[off + i] = in[i] == 1 ? 0 : inSt[i];
  return st;
}

/// Calls f(outFlat, srcOffsets...) for each output element, walking a multi-index.
template <typename F>
void forEachIndex(const Shape& out, const std::vector<std::vector<int64_t>>& strides, F&& f) {
  const int64_t total = shapeElements(out);
  std::vector<int64_t> idx(out.size(), 0);
  std::vector<int64_t> src(strides.size(), 0);
  for (int64_t flat = 0; flat < total; ++flat) {
    f(flat, src);
    for (size_t d = out.size(); d-- > 0;) {
      ++idx[d];
      for (size_t k = 0; k < strides.size(); ++k) src[k] += strides[k][d];
      if (idx[d] < out[d]) break;
      for (size_t k = 0; k < strides.size(); ++k) src[k] -= strides[k][d] * idx[d];
      idx[d] = 0;
    }
  }
}

Tensor like(DType dtype, const Shape& shape) {
  Tensor t;
  t.dtype = dtype;
  t.shape = shape;
  t.kind = TensorKind::Constant;
  t.data.assign(static_cast<size_t>(shapeElements(shape)) * dtypeSize(dtype), 0);
  return t;
}

/// Byte-level gather: out element i <- in element srcIndex(i).
Tensor moveBytes(const Tensor& in, const Shape& outShape, const std::vector<int64_t>& srcStrides, int64_t base = 0) {
  Tensor out = like(in.dtype, outShape);
  const size_t es = dtypeSize(in.dtype);
  forEachIndex(outShape, {srcStrides}, [&](int64_t flat, const std::vector<int64_t>& src) {
    std::memcpy(out.data.data() + static_cast<size_t>(flat) * es, in.data.data() + static_cast<size_t>(base + src[0]) * es, es);
  });
  return out;
}

double applyBinary(OpKind op, double a, double b, bool isFloat, bool& ok) {
  if (isFloat) {
    switch (op) {
      case OpKind::Add: return static_cast<float>(a) + static_cast<float>(b);
      case OpKind::Sub: return static_cast<float>(a) - static_cast<float>(b);
      case OpKind::Mul: return static_cast<float>(a) * static_cast<float>(b);
      case OpKind::Div: return static_cast<float>(a) / static_cast<float>(b);
      case OpKind::Max: return std::fmax(a, b);
      case OpKind::Min: return std::fmin(a, b);
      default: ok = false; return 0;
    }
  }
  const auto x = static_cast<int64_t>(a), y = static_cast<int64_t>(b);
  // Unsigned wrap-around arithmetic: corrupt values must not trigger signed-overflow UB.
  const auto ux = static_cast<uint64_t>(x), uy = static_cast<uint64_t>(y);
  switch (op) {
    case OpKind::Add: return static_cast<double>(static_cast<int64_t>(ux + uy));
    case OpKind::Sub: return static_cast<double>(static_cast<int64_t>(ux - uy));
    case OpKind::Mul: return static_cast<double>(static_cast<int64_t>(ux * uy));
    case OpKind::Div:
      if (y == 0 || (x == INT64_MIN && y == -1)) { ok = false; return 0; }
      return static_cast<double>(x / y);
    case OpKind::Max: return static_cast<double>(std::max(x, y));
    case OpKind::Min: return static_cast<double>(std::min(x, y));
    default: ok = false; return 0;
  }
}

/// Elementwise binary op with broadcasting; ints are exact in int64 (values are kept as int64 vectors).
Result<std::optional<Tensor>> evalBinary(OpKind op, const Tensor& a, const Tensor& b, const Shape& outShape,
                                         const std::string& where, int64_t maxElements) {
  if (a.dtype != b.dtype)
    return makeError(where, fmt::format("operand types differ ({} and {})", dtypeName(a.dtype), dtypeName(b.dtype)));
  if (a.dtype == DType::Bool) return std::optional<Tensor>();
  const bool isFloat = a.dtype == DType::Float32;
  if (shapeElements(outShape) > maxElements) return std::optional<Tensor>();
  const auto sa = broadcastStrides(a.shape, outShape), sb = broadcastStrides(b.shape, outShape);
  if (isFloat) {
    auto va = constDoubles(a), vb = constDoubles(b);
    std::vector<double> out(static_cast<size_t>(shapeElements(outShape)));
    bool ok = true;
    forEachIndex(outShape, {sa, sb}, [&](int64_t f, const std::vector<int64_t>& s) {
      out[static_cast<size_t>(f)] = applyBinary(op, va[static_cast<size_t>(s[0])], vb[static_cast<size_t>(s[1])], true, ok);
    });
    if (!ok) return std::optional<Tensor>();
    return std::optional<Tensor>(makeConst("", a.dtype, outShape, out));
  }
  auto va = constInts(a), vb = constInts(b);
  std::vector<int64_t> out(static_cast<size_t>(shapeElements(outShape)));
  bool ok = true;
  forEachIndex(outShape, {sa, sb}, [&](int64_t f, const std::vector<int64_t>& s) {
    const int64_t x = va[static_cast<size_t>(s[0])], y = vb[static_cast<size_t>(s[1])];
    const auto ux = static_cast<uint64_t>(x), uy = static_cast<uint64_t>(y);
    int64_t r = 0;
    switch (op) {
      case OpKind::Add: r = static_cast<int64_t>(ux + uy); break;
      case OpKind::Sub: r = static_cast<int64_t>(ux - uy); break;
      case OpKind::Mul: r = static_cast<int64_t>(ux * uy); break;
      case OpKind::Div:
        if (y == 0 || (x == INT64_MIN && y == -1)) ok = false;
        else r = x / y;
        break;
      case OpKind::Max: r = std::max(x, y); break;
      case OpKind::Min: r = std::min(x, y); break;
      default: ok = false;
    }
    out[static_cast<size_t>(f)] = r;
  });
  if (!ok) return std::optional<Tensor>();
  return std::optional<Tensor>(makeConstInts("", a.dtype, outShape, out));
}

}  // namespace

Result<std::optional<Tensor>> evalIrOnConstants(OpKind op, const std::vector<const Tensor*>& in, const Attributes& attrs,
                                                const Shape& outShape, const std::string& where, int64_t maxElements) {
  if (in.empty() || !in[0]) return std::optional<Tensor>();
  const Tensor& x = *in[0];
  if (x.data.size() != x.byteSize()) return makeError(where, fmt::format("constant '{}' has the wrong byte size", x.name));
  if (shapeElements(outShape) > maxElements) return std::optional<Tensor>();
  switch (op) {
    case OpKind::Reshape: {
      Tensor t = x;
      t.shape = outShape;
      return std::optional<Tensor>(std::move(t));
    }
    case OpKind::Expand: return std::optional<Tensor>(moveBytes(x, outShape, broadcastStrides(x.shape, outShape)));
    case OpKind::Transpose: {
      auto perm = attrs.getInts("perm");
      auto st = stridesOf(x.shape);
      std::vector<int64_t> src(perm.size());
      for (size_t i = 0; i < perm.size(); ++i) src[i] = st[static_cast<size_t>(perm[i])];
      return std::optional<Tensor>(moveBytes(x, outShape, src));
    }
    case OpKind::Slice: {
      auto starts = attrs.getInts("starts"), steps = attrs.getInts("steps");
      auto st = stridesOf(x.shape);
      int64_t base = 0;
      std::vector<int64_t> src(st.size());
      for (size_t i = 0; i < st.size(); ++i) {
        base += starts[i] * st[i];
        src[i] = steps[i] * st[i];
      }
      if (shapeElements(outShape) == 0) return std::optional<Tensor>(like(x.dtype, outShape));
      return std::optional<Tensor>(moveBytes(x, outShape, src, base));
    }
    case OpKind::Concat: {
      const auto axis = static_cast<size_t>(attrs.getInt("axis", 0));
      Tensor out = like(x.dtype, outShape);
      const size_t es = dtypeSize(x.dtype);
      int64_t outer = 1;
      for (size_t d = 0; d < axis; ++d) outer *= outShape[d];
      const int64_t outRow = shapeElements(outShape) / std::max<int64_t>(outer, 1);
      int64_t offset = 0;
      for (const Tensor* t : in) {
        if (!t) continue;
        if (t->dtype != x.dtype) return makeError(where, "Concat inputs have different element types");
        const int64_t row = outer ? shapeElements(t->shape) / std::max<int64_t>(outer, 1) : 0;
        for (int64_t o = 0; o < outer; ++o)
          if (row > 0)
            std::memcpy(out.data.data() + static_cast<size_t>(o * outRow + offset) * es,
                        t->data.data() + static_cast<size_t>(o * row) * es, static_cast<size_t>(row) * es);
        offset += row;
      }
      return std::optional<Tensor>(std::move(out));
    }
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Div:
    case OpKind::Max:
    case OpKind::Min:
      if (in.size() < 2 || !in[1]) return std::optional<Tensor>();
      return evalBinary(op, x, *in[1], outShape, where, maxElements);
    case OpKind::Neg:
    case OpKind::Abs: {
      if (x.dtype == DType::Float32) {
        auto v = constDoubles(x);
        for (double& d : v) d = op == OpKind::Neg ? -d : std::fabs(d);
        return std::optional<Tensor>(makeConst("", x.dtype, outShape, v));
      }
      auto v = constInts(x);
      for (int64_t& d : v) d = d == INT64_MIN ? d : (op == OpKind::Neg ? -d : (d < 0 ? -d : d));
      return std::optional<Tensor>(makeConstInts("", x.dtype, outShape, v));
    }
    default: return std::optional<Tensor>();
  }
}

// ---- ONNX ops that are not IR ops ----

const std::set<std::string>& foldableOnnxOps() {
  static const std::set<std::string> ops = {"Shape", "Size",  "Gather", "Cast", "ConstantOfShape", "Range",
                                            "Equal", "Where", "Less",   "Greater", "Not"};
  return ops;
}

namespace {

Result<FoldResult> done(Context& ctx, const std::string& out, Tensor t) {
  t.name = out;
  t.kind = TensorKind::Constant;
  ctx.consts[out] = std::move(t);
  ctx.names.insert(out);
  FoldResult r;
  r.handled = true;
  return r;
}

Result<FoldResult> notHandled() { return FoldResult{}; }

int64_t normAxis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

}  // namespace

Result<FoldResult> foldOnnxNode(Context& ctx, NodeRef& node) {
  const std::string op = node.opType();
  if (!foldableOnnxOps().count(op)) return notHandled();
  const auto& p = node.proto;
  const std::string out = node.output(0);
  if (out.empty()) return FoldResult{true};

  if (op == "Shape" || op == "Size") {
    auto s = ctx.shapeOf(node.input(0));
    if (!s) return notHandled();
    if (op == "Size") return done(ctx, out, makeConstInts(out, DType::Int64, {}, {shapeElements(*s)}));
    const auto rank = static_cast<int64_t>(s->size());
    int64_t start = std::clamp<int64_t>(normAxis(attrInt(p, "start", 0), rank), 0, rank);
    int64_t end = std::clamp<int64_t>(normAxis(attrInt(p, "end", rank), rank), 0, rank);
    std::vector<int64_t> dims;
    for (int64_t i = start; i < end; ++i) dims.push_back((*s)[static_cast<size_t>(i)]);
    return done(ctx, out, makeConstInts(out, DType::Int64, {static_cast<int64_t>(dims.size())}, dims));
  }

  // Every other op needs all its (present) inputs constant.
  for (int i = 0; i < p.input_size(); ++i)
    if (!p.input(i).empty() && !ctx.isConst(p.input(i))) return notHandled();

  auto in = [&](int i) { return ctx.constant(node.input(i)); };
  if (op == "Cast") {
    const Tensor* x = in(0);
    const auto to = static_cast<int32_t>(attrInt(p, "to", 0));
    auto dt = dtypeFromOnnx(to);
    if (!x) return makeError(node.loc, "Cast has no input");
    if (!dt) return makeUnsupported(node.loc, fmt::format("Cast to {} is not supported", onnxDtypeName(to)));
    if (*dt == DType::Float32 || x->dtype == DType::Float32)
      return done(ctx, out, makeConst(out, *dt, x->shape, constDoubles(*x)));
    return done(ctx, out, makeConstInts(out, *dt, x->shape, constInts(*x)));
  }
  if (op == "ConstantOfShape") {
    const Tensor* s = in(0);
    if (!s) return makeError(node.loc, "ConstantOfShape has no shape input");
    Shape shape = constInts(*s);
    auto n = checkedElements(shape);
    if (!n || *n > ctx.maxFoldElements)
      return makeError(node.loc, fmt::format("shape {} is negative or too large", intsString(shape)));
    DType dt = DType::Float32;
    double value = 0;
    if (const auto* a = findAttr(p, "value"); a && a->has_t()) {
      STOWAGE_ASSIGN_OR_RETURN(Tensor v, tensorFromOnnx(a->t(), node.loc));
      if (v.numElements() != 1) return makeError(node.loc, "attribute value must hold exactly one element");
      dt = v.dtype;
      if (dt == DType::Float32) value = constDoubles(v)[0];
      else return done(ctx, out, makeConstInts(out, dt, shape, std::vector<int64_t>(static_cast<size_t>(*n), constInts(v)[0])));
    }
    return done(ctx, out, makeConst(out, dt, shape, std::vector<double>(static_cast<size_t>(*n), value)));
  }
  if (op == "Gather") {
    const Tensor* data = in(0);
    const Tensor* idx = in(1);
    if (!data || !idx) return makeError(node.loc, "Gather needs data and indices");
    const auto rank = static_cast<int64_t>(data->shape.size());
    const int64_t axis = normAxis(attrInt(p, "axis", 0), rank);
    if (axis < 0 || axis >= rank) return makeError(node.loc, fmt::format("axis {} is out of range for rank {}", attrInt(p, "axis", 0), rank));
    const int64_t dim = data->shape[static_cast<size_t>(axis)];
    auto indices = constInts(*idx);
    for (int64_t& i : indices) {
      if (i < -dim || i >= dim) return makeError(node.loc, fmt::format("index {} is out of range for a dim of size {}", i, dim));
      if (i < 0) i += dim;
    }
    Shape outShape(data->shape.begin(), data->shape.begin() + axis);
    outShape.insert(outShape.end(), idx->shape.begin(), idx->shape.end());
    outShape.insert(outShape.end(), data->shape.begin() + axis + 1, data->shape.end());
    auto total = checkedElements(outShape);
    if (!total || *total > ctx.maxFoldElements) return makeError(node.loc, "the result is too large to evaluate");
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= data->shape[static_cast<size_t>(d)];
    for (int64_t d = axis + 1; d < rank; ++d) inner *= data->shape[static_cast<size_t>(d)];
    Tensor t = like(data->dtype, outShape);
    const size_t es = dtypeSize(data->dtype);
    for (int64_t o = 0; o < outer; ++o)
      for (size_t k = 0; k < indices.size(); ++k)
        if (inner > 0)
          std::memcpy(t.data.data() + static_cast<size_t>((o * static_cast<int64_t>(indices.size()) + static_cast<int64_t>(k)) * inner) * es,
                      data->data.data() + static_cast<size_t>((o * dim + indices[k]) * inner) * es, static_cast<size_t>(inner) * es);
    return done(ctx, out, std::move(t));
  }
  if (op == "Range") {
    const Tensor *s = in(0), *l = in(1), *d = in(2);
    if (!s || !l || !d || s->numElements() != 1 || l->numElements() != 1 || d->numElements() != 1)
      return makeError(node.loc, "Range needs scalar start, limit and delta");
    const double start = constDoubles(*s)[0], limit = constDoubles(*l)[0], delta = constDoubles(*d)[0];
    if (delta == 0 || !std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta))
      return makeError(node.loc, "Range needs a non-zero, finite delta and finite bounds");
    const double count = std::max(std::ceil((limit - start) / delta), 0.0);
    if (count > static_cast<double>(ctx.maxFoldElements)) return makeError(node.loc, "Range result is too large");
    std::vector<double> v(static_cast<size_t>(count));
    for (size_t i = 0; i < v.size(); ++i) v[i] = start + static_cast<double>(i) * delta;
    return done(ctx, out, makeConst(out, s->dtype, {static_cast<int64_t>(v.size())}, v));
  }
  if (op == "Equal" || op == "Less" || op == "Greater" || op == "Where" || op == "Not") {
    const int arity = op == "Where" ? 3 : (op == "Not" ? 1 : 2);
    Shape shape;
    for (int i = 0; i < arity; ++i) {
      if (!in(i)) return makeError(node.loc, fmt::format("{} needs {} inputs", op, arity));
      auto b = broadcastShapes(shape, in(i)->shape);
      if (!b) return makeError(node.loc, "input shapes do not broadcast");
      shape = *b;
    }
    auto total = checkedElements(shape);
    if (!total || *total > ctx.maxFoldElements) return makeError(node.loc, "the result is too large to evaluate");
    std::vector<std::vector<int64_t>> strides;
    std::vector<std::vector<double>> vals;
    for (int i = 0; i < arity; ++i) {
      strides.push_back(broadcastStrides(in(i)->shape, shape));
      vals.push_back(constDoubles(*in(i)));
    }
    const bool exactInts = in(0)->dtype != DType::Float32 && op != "Where";
    std::vector<int64_t> iv0, iv1;
    if (exactInts) {
      iv0 = constInts(*in(0));
      if (arity > 1) iv1 = constInts(*in(1));
    }
    std::vector<double> res(static_cast<size_t>(*total));
    forEachIndex(shape, strides, [&](int64_t f, const std::vector<int64_t>& src) {
      auto v = [&](int k) { return vals[static_cast<size_t>(k)][static_cast<size_t>(src[static_cast<size_t>(k)])]; };
      double r = 0;
      if (op == "Not") r = v(0) == 0;
      else if (op == "Where") r = v(0) != 0 ? v(1) : v(2);
      else if (exactInts) {
        const int64_t a = iv0[static_cast<size_t>(src[0])], b = iv1[static_cast<size_t>(src[1])];
        r = op == "Equal" ? a == b : (op == "Less" ? a < b : a > b);
      } else {
        r = op == "Equal" ? v(0) == v(1) : (op == "Less" ? v(0) < v(1) : v(0) > v(1));
      }
      res[static_cast<size_t>(f)] = r;
    });
    if (op == "Where") {
      const DType dt = in(1)->dtype;
      if (dt != DType::Float32) {
        // Exact int64 selection (doubles would round large values).
        auto a = constInts(*in(1)), b = constInts(*in(2));
        std::vector<int64_t> r(static_cast<size_t>(*total));
        forEachIndex(shape, strides, [&](int64_t f, const std::vector<int64_t>& src) {
          r[static_cast<size_t>(f)] = vals[0][static_cast<size_t>(src[0])] != 0 ? a[static_cast<size_t>(src[1])] : b[static_cast<size_t>(src[2])];
        });
        return done(ctx, out, makeConstInts(out, dt, shape, r));
      }
      return done(ctx, out, makeConst(out, dt, shape, res));
    }
    return done(ctx, out, makeConst(out, DType::Bool, shape, res));
  }
  return notHandled();
}

}  // namespace stowage::onnxfe
