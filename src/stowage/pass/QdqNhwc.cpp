// QDQ integer layers onto the NHWC int8 kernels (see QdqNhwc.h).
#include "stowage/pass/QdqNhwc.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>

#include "stowage/ir/LoweringAttributes.h"

namespace stowage {

// A named namespace: the library is built in unity batches, where FuseQdq.cpp's anonymous helpers share this file's.
namespace qdq_nhwc {

const std::vector<int64_t> kToNhwc{0, 2, 3, 1};
const std::vector<int64_t> kToNchw{0, 3, 1, 2};

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

std::vector<float> constFloats(const Tensor& t) {
  if (!t.isConstant() || t.dtype != DType::Float32) return {};
  const float* p = t.dataAs<float>();
  return std::vector<float>(p, p + t.numElements());
}

/// What a QLinearConv becomes.
enum class Form { Keep, Conv, Depthwise, FullyConnected };

/// A QLinearConv's constants, read once.
struct ConvInfo {
  Form form = Form::Keep;
  std::string why;  ///< when Keep
  float xScale = 0, yScale = 0;
  int64_t xZero = 0, yZero = 0;
  std::vector<float> wScales;
};

ConvInfo inspectConv(const Graph& g, const Node& n) {
  ConvInfo info;
  auto keep = [&](std::string why) {
    info.form = Form::Keep;
    info.why = std::move(why);
    return info;
  };
  if (n.attrs.getInt(kQdqRequantF32Attr, 0) != 1) return keep("not made by the QDQ pass");
  const Tensor& x = g.tensor(n.inputs[0]);
  const Tensor& w = g.tensor(n.inputs[1]);
  const Tensor& y = g.tensor(n.outputs[0]);
  if (x.dtype != DType::Int8 || y.dtype != DType::Int8 || w.dtype != DType::Int8)
    return keep("its activations or weights are not int8 (uint8 runs on the NCHW kernel)");
  if (!w.isConstant()) return keep("its weight is not a constant");
  const std::vector<float> xs = constFloats(g.tensor(n.inputs[2])), ws = constFloats(g.tensor(n.inputs[4])),
                           ys = constFloats(g.tensor(n.inputs[6]));
  const auto xz = constInts(g.tensor(n.inputs[3])), wz = constInts(g.tensor(n.inputs[5])), yz = constInts(g.tensor(n.inputs[7]));
  if (xs.size() != 1 || ys.size() != 1 || !xz || xz->size() != 1 || !yz || yz->size() != 1 || ws.empty() || !wz)
    return keep("its scales or zero points are not constants per tensor");
  if (std::any_of(wz->begin(), wz->end(), [](int64_t v) { return v != 0; })) return keep("its weight zero point is not 0");
  const int64_t m = w.shape.empty() ? 0 : w.shape[0];
  if (ws.size() != 1 && static_cast<int64_t>(ws.size()) != m) return keep("its weight scales are not per tensor or per output channel");
  if (n.input(8) != kNoTensor && (!g.tensor(n.input(8)).isConstant() || g.tensor(n.input(8)).dtype != DType::Int32))
    return keep("its bias is not an int32 constant");
  info.xScale = xs[0];
  info.yScale = ys[0];
  info.xZero = (*xz)[0];
  info.yZero = (*yz)[0];
  info.wScales = ws;
  const int64_t group = n.attrs.getInt("group", 1);
  if (x.shape.size() == 3 && w.shape.size() == 3 && x.shape[2] == 1 && w.shape[2] == 1 && group == 1 &&
      n.attrs.getInts("strides", {1}) == std::vector<int64_t>{1} && n.attrs.getInts("pads", {0, 0}) == std::vector<int64_t>{0, 0} &&
      n.attrs.getInts("dilations", {1}) == std::vector<int64_t>{1}) {
    info.form = Form::FullyConnected;
    return info;
  }
  if (x.shape.size() != 4 || w.shape.size() != 4 || y.shape.size() != 4) return keep("it is not a 2-D convolution");
  const int64_t c = x.shape[1];
  if (group == 1) info.form = Form::Conv;
  else if (group == c && w.shape[1] == 1 && m % c == 0) info.form = Form::Depthwise;
  else return keep(fmt::format("it is a grouped convolution ({} groups of {} channels)", group, c));
  return info;
}

class NhwcRewriter {
 public:
  explicit NhwcRewriter(Graph& g) : g_(g) {}
  std::vector<std::string> run();

 private:
  TensorId addTensor(const std::string& base, DType dtype, Shape shape, TensorKind kind, std::vector<uint8_t> data = {});
  /// The NHWC twin of NCHW tensor `t`: made by a Transpose appended to `out` the first time it is asked for.
  TensorId nhwcOf(TensorId t, std::vector<Node>& out);
  /// A new NHWC tensor for NCHW output `t` of a converted node.
  TensorId newTwin(TensorId t);
  void setQuant(TensorId t, float scale, int64_t zero);
  Node convNode(const Node& n, const ConvInfo& info, std::vector<Node>& out);
  std::vector<Node> fcNodes(const Node& n, const ConvInfo& info);
  /// The constants multiplier (float32 bits) and shift (zeros) of a layer with `m` outputs.
  std::pair<TensorId, TensorId> requantInputs(const Node& n, const ConvInfo& info, int64_t m);

  Graph& g_;
  std::map<TensorId, TensorId> twin_;  ///< NCHW tensor -> NHWC tensor holding the same values
  std::map<std::string, int> names_;
};

TensorId NhwcRewriter::addTensor(const std::string& base, DType dtype, Shape shape, TensorKind kind, std::vector<uint8_t> data) {
  std::string name = base;
  for (int i = names_[base]; g_.findTensor(name); ++i) name = fmt::format("{}_{}", base, i + 1);
  ++names_[base];
  Tensor t;
  t.name = name;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.kind = kind;
  t.data = std::move(data);
  return g_.addTensor(std::move(t));
}

void NhwcRewriter::setQuant(TensorId t, float scale, int64_t zero) {
  QuantParams q;
  q.scales = {scale};
  q.zeroPoints = {zero};
  g_.tensor(t).quant = q;
}

TensorId NhwcRewriter::newTwin(TensorId t) {
  const Tensor src = g_.tensor(t);
  const TensorId id = addTensor(src.name + "_nhwc", src.dtype, {src.shape[0], src.shape[2], src.shape[3], src.shape[1]},
                                TensorKind::Activation);
  if (src.quant) g_.tensor(id).quant = src.quant;
  twin_[t] = id;
  return id;
}

TensorId NhwcRewriter::nhwcOf(TensorId t, std::vector<Node>& out) {
  if (auto it = twin_.find(t); it != twin_.end()) return it->second;
  const TensorId id = newTwin(t);
  Node tr{g_.tensor(t).name + "_to_nhwc", OpKind::Transpose, {t}, {id}, {}};
  tr.attrs.set("perm", kToNhwc);
  out.push_back(std::move(tr));
  return id;
}

std::pair<TensorId, TensorId> NhwcRewriter::requantInputs(const Node& n, const ConvInfo& info, int64_t m) {
  const int64_t count = info.wScales.size() > 1 ? m : 1;
  std::vector<uint8_t> mult(static_cast<size_t>(count) * 4), shift(static_cast<size_t>(count) * 4, 0);
  for (int64_t i = 0; i < count; ++i) {
    // As ONNX Runtime (and onnx_qlinear.c's requant_multiplier): each step rounded to float32.
    const float xw = info.xScale * info.wScales[static_cast<size_t>(i)];
    const float mul = xw / info.yScale;
    std::memcpy(mult.data() + i * 4, &mul, 4);
  }
  const TensorId mId = addTensor(n.name + "_requant_f32", DType::Int32, {count}, TensorKind::Constant, std::move(mult));
  const TensorId sId = addTensor(n.name + "_requant_shift", DType::Int32, {count}, TensorKind::Constant, std::move(shift));
  return {mId, sId};
}

void setActivationRange(Node& q, const Node& n) {
  q.attrs.set("act_min", std::max<int64_t>(-128, n.attrs.getInt(kQdqOutputMinAttr, -128)));
  q.attrs.set("act_max", std::min<int64_t>(127, n.attrs.getInt(kQdqOutputMaxAttr, 127)));
  q.attrs.set(kQdqRequantF32Attr, int64_t{1});
}

Node NhwcRewriter::convNode(const Node& n, const ConvInfo& info, std::vector<Node>& out) {
  const Tensor w = g_.tensor(n.inputs[1]);
  const int64_t m = w.shape[0], kc = w.shape[1], kh = w.shape[2], kw = w.shape[3];
  const bool dw = info.form == Form::Depthwise;
  // [M, C, kh, kw] -> [M, kh, kw, C]; depthwise [M, 1, kh, kw] -> [1, kh, kw, M].
  std::vector<uint8_t> bytes(w.data.size());
  for (int64_t o = 0; o < m; ++o)
    for (int64_t c = 0; c < kc; ++c)
      for (int64_t y = 0; y < kh; ++y)
        for (int64_t x = 0; x < kw; ++x) {
          const int64_t from = ((o * kc + c) * kh + y) * kw + x;
          const int64_t to = dw ? (y * kw + x) * m + o : ((o * kh + y) * kw + x) * kc + c;
          bytes[static_cast<size_t>(to)] = w.data[static_cast<size_t>(from)];
        }
  const Shape wShape = dw ? Shape{1, kh, kw, m} : Shape{m, kh, kw, kc};
  const TensorId wId = addTensor(w.name + "_nhwc", DType::Int8, wShape, TensorKind::Constant, std::move(bytes));
  const TensorId xId = nhwcOf(n.inputs[0], out);
  setQuant(xId, info.xScale, info.xZero);
  const auto [mId, sId] = requantInputs(n, info, m);
  const TensorId yId = newTwin(n.outputs[0]);
  setQuant(yId, info.yScale, info.yZero);
  Node q{n.name, dw ? OpKind::QDepthwiseConv2d : OpKind::QConv2d, {xId, wId, mId, sId}, {yId}, {}};
  if (n.input(8) != kNoTensor) q.inputs.push_back(n.input(8));
  q.attrs.set("strides", n.attrs.getInts("strides", {1, 1}));
  q.attrs.set("dilations", n.attrs.getInts("dilations", {1, 1}));
  q.attrs.set("pads", n.attrs.getInts("pads", {0, 0, 0, 0}));
  setActivationRange(q, n);
  return q;
}

std::vector<Node> NhwcRewriter::fcNodes(const Node& n, const ConvInfo& info) {
  const Tensor w = g_.tensor(n.inputs[1]);
  const Tensor y = g_.tensor(n.outputs[0]);
  const int64_t m = w.shape[0], k = w.shape[1];
  const TensorId wId = addTensor(w.name + "_fc", DType::Int8, {m, k}, TensorKind::Constant, w.data);
  setQuant(n.inputs[0], info.xScale, info.xZero);
  const auto [mId, sId] = requantInputs(n, info, m);
  const TensorId y2 = addTensor(y.name + "_rows", DType::Int8, {y.shape[0], m}, TensorKind::Activation);
  setQuant(y2, info.yScale, info.yZero);
  Node q{n.name, OpKind::QFullyConnected, {n.inputs[0], wId, mId, sId}, {y2}, {}};
  if (n.input(8) != kNoTensor) q.inputs.push_back(n.input(8));
  setActivationRange(q, n);
  Node back{n.name + "_rows_view", OpKind::Reshape, {y2}, {n.outputs[0]}, {}};
  back.attrs.set("shape", y.shape);
  return {std::move(q), std::move(back)};
}

std::vector<std::string> NhwcRewriter::run() {
  const size_t count = g_.nodes.size();
  // Decide first (in schedule order) which nodes run on NHWC tensors, so that a producer knows its readers.
  std::vector<ConvInfo> infos(count);
  std::vector<bool> nhwc(count, false);      // runs on NHWC tensors
  std::vector<bool> producesNhwc(g_.tensors.size(), false);
  std::map<std::string, int> counts;
  std::vector<std::string> kept;
  std::map<TensorId, int64_t> inputZero;
  for (size_t i = 0; i < count; ++i) {
    const Node& n = g_.nodes[i];
    if (n.op == OpKind::QLinearConv) {
      infos[i] = inspectConv(g_, n);
      if (infos[i].form == Form::Keep) {
        if (n.attrs.getInt(kQdqRequantF32Attr, 0) == 1) kept.push_back(fmt::format("'{}' ({})", n.name, infos[i].why));
        continue;
      }
      if (infos[i].form == Form::FullyConnected) continue;  // layout-free: rewritten in place
      // The NHWC kernel reads the input's zero point from the tensor: two readers must agree on it.
      const auto [it, fresh] = inputZero.emplace(n.inputs[0], infos[i].xZero);
      if (!fresh && it->second != infos[i].xZero) {
        kept.push_back(fmt::format("'{}' (another layer reads its input with another zero point)", n.name));
        continue;
      }
      nhwc[i] = true;
    } else if ((n.op == OpKind::QLinearAdd || n.op == OpKind::QLinearMul) && n.inputs.size() >= 2) {
      const Shape& ys = g_.tensor(n.outputs[0]).shape;
      const bool same = ys.size() == 4 && g_.tensor(n.inputs[0]).shape == ys && g_.tensor(n.inputs[1]).shape == ys;
      const bool fed = producesNhwc[static_cast<size_t>(n.inputs[0])] || producesNhwc[static_cast<size_t>(n.inputs[1])];
      if (!same || !fed) continue;
      nhwc[i] = true;
    } else if (n.op == OpKind::QLinearLookup) {
      // Elementwise through a table: on the NHWC tensor of a converted producer as it is.
      if (g_.tensor(n.outputs[0]).shape.size() != 4 || !producesNhwc[static_cast<size_t>(n.inputs[0])]) continue;
      nhwc[i] = true;
    } else {
      continue;
    }
    if (nhwc[i]) producesNhwc[static_cast<size_t>(n.outputs[0])] = true;
  }
  // NCHW readers of each tensor a converted node produces (graph outputs count as one).
  std::vector<int> nchwReaders(g_.tensors.size(), 0);
  for (size_t i = 0; i < count; ++i) {
    const Node& n = g_.nodes[i];
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const TensorId t = n.inputs[k];
      if (t == kNoTensor) continue;
      const bool activationSlot = !nhwc[i] || (n.op == OpKind::QLinearConv || n.op == OpKind::QLinearLookup ? k == 0 : k < 2);
      if (!nhwc[i] || !activationSlot) ++nchwReaders[static_cast<size_t>(t)];
    }
  }
  for (TensorId t : g_.outputs) ++nchwReaders[static_cast<size_t>(t)];

  std::vector<Node> out;
  for (size_t i = 0; i < count; ++i) {
    const Node n = g_.nodes[i];
    if (n.op == OpKind::QLinearConv && infos[i].form == Form::FullyConnected) {
      for (Node& r : fcNodes(n, infos[i])) out.push_back(std::move(r));
      ++counts["fully connected"];
      continue;
    }
    if (!nhwc[i]) {
      out.push_back(n);
      continue;
    }
    Node q;
    if (n.op == OpKind::QLinearConv) {
      q = convNode(n, infos[i], out);
      ++counts[infos[i].form == Form::Depthwise ? "depthwise convolution" : "convolution"];
    } else if (n.op == OpKind::QLinearLookup) {
      q = n;
      q.inputs[0] = nhwcOf(n.inputs[0], out);
      q.outputs[0] = newTwin(n.outputs[0]);
      ++counts["table lookup (Sigmoid)"];
    } else {
      q = n;
      q.inputs[0] = nhwcOf(n.inputs[0], out);
      q.inputs[1] = nhwcOf(n.inputs[1], out);
      q.outputs[0] = newTwin(n.outputs[0]);
      ++counts[n.op == OpKind::QLinearAdd ? "add" : "mul"];
    }
    const TensorId y = n.outputs[0], yNhwc = q.outputs[0];
    out.push_back(std::move(q));
    if (nchwReaders[static_cast<size_t>(y)] > 0) {
      Node back{g_.tensor(y).name + "_to_nchw", OpKind::Transpose, {yNhwc}, {y}, {}};
      back.attrs.set("perm", kToNchw);
      out.push_back(std::move(back));
    }
  }
  if (counts.empty() && kept.empty()) return {};
  g_.nodes = std::move(out);
  g_.compactTensors();
  std::vector<std::string> remarks;
  if (!counts.empty()) {
    std::vector<std::string> parts;
    for (const auto& [what, c] : counts) parts.push_back(fmt::format("{} {}", c, what));
    size_t transposes = 0;
    for (const Node& n : g_.nodes)
      if (n.op == OpKind::Transpose && n.name.size() > 8 &&
          (n.name.ends_with("_to_nhwc") || n.name.ends_with("_to_nchw")))
        ++transposes;
    remarks.push_back(fmt::format("QDQ: {} on the NHWC int8 kernels with ONNX Runtime's requantization ({} layout Transpose(s) "
                                  "at the edges of the NHWC part; docs/quantized-onnx.md)",
                                  fmt::join(parts, ", "), transposes));
  }
  if (!kept.empty())
    remarks.push_back(fmt::format("QDQ: {} QLinearConv stay on the NCHW reference kernel: {}", kept.size(), fmt::join(kept, ", ")));
  return remarks;
}

}  // namespace qdq_nhwc

Result<std::vector<std::string>> qdqToNhwc(Graph& g) {
  qdq_nhwc::NhwcRewriter r(g);
  return r.run();
}

}  // namespace stowage
