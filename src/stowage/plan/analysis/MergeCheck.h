// Whether the board's placement rules and pins let two activation tensors become one buffer: asked by graph
// passes (pass/FuseActivation.h) before they fuse a node into its producer, so a fusion never breaks a rule or pin.
#pragma once

#include <string>

#include "stowage/ir/Graph.h"
#include "stowage/target/Board.h"

namespace stowage {

/// Empty when tensors `inner` (to disappear) and `outer` (to remain, now written by `inner`'s producer) may be
/// merged: no pin names `inner`, no rule restricting inputs or outputs matches the node between them (it would
/// disappear) without matching the producer too, and some pool satisfies every rule over the producers and
/// readers of both (and the pin of `outer`, if any). Otherwise why not, naming the rule or pin (for a remark).
std::string whyRulesKeepApart(const Graph& g, const Board& board, TensorId inner, TensorId outer);

}  // namespace stowage
