// Constant folding (see FoldConstants.h).
#include "stowage/pass/FoldConstants.h"

#include "stowage/lower/KernelCall.h"

namespace stowage {

namespace {

constexpr size_t kMaxGrowthBytes = 64 * 1024;

bool shouldFold(const Graph& g, const Node& n, const std::vector<bool>& isOutput) {
  size_t inputBytes = 0;
  for (TensorId id : n.inputs) {
    if (id == kNoTensor) continue;
    const Tensor& t = g.tensor(id);
    if (!t.isConstant()) return false;
    inputBytes += t.byteSize();
  }
  size_t outputBytes = 0;
  for (TensorId id : n.outputs) {
    if (id == kNoTensor) continue;
    if (isOutput[static_cast<size_t>(id)]) return false;
    outputBytes += g.tensor(id).byteSize();
  }
  return !(outputBytes > kMaxGrowthBytes && outputBytes > inputBytes);
}

}  // namespace

Status foldConstants(Graph& g) {
  std::vector<bool> isOutput(g.tensors.size(), false);
  for (TensorId id : g.outputs) isOutput[static_cast<size_t>(id)] = true;

  Status status;
  std::vector<bool> folded(g.nodes.size(), false);
  for (size_t i = 0; i < g.nodes.size() && status.ok(); ++i) {
    const Node& n = g.nodes[i];
    if (!shouldFold(g, n, isOutput)) continue;
    auto calls = lowerNode(g, n);
    if (!calls.ok()) {
      status = calls.error();
      break;
    }
    Tensor& out = g.tensor(n.outputs[0]);
    std::vector<uint8_t> data(out.byteSize(), 0);
    for (const KernelCall& call : *calls) {
      std::vector<const void*> ins;
      for (TensorId id : call.inputs) ins.push_back(id == kNoTensor ? nullptr : g.tensor(id).data.data());
      executeKernelCall(call, ins, data.data());
    }
    out.kind = TensorKind::Constant;
    out.data = std::move(data);
    folded[i] = true;
  }
  // Drop folded nodes (also after a failure, so the graph stays consistent) and their dead inputs.
  g.removeNodes(folded);
  return status;
}

}  // namespace stowage
