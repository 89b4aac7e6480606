// Streaming on CPU-only boards (the DORY / Deeploy case): a layer the CPU runs whose working set exceeds the
// board's small fast pool (DTCM, L1) is tiled through that pool by the CPU's own DMA, in cores mode.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "stowage/ir/Graph.h"
#include "stowage/target/Board.h"
#include "stowage/tile/TileProgram.h"

namespace stowage {

/// The pools a CPU target streams `node`'s tiles through: the `scratch` pools of the first matching rule that
/// has them, else the cheapest workspace pool with a size that the CPU can access, when the CPU can access a
/// slower workspace pool too (with a single pool there is nothing to stream from). Empty when there is none.
std::vector<int> cpuStreamPools(const Board& board, int cpu, const Node& node);

/// Bytes `node` touches when it runs whole: its inputs (activations, weights, bias) and outputs.
size_t layerWorkingSetBytes(const Graph& g, const Node& node);

/// Decides whether the CPU target `cpu` streams node `step` of `g` and, when it does, records the layer (its
/// tiles and scratch buffers) in `r`. A layer streams when the CPU has a DMA (`dma_bytes_per_cycle` > 0), the
/// layer has a tiled lowering, and its working set exceeds the capacity of its stream pools; its tiles then use
/// at most half of those pools, leaving the rest to the activations the planner places there. Every decision
/// on a layer that does not fit is a remark in `r`. Returns whether the layer streams.
bool streamOnCpu(const Graph& g, const Board& board, int cpu, int step, const TileOptions& options, TiledProgram& r);

}  // namespace stowage
