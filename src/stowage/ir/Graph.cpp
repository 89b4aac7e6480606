// Graph bookkeeping (see Graph.h).
#include "stowage/ir/Graph.h"

namespace stowage {

TensorId Graph::addTensor(Tensor t) {
  auto id = static_cast<TensorId>(tensors.size());
  byName_[t.name] = id;
  tensors.push_back(std::move(t));
  return id;
}

std::optional<TensorId> Graph::findTensor(const std::string& n) const {
  auto it = byName_.find(n);
  if (it == byName_.end() || it->second >= static_cast<TensorId>(tensors.size()) ||
      tensors[static_cast<size_t>(it->second)].name != n) {
    for (size_t i = 0; i < tensors.size(); ++i)
      if (tensors[i].name == n) return static_cast<TensorId>(i);
    return std::nullopt;
  }
  return it->second;
}

std::vector<int> Graph::producers() const {
  std::vector<int> p(tensors.size(), -1);
  for (size_t i = 0; i < nodes.size(); ++i)
    for (TensorId o : nodes[i].outputs)
      if (o != kNoTensor) p[static_cast<size_t>(o)] = static_cast<int>(i);
  return p;
}

std::vector<int> Graph::useCounts() const {
  std::vector<int> u(tensors.size(), 0);
  for (const Node& n : nodes)
    for (TensorId i : n.inputs)
      if (i != kNoTensor) ++u[static_cast<size_t>(i)];
  for (TensorId o : outputs) ++u[static_cast<size_t>(o)];
  return u;
}

void Graph::removeNodes(const std::vector<bool>& drop) {
  std::vector<Node> kept;
  kept.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i)
    if (i >= drop.size() || !drop[i]) kept.push_back(std::move(nodes[i]));
  nodes = std::move(kept);
  compactTensors();
}

void Graph::compactTensors() {
  std::vector<bool> used(tensors.size(), false);
  for (TensorId i : inputs) used[static_cast<size_t>(i)] = true;
  for (TensorId o : outputs) used[static_cast<size_t>(o)] = true;
  for (const Node& n : nodes) {
    for (TensorId i : n.inputs)
      if (i != kNoTensor) used[static_cast<size_t>(i)] = true;
    for (TensorId o : n.outputs)
      if (o != kNoTensor) used[static_cast<size_t>(o)] = true;
  }
  std::vector<TensorId> remap(tensors.size(), kNoTensor);
  std::vector<Tensor> kept;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!used[i]) continue;
    remap[i] = static_cast<TensorId>(kept.size());
    kept.push_back(std::move(tensors[i]));
  }
  auto fix = [&](TensorId& id) {
    if (id != kNoTensor) id = remap[static_cast<size_t>(id)];
  };
  for (Node& n : nodes) {
    for (TensorId& i : n.inputs) fix(i);
    for (TensorId& o : n.outputs) fix(o);
  }
  for (TensorId& i : inputs) fix(i);
  for (TensorId& o : outputs) fix(o);
  tensors = std::move(kept);
  byName_.clear();
  for (size_t i = 0; i < tensors.size(); ++i) byName_[tensors[i].name] = static_cast<TensorId>(i);
}

}  // namespace stowage
