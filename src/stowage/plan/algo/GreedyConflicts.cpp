// Greedy-by-conflicts offsets (see GreedyConflicts.h).
#include "stowage/plan/algo/GreedyConflicts.h"

#include <algorithm>

#include "stowage/plan/algo/FirstFit.h"

namespace stowage {

OffsetResult placeGreedyConflicts(const OffsetProblem& p, const OffsetOptions&) {
  OffsetResult r;
  r.algorithm = "greedy-conflicts";
  const std::vector<size_t> conflicts = conflictCounts(p);
  std::vector<uint32_t> order = p.active;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (conflicts[a] != conflicts[b]) return conflicts[a] > conflicts[b];
    if (p.size[a] != p.size[b]) return p.size[a] > p.size[b];
    if (p.firstStep[a] != p.firstStep[b]) return p.firstStep[a] < p.firstStep[b];
    return a < b;
  });
  FirstFitPlacer placer(p);
  placer.place(order, r.offsets);
  return r;
}

}  // namespace stowage
