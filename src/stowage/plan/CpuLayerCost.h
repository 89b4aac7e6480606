// The cost model of a layer a CPU runs with its portable kernel (not tiled): compute from its MACs and memory
// traffic from the pools its tensors were placed in. The host simulator charges generated code these cycles.
#pragma once

#include <cstdint>

#include "stowage/ir/Graph.h"
#include "stowage/plan/ProgramPlan.h"

namespace stowage {

/// Cycles of node `n` run untiled on one core of `plan`'s target `target`:
/// max(ceil(ops / macs_per_cycle), sum of ceil(bytes / read_bytes_per_cycle) over the tensors it reads plus
/// ceil(bytes / write_bytes_per_cycle) over those it writes), where ops = its MACs, or its output elements for
/// ops without MACs, and each tensor's bandwidth is that of the pool it is planned in (pools without a bandwidth
/// and tensors outside the plan cost no memory cycles). A view planned on its input's bytes (Reshape, aliased)
/// runs no code and costs 0.
uint64_t cpuLayerCycles(const Graph& g, const Node& n, const ProgramPlan& plan, int target);

}  // namespace stowage
