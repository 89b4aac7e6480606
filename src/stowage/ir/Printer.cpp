// IR text printer (see Printer.h).
#include "stowage/ir/Printer.h"

#include <fmt/format.h>

#include <cstring>

namespace stowage {

namespace {

std::string typeString(const Tensor& t) {
  std::string s = fmt::format("{}[{}]", dtypeName(t.dtype), shapeToString(t.shape));
  if (t.quant) {
    const auto& q = *t.quant;
    if (q.scales.size() == 1)
      s += fmt::format(" q(scale={:.9g}, zp={})", q.scales[0], q.zeroPoints.empty() ? 0 : q.zeroPoints[0]);
    else
      s += fmt::format(" q(per-channel axis={}, {} scales)", q.axis, q.scales.size());
  }
  return s;
}

std::string floatString(float f) { return fmt::format("{:.9g}", f); }

std::string attrString(const AttrValue& v) {
  if (auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (auto* f = std::get_if<float>(&v)) return floatString(*f);
  if (auto* s = std::get_if<std::string>(&v)) return fmt::format("\"{}\"", *s);
  std::string out = "[";
  if (auto* is = std::get_if<std::vector<int64_t>>(&v)) {
    for (size_t k = 0; k < is->size(); ++k) {
      if (k) out += ',';
      out += std::to_string((*is)[k]);
    }
  } else if (auto* fs = std::get_if<std::vector<float>>(&v)) {
    for (size_t k = 0; k < fs->size(); ++k) {
      if (k) out += ',';
      out += floatString((*fs)[k]);
    }
  }
  return out + "]";
}

std::string ref(const Graph& g, TensorId id) {
  if (id == kNoTensor) return "none";
  return fmt::format("%{}", g.tensor(id).name);
}

}  // namespace

std::string printGraph(const Graph& g) {
  std::string out = fmt::format("graph \"{}\" ({} nodes, {} tensors)\n", g.name, g.nodes.size(), g.tensors.size());
  for (TensorId id : g.inputs) out += fmt::format("  input  {}: {}\n", ref(g, id), typeString(g.tensor(id)));
  for (size_t i = 0; i < g.tensors.size(); ++i) {
    const Tensor& t = g.tensors[i];
    if (!t.isConstant()) continue;
    out += fmt::format("  const  %{}: {} ({} B)\n", t.name, typeString(t), t.data.size());
  }
  for (const Node& n : g.nodes) {
    std::string ins, outs, attrs;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      if (k) ins += ", ";
      ins += ref(g, n.inputs[k]);
    }
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      if (k) outs += ", ";
      outs += ref(g, n.outputs[k]);
      if (n.outputs[k] != kNoTensor) outs += ": " + typeString(g.tensor(n.outputs[k]));
    }
    for (const auto& [name, v] : n.attrs.all()) attrs += fmt::format("{}{}={}", attrs.empty() ? "" : ", ", name, attrString(v));
    out += fmt::format("  {} = {}({}){}  # {}\n", outs, opName(n.op), ins, attrs.empty() ? "" : " {" + attrs + "}", n.name);
  }
  for (TensorId id : g.outputs) out += fmt::format("  output {}\n", ref(g, id));
  return out;
}

}  // namespace stowage
