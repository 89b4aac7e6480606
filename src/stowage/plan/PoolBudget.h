// What each pool can still hold, step by step, for the buffers the tiler adds (tile buffers, prefetched weights,
// resident activations): its size less the bytes the planner must place there, from its own buffers and liveness.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "stowage/ir/Graph.h"
#include "stowage/target/Board.h"

namespace stowage {

/// Per pool and node step, the bytes of the buffers that can only live in that pool (one candidate pool: rules,
/// pins, pool access), aligned to the pool (with their canaries in guard mode). The tiler keeps what it adds to a
/// pool within what is left (freeBytes), so the plan needs no second tiling.
struct PoolBudget {
  std::vector<std::optional<size_t>> capacity;     ///< by pool: its size (nullopt: unlimited)
  std::map<std::pair<int, int>, size_t> forced;    ///< (pool, step) -> bytes that can only live there
  std::map<std::pair<int, int>, std::vector<std::string>> names;  ///< (pool, step) -> those buffers, largest first
  std::vector<TensorId> tensors;                   ///< the tensors counted, sorted

  /// True when the bytes of tensor `t` are counted (a pinned activation the tiler keeps resident is not counted twice).
  bool counts(TensorId t) const;

  /// Bytes of the pool's only-here buffers live at `step` (0 when none).
  size_t forcedBytes(int pool, int step) const;
  /// Bytes the pool can still hold at every step of [first, end) beside its only-here buffers (its size less their
  /// peak there; 0 when they exceed it); nullopt for an unlimited pool.
  std::optional<size_t> freeBytes(int pool, int first, int end) const;
  /// "'pool' holds N bytes at step s that can only live there (a, b)" for the step of [first, end) where the
  /// only-here buffers peak; "" when none is live there.
  std::string why(const Board& board, int pool, int first, int end) const;
};

struct PoolBudgetOptions {
  bool ioInPools = false;          ///< graph inputs and outputs are planned into pools (PlanOptions::ioInPools)
  bool viewsShareBuffers = true;   ///< a view shares its input's buffer (PlanOptions::aliasing): it holds no bytes
  size_t guardBytes = 0;           ///< guard mode: canary bytes on each side of every activation
};

/// The budget of `g` (verified, scheduled) on `board` (validated), from the planner's buffer analysis under its own
/// partition (analysis/NodeTargets.h), before tiling. An analysis error leaves the budget without only-here bytes
/// (the plan reports it).
PoolBudget poolBudget(const Graph& g, const Board& board, const PoolBudgetOptions& options);

}  // namespace stowage
