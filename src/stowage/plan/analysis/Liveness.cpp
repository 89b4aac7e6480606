// Liveness analysis (see Liveness.h).
#include "stowage/plan/analysis/Liveness.h"

#include <algorithm>
#include <map>

namespace stowage {

std::vector<Buffer> computeLiveness(const Graph& g) {
  std::vector<int> producer = g.producers();
  std::vector<int> lastReader(g.tensors.size(), -1);
  for (size_t step = 0; step < g.nodes.size(); ++step)
    for (TensorId id : g.nodes[step].inputs)
      if (id != kNoTensor) lastReader[static_cast<size_t>(id)] = static_cast<int>(step);
  std::vector<bool> isOutput(g.tensors.size(), false);
  for (TensorId id : g.outputs) isOutput[static_cast<size_t>(id)] = true;

  std::vector<Buffer> buffers;
  for (size_t i = 0; i < g.tensors.size(); ++i) {
    const Tensor& t = g.tensors[i];
    if (t.kind != TensorKind::Activation || isOutput[i] || producer[i] < 0) continue;
    Buffer b;
    b.tensor = static_cast<TensorId>(i);
    b.sizeBytes = t.byteSize();
    b.alignment = kWorkspaceAlignment;
    b.firstStep = producer[i];
    b.endStep = std::max(lastReader[i], producer[i]) + 1;
    buffers.push_back(b);
  }
  return buffers;
}

size_t liveBytesLowerBound(const std::vector<Buffer>& buffers) {
  // Sweep over lifetime boundaries: +size at firstStep, -size at endStep.
  std::map<int, long long> delta;
  for (const Buffer& b : buffers) {
    delta[b.firstStep] += static_cast<long long>(b.sizeBytes);
    delta[b.endStep] -= static_cast<long long>(b.sizeBytes);
  }
  long long live = 0, best = 0;
  for (const auto& [step, d] : delta) {
    live += d;
    best = std::max(best, live);
  }
  return static_cast<size_t>(best);
}

}  // namespace stowage
