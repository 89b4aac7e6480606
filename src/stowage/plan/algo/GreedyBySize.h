// Placement algorithm "greedy-by-size": the first static planner. Given the buffers from liveness, it
// places the largest first, each at the lowest aligned offset free of every already placed buffer whose
// lifetime overlaps (first fit). Deterministic: ties are broken by lifetime start, then tensor id; a thin
// wrapper over the first-fit engine behind placeOffsets("greedy-size") (see OffsetAlgorithm.h).
#pragma once

#include <vector>

#include "stowage/plan/MemoryPlan.h"

namespace stowage {

/// A complete plan (offsets, workspaceBytes, lowerBoundBytes, algorithm = "greedy-by-size") for `buffers`,
/// which keep their order. Offsets honour each buffer's alignment. Zero-size buffers sit at offset 0.
MemoryPlan planGreedyBySize(std::vector<Buffer> buffers);

}  // namespace stowage
