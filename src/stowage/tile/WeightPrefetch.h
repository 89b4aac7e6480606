// Weight prefetch across layers: the cores of an accelerator load the first weight tile of a later layer they run
// during their last tile of the current one, so that layer starts computing without its first weight load.
#pragma once

#include <optional>
#include <vector>

#include "stowage/ir/Graph.h"
#include "stowage/plan/PoolBudget.h"
#include "stowage/plan/ProgramPlan.h"
#include "stowage/target/Board.h"
#include "stowage/tile/CostModel.h"
#include "stowage/tile/FirstWeightCopies.h"

namespace stowage {

struct TiledProgram;

/// Pairs layers of `tiled` run by an accelerator with an earlier layer that the same target runs in the same mode
/// (constant weights not used in place): one issuer per receiver; one receiver per issuer, or in cores mode one per
/// channel (two later layers) or, in the weight stream's phase, any number, issued in the order of the issuer's
/// OffloadedLayer::prefetches. Cores mode: core c <
/// min(cores of both) of the issuer loads the receiver's first weight tile of core c during its last tile, on its
/// input channel or (two channels) its weight and store channel (WeightPrefetchTo::channel); the issuer is
/// the layer before on the target or up to 3 (far issuers: 9) further back, the transfer then running across the layers in between
/// (their own transfers on that channel queue behind it: inputChannelBusy, weightChannelBusy).
/// Engine mode: the layer before, whose last mvin (before its fence, after its own loads) is the receiver's first
/// weight block. The tile goes into the receiver's weight buffer's half 0, which then lives from the issuer's step
/// (ScratchRequest::firstStep); a pair is possible only when that buffer fits its pool (and bank) beside the tile
/// buffers, resident tensors and the other pairs' early buffers at every step in between (a remark names each
/// layer left out and why). The pairs are chosen by local search on the program's estimated cycles, every layer
/// estimated in program order with the transfers crossing it (estimateLayer's CrossLayerWeights): for each receiver
/// in turn the fastest of no pair or a pair with each candidate (taken from the receiver it served), on each channel,
/// with or without each layer's weight split, while the total improves (at most 4 rounds); run from no pairs and from
/// the 3 fastest regular starts that beat no pairs (every receiver paired with the candidate d back, d = 1..4, its
/// channel by a fixed pattern), the fastest result kept; then the later phases of WeightPrefetchOptions (two later
/// layers, weights loaded once, far issuers and every once core, the weight stream), each kept only where faster.
/// With `budget`, the bytes that can only live in a pool (plan/PoolBudget.h) count as live there too: an early buffer
/// that does not fit beside them is left out, and the remark names them.
struct WeightPrefetchOptions {
  /// A pair in cores mode may also load the receiver's first weight tiles for all its cores in one transfer by one
  /// issuing core (OffloadedLayer::weightsOnceCore, onceWeightCopy), tried with core k mod cores for receiver k.
  bool weightsOnce = true;
  /// Cores mode: the issuer may be up to 9 layers before the layer before on the target instead of 3: where layers are
  /// short and DMA-bound (fully connected layers streaming their weights), a later layer's transfer then starts while
  /// the channels of the layers just before it are still idle.
  bool farIssuers = true;
  /// Weights loaded once are also tried with every other issuing core (its channels may be free where the round-robin
  /// core's carry its own loads).
  bool everyOnceCore = true;
  /// The weight stream: for the receivers of the runs (layers on one target between CPU steps) whose cores-mode layers
  /// mostly wait for transfers (their estimated cycles beyond compute are more than half of their cycles under the
  /// pairs found), a last search lets an issuer load the first weight tiles of any number of later layers, issued one
  /// after the other on its cores' channels; kept only where the program gets faster.
  bool weightStream = true;
};
void prefetchWeightsAcrossLayers(const Graph& g, const Board& board, TiledProgram& tiled, const WeightPrefetchOptions& options = {},
                                 const PoolBudget* budget = nullptr);

/// After planning: re-estimates every layer in program order with the cycles of the steps in between as the
/// simulator charges them (CPU steps by cpuLayerCycles in their planned pools): the receivers' arrival times
/// (OffloadedLayer::weightsReady), the issuers' transfers still in flight and the channels' busy times, which
/// the tiler counted without the CPU steps (it runs before the plan).
void settlePrefetchArrivals(const Graph& g, ProgramPlan& plan);

/// The cross-layer transfers of `offloaded[index]` (`offloaded` by step, as the plan records them): what
/// layerBounds and estimateLayer need to rebuild the layer's bounds and estimate.
CrossLayerWeights crossLayerTransfers(const Graph& g, const Board& board, const std::vector<OffloadedLayer>& offloaded, size_t index);

/// The bounds (layerBounds) of `offloaded[index]` as planned: its tiles rebuilt and the transfers crossing it.
LayerBounds offloadedLayerBounds(const Graph& g, const Board& board, const std::vector<OffloadedLayer>& offloaded, size_t index);

}  // namespace stowage
