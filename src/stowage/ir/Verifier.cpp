// Graph verifier (see Verifier.h).
#include "stowage/ir/Verifier.h"

#include <fmt/format.h>

namespace stowage {

namespace {
std::string verifierNodeLoc(const Node& n) { return fmt::format("node '{}' ({})", n.name, opName(n.op)); }
}  // namespace

Status verifyGraph(const Graph& g) {
  const auto numTensors = static_cast<TensorId>(g.tensors.size());
  auto valid = [&](TensorId id) { return id >= 0 && id < numTensors; };

  std::vector<bool> available(g.tensors.size(), false);
  for (size_t i = 0; i < g.tensors.size(); ++i) {
    const Tensor& t = g.tensors[i];
    for (int64_t d : t.shape)
      if (d < 0) return makeError(fmt::format("tensor '{}'", t.name), fmt::format("has a negative dimension ({})", shapeToString(t.shape)));
    if (t.isConstant()) {
      if (t.data.size() != t.byteSize())
        return makeError(fmt::format("tensor '{}'", t.name),
                         fmt::format("constant holds {} bytes but its type {}[{}] needs {}", t.data.size(),
                                     dtypeName(t.dtype), shapeToString(t.shape), t.byteSize()));
      available[i] = true;
    }
  }
  for (TensorId id : g.inputs) {
    if (!valid(id)) return makeError("graph", fmt::format("graph input id {} is out of range", id));
    if (g.tensor(id).kind != TensorKind::Input)
      return makeError(fmt::format("tensor '{}'", g.tensor(id).name), "is listed as a graph input but is not of kind Input");
    available[static_cast<size_t>(id)] = true;
  }

  std::vector<bool> produced(g.tensors.size(), false);
  for (const Node& n : g.nodes) {
    const OpInfo& info = opInfo(n.op);
    const int numIn = static_cast<int>(n.inputs.size());
    if (numIn < info.minInputs || (info.maxInputs >= 0 && numIn > info.maxInputs))
      return makeError(verifierNodeLoc(n), fmt::format("has {} inputs; {} takes {} to {}", numIn, info.name, info.minInputs,
                                               info.maxInputs < 0 ? std::string("any number") : std::to_string(info.maxInputs)));
    if (static_cast<int>(n.outputs.size()) != info.numOutputs)
      return makeError(verifierNodeLoc(n), fmt::format("has {} outputs; {} produces {}", n.outputs.size(), info.name, info.numOutputs));
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      TensorId id = n.inputs[k];
      if (id == kNoTensor) {
        if (static_cast<int>(k) < info.minInputs) return makeError(verifierNodeLoc(n), fmt::format("required input {} is missing", k));
        continue;
      }
      if (!valid(id)) return makeError(verifierNodeLoc(n), fmt::format("input {} has invalid tensor id {}", k, id));
      if (!available[static_cast<size_t>(id)])
        return makeError(verifierNodeLoc(n), fmt::format("reads tensor '{}' before any node produces it (schedule order broken)", g.tensor(id).name));
    }
    for (TensorId id : n.outputs) {
      if (!valid(id)) return makeError(verifierNodeLoc(n), fmt::format("output has invalid tensor id {}", id));
      const Tensor& t = g.tensor(id);
      if (t.kind != TensorKind::Activation)
        return makeError(verifierNodeLoc(n), fmt::format("writes tensor '{}', which is a graph input or constant", t.name));
      if (produced[static_cast<size_t>(id)])
        return makeError(verifierNodeLoc(n), fmt::format("writes tensor '{}', which another node already produces", t.name));
      produced[static_cast<size_t>(id)] = true;
      available[static_cast<size_t>(id)] = true;
    }
    auto shapes = inferOutputShapes(g, n);
    if (!shapes.ok()) return shapes.error();
    for (size_t k = 0; k < n.outputs.size() && k < shapes->size(); ++k) {
      const Tensor& t = g.tensor(n.outputs[k]);
      if (t.shape != (*shapes)[k])
        return makeError(verifierNodeLoc(n), fmt::format("output '{}' has shape {} but the {} shape rule gives {}", t.name,
                                                 shapeToString(t.shape), info.name, shapeToString((*shapes)[k])));
    }
  }
  for (TensorId id : g.outputs) {
    if (!valid(id)) return makeError("graph", fmt::format("graph output id {} is out of range", id));
    if (!available[static_cast<size_t>(id)])
      return makeError(fmt::format("tensor '{}'", g.tensor(id).name), "is a graph output but nothing produces it");
  }
  return Status::success();
}

}  // namespace stowage
