// Offset algorithm "greedy-conflicts" (TVM USMP's greedy-by-conflicts class): the buffer overlapping the
// most others in time goes first, then first fit as in greedy-size. Often better than greedy-size when a few
// small buffers live across many large short-lived ones.
#pragma once

#include "stowage/plan/algo/OffsetProblem.h"

namespace stowage {

/// Offsets for every buffer (status and peak are filled in by the caller). Order: conflict count
/// descending, then size descending, then lifetime start, then input index.
OffsetResult placeGreedyConflicts(const OffsetProblem& p, const OffsetOptions& options);

}  // namespace stowage
