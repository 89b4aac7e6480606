// Offset algorithm "hill-climb" (TVM USMP hill-climb / Vela search class): start from the greedy-size order,
// repeatedly perturb the placement order (swap two buffers or move one earlier), re-run first fit and keep
// the order when the peak does not get worse. Deterministic for a given seed unless the time limit stops it.
#pragma once

#include <cstddef>

#include "stowage/plan/algo/OffsetProblem.h"

namespace stowage {

/// At most this many perturbations per run (the time limit may stop it sooner).
inline constexpr size_t kHillClimbMaxIterations = 20000;

/// Offsets for every buffer (status and peak are filled in by the caller). Stops at the lower bound, at
/// options.capacityBytes when a capacity is given, at kHillClimbMaxIterations or at the time limit.
OffsetResult placeHillClimb(const OffsetProblem& p, const OffsetOptions& options);

}  // namespace stowage
