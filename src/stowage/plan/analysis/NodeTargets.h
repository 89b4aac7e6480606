// Which target of the board runs each node of the schedule: an accelerator when the board lists the node's op
// for it, else the first CPU target. The planner needs it to know which targets touch each buffer (pool
// access); the tiler (tile/) refines offload decisions later.
#pragma once

#include <string>
#include <vector>

#include "stowage/ir/Graph.h"
#include "stowage/target/Board.h"

namespace stowage {

/// The target of every node.
struct NodeTargets {
  std::vector<int> targetOf;         ///< by node step: index into Board::targets
  std::vector<std::string> remarks;  ///< one per node an accelerator could not take, with the reason
};

/// Assigns each node of `g` to a target of `board` (which has at least one target). A node goes to the first
/// accelerator whose `ops` match its op, else to the first CPU target (or the first target if none is a CPU).
NodeTargets assignNodeTargets(const Graph& g, const Board& board);

}  // namespace stowage
