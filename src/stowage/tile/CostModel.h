// The cost model of offloaded layers, shared with the host simulator (formulas in docs/accelerators.md):
// engine compute calls, compute on cores, DMA transfers, and the estimate of a whole tiled layer with its
// loads, compute and stores overlapped the way the generated code issues them.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "stowage/target/Target.h"
#include "stowage/tile/TileGeometry.h"

namespace stowage {

/// Engine compute call: ceil(N/dim) * ceil(K/dim) * (M + dim) (M output pixels / rows, N channels, K reduction).
uint64_t engineComputeCycles(int dim, int64_t m, int64_t n, int64_t k);
/// Compute on one core: ceil(macs / macs_per_cycle).
uint64_t coreComputeCycles(double macsPerCycle, int64_t macs);
/// One DMA transfer: setup_cycles + ceil(bytes / bytes_per_cycle) (0 for no bytes). Inline: the tile search asks for
/// it for every copy of every candidate tiling.
inline uint64_t dmaCycles(const Target& target, const TileCopy& copy) {
  const size_t bytes = copy.bytes();
  if (bytes == 0) return 0;
  const double bpc = target.dmaBytesPerCycle > 0 ? target.dmaBytesPerCycle : 1.0;
  return static_cast<uint64_t>(std::ceil(target.dmaSetupCycles)) + static_cast<uint64_t>(std::ceil(static_cast<double>(bytes) / bpc));
}

/// Cycles of one tile's compute on `target` (engine when it has one, else one core).
uint64_t tileComputeCycles(const Target& target, const LayerShape& s, const TileDesc& t);

struct LayerCost {
  uint64_t compute = 0;  ///< busiest core (engine: all tiles)
  uint64_t dma = 0;      ///< busiest core's transfers
  uint64_t total = 0;    ///< pipelined estimate
  /// Per later layer whose first weight tiles this layer loads (CrossLayerWeights::issueLater, same order), per core:
  /// when its transfer has arrived, counted from this layer's start (0 for none).
  std::vector<std::vector<uint64_t>> laterReady;
};

/// A later layer's first weight tiles that a layer's cores load during their last tile (tile/WeightPrefetch.h): core
/// c < cycles.size() makes a transfer of cycles[c] (0: none) on `channel` (cores mode with two channels: 0 input, 1
/// weights and stores; else the one queue), issued after the core's own loads; inFlight[c]: the part of it still in
/// flight when the layer ends (layerBounds counts the rest).
struct LaterWeights {
  std::vector<uint64_t> cycles;
  int channel = 0;
  std::vector<uint64_t> inFlight;
  bool operator==(const LaterWeights&) const = default;
};

/// Weight tiles moved across layers (tile/WeightPrefetch.h). The first `prefetchedCores` cores find their first
/// weight tile loaded by an earlier layer on the target: it arrives `firstReady[c]` cycles after this layer starts
/// (0: already there); the channel it comes on is busy until then (inputBusy or weightBusy say so). `issueLater`: the
/// later layers' first weight tiles this layer loads during its last tile, issued in that order (engine: the load
/// queue's last mvin; the layer's fence waits for it).
struct CrossLayerWeights {
  int prefetchedCores = 0;
  std::vector<uint64_t> firstReady;
  std::vector<LaterWeights> issueLater;
  /// Cores mode, per core: cycles from this layer's start during which its input channel still carries weight
  /// transfers earlier layers issued (for this layer or a later one): the core's own transfers there queue behind.
  std::vector<uint64_t> inputBusy;
  /// The same for channel 1 (weights and stores) on targets with two channels: its own weight loads and stores
  /// queue behind.
  std::vector<uint64_t> weightBusy;
  /// Engine mode, input handover (tile/InputHandover.h): this layer's last output store waits for a fence after its
  /// last compute, and then the next layer's first input tile, a transfer of `issueInput` cycles (0: none), runs on
  /// the load queue beside that store; `inputHandedOver`: this layer's first input tile is already there.
  uint64_t issueInput = 0;
  bool inputHandedOver = false;
  bool operator==(const CrossLayerWeights&) const = default;
};
/// Lower bounds of a layer under the cost model: `compute` = the busiest core's compute (engine: every tile's),
/// `dma` = the busiest DMA queue's transfers (engine: the load or the store queue; cores: per core, channel 0
/// (inputs) or channel 1 (weights and stores), or everything on a single channel). No schedule runs in less than
/// max(compute, dma).
struct LayerBounds {
  uint64_t compute = 0;
  uint64_t dma = 0;
  /// The busiest core's first and second queue: engine load / store queues; cores with two channels channel 0
  /// (inputs) / channel 1 (weights, stores); one channel: loads / stores.
  uint64_t loads = 0, stores = 0;
};
/// With `cross`, a transfer moved across layers counts where it bounds the layer: what is still in flight on a
/// channel when the layer starts (CrossLayerWeights::inputBusy, weightBusy: its prefetched first weight tile's rest,
/// or a transfer for a later layer passing over) in front of the layer's own transfers on that channel (none: it
/// counts nothing there, it may outlast the layer), the prefetched first tile's arrival (firstReady) as a bound of
/// its own, and the later layers' transfers with the part done before this layer ends (cycles - inFlight).
LayerBounds layerBounds(const Target& target, const LayerShape& s, const TileSchedule& schedule, const CrossLayerWeights& cross = {});

/// One core's DMA queues as the estimates run them (estimateLayer, tile/SharedInput's estimateSharedInput): when the
/// input (load) channel and the store channel are free, and the cycles of every transfer issued. With one channel
/// (sharedChannel) stores queue behind the loads; with two (weightsOnStoreChannel) weights and stores share channel 1.
struct CoreQueues {
  bool sharedChannel = false, weightsOnStoreChannel = false;
  uint64_t loadFree = 0, storeFree = 0, dma = 0;
  uint64_t ownInputEnd = 0;  ///< the end of the layer's own loads on the input channel
  /// A load of `cycles` on `queue` (loadFree or storeFree) issued at `at` into a half free from `freed`; returns its end.
  uint64_t load(uint64_t cycles, uint64_t at, uint64_t freed, uint64_t& queue);
  /// A store of `cycles` once its tile's compute is done at `after`; returns its end.
  uint64_t store(uint64_t cycles, uint64_t after);
  /// Queues a transfer of `cycles` issued at `at` on `channel`; `ready` gets its end.
  void issue(uint64_t at, uint64_t cycles, int channel, uint64_t& ready);
  /// Core `c`'s transfers of later layers' first weight tiles, issued at `at`: each of cross.issueLater in turn, on
  /// its channel (its end to cost.laterReady[k][c]).
  void issueLaterWeights(size_t c, uint64_t at, const CrossLayerWeights& cross, LayerCost& cost);
};

/// LayerCost::laterReady's slots for `cross.issueLater`, all 0.
std::vector<std::vector<uint64_t>> laterReadySlots(const CrossLayerWeights& cross);

/// The estimate of running `schedule` on `target`: per core chunk, loads, compute and stores as queues with the
/// ping-pong hazards of the generated code; the layer takes as long as its slowest core.
LayerCost estimateLayer(const Target& target, const LayerShape& s, const TileSchedule& schedule, bool doubleBuffer);
/// The same per operand: a doubled operand's next load is issued before this tile's compute (into the other
/// half), a single one's at its own tile, after the previous tile's compute (TiledLayerEmitter issues them so).
/// With `cross`, the prefetched first weight tiles wait for nothing but their arrival and the layer loads the next
/// layers' (their ends go to LayerCost::laterReady, not to the layer's total: the cores do not wait for them).
LayerCost estimateLayer(const Target& target, const LayerShape& s, const TileSchedule& schedule, const OperandBuffers& buffers,
                        const CrossLayerWeights& cross = {});

}  // namespace stowage
