// Shared helpers of the ONNX frontend (see OnnxContext.h): value bookkeeping, attribute readers, constant
// element access and `emit`, the one place that adds IR nodes.
#include "stowage/frontend/OnnxContext.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>

namespace stowage::onnxfe {

const Tensor* Context::constant(const std::string& name) const {
  auto it = consts.find(name);
  return it == consts.end() ? nullptr : &it->second;
}

std::optional<Shape> Context::shapeOf(const std::string& name) const {
  if (const Tensor* t = constant(name)) return t->shape;
  auto it = ids.find(name);
  if (it == ids.end()) return std::nullopt;
  return graph.tensor(it->second).shape;
}

std::optional<DType> Context::dtypeOf(const std::string& name) const {
  if (const Tensor* t = constant(name)) return t->dtype;
  auto it = ids.find(name);
  if (it == ids.end()) return std::nullopt;
  return graph.tensor(it->second).dtype;
}

Result<TensorId> Context::materialize(const std::string& name, const std::string& where) {
  if (auto it = ids.find(name); it != ids.end()) return it->second;
  auto c = consts.find(name);
  if (c == consts.end())
    return makeError(where, fmt::format("reads value '{}', which no earlier node, input or initializer defines", name),
                     "ONNX requires nodes in topological order; re-export or sort the model (onnx.utils / onnxsim)");
  Tensor t = c->second;
  t.name = name;
  t.kind = TensorKind::Constant;
  TensorId id = graph.addTensor(std::move(t));
  ids[name] = id;
  names.insert(name);
  return id;
}

std::string Context::freshName(const std::string& base) {
  std::string b = base.empty() ? "t" : base;
  if (!names.count(b)) {
    names.insert(b);
    return b;
  }
  for (int k = 1;; ++k) {
    std::string c = fmt::format("{}__{}", b, k);
    if (!names.count(c)) {
      names.insert(c);
      return c;
    }
  }
}

std::string Context::freshNodeName(const std::string& base) {
  if (!base.empty() && !nodeNames.count(base)) {
    nodeNames.insert(base);
    return base;
  }
  for (int k = 1;; ++k) {
    std::string c = fmt::format("{}_{}", base.empty() ? "node" : base, k);
    if (!nodeNames.count(c)) {
      nodeNames.insert(c);
      return c;
    }
  }
}

// ---- attributes ----

const onnx::AttributeProto* findAttr(const onnx::NodeProto& n, const std::string& name) {
  for (int i = 0; i < n.attribute_size(); ++i)
    if (n.attribute(i).name() == name) return &n.attribute(i);
  return nullptr;
}

bool hasAttr(const onnx::NodeProto& n, const std::string& name) { return findAttr(n, name) != nullptr; }

int64_t attrInt(const onnx::NodeProto& n, const std::string& name, int64_t fallback) {
  const auto* a = findAttr(n, name);
  if (!a) return fallback;
  if (a->type() == onnx::AttributeProto_AttributeType_INT || a->has_i()) return a->i();
  return fallback;
}

float attrFloat(const onnx::NodeProto& n, const std::string& name, float fallback) {
  const auto* a = findAttr(n, name);
  if (!a) return fallback;
  if (a->type() == onnx::AttributeProto_AttributeType_FLOAT || a->has_f()) return a->f();
  if (a->type() == onnx::AttributeProto_AttributeType_INT) return static_cast<float>(a->i());
  return fallback;
}

std::string attrString(const onnx::NodeProto& n, const std::string& name, const std::string& fallback) {
  const auto* a = findAttr(n, name);
  if (!a || !a->has_s()) return fallback;
  return a->s();
}

std::optional<std::vector<int64_t>> attrInts(const onnx::NodeProto& n, const std::string& name) {
  const auto* a = findAttr(n, name);
  if (!a) return std::nullopt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

std::optional<std::vector<float>> attrFloats(const onnx::NodeProto& n, const std::string& name) {
  const auto* a = findAttr(n, name);
  if (!a) return std::nullopt;
  return std::vector<float>(a->floats().begin(), a->floats().end());
}

// ---- constant element access ----

namespace {
template <typename T>
T load(const Tensor& t, size_t i) {
  T v;
  std::memcpy(&v, t.data.data() + i * sizeof(T), sizeof(T));
  return v;
}
template <typename T>
void store(Tensor& t, size_t i, T v) {
  std::memcpy(t.data.data() + i * sizeof(T), &v, sizeof(T));
}
/// Saturating double -> int64 (NaN -> 0), so corrupt values never cause undefined behaviour.
int64_t toInt64(double d) {
  if (std::isnan(d)) return 0;
  if (d >= 9.2e18) return INT64_MAX;
  if (d <= -9.2e18) return INT64_MIN;
  return static_cast<int64_t>(d);
}
}  // namespace

std::vector<int64_t> constInts(const Tensor& t) {
  const size_t n = t.data.size() / dtypeSize(t.dtype);
  std::vector<int64_t> v(n);
  for (size_t i = 0; i < n; ++i) {
    switch (t.dtype) {
      case DType::Float32: v[i] = toInt64(load<float>(t, i)); break;
      case DType::Int8: v[i] = load<int8_t>(t, i); break;
      case DType::UInt8: v[i] = load<uint8_t>(t, i); break;
      case DType::Int32: v[i] = load<int32_t>(t, i); break;
      case DType::Int64: v[i] = load<int64_t>(t, i); break;
      case DType::Bool: v[i] = load<uint8_t>(t, i) != 0; break;
    }
  }
  return v;
}

std::vector<double> constDoubles(const Tensor& t) {
  if (t.dtype != DType::Float32) {
    auto ints = constInts(t);
    return std::vector<double>(ints.begin(), ints.end());
  }
  const size_t n = t.data.size() / 4;
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = load<float>(t, i);
  return v;
}

namespace {
Tensor blank(const std::string& name, DType dtype, const Shape& shape, size_t count) {
  Tensor t;
  t.name = name;
  t.dtype = dtype;
  t.shape = shape;
  t.kind = TensorKind::Constant;
  t.data.assign(count * dtypeSize(dtype), 0);
  return t;
}
}  // namespace

Tensor makeConst(const std::string& name, DType dtype, const Shape& shape, const std::vector<double>& values) {
  Tensor t = blank(name, dtype, shape, values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const double d = values[i];
    switch (dtype) {
      case DType::Float32: store<float>(t, i, static_cast<float>(d)); break;
      case DType::Int8: store<int8_t>(t, i, static_cast<int8_t>(toInt64(d))); break;
      case DType::UInt8: store<uint8_t>(t, i, static_cast<uint8_t>(toInt64(d))); break;
      case DType::Int32: store<int32_t>(t, i, static_cast<int32_t>(toInt64(d))); break;
      case DType::Int64: store<int64_t>(t, i, toInt64(d)); break;
      case DType::Bool: store<uint8_t>(t, i, d != 0.0); break;
    }
  }
  return t;
}

Tensor makeConstInts(const std::string& name, DType dtype, const Shape& shape, const std::vector<int64_t>& values) {
  Tensor t = blank(name, dtype, shape, values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const int64_t v = values[i];
    switch (dtype) {
      case DType::Float32: store<float>(t, i, static_cast<float>(v)); break;
      case DType::Int8: store<int8_t>(t, i, static_cast<int8_t>(v)); break;
      case DType::UInt8: store<uint8_t>(t, i, static_cast<uint8_t>(v)); break;
      case DType::Int32: store<int32_t>(t, i, static_cast<int32_t>(v)); break;
      case DType::Int64: store<int64_t>(t, i, v); break;
      case DType::Bool: store<uint8_t>(t, i, v != 0); break;
    }
  }
  return t;
}

std::optional<int64_t> checkedElements(const Shape& s) {
  int64_t n = 1;
  bool zero = false;
  for (int64_t d : s) {
    if (d < 0 || d > kMaxElements) return std::nullopt;
    if (d == 0) zero = true;
    else if (!zero && n > kMaxElements / d) return std::nullopt;
    else if (!zero) n *= d;
  }
  return zero ? 0 : n;
}

std::optional<Shape> broadcastShapes(const Shape& a, const Shape& b) {
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

std::string intsString(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

// ---- emit ----

namespace {

bool isWindowAttr(const std::string& k) {
  return k == "strides" || k == "dilations" || k == "kernel_shape" || k == "group" || k == "size" || k == "output_padding";
}

Status checkAttrBounds(const std::string& where, const Attributes& attrs) {
  for (const auto& [k, v] : attrs.all()) {
    const int64_t limit = isWindowAttr(k) ? (int64_t{1} << 24) : kMaxAttrValue;
    auto check = [&](int64_t x) { return x >= -limit && x <= limit; };
    bool ok = true;
    if (auto* i = std::get_if<int64_t>(&v)) ok = check(*i);
    if (auto* is = std::get_if<std::vector<int64_t>>(&v))
      for (int64_t x : *is) ok = ok && check(x);
    if (!ok) return makeError(where, fmt::format("attribute {} has a value out of the supported range (|v| <= {})", k, limit));
  }
  if (attrs.has("shape") && !checkedElements(attrs.getInts("shape")))
    return makeError(where, fmt::format("shape {} is negative or too large", intsString(attrs.getInts("shape"))));
  return Status::success();
}

}  // namespace

Status emit(Context& ctx, NodeRef& node, OpKind op, const std::vector<std::string>& inputs, Attributes attrs,
            const std::string& output, std::optional<DType> outputDType) {
  STOWAGE_TRY(checkAttrBounds(node.loc, attrs));
  if (ctx.known(output))
    return makeError(node.loc, fmt::format("output '{}' is defined twice (ONNX values must be assigned once)", output));

  // All inputs constant: evaluate here when the op is cheap data movement or arithmetic.
  bool allConst = !inputs.empty();
  for (const auto& in : inputs)
    if (!in.empty() && !ctx.isConst(in)) allConst = false;
  if (allConst) {
    Graph tmp;
    Node probe;
    probe.name = node.name;
    probe.op = op;
    probe.attrs = attrs;
    std::vector<const Tensor*> ptrs;
    for (const auto& in : inputs) {
      if (in.empty()) {
        probe.inputs.push_back(kNoTensor);
        ptrs.push_back(nullptr);
        continue;
      }
      const Tensor* c = ctx.constant(in);
      Tensor meta;
      meta.name = in;
      meta.dtype = c->dtype;
      meta.shape = c->shape;
      meta.kind = TensorKind::Input;
      probe.inputs.push_back(tmp.addTensor(std::move(meta)));
      ptrs.push_back(c);
    }
    auto shapes = inferOutputShapes(tmp, probe);
    if (!shapes.ok()) {
      Diagnostic d = shapes.error();
      d.location = fmt::format("{}: {}", ctx.file, d.location);
      return d;
    }
    if (shapes->empty() || !checkedElements(shapes->front()))
      return makeError(node.loc, "the result is too large");
    STOWAGE_ASSIGN_OR_RETURN(auto folded, evalIrOnConstants(op, ptrs, attrs, shapes->front(), node.loc, ctx.maxFoldElements));
    if (folded) {
      folded->name = output;
      folded->kind = TensorKind::Constant;
      ctx.consts[output] = std::move(*folded);
      ctx.names.insert(output);
      return Status::success();
    }
  }

  Node n;
  n.name = node.emitted == 0 ? node.name : ctx.freshNodeName(fmt::format("{}_{}", node.name, node.emitted));
  ++node.emitted;
  n.op = op;
  n.attrs = std::move(attrs);
  for (const auto& in : inputs) {
    if (in.empty()) {
      n.inputs.push_back(kNoTensor);
      continue;
    }
    STOWAGE_ASSIGN_OR_RETURN(TensorId id, ctx.materialize(in, node.loc));
    const Tensor& t = ctx.graph.tensor(id);
    if (t.dtype != DType::Float32 && op != OpKind::Reshape && !outputDType)
      return makeUnsupported(node.loc,
                             fmt::format("tensor '{}' has element type {}; only float32 compute is supported so far", t.name,
                                         dtypeName(t.dtype)),
                             "int8 support is planned; convert the model to float32");
    n.inputs.push_back(id);
  }
  // Trailing absent inputs are dropped so arity checks see the real count.
  while (!n.inputs.empty() && n.inputs.back() == kNoTensor) n.inputs.pop_back();
  auto shapes = inferOutputShapes(ctx.graph, n);
  if (!shapes.ok()) {
    Diagnostic d = shapes.error();
    d.location = fmt::format("{}: {}", ctx.file, d.location);
    if (node.proto.op_type() != opName(op)) d.notes.push_back(fmt::format("converted from ONNX {} node '{}'", node.opType(), node.name));
    return d;
  }
  if (shapes->size() != 1 || !checkedElements(shapes->front()))
    return makeError(node.loc, fmt::format("output '{}' would be too large", output));
  Tensor out;
  out.name = output;
  out.dtype = outputDType ? *outputDType : n.inputs.empty() ? DType::Float32 : ctx.graph.tensor(n.inputs[0]).dtype;
  out.shape = shapes->front();
  out.kind = TensorKind::Activation;
  TensorId oid = ctx.graph.addTensor(std::move(out));
  ctx.ids[output] = oid;
  ctx.names.insert(output);
  n.outputs.push_back(oid);
  ctx.graph.addNode(std::move(n));
  return Status::success();
}

}  // namespace stowage::onnxfe
