// Offset algorithm "greedy-size" (TFLite Micro's greedy-by-size class): largest buffer first, each at the
// lowest free aligned offset among the buffers already placed that overlap it in time (first fit).
// O(n log n + conflicts), so 100,000 buffers plan in well under a second.
#pragma once

#include <cstdint>
#include <vector>

#include "stowage/plan/algo/OffsetProblem.h"

namespace stowage {

/// Size descending, then lifetime start, then input index: the placement order of greedy-size.
std::vector<uint32_t> greedySizeOrder(const OffsetProblem& p);

/// Offsets for every buffer (status and peak are filled in by the caller).
OffsetResult placeGreedySize(const OffsetProblem& p, const OffsetOptions& options);

}  // namespace stowage
