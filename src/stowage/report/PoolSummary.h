// The short text report `stowage compile` prints: one line per memory pool with capacity, bytes used, the
// lower bound, utilisation and the layer at the peak, then the planner's remarks (spills, fallbacks).
#pragma once

#include <string>

#include "stowage/ir/Graph.h"
#include "stowage/plan/ProgramPlan.h"

namespace stowage {

/// A fixed-width table of `plan`'s pools (graph `g` names the layers) followed by its remarks, each line
/// indented by two spaces and ending in '\n'.
std::string poolSummary(const Graph& g, const ProgramPlan& plan);

}  // namespace stowage
