// Greedy-by-size placement (see GreedyBySize.h): the greedy-size first fit with the compiler's tie-breaking.
#include "stowage/plan/algo/GreedyBySize.h"

#include <algorithm>

#include "stowage/plan/algo/FirstFit.h"
#include "stowage/plan/algo/OffsetProblem.h"
#include "stowage/plan/analysis/Liveness.h"

namespace stowage {

MemoryPlan planGreedyBySize(std::vector<Buffer> buffers) {
  MemoryPlan plan;
  plan.algorithm = "greedy-by-size";
  const OffsetProblem problem = makeOffsetProblem(buffers);
  std::vector<uint32_t> order = problem.active;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const Buffer &x = buffers[a], &y = buffers[b];
    if (x.sizeBytes != y.sizeBytes) return x.sizeBytes > y.sizeBytes;
    if (x.firstStep != y.firstStep) return x.firstStep < y.firstStep;
    return x.tensor < y.tensor;
  });
  FirstFitPlacer placer(problem);
  placer.place(order, plan.offsets);
  for (size_t i = 0; i < buffers.size(); ++i)
    plan.workspaceBytes = std::max(plan.workspaceBytes, plan.offsets[i] + buffers[i].sizeBytes);
  plan.lowerBoundBytes = liveBytesLowerBound(buffers);
  plan.buffers = std::move(buffers);
  return plan;
}

}  // namespace stowage
