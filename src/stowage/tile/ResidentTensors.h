// Activations that stay in an accelerator's local memory between the layers it runs: a tensor made and read only
// by layers tiled onto one cores-mode target lives in that target's scratch pool, and those layers use it in place.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "stowage/ir/Graph.h"
#include "stowage/plan/PoolBudget.h"
#include "stowage/plan/ProgramPlan.h"
#include "stowage/target/Board.h"
#include "stowage/tile/TileChoice.h"

namespace stowage {

struct TiledProgram;

/// The estimated cycles of the offloaded layer at node step `step` tiled again with `operands` (nullopt: it no
/// longer tiles).
using RetiledCycles = std::function<std::optional<uint64_t>(int step, const ResidentOperands& operands)>;

/// The activations of `tiled` (a first tiling of `g`, no residents) that can stay resident: not a graph input or
/// output, made and read only by layers offloaded in cores mode to the same accelerator target (not a CPU
/// streaming through its fast pool), as x, w or y of their tile kernels; a scratch pool common to all those layers
/// that the planner may use for the tensor (pool access, rules and pins allow it) and that is one shared region
/// (no per_core_stride). Admitted in graph order while, at every step of the tensor's life, the resident bytes
/// plus that step's tile buffers of the first tiling use at most half of the pool (the rest leaves room for
/// alignment, banks and the retiling). A tensor over that budget (the first tiling took the room for larger or
/// double-buffered tiles) is admitted when `retiled` is given, the residents alone stay within half the pool, and
/// the offloaded layers whose reservation it changes, tiled again, still tile and take fewer estimated cycles
/// in all than without it. With `throughViews` (the planner shares a view's input buffer with its output) a reader
/// may also be a view (Reshape, on any target: it runs no code) whose output is read likewise: the output stays
/// too, as a ResidentTensor with `viewOf` set, after the tensor it views.
/// With `budget`, "the pool" above is what it leaves at each step (plan/PoolBudget.h: the pool less the bytes that can
/// only live there); a tensor that the residents alone would fit in half the pool but not in half of that stays in
/// main memory, with a remark in `remarks` naming what holds the pool.
std::vector<ResidentTensor> chooseResidentTensors(const Graph& g, const Board& board, const TiledProgram& tiled, bool throughViews,
                                                  const RetiledCycles& retiled = {}, const PoolBudget* budget = nullptr,
                                                  std::vector<std::string>* remarks = nullptr);

/// Bytes the tensors of `resident` hold (each aligned to its pool) per (pool, node step), from the step that makes
/// each to the last that reads it or one of its views (a view holds no bytes of its own).
std::map<std::pair<int, int>, size_t> residentBytesByPoolAndStep(const Graph& g, const Board& board, const std::vector<ResidentTensor>& resident);

/// Per node step, the operands of its layer that are resident and the resident bytes live in the scratch pools at
/// that step (what chooseTiles needs to use them in place).
std::map<int, ResidentOperands> residentOperandsByStep(const Graph& g, const Board& board, const std::vector<ResidentTensor>& resident);

/// The tensors of `resident` whose producer and readers all (views aside) are still offloaded to their target in
/// `tiled` (a retiling that reserves their bytes may push a layer back to the CPU); a tensor and its views stay or
/// go together.
std::vector<ResidentTensor> residentsStillOffloaded(const Graph& g, const TiledProgram& tiled, const std::vector<ResidentTensor>& resident);

}  // namespace stowage
