// Input handover between consecutive matrix-engine layers: a layer fences after its last compute, then stores its
// last output tile while it loads the next layer's first input tile, so one layer's drain overlaps the next's fill.
#pragma once

#include "stowage/ir/Graph.h"
#include "stowage/plan/PoolBudget.h"
#include "stowage/target/Board.h"
#include "stowage/tile/TileGeometry.h"

namespace stowage {

struct TiledProgram;

/// The first input copy of `schedule` (the one a layer before hands over; rows 0 when its first tile loads none).
TileCopy handedInputCopy(const TileSchedule& schedule);

/// Pairs each engine-mode layer with the layer at the very next step on the same engine when the cost model says both
/// together get faster: the earlier layer's host code fences after its last compute call (every earlier store has then
/// ended, so the bytes the next layer reads are in main memory; a device need not order an mvin after an mvout of the
/// same main-memory bytes), then issues its last store and the next layer's first input load, which run side by side; the
/// next layer skips that load. Possible when the next layer loads its first input tile into half 0 of its input
/// buffer, that copy does not overlap the earlier layer's last output tile, and the buffer fits its pool (and bank)
/// beside what the earlier layer's step holds (with `budget`, the bytes only that pool may hold): it then lives from
/// the earlier step (ScratchRequest::firstStep). Sets OffloadedLayer::handsInputTo / inputHandedOver and the two
/// layers' estimates; a remark counts the pairs.
void handInputsAcrossLayers(const Graph& g, const Board& board, TiledProgram& tiled, const PoolBudget* budget = nullptr);

}  // namespace stowage
