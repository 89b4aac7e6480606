// Buffers and their constraints: every activation and constant of the scheduled graph becomes a buffer with
// its size, alignment, live interval and the pools it may live in (the intersection of: pools of the right
// kind, pools every target touching it can access, pools the matching placement rules allow), plus its pin.
#pragma once

#include <vector>

#include "stowage/ir/Graph.h"
#include "stowage/plan/ProgramPlan.h"
#include "stowage/plan/analysis/NodeTargets.h"
#include "stowage/support/Diagnostic.h"
#include "stowage/target/Board.h"

namespace stowage {

/// The buffers of `g` on `board` (validated), with `candidates` (cheapest pool first), `pinnedPool`, `reads`,
/// alignment (the strictest of its candidates) and lifetimes; nothing placed yet. Activations (not graph
/// inputs or outputs, which the application passes as pointers) come first in tensor-id order, then every
/// constant some node reads, live over the whole run [0, steps). Errors: a buffer no pool can hold (names
/// the tensor and why each pool was excluded), a pin naming a pool the tensor cannot use, a pin that matches
/// no tensor. With `ioInPools` (--io-in-pools) graph inputs and outputs are activation buffers too: an input is
/// live from step 0 (the application writes it before the run) to its last reader, an output from its producer
/// to the end of the run (the application reads it after). With `viewsShareBuffers` (the planner aliases views,
/// analysis/Aliasing.h) a view (Reshape) touches no memory: its target's access excludes no pool for its input or
/// output (its rules still apply); restrictCopyingViews puts the exclusions back for the views that copy after all.
Result<std::vector<PlacedBuffer>> analyzeBuffers(const Graph& g, const Board& board, const NodeTargets& targets,
                                                 bool ioInPools = false, bool viewsShareBuffers = false);

/// After assignAliases on buffers analyzed with `viewsShareBuffers`: a view whose output did not join its input's
/// group copies the bytes on its target, so both groups keep only the pools that target can access. Error (naming
/// the view, the tensor and the pools) when a group has none left or is pinned to one it cannot access.
Status restrictCopyingViews(const Graph& g, const Board& board, const NodeTargets& targets, std::vector<PlacedBuffer>& buffers);

}  // namespace stowage
