// Graph pass: chooses the node execution order (Graph::nodes) with the lowest peak of live activation bytes for
// branching graphs (residual blocks, concatenations); runs after the other graph passes, before tiling and planning.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "stowage/ir/Graph.h"

namespace stowage {

struct ReorderOptions {
  /// `--io-in-pools`: graph inputs are live from the start to their last reader and outputs from their producer to
  /// the end, like the planner's buffers (BufferConstraints.h); otherwise neither takes workspace bytes.
  bool ioInPools = false;
  /// Most partial schedules (sets of scheduled nodes) kept per step. The search is exact when no step has more;
  /// beyond, it keeps the best ones (lowest peak so far, then fewest live bytes) and is a beam-search heuristic.
  size_t maxStatesPerStep = 1024;
};

/// What reorderForMemory did, by its own measure of live bytes (see scheduleLiveBytesPeak).
struct ReorderResult {
  bool changed = false;      ///< the order was replaced
  size_t peakBefore = 0;     ///< bytes, the original order
  size_t peakAfter = 0;      ///< bytes, the order kept (== peakBefore when unchanged)
  bool exact = true;         ///< no step held more than maxStatesPerStep partial schedules: the order is optimal
  size_t statesVisited = 0;  ///< partial schedules the search kept, over every step (both models)
  std::string remark;        ///< one line for the compile summary when the order changed, else ""
};

/// The peak, over the steps of `order` (a permutation of node indices of `g` where every input is produced
/// before it is read), of the live activation bytes as the planner counts them (plan/analysis: Liveness,
/// BufferConstraints, Aliasing), by two models: a view (Reshape) shares its input's bytes; an Add / QAdd writes
/// its output into an input of the same shape and dtype that dies there (not a graph output); a tensor lives
/// from its producer to its last reader inclusive; graph inputs, outputs and constants take no bytes unless
/// `ioInPools`. Concat inputs written into their slice of the output (the planner does it where that does not
/// raise its peak) reserve the whole output from the first input's producer in one model and are separate
/// buffers in the other; the result is the lower of the two peaks. Bytes.
size_t scheduleLiveBytesPeak(const Graph& g, const std::vector<int>& order, const ReorderOptions& options = {});

/// Reorders `g.nodes` (a valid schedule) into the valid schedule with the lowest scheduleLiveBytesPeak found by
/// a search over sets of scheduled nodes (dynamic programming, exact within maxStatesPerStep, else beam search),
/// run once per concat model. Keeps the original order unless the new one is strictly lower. Deterministic:
/// ties go to the earlier node of the original order. Changes nothing else of the graph.
ReorderResult reorderForMemory(Graph& g, const ReorderOptions& options = {});

}  // namespace stowage
