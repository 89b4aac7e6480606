// Structural check of the graph IR, run after the frontend and after every pass: arities, tensor ids,
// single producers, schedule order, constant sizes and shapes against each op's shape rule.
#pragma once

#include "stowage/ir/Graph.h"
#include "stowage/support/Diagnostic.h"

namespace stowage {

/// OK, or the first violation found, naming the node or tensor.
Status verifyGraph(const Graph& g);

}  // namespace stowage
