// Weight prefetch across layers: the cores of an accelerator load the first weight tile of the next layer they run
// during their last tile of the current one, so the next layer starts computing without its first weight load.
#pragma once

#include <vector>

#include "stowage/ir/Graph.h"
#include "stowage/plan/ProgramPlan.h"
#include "stowage/target/Board.h"
#include "stowage/tile/CostModel.h"

namespace stowage {

struct TiledProgram;

/// Pairs each layer of `tiled` run by an accelerator with the layer before it that the same target runs in the same
/// mode (constant weights not used in place). Cores mode: core c < min(cores of both) of the first loads the
/// second's first weight tile of core c during its last tile; engine mode: the first layer's last mvin (before its
/// fence, after its own loads) is the second's first weight block. In cores mode the issuer may be up to 3 layers
/// further back when the layers in between move no data (every operand in place: a resident Add of a few cycles
/// would hide little of the transfer); the candidate whose pair the cost model finds fastest is taken. The tile goes
/// into the second's weight buffer's half 0, which then lives from the issuer's step
/// (ScratchRequest::firstStep). A pair is taken only when that buffer fits its pool (and bank) beside the tile
/// buffers and resident tensors live at every step in between; a remark names each one left out and why. The
/// estimates of the layers involved are redone with the transfers moved (estimateLayer's CrossLayerWeights).
void prefetchWeightsAcrossLayers(const Graph& g, const Board& board, TiledProgram& tiled);

/// After planning: a pair whose layers are not adjacent (CPU layers, layers of other targets, or layers that move
/// no data run in between) has its receiver's arrival times (OffloadedLayer::weightsReady) counted from the issuer's
/// end minus the cycles of every step in between (CPU steps by cpuLayerCycles in their planned pools, as the
/// simulator charges them); the tiler counted only the data-free layers of the target, as it runs before the plan.
/// The receivers' estimates are redone with them, and each issuer's in-flight remainder with its own estimate.
void settlePrefetchArrivals(const Graph& g, ProgramPlan& plan);

/// The first weight copy of each of the first `n` core chunks of `schedule` (rows 0 when that chunk loads none): the
/// transfers a layer before on the target makes for it.
std::vector<TileCopy> firstWeightCopies(const TileSchedule& schedule, int n);

/// The cross-layer transfers of `offloaded[index]` (`offloaded` by step, as the plan records them): what
/// layerBounds and estimateLayer need to rebuild the layer's bounds and estimate.
CrossLayerWeights crossLayerTransfers(const Graph& g, const Board& board, const std::vector<OffloadedLayer>& offloaded, size_t index);

}  // namespace stowage
