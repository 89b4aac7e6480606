// Offset algorithm "exact": a branch-and-bound search over canonical placements in the spirit of MiniMalloc
// (Moffitt, ASPLOS 2024). It builds solutions bottom-up, each buffer at the lowest aligned offset above the
// buffers placed before it, prunes with per-section capacity bounds, and proves optimality or infeasibility.
#pragma once

#include "stowage/plan/algo/OffsetProblem.h"

namespace stowage {

/// Statistics of the last search, for benchmarks and tests.
struct ExactStats {
  size_t nodes = 0;      ///< search nodes evaluated
  size_t decisions = 0;  ///< capacities tried (1 with a capacity; several in the binary search otherwise)
};

/// The engines of the portfolio. The planner runs both; tests run each alone (which also skips the shortcut
/// "a greedy plan already decides") to check each against brute force and against the other.
enum class ExactEngines { Portfolio, CanonicalOnly, GapOnly };

/// With a finite options.capacityBytes: a plan within it (Feasible/Optimal), Infeasible when proved none
/// exists, or TimedOut. Without one: minimises the peak by binary search between the lower bound and the best
/// greedy peak (or `incumbent`'s, when given and better); Optimal when proved, else Feasible with the best
/// plan found in the time limit. Status and peak are final (the caller still classifies against capacity).
OffsetResult placeExact(const OffsetProblem& p, const OffsetOptions& options, const OffsetResult* incumbent = nullptr,
                        ExactStats* stats = nullptr, ExactEngines engines = ExactEngines::Portfolio);

}  // namespace stowage
