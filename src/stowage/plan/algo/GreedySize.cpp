// Greedy-by-size offsets (see GreedySize.h).
#include "stowage/plan/algo/GreedySize.h"

#include <algorithm>

#include "stowage/plan/algo/FirstFit.h"

namespace stowage {

std::vector<uint32_t> greedySizeOrder(const OffsetProblem& p) {
  std::vector<uint32_t> order = p.active;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (p.size[a] != p.size[b]) return p.size[a] > p.size[b];
    if (p.firstStep[a] != p.firstStep[b]) return p.firstStep[a] < p.firstStep[b];
    return a < b;
  });
  return order;
}

OffsetResult placeGreedySize(const OffsetProblem& p, const OffsetOptions&) {
  OffsetResult r;
  r.algorithm = "greedy-size";
  FirstFitPlacer placer(p);
  placer.place(greedySizeOrder(p), r.offsets);
  return r;
}

}  // namespace stowage
