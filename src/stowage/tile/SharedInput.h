// Cores mode with one input buffer shared by all cores: each row block's input is loaded once (by core 0, or split
// over every core's DMA), the cores meet at a barrier, then each computes its own channel blocks of that row block.
#pragma once

#include <optional>

#include "stowage/tile/CostModel.h"
#include "stowage/tile/TileGeometry.h"

namespace stowage {

/// The tiles of `s` in `rowTile` x `channelTile` blocks over `cores` cores sharing their input: row blocks outer (per
/// batch), core c taking the channel blocks [c * B / cores, (c + 1) * B / cores) of every row block (B channel blocks),
/// so every core walks the same row blocks in the same order. A row block's first tile on each core loads its input
/// (loadX; the shared half xBuf = row block % 2 with two halves, else 0), loaded by cores [0, loaders). w and y as
/// `buffers` say, per core. nullopt when the layer's channel blocks of one row block read different inputs (grouped
/// and depthwise convolutions, pools, element-wise layers) or there are fewer channel blocks than cores.
/// With one row block (rowTile >= rows: the whole input), the input copies are split evenly (splitSharedInputEvenly).
std::optional<TileSchedule> scheduleSharedInput(const LayerShape& s, int64_t rowTile, int64_t channelTile, int cores,
                                                const OperandBuffers& buffers, int loaders);

/// Re-describes each contiguous row block input copy of a shared `schedule` (one run of bytes: NHWC rows with every
/// channel, whole NCHW planes) as `loaders` rows of equal bytes, each a multiple of 4, so that every loader core moves
/// the same bytes (3 planes over 4 loaders would otherwise leave one loader idle and the others a plane each); the
/// packed local buffer is the same. A copy whose bytes do not split so stays as it is.
void splitSharedInputEvenly(TileSchedule& schedule, int loaders);

/// The part of row block copy `x` that loader core `core` of `loaders` moves: rows [rows * core / loaders,
/// rows * (core + 1) / loaders) (0 rows: none; the emitter computes the same). Lands `first row * rowBytes` bytes
/// into the shared buffer.
TileCopy sharedInputPart(const TileCopy& x, int loaders, int core);

/// estimateLayer of a schedule with TileSchedule::sharedLoaders > 0, replaying the generated code's order per core
/// (TiledLayerEmitter): at a row block's first tile, after that tile's first doubled weight load, with one input half
/// a barrier (from the second row block on: every core is done reading the half), the loaders' parts of the input;
/// the tile's own and the next tile's weight loads; the loaders wait for their part; a barrier; with two halves the
/// loaders then start the next row block's parts into the other half. The rest as estimateLayer, cores in lockstep
/// at the barriers (a barrier moves every core to the latest arrival, as the simulator does).
LayerCost estimateSharedInput(const Target& target, const LayerShape& s, const TileSchedule& schedule, const OperandBuffers& buffers,
                              const CrossLayerWeights& cross);

}  // namespace stowage
