// QDQ patterns to integer operators (see FuseQdq.h).
#include "stowage/pass/FuseQdq.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>

#include "stowage/pass/QdqTables.h"

namespace stowage {

namespace {

bool isQuantType(DType d) { return d == DType::Int8 || d == DType::UInt8; }

/// The float values of a constant float32 tensor (empty when it is not one).
std::vector<float> constFloats(const Tensor& t) {
  if (!t.isConstant() || t.dtype != DType::Float32) return {};
  const float* p = t.dataAs<float>();
  return std::vector<float>(p, p + t.numElements());
}

/// The values of a constant int8, uint8 or int32 tensor (nullopt when it is not one).
std::optional<std::vector<int64_t>> constInts(const Tensor& t) {
  if (!t.isConstant()) return std::nullopt;
  std::vector<int64_t> v(static_cast<size_t>(t.numElements()));
  for (size_t i = 0; i < v.size(); ++i) {
    switch (t.dtype) {
      case DType::Int8: v[i] = reinterpret_cast<const int8_t*>(t.data.data())[i]; break;
      case DType::UInt8: v[i] = t.data[i]; break;
      case DType::Int32: v[i] = t.dataAs<int32_t>()[i]; break;
      default: return std::nullopt;
    }
  }
  return v;
}

/// A DequantizeLinear whose scale and zero point are constants: its node, its quantized input and parameters.
struct Dequantized {
  int node = -1;
  TensorId q = kNoTensor, scale = kNoTensor, zeroPoint = kNoTensor;
  std::vector<float> scales;
  std::vector<int64_t> zeroPoints;  ///< empty when absent (0)
  int64_t axis = 0;
};

/// The result of matching one pattern: a value, or why the operator stays float.
template <typename T>
using Match = std::variant<T, std::string>;

class QdqFuser {
 public:
  explicit QdqFuser(Graph& g) : g_(g), producers_(g.producers()), uses_(g.useCounts()), firstReader_(g.tensors.size(), -1) {
    for (size_t i = g.nodes.size(); i-- > 0;)
      for (TensorId in : g.nodes[i].inputs)
        if (in != kNoTensor) firstReader_[static_cast<size_t>(in)] = static_cast<int>(i);
  }

  std::vector<std::string> run();

 private:
  /// The DequantizeLinear producing float tensor `t`, with constant parameters, per tensor unless `perAxisOk`.
  Match<Dequantized> dequantized(TensorId t, const char* role, bool perAxisOk) const;
  /// The QuantizeLinear reading the output `y` of node `op` (through at most one Relu or Clip), per tensor, with
  /// constant parameters: sets the fused node's output and clamp. `nodes` collects the nodes it replaces.
  struct OutputSide {
    int quantizeNode = -1, activationNode = -1;
    TensorId output = kNoTensor, scale = kNoTensor, zeroPoint = kNoTensor;
    float yScale = 1.0f;
    int64_t yZero = 0;
    std::optional<int64_t> yMin, yMax;
  };
  Match<OutputSide> quantizedOutput(TensorId y) const;

  /// The two dequantized operands of `n` (inputs 0 and 1; the second may be per axis when `secondPerAxis`) and copies
  /// of their quantized tensors and of the output (adding tensors later moves g_.tensors).
  struct Operands {
    Dequantized a, b;
    Tensor at, bt, y;
  };
  Match<Operands> operands(const Node& n, const OutputSide& out, const char* first, const char* second, bool secondPerAxis) const;

  Match<std::vector<Node>> fuseConv(const Node& n, const OutputSide& out);
  Match<std::vector<Node>> fuseGemm(const Node& n, const OutputSide& out);
  Match<std::vector<Node>> fuseMatMul(const Node& n, const OutputSide& out);
  Match<std::vector<Node>> fuseView(const Node& n, const OutputSide& out);
  Match<std::vector<Node>> fuseConcat(const Node& n, const OutputSide& out);
  Match<std::vector<Node>> fuseBinary(const Node& n, const OutputSide& out);
  Match<std::vector<Node>> fuseAveragePool(const Node& n, const OutputSide& out);  ///< and MaxPool
  Match<std::vector<Node>> fuseSigmoid(const Node& n, const OutputSide& out);
  Match<std::vector<Node>> fuseSoftmax(const Node& n, const OutputSide& out);
  /// The zero point of the QuantizeLinear `out`, made a constant 0 of its type when it has none.
  TensorId outputZeroPoint(const OutputSide& out);

  /// The zero point tensor of `d`, or a new constant zero of `dtype` with `count` entries when it has none.
  TensorId zeroPointOf(const Dequantized& d, DType dtype, int64_t count, const std::string& owner);
  /// The int32 bias of a DequantizeLinear `b` whose scale must be x_scale * w_scale per output channel.
  Match<TensorId> biasOf(TensorId b, const Dequantized& x, const Dequantized& w, int64_t channels) const;
  TensorId addConstant(const std::string& name, DType dtype, const Shape& shape, std::vector<uint8_t> bytes);
  TensorId addActivation(const std::string& name, DType dtype, const Shape& shape);
  void setOutputAttrs(Node& n, const OutputSide& out) const;

  Graph& g_;
  std::vector<int> producers_;
  std::vector<int> uses_;
  std::vector<int> firstReader_;  ///< the first node reading each tensor, -1 when none (with uses_, its sole reader)
};

Match<Dequantized> QdqFuser::dequantized(TensorId t, const char* role, bool perAxisOk) const {
  const int p = t == kNoTensor ? -1 : producers_[static_cast<size_t>(t)];
  if (p < 0 || g_.nodes[static_cast<size_t>(p)].op != OpKind::DequantizeLinear)
    return fmt::format("its {} is not the output of a DequantizeLinear", role);
  const Node& dq = g_.nodes[static_cast<size_t>(p)];
  Dequantized d;
  d.node = p;
  d.q = dq.inputs[0];
  d.scale = dq.inputs[1];
  d.zeroPoint = dq.input(2);
  d.axis = dq.attrs.getInt("axis", 1);
  const Tensor& q = g_.tensor(d.q);
  if (!isQuantType(q.dtype))
    return fmt::format("its {} '{}' is dequantized from {}, not int8 or uint8", role, q.name, dtypeName(q.dtype));
  d.scales = constFloats(g_.tensor(d.scale));
  if (d.scales.empty()) return fmt::format("the scale of its {} '{}' is not a constant", role, q.name);
  if (d.zeroPoint != kNoTensor) {
    auto zp = constInts(g_.tensor(d.zeroPoint));
    if (!zp) return fmt::format("the zero point of its {} '{}' is not a constant", role, q.name);
    d.zeroPoints = *zp;
  }
  if (d.scales.size() > 1 && !perAxisOk) return fmt::format("its {} '{}' is quantized per axis; it must be per tensor", role, q.name);
  for (float s : d.scales)
    if (!(s > 0.0f) || !std::isfinite(s)) return fmt::format("the scale of its {} '{}' is not positive and finite", role, q.name);
  return d;
}

Match<QdqFuser::OutputSide> QdqFuser::quantizedOutput(TensorId y) const {
  auto soleReader = [&](TensorId t) -> int {
    if (uses_[static_cast<size_t>(t)] != 1 || std::find(g_.outputs.begin(), g_.outputs.end(), t) != g_.outputs.end()) return -1;
    return firstReader_[static_cast<size_t>(t)];
  };
  OutputSide o;
  int r = soleReader(y);
  if (r < 0) return std::string("its output has other readers than one QuantizeLinear (or is a graph output)");
  float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
  const Node* reader = &g_.nodes[static_cast<size_t>(r)];
  if (reader->op == OpKind::Relu || reader->op == OpKind::Clip) {
    if (reader->inputs.size() != 1) return std::string("its Clip has bounds that are not constants");
    if (reader->op == OpKind::Relu) lo = 0.0f;
    else {
      lo = reader->attrs.getFloat("min", lo);
      hi = reader->attrs.getFloat("max", hi);
    }
    o.activationNode = r;
    r = soleReader(reader->outputs[0]);
    if (r < 0) return fmt::format("its {} '{}' has other readers than one QuantizeLinear", opName(reader->op), reader->name);
    reader = &g_.nodes[static_cast<size_t>(r)];
  }
  if (reader->op != OpKind::QuantizeLinear) return fmt::format("its output is read by {} '{}', not by a QuantizeLinear", opName(reader->op), reader->name);
  o.quantizeNode = r;
  o.output = reader->outputs[0];
  o.scale = reader->inputs[1];
  o.zeroPoint = reader->input(2);
  const Tensor& out = g_.tensor(o.output);
  const std::vector<float> scales = constFloats(g_.tensor(o.scale));
  if (scales.size() != 1) return fmt::format("its QuantizeLinear '{}' has a scale that is not one constant", reader->name);
  o.yScale = scales[0];
  if (o.zeroPoint != kNoTensor) {
    auto zp = constInts(g_.tensor(o.zeroPoint));
    if (!zp || zp->size() != 1) return fmt::format("its QuantizeLinear '{}' has a zero point that is not one constant", reader->name);
    o.yZero = (*zp)[0];
  }
  if (!isQuantType(out.dtype)) return fmt::format("its QuantizeLinear '{}' writes {}", reader->name, dtypeName(out.dtype));
  const int64_t tmin = out.dtype == DType::UInt8 ? 0 : -128, tmax = out.dtype == DType::UInt8 ? 255 : 127;
  // Q(clamp(v, lo, hi)) = clamp(Q(v), Q(lo), Q(hi)): Q (divide in float32, round half to even, add the zero point,
  // saturate) is monotonic, so the clamp moves to the output units exactly.
  auto quantize = [&](float v) {
    const double r = std::nearbyint(static_cast<double>(v / o.yScale)) + static_cast<double>(o.yZero);
    return static_cast<int64_t>(std::clamp(r, static_cast<double>(tmin), static_cast<double>(tmax)));
  };
  if (std::isfinite(lo)) o.yMin = quantize(lo);
  if (std::isfinite(hi)) o.yMax = quantize(hi);
  if (o.yMin && *o.yMin <= tmin) o.yMin.reset();
  if (o.yMax && *o.yMax >= tmax) o.yMax.reset();
  return o;
}

TensorId QdqFuser::addConstant(const std::string& name, DType dtype, const Shape& shape, std::vector<uint8_t> bytes) {
  Tensor t;
  t.name = name;
  t.dtype = dtype;
  t.shape = shape;
  t.kind = TensorKind::Constant;
  t.data = std::move(bytes);
  const TensorId id = g_.addTensor(std::move(t));
  uses_.push_back(0);
  producers_.push_back(-1);
  firstReader_.push_back(-1);
  return id;
}

TensorId QdqFuser::addActivation(const std::string& name, DType dtype, const Shape& shape) {
  Tensor t;
  t.name = name;
  t.dtype = dtype;
  t.shape = shape;
  const TensorId id = g_.addTensor(std::move(t));
  uses_.push_back(0);
  producers_.push_back(-1);
  firstReader_.push_back(-1);
  return id;
}

TensorId QdqFuser::zeroPointOf(const Dequantized& d, DType dtype, int64_t count, const std::string& owner) {
  if (d.zeroPoint != kNoTensor) return d.zeroPoint;
  return addConstant(owner + "_zero_point", dtype, count > 1 ? Shape{count} : Shape{}, std::vector<uint8_t>(static_cast<size_t>(count), 0));
}

Match<TensorId> QdqFuser::biasOf(TensorId b, const Dequantized& x, const Dequantized& w, int64_t channels) const {
  if (b == kNoTensor) return kNoTensor;
  const int p = producers_[static_cast<size_t>(b)];
  if (p < 0 || g_.nodes[static_cast<size_t>(p)].op != OpKind::DequantizeLinear)
    return std::string("its bias is float, not an int32 tensor behind a DequantizeLinear");
  const Node& dq = g_.nodes[static_cast<size_t>(p)];
  const Tensor& q = g_.tensor(dq.inputs[0]);
  if (q.dtype != DType::Int32 || !q.isConstant() || q.shape != Shape{channels})
    return fmt::format("its bias '{}' is not a constant int32 vector of {} entries", q.name, channels);
  const std::vector<float> scales = constFloats(g_.tensor(dq.inputs[1]));
  if (scales.size() != 1 && scales.size() != static_cast<size_t>(channels))
    return fmt::format("the scale of its bias '{}' is not a constant", q.name);
  if (dq.input(2) != kNoTensor) {
    auto zp = constInts(g_.tensor(dq.input(2)));
    if (!zp || std::any_of(zp->begin(), zp->end(), [](int64_t v) { return v != 0; }))
      return fmt::format("the zero point of its bias '{}' is not 0", q.name);
  }
  // The int32 values are used as they are: their scale must be the accumulator's.
  for (int64_t c = 0; c < channels; ++c) {
    const float want = x.scales[0] * w.scales[w.scales.size() > 1 ? static_cast<size_t>(c) : 0];
    const float have = scales[scales.size() > 1 ? static_cast<size_t>(c) : 0];
    if (std::fabs(have - want) > 1e-6f * want)
      return fmt::format("the scale of its bias '{}' ({}) is not input scale x weight scale ({}) at channel {}", q.name, have, want, c);
  }
  return dq.inputs[0];
}

void QdqFuser::setOutputAttrs(Node& n, const OutputSide& out) const {
  n.attrs.set(kQdqRequantF32Attr, int64_t{1});
  if (out.yMin) n.attrs.set(kQdqOutputMinAttr, *out.yMin);
  if (out.yMax) n.attrs.set(kQdqOutputMaxAttr, *out.yMax);
}

Match<QdqFuser::Operands> QdqFuser::operands(const Node& n, const OutputSide& out, const char* first, const char* second,
                                             bool secondPerAxis) const {
  auto a = dequantized(n.inputs[0], first, false);
  if (auto* why = std::get_if<std::string>(&a)) return *why;
  auto b = dequantized(n.inputs[1], second, secondPerAxis);
  if (auto* why = std::get_if<std::string>(&b)) return *why;
  Operands o{std::get<Dequantized>(a), std::get<Dequantized>(b), {}, {}, {}};
  o.at = g_.tensor(o.a.q);
  o.bt = g_.tensor(o.b.q);
  o.y = g_.tensor(out.output);
  return o;
}

Match<std::vector<Node>> QdqFuser::fuseConv(const Node& n, const OutputSide& out) {
  auto ops = operands(n, out, "input", "weight", true);
  if (auto* why = std::get_if<std::string>(&ops)) return *why;
  const auto& [xd, wd, xt, wt, y] = std::get<Operands>(ops);
  const int64_t m = wt.shape.empty() ? 0 : wt.shape[0];
  if (!wt.isConstant()) return std::string("its weight is not a constant");
  if (wd.scales.size() > 1 && (wd.axis != 0 || static_cast<int64_t>(wd.scales.size()) != m))
    return std::string("its weight is quantized along another axis than the output channels");
  auto b = biasOf(n.input(2), xd, wd, m);
  if (auto* why = std::get_if<std::string>(&b)) return *why;
  Node q;
  q.name = n.name;
  q.op = OpKind::QLinearConv;
  q.attrs = n.attrs;
  const TensorId xZero = zeroPointOf(xd, xt.dtype, 1, xt.name);
  const TensorId wZero = zeroPointOf(wd, wt.dtype, static_cast<int64_t>(wd.scales.size()), wt.name);
  const TensorId yZero = outputZeroPoint(out);
  q.inputs = {xd.q, wd.q, xd.scale, xZero, wd.scale, wZero, out.scale, yZero, std::get<TensorId>(b)};
  q.outputs = {out.output};
  setOutputAttrs(q, out);
  return std::vector<Node>{std::move(q)};
}

Match<std::vector<Node>> QdqFuser::fuseGemm(const Node& n, const OutputSide& out) {
  if (n.attrs.getFloat("alpha", 1.0f) != 1.0f || n.attrs.getInt("transA", 0) != 0 ||
      (n.input(2) != kNoTensor && n.attrs.getFloat("beta", 1.0f) != 1.0f))
    return std::string("it has alpha or beta other than 1, or transA");
  auto ops = operands(n, out, "input", "weight", true);
  if (auto* why = std::get_if<std::string>(&ops)) return *why;
  const auto& [xd, wd, xt, wt, y] = std::get<Operands>(ops);
  if (!wt.isConstant() || wt.shape.size() != 2 || xt.shape.size() != 2) return std::string("its weight is not a constant matrix");
  const bool transB = n.attrs.getInt("transB", 0) != 0;
  const int64_t k = transB ? wt.shape[1] : wt.shape[0], m = transB ? wt.shape[0] : wt.shape[1];
  const int64_t outAxis = transB ? 0 : 1;
  if (wd.scales.size() > 1 && (wd.axis != outAxis || static_cast<int64_t>(wd.scales.size()) != m))
    return std::string("its weight is quantized along another axis than the output features");
  TensorId bias = kNoTensor;
  if (n.input(2) != kNoTensor) {
    auto b = biasOf(n.input(2), xd, wd, m);
    if (auto* why = std::get_if<std::string>(&b)) return *why;
    bias = std::get<TensorId>(b);
  }
  // The weight as a 1-D convolution's [m, k, 1], int8 bytes transposed at compile time when transB = 0.
  std::vector<uint8_t> bytes(static_cast<size_t>(m * k));
  for (int64_t o = 0; o < m; ++o)
    for (int64_t i = 0; i < k; ++i) bytes[static_cast<size_t>(o * k + i)] = wt.data[static_cast<size_t>(transB ? o * k + i : i * m + o)];
  const TensorId wConv = addConstant(wt.name + (transB ? "_as_conv" : "_transposed"), wt.dtype, {m, k, 1}, std::move(bytes));
  const int64_t rows = xt.shape[0];
  const TensorId x3 = addActivation(xt.name + "_as_conv_input", xt.dtype, {rows, k, 1});
  const TensorId y3 = addActivation(y.name + "_as_conv_output", y.dtype, {rows, m, 1});
  Node in{n.name + "_input_view", OpKind::Reshape, {xd.q}, {x3}, {}};
  in.attrs.set("shape", std::vector<int64_t>{rows, k, 1});
  Node q;
  q.name = n.name;
  q.op = OpKind::QLinearConv;
  q.attrs.set("strides", std::vector<int64_t>{1});
  q.attrs.set("pads", std::vector<int64_t>{0, 0});
  q.attrs.set("dilations", std::vector<int64_t>{1});
  q.attrs.set("group", int64_t{1});
  const TensorId xZero = zeroPointOf(xd, xt.dtype, 1, xt.name);
  const TensorId wZero = zeroPointOf(wd, wt.dtype, static_cast<int64_t>(wd.scales.size()), wt.name);
  const TensorId yZero = outputZeroPoint(out);
  q.inputs = {x3, wConv, xd.scale, xZero, wd.scale, wZero, out.scale, yZero, bias};
  q.outputs = {y3};
  setOutputAttrs(q, out);
  Node back{n.name + "_output_view", OpKind::Reshape, {y3}, {out.output}, {}};
  back.attrs.set("shape", std::vector<int64_t>{rows, m});
  return std::vector<Node>{std::move(in), std::move(q), std::move(back)};
}

Match<std::vector<Node>> QdqFuser::fuseMatMul(const Node& n, const OutputSide& out) {
  auto ops = operands(n, out, "first operand", "second operand", true);
  if (auto* why = std::get_if<std::string>(&ops)) return *why;
  const auto& [ad, bd, at, bt, y] = std::get<Operands>(ops);
  if (bd.scales.size() > 1) {
    const int64_t rank = static_cast<int64_t>(bt.shape.size());
    const int64_t axis = bd.axis < 0 ? bd.axis + rank : bd.axis;
    if (rank < 2 || axis != rank - 1) return std::string("its second operand is quantized along another axis than its columns");
  }
  Node q;
  q.name = n.name;
  q.op = OpKind::QLinearMatMul;
  const TensorId aZero = zeroPointOf(ad, at.dtype, 1, at.name);
  const TensorId bZero = zeroPointOf(bd, bt.dtype, static_cast<int64_t>(bd.scales.size()), bt.name);
  const TensorId yZero = outputZeroPoint(out);
  q.inputs = {ad.q, bd.q, ad.scale, aZero, bd.scale, bZero, out.scale, yZero};
  q.outputs = {out.output};
  setOutputAttrs(q, out);
  return std::vector<Node>{std::move(q)};
}

Match<std::vector<Node>> QdqFuser::fuseView(const Node& n, const OutputSide& out) {
  auto x = dequantized(n.inputs[0], "input", false);
  if (auto* why = std::get_if<std::string>(&x)) return *why;
  const Dequantized& xd = std::get<Dequantized>(x);
  const int64_t xZero = xd.zeroPoints.empty() ? 0 : xd.zeroPoints[0];
  if (g_.tensor(xd.q).dtype != g_.tensor(out.output).dtype || xd.scales[0] != out.yScale || xZero != out.yZero)
    return std::string("its QuantizeLinear has another type, scale or zero point than its DequantizeLinear");
  if (out.activationNode >= 0) return std::string("an activation follows it");
  Node r = n;
  r.inputs = {xd.q};
  r.outputs = {out.output};
  return std::vector<Node>{std::move(r)};
}

Match<std::vector<Node>> QdqFuser::fuseConcat(const Node& n, const OutputSide& out) {
  if (out.activationNode >= 0) return std::string("an activation follows it");
  Node r = n;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    auto x = dequantized(n.inputs[i], "input", false);
    if (auto* why = std::get_if<std::string>(&x)) return *why;
    const Dequantized& xd = std::get<Dequantized>(x);
    const int64_t xZero = xd.zeroPoints.empty() ? 0 : xd.zeroPoints[0];
    if (g_.tensor(xd.q).dtype != g_.tensor(out.output).dtype || xd.scales[0] != out.yScale || xZero != out.yZero)
      return fmt::format("input {} has another type, scale or zero point than its QuantizeLinear (only concatenations of equally "
                         "quantized inputs are integer)",
                         i);
    r.inputs[i] = xd.q;
  }
  r.outputs = {out.output};
  return std::vector<Node>{std::move(r)};
}

TensorId QdqFuser::outputZeroPoint(const OutputSide& out) {
  if (out.zeroPoint != kNoTensor) return out.zeroPoint;
  const Tensor y = g_.tensor(out.output);
  return addConstant(y.name + "_zero_point", y.dtype, {}, {0});
}

Match<std::vector<Node>> QdqFuser::fuseBinary(const Node& n, const OutputSide& out) {
  auto ops = operands(n, out, "first operand", "second operand", false);
  if (auto* why = std::get_if<std::string>(&ops)) return *why;
  const auto& [ad, bd, at, bt, y] = std::get<Operands>(ops);
  (void)y;
  Node q;
  q.name = n.name;
  q.op = n.op == OpKind::Add ? OpKind::QLinearAdd : OpKind::QLinearMul;
  const TensorId aZero = zeroPointOf(ad, at.dtype, 1, at.name);
  const TensorId bZero = zeroPointOf(bd, bt.dtype, 1, bt.name);
  q.inputs = {ad.q, bd.q, ad.scale, aZero, bd.scale, bZero, out.scale, outputZeroPoint(out)};
  q.outputs = {out.output};
  setOutputAttrs(q, out);
  return std::vector<Node>{std::move(q)};
}

Match<std::vector<Node>> QdqFuser::fuseAveragePool(const Node& n, const OutputSide& out) {
  auto x = dequantized(n.inputs[0], "input", false);
  if (auto* why = std::get_if<std::string>(&x)) return *why;
  const Dequantized& xd = std::get<Dequantized>(x);
  const Tensor xt = g_.tensor(xd.q);
  if (xt.shape.size() < 3 || xt.shape.size() > 4) return std::string("the integer pool supports 1-D and 2-D pooling");
  Node q;
  q.name = n.name;
  q.op = n.op == OpKind::MaxPool ? OpKind::QLinearMaxPool : OpKind::QLinearAveragePool;
  if (n.op != OpKind::GlobalAveragePool) {
    q.attrs = n.attrs;
  } else {
    // GlobalAveragePool: one window over the whole plane.
    const size_t sp = xt.shape.size() - 2;
    q.attrs.set("kernel_shape", std::vector<int64_t>(xt.shape.begin() + 2, xt.shape.end()));
    q.attrs.set("strides", std::vector<int64_t>(sp, 1));
    q.attrs.set("dilations", std::vector<int64_t>(sp, 1));
    q.attrs.set("pads", std::vector<int64_t>(2 * sp, 0));
  }
  const TensorId xZero = zeroPointOf(xd, xt.dtype, 1, xt.name);
  q.inputs = {xd.q, xd.scale, xZero, out.scale, outputZeroPoint(out)};
  q.outputs = {out.output};
  setOutputAttrs(q, out);
  return std::vector<Node>{std::move(q)};
}

Match<std::vector<Node>> QdqFuser::fuseSigmoid(const Node& n, const OutputSide& out) {
  auto x = dequantized(n.inputs[0], "input", false);
  if (auto* why = std::get_if<std::string>(&x)) return *why;
  const Dequantized& xd = std::get<Dequantized>(x);
  const DType xType = g_.tensor(xd.q).dtype, yType = g_.tensor(out.output).dtype;
  const int64_t xZero = xd.zeroPoints.empty() ? 0 : xd.zeroPoints[0];
  // Every input byte's output, as ONNX Runtime's QLinearSigmoid tabulates it (and its float Sigmoid computes it).
  std::vector<uint8_t> table = qdq::sigmoidTable(xType, xd.scales[0], xZero, yType, out.yScale, out.yZero, out.yMin, out.yMax);
  const TensorId t = addConstant(n.name + "_table", yType, {256}, std::move(table));
  Node q;
  q.name = n.name;
  q.op = OpKind::QLinearLookup;
  q.inputs = {xd.q, t};
  q.outputs = {out.output};
  return std::vector<Node>{std::move(q)};
}

Match<std::vector<Node>> QdqFuser::fuseSoftmax(const Node& n, const OutputSide& out) {
  auto x = dequantized(n.inputs[0], "input", false);
  if (auto* why = std::get_if<std::string>(&x)) return *why;
  const Dequantized& xd = std::get<Dequantized>(x);
  const Tensor xt = g_.tensor(xd.q);
  const DType yType = g_.tensor(out.output).dtype;
  // ONNX Runtime fuses DQ -> Softmax -> Q into its QLinearSoftmax only as written: one type on both sides, nothing
  // between the Softmax and its QuantizeLinear.
  if (out.activationNode >= 0) return std::string("an activation follows it (ONNX Runtime computes that in float too)");
  if (xt.dtype != yType)
    return fmt::format("its input is {} and its output {} (ONNX Runtime's QLinearSoftmax, and so this pass, needs one type)",
                       dtypeName(xt.dtype), dtypeName(yType));
  const int64_t rank = static_cast<int64_t>(xt.shape.size());
  const int64_t axis = n.attrs.getInt("axis", rank - 1);
  if (rank == 0 || axis < 0 || axis >= rank) return std::string("its axis is out of range");
  int64_t len = 1;
  const bool coerce2d = n.attrs.getInt("coerce2d", 0) != 0;
  for (int64_t d = axis; d < (coerce2d ? rank : axis + 1); ++d) len *= xt.shape[static_cast<size_t>(d)];
  if (len <= 0) return std::string("its axis is empty");
  const float factor = qdq::softmaxYFactor(out.yScale);
  if (!(factor < 4194304.0f)) return fmt::format("its output scale {} is below 2^-22", out.yScale);
  std::vector<float> table = qdq::softmaxExpTable(xd.scales[0], len);
  std::vector<uint8_t> bytes(table.size() * sizeof(float));
  std::memcpy(bytes.data(), table.data(), bytes.size());
  const TensorId t = addConstant(n.name + "_exp_table", DType::Float32, {256}, std::move(bytes));
  Node q;
  q.name = n.name;
  q.op = OpKind::QLinearSoftmax;
  q.attrs.set("axis", axis);
  q.attrs.set("coerce2d", int64_t{coerce2d ? 1 : 0});
  q.attrs.set("y_factor", factor);
  q.attrs.set("y_zero_point", out.yZero);
  q.inputs = {xd.q, t};
  q.outputs = {out.output};
  return std::vector<Node>{std::move(q)};
}

std::vector<std::string> QdqFuser::run() {
  std::vector<std::vector<Node>> replacement(g_.nodes.size());
  std::vector<bool> drop(g_.nodes.size(), false);
  std::map<std::string, int> counts;
  std::vector<std::string> floatOps;
  const size_t original = g_.nodes.size();
  for (size_t i = 0; i < original; ++i) {
    const Node n = g_.nodes[i];
    const bool candidate = n.op == OpKind::Conv || n.op == OpKind::Gemm || n.op == OpKind::MatMul || n.op == OpKind::Reshape ||
                           n.op == OpKind::Transpose || n.op == OpKind::Concat || n.op == OpKind::Add || n.op == OpKind::Mul ||
                           n.op == OpKind::AveragePool || n.op == OpKind::GlobalAveragePool || n.op == OpKind::MaxPool ||
                           n.op == OpKind::Sigmoid || n.op == OpKind::Softmax;
    // Only operators that read a DequantizeLinear are QDQ operators; the rest of a float model is not this pass's.
    const auto readsDequantized = [&](TensorId t) {
      const int p = t == kNoTensor ? -1 : producers_[static_cast<size_t>(t)];
      return p >= 0 && g_.nodes[static_cast<size_t>(p)].op == OpKind::DequantizeLinear;
    };
    if (n.op == OpKind::QuantizeLinear || n.op == OpKind::DequantizeLinear || n.inputs.empty()) continue;
    if (!candidate || n.outputs.size() != 1) {
      if (std::any_of(n.inputs.begin(), n.inputs.end(), readsDequantized))
        floatOps.push_back(fmt::format("{} '{}' stays float: no integer form of {}{} yet", opName(n.op), n.name, opName(n.op),
                                       n.outputs.size() != 1 ? " with several outputs" : ""));
      continue;
    }
    if (!readsDequantized(n.inputs[0])) continue;
    auto o = quantizedOutput(n.outputs[0]);
    Match<std::vector<Node>> fused = std::string();
    if (auto* why = std::get_if<std::string>(&o)) {
      // ONNX Runtime fuses Sigmoid and Softmax only between a DequantizeLinear and a QuantizeLinear: otherwise it
      // computes them in float too.
      fused = *why + (n.op == OpKind::Sigmoid || n.op == OpKind::Softmax ? " (ONNX Runtime computes it in float too)" : "");
    } else {
      const OutputSide& out = std::get<OutputSide>(o);
      switch (n.op) {
        case OpKind::Conv: fused = fuseConv(n, out); break;
        case OpKind::Gemm: fused = fuseGemm(n, out); break;
        case OpKind::MatMul: fused = fuseMatMul(n, out); break;
        case OpKind::Add:
        case OpKind::Mul: fused = fuseBinary(n, out); break;
        case OpKind::AveragePool:
        case OpKind::MaxPool:
        case OpKind::GlobalAveragePool: fused = fuseAveragePool(n, out); break;
        case OpKind::Concat: fused = fuseConcat(n, out); break;
        case OpKind::Sigmoid: fused = fuseSigmoid(n, out); break;
        case OpKind::Softmax: fused = fuseSoftmax(n, out); break;
        default: fused = fuseView(n, out); break;
      }
      if (auto* nodes = std::get_if<std::vector<Node>>(&fused)) {
        replacement[i] = std::move(*nodes);
        drop[static_cast<size_t>(out.quantizeNode)] = true;
        if (out.activationNode >= 0) drop[static_cast<size_t>(out.activationNode)] = true;
        ++counts[std::string(opName(n.op))];
        continue;
      }
    }
    floatOps.push_back(fmt::format("{} '{}' stays float: {}", opName(n.op), n.name, std::get<std::string>(fused)));
  }
  std::vector<std::string> remarks;
  for (std::string& f : floatOps) f = "QDQ: " + f;
  if (counts.empty()) return floatOps;
  // Rebuild the schedule: each fused operator's nodes where it was, its Relu / Clip and QuantizeLinear gone.
  std::vector<Node> nodes;
  for (size_t i = 0; i < original; ++i) {
    if (drop[i]) continue;
    if (!replacement[i].empty()) {
      for (Node& r : replacement[i]) nodes.push_back(std::move(r));
      continue;
    }
    nodes.push_back(std::move(g_.nodes[i]));
  }
  g_.nodes = std::move(nodes);
  // DequantizeLinear nodes whose readers were all fused.
  std::vector<bool> dead(g_.nodes.size(), false);
  const std::vector<int> uses = g_.useCounts();
  size_t removed = 0;
  for (size_t i = 0; i < g_.nodes.size(); ++i)
    if (g_.nodes[i].op == OpKind::DequantizeLinear && uses[static_cast<size_t>(g_.nodes[i].outputs[0])] == 0) {
      dead[i] = true;
      ++removed;
    }
  g_.removeNodes(dead);
  std::vector<std::string> parts;
  for (const auto& [op, c] : counts) parts.push_back(fmt::format("{} {}", c, op));
  remarks.push_back(fmt::format("QDQ: {} run on integer kernels with their int8 weights (QuantizeLinear / DequantizeLinear pairs "
                                "folded; {} DequantizeLinear removed; --no-fuse-qdq computes them in float)",
                                fmt::join(parts, ", "), removed));
  remarks.insert(remarks.end(), floatOps.begin(), floatOps.end());
  return remarks;
}

}  // namespace

Result<std::vector<std::string>> fuseQdq(Graph& g) {
  QdqFuser fuser(g);
  return fuser.run();
}

}  // namespace stowage
