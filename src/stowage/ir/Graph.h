// The graph IR: tensors, nodes in schedule order, and the graph's inputs and outputs. Frontends build it,
// passes rewrite it, the planner and emitter read it.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "stowage/ir/Node.h"
#include "stowage/ir/Tensor.h"

namespace stowage {

class Graph {
 public:
  std::string name;                 ///< model name (from the file), used in reports
  std::vector<Tensor> tensors;      ///< indexed by TensorId
  std::vector<Node> nodes;          ///< in schedule order: every input is produced before it is read
  std::vector<TensorId> inputs;     ///< in the model's input order
  /// In the model's output order. Invariant kept by frontends: each is an Activation produced by a
  /// node, and no tensor is listed twice (an output that is an input or constant gets a copy node).
  std::vector<TensorId> outputs;

  TensorId addTensor(Tensor t);
  /// Appends a node at the end of the schedule.
  void addNode(Node n) { nodes.push_back(std::move(n)); }

  Tensor& tensor(TensorId id) { return tensors[static_cast<size_t>(id)]; }
  const Tensor& tensor(TensorId id) const { return tensors[static_cast<size_t>(id)]; }
  std::optional<TensorId> findTensor(const std::string& name) const;

  /// Index (in `nodes`) of the node producing each tensor, or -1 (inputs, constants). Recomputed per call.
  std::vector<int> producers() const;
  /// Number of node inputs plus graph outputs reading each tensor. Recomputed per call.
  std::vector<int> useCounts() const;

  /// Removes tensors no node or graph output refers to (keeps graph inputs) and renumbers ids.
  void compactTensors();
  /// Removes the nodes with `drop[i]` set (keeping the others' order), then compactTensors().
  void removeNodes(const std::vector<bool>& drop);

 private:
  std::unordered_map<std::string, TensorId> byName_;
};

}  // namespace stowage
