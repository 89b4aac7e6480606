// Greedy-by-size placement (see GreedyBySize.h).
#include "stowage/plan/algo/GreedyBySize.h"

#include <algorithm>
#include <numeric>

#include "stowage/plan/analysis/Liveness.h"

namespace stowage {

MemoryPlan planGreedyBySize(std::vector<Buffer> buffers) {
  MemoryPlan plan;
  plan.algorithm = "greedy-by-size";
  plan.offsets.assign(buffers.size(), 0);
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const Buffer &x = buffers[a], &y = buffers[b];
    if (x.sizeBytes != y.sizeBytes) return x.sizeBytes > y.sizeBytes;
    if (x.firstStep != y.firstStep) return x.firstStep < y.firstStep;
    return x.tensor < y.tensor;
  });

  std::vector<size_t> placed;  // indices into buffers, in placement order
  std::vector<std::pair<size_t, size_t>> busy;  // [offset, end) of conflicting buffers
  for (size_t i : order) {
    const Buffer& b = buffers[i];
    size_t offset = 0;
    if (b.sizeBytes > 0) {
      busy.clear();
      for (size_t j : placed)
        if (buffers[j].sizeBytes > 0 && lifetimesOverlap(b, buffers[j]))
          busy.emplace_back(plan.offsets[j], plan.offsets[j] + buffers[j].sizeBytes);
      std::sort(busy.begin(), busy.end());
      // First fit: walk the busy ranges by address; take the first gap that holds the buffer.
      for (const auto& [start, end] : busy) {
        if (offset + b.sizeBytes <= start) break;
        offset = std::max(offset, alignUp(end, b.alignment));
      }
    }
    plan.offsets[i] = offset;
    plan.workspaceBytes = std::max(plan.workspaceBytes, offset + b.sizeBytes);
    placed.push_back(i);
  }
  plan.lowerBoundBytes = liveBytesLowerBound(buffers);
  plan.buffers = std::move(buffers);
  return plan;
}

}  // namespace stowage
