// The question graph passes ask before merging two tensors into one (folding or fusing a node into its
// producer): may `inner` disappear and its producer write `outer` instead? Answered by plan/analysis/MergeCheck.h.
#pragma once

#include <functional>
#include <string>

#include "stowage/ir/Graph.h"

namespace stowage {

/// Empty string: allowed; anything else: why not (e.g. a placement rule wants the two tensors in different pools).
using MergeVeto = std::function<std::string(const Graph& g, TensorId inner, TensorId outer)>;

}  // namespace stowage
