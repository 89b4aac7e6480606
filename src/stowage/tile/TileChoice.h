// Tile sizes of one offloaded layer: the output-row and output-channel tile, tile order and per-operand buffering
// (double buffering when asked and not slower than one buffer for some or all operands) that fits the scratch pools
// and has the lowest estimated cycles under the cost model.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "stowage/plan/ProgramPlan.h"
#include "stowage/target/Board.h"
#include "stowage/tile/CostModel.h"
#include "stowage/tile/TileGeometry.h"

namespace stowage {

struct TileChoice {
  int64_t rowTile = 0, channelTile = 0;
  int cores = 1;  ///< cores the tiles are split over (cores mode may use fewer than the target has)
  bool doubleBuffer = true;  ///< ping-pong halves; false when asked for none or when one buffer is cheaper
  OperandBuffers buffers;    ///< per operand (all doubled when doubleBuffer, none when asked for none)
  TileOrder order = TileOrder::ChannelsOuter;
  RowBlocks rowBlocks;       ///< smaller first / last row blocks (tile/RaggedRowBlocks.h); uniform by default
  DirectOperands direct;     ///< operands used in place (no buffer, no DMA)
  TileSchedule schedule;
  LayerCost cost;
  TileBytes bytes;
  std::vector<ScratchRequest> scratch;  ///< pairedWith indexes this list
  size_t coreStride[3] = {0, 0, 0};
};

/// The core counts the tile chooser tries on a target with `cores` cores, most first: every count up to 8, and
/// above 8 a count about 15% below the one before (32: 32, 27, 22, 18, 15, 12, 10, 8, ..., 1), so a many-core target
/// costs the tile search O(log cores) counts instead of one per core (MobileNetV2 224 on a 32-core hexagon-vtcm took
/// 130 s).
std::vector<int> coreCountCandidates(int cores);

/// The operand buffers and tile order `layer` records, and its tiles as the tiler chose them (the emitter and the
/// benchmarks rebuild them so).
OperandBuffers operandBuffersOf(const OffloadedLayer& layer);
TileOrder tileOrderOf(const OffloadedLayer& layer);
DirectOperands directOperandsOf(const OffloadedLayer& layer);
RowBlocks rowBlocksOf(const OffloadedLayer& layer);
TileSchedule offloadedSchedule(const LayerShape& s, const OffloadedLayer& layer);
/// How `layer`'s tiles are buffered and walked, for reports and the generated layer comment: its operand buffers
/// (operandBuffersText), then ", row blocks outer", ragged blocks (rowBlocksText), ", x/y in place" and ", weights on
/// both DMA channels" as they apply.
std::string tilingText(const OffloadedLayer& layer);

/// Writes `cost` into `layer`'s estimate (computeCycles, dmaCycles, totalCycles).
void recordEstimate(OffloadedLayer& layer, const LayerCost& cost);

/// A lower bound on any schedule of `s` in tiles of `rowTile` x `channelTile` over `cores`: its busiest core's stores
/// (every tile stores its output block once, one store after another on its core's queue), at least the average.
uint64_t storeCyclesAtLeast(const Target& target, const LayerShape& s, int64_t rowTile, int64_t channelTile, int cores);

/// Splits `c`'s weight loads over both DMA channels (splitWeightLoads) when the target's cores have two channels and
/// the cost model says the layer gets faster; else leaves `c` as it is.
void splitWeightsWhenFaster(const Target& target, const LayerShape& s, TileChoice& c);

/// Operands whose tensors live in a pool the target's cores reach directly (`resident`), and the bytes those
/// tensors hold in the scratch pools at this step (`reservedBytes`, kept free of tile buffers).
struct ResidentOperands {
  DirectOperands resident;
  size_t reservedBytes = 0;
};

/// Watches the tile search, for analyses of the tiling space (bench/accel): `begin(step)` when a search for the layer
/// at `step` starts (a layer may be searched again, e.g. with resident operands: the last search is the one whose
/// choice stands), then `candidate` for every tiling that fits its pools, slower ones included. With an observer the
/// search prunes nothing and also tries ragged row blocks (tile/RaggedRowBlocks.h) on more uniform tilings, for the
/// observer only: the choice is the same as without one.
struct TileSearchObserver {
  std::function<void(int step)> begin;
  std::function<void(int step, const Target& target, const LayerShape& s, const TileChoice& candidate)> candidate;
};

/// The best tiling of `s` at `step` on `target` (index `targetIndex`) with tiles in `pools`, or nullopt with
/// `whyNot` set (the smallest tile and what it would need). A resident operand is used in place (direct) by the
/// tilings whose copies of it are contiguous; the others copy it by DMA like any operand. With `sharedInput`, cores mode
/// also tries row blocks whose input all cores share (tile/SharedInput.h; `--no-shared-input` turns it off), and with
/// `sharedWholeInput` one row block of all the output rows whose whole input they share (`--no-shared-whole-input`).
std::optional<TileChoice> chooseTiles(const Board& board, int targetIndex, const LayerShape& s, const std::vector<int>& pools, int step,
                                      bool doubleBuffer, std::string& whyNot, const ResidentOperands& resident = {},
                                      const TileSearchObserver* observer = nullptr, bool sharedInput = true, bool sharedWholeInput = true);

}  // namespace stowage
