// Liveness analysis: the first stage of memory planning. Turns the scheduled graph into the buffers the
// workspace must hold, each with its lifetime over node steps, and the live-bytes lower bound.
#pragma once

#include <vector>

#include "stowage/ir/Graph.h"
#include "stowage/plan/MemoryPlan.h"

namespace stowage {

/// One Buffer per Activation tensor that lives in the workspace, in tensor-id order. Graph inputs, graph
/// outputs (user pointers) and constants (weights) are not in the workspace. A tensor is live from the step
/// of its producer to its last reader inclusive: [producer, lastReader + 1); a tensor nobody reads lives
/// [producer, producer + 1). Sizes are the tensor byte sizes; alignment is kWorkspaceAlignment.
std::vector<Buffer> computeLiveness(const Graph& g);

/// Max over steps of the sum of sizeBytes of buffers live at that step, in bytes: no placement can use
/// less workspace than this.
size_t liveBytesLowerBound(const std::vector<Buffer>& buffers);

}  // namespace stowage
