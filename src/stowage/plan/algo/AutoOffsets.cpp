// The default offset algorithm (see AutoOffsets.h).
#include "stowage/plan/algo/AutoOffsets.h"

#include <limits>

#include "stowage/plan/algo/ExactSearch.h"
#include "stowage/plan/algo/GreedyConflicts.h"
#include "stowage/plan/algo/GreedySize.h"

namespace stowage {

OffsetResult placeAuto(const OffsetProblem& p, const OffsetOptions& options) {
  Deadline deadline(options.timeLimitSeconds);
  const bool minimise = options.capacityBytes == std::numeric_limits<size_t>::max();
  OffsetResult best;
  size_t bestPeak = std::numeric_limits<size_t>::max();
  for (auto* algorithm : {&placeGreedySize, &placeGreedyConflicts}) {
    OffsetResult r = algorithm(p, options);
    const size_t peak = peakOf(p, r.offsets);
    if (peak < bestPeak) best = std::move(r), bestPeak = peak;
    if (bestPeak == p.lowerBoundBytes || (!minimise && bestPeak <= options.capacityBytes)) break;
    if (deadline.expired()) break;  // keep the time limit on huge inputs: one greedy plan is enough
  }
  best.algorithm = "auto(" + best.algorithm + ")";
  // With allowed overlaps a greedy plan may go below the bound of disjoint buffers, which the exact search (it
  // places buffers apart) cannot.
  if (bestPeak == p.lowerBoundBytes || (!minimise && bestPeak <= options.capacityBytes) ||
      triviallyInfeasible(p, options.capacityBytes) || (p.hasOverlaps && bestPeak < p.disjointBoundBytes))
    return best;  // the caller classifies: Optimal / Feasible / Infeasible

  if (deadline.expired()) {  // no time left for the search: the greedy plan stands (or nothing fits)
    if (!minimise) best.status = OffsetStatus::TimedOut;
    return best;
  }
  OffsetOptions rest = options;
  rest.timeLimitSeconds = deadline.remaining();
  OffsetResult exact = placeExact(p, rest, &best);  // starts from the greedy plan; does not recompute it
  if (exact.offsets.empty()) {  // capacity mode: proved infeasible or timed out without a plan
    exact.algorithm = "auto(exact)";
    return exact;
  }
  const size_t exactPeak = peakOf(p, exact.offsets);
  if (exactPeak < bestPeak) {
    exact.algorithm = "auto(exact)";
    return exact;
  }
  best.status = exact.status;  // the greedy plan stands; exact may have proved it optimal
  return best;
}

}  // namespace stowage
