// Deterministic text form of the graph IR, for `stowage compile --dump-ir` and golden tests.
#pragma once

#include <string>

#include "stowage/ir/Graph.h"

namespace stowage {

/// One line per graph input, constant (name, type, shape, bytes), node (in schedule order, with attributes
/// sorted by name) and output. Same graph, same text.
std::string printGraph(const Graph& g);

}  // namespace stowage
