// Where the tile buffers of one offloaded layer go: input and weight tiles in the first scratch pool, output
// tiles in the last one (Gemmini's scratchpad / accumulator) when there are two, the two halves of each
// ping-pong pair in different banks when the pool has banks, one region per core in shared pools; and which pools
// a target's tiles may use at all.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "stowage/ir/Graph.h"
#include "stowage/plan/ProgramPlan.h"
#include "stowage/target/Board.h"

namespace stowage {

/// The scratch pools of `target` for `node`: the `scratch` pools of the first matching rule that has one,
/// else the fixed workspace pools only `target` (and no cpu target) can access.
std::vector<int> scratchPoolsFor(const Board& board, int target, const Node& node);

/// Bytes of one x, w and y tile half (per core).
struct ScratchNeed {
  size_t bytes[3] = {0, 0, 0};
  bool doubleBuffer = true;
  bool singleBuffered[3] = {false, false, false};  ///< x, w, y with one half even when doubleBuffer
  int cores = 1;  ///< regions per buffer in shared pools (1 for engine mode)
  size_t reservedBytes = 0;  ///< bytes of every pool (and of every bank) kept free for resident tensors
  bool sharedX = false;      ///< one x region for all cores (tile/SharedInput.h): not in a per_core_stride pool
};

/// The requests (names "s<step>_x0" ...) for one layer at `step`, pinned to pools and banks, or nullopt when they
/// do not fit `pools` (Board::pools indices, in the order the board gives them). `coreStride` receives, per
/// operand, the bytes between consecutive cores' regions (0 in per_core_stride pools or with one core).
std::optional<std::vector<ScratchRequest>> layoutScratch(const Board& board, const std::vector<int>& pools, const ScratchNeed& need,
                                                         int step, size_t coreStride[3]);

}  // namespace stowage
