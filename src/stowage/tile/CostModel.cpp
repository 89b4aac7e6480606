// Cost model of offloaded layers (see CostModel.h).
#include "stowage/tile/CostModel.h"

#include <algorithm>
#include <cmath>

#include "stowage/tile/SharedInput.h"

namespace stowage {

namespace {
uint64_t ceilDiv(int64_t a, int64_t b) { return static_cast<uint64_t>((a + b - 1) / b); }
}  // namespace

uint64_t engineComputeCycles(int dim, int64_t m, int64_t n, int64_t k) {
  return ceilDiv(n, dim) * ceilDiv(k, dim) * static_cast<uint64_t>(m + dim);
}

uint64_t coreComputeCycles(double macsPerCycle, int64_t macs) {
  return static_cast<uint64_t>(std::ceil(static_cast<double>(macs) / std::max(1e-9, macsPerCycle)));
}

uint64_t tileComputeCycles(const Target& target, const LayerShape& s, const TileDesc& t) {
  if (target.engineDim > 0) {
    // Grouped convolutions run group by group (ceil((N / groups) / dim) blocks each), as the simulator counts
    // them; depthwise int8 counts its channels as one matrix of 1-column groups (docs/accelerators.md).
    int64_t groups = 1;
    if (s.kernel == TileKernel::QConv2d && t.qconvParams().kc > 0 && t.qconvParams().c % t.qconvParams().kc == 0) groups = t.qconvParams().c / t.qconvParams().kc;
    if (s.kernel == TileKernel::Conv2dF32 && t.convParams().group > 0) groups = t.convParams().group;
    groups = std::max<int64_t>(1, groups);
    return static_cast<uint64_t>(groups) * engineComputeCycles(target.engineDim, t.outRows * s.rowPixels, t.channels / groups, s.reduction);
  }
  return coreComputeCycles(target.macsPerCycle, t.macs);
}

LayerBounds layerBounds(const Target& target, const LayerShape& s, const TileSchedule& schedule, const CrossLayerWeights& cross) {
  LayerBounds b;
  const bool engine = target.engineDim > 0;
  const bool sharedChannel = !engine && target.dmaChannels < 2;
  for (size_t c = 0; c + 1 < schedule.chunkStart.size(); ++c) {
    uint64_t compute = 0, loads = 0, stores = 0;
    // Transfers issued by earlier layers still on the channels when this layer starts (its prefetched first weight
    // tile's rest, or one for a later layer passing over this one).
    const uint64_t carried = c < cross.inputBusy.size() ? cross.inputBusy[c] : 0;
    const bool twoChannels = !engine && !sharedChannel;
    const uint64_t carriedOnWeights = twoChannels && c < cross.weightBusy.size() ? cross.weightBusy[c] : 0;
    for (size_t i = schedule.chunkStart[c]; i < schedule.chunkStart[c + 1]; ++i) {
      const TileDesc& t = schedule.tiles[i];
      compute += tileComputeCycles(target, s, t);
      // A shared input (tile/SharedInput.h): each loader core moves its part of the row block's input; an input handed
      // over by the engine layer before (tile/InputHandover.h) is not loaded again.
      const bool handedOver = engine && cross.inputHandedOver && i == schedule.chunkStart[c];
      if (t.loadX && !handedOver)
        loads += schedule.sharedLoaders <= 0 ? dmaCycles(target, t.x)
                 : static_cast<int>(c) < schedule.sharedLoaders ? dmaCycles(target, sharedInputPart(t.x, schedule.sharedLoaders, static_cast<int>(c)))
                                                                : 0;
      const bool prefetched = i == schedule.chunkStart[c] && static_cast<int>(c) < cross.prefetchedCores;
      if (t.loadW && !prefetched) {
        if (schedule.weightsSplit && !engine && !sharedChannel) {
          const auto [part, rest] = weightLoadParts(t.w);
          stores += dmaCycles(target, part);
          loads += dmaCycles(target, rest);  // 0 for a copy that stayed one transfer
        } else {
          (engine || sharedChannel ? loads : stores) += dmaCycles(target, t.w);
        }
      }
      if (t.storeY) stores += dmaCycles(target, t.y);
    }
    if (engine) loads += cross.issueInput;
    for (const LaterWeights& later : cross.issueLater)
      if (c < later.cycles.size()) {
        const uint64_t rest = c < later.inFlight.size() ? later.inFlight[c] : 0;
        (twoChannels && later.channel == 1 ? stores : loads) += later.cycles[c] - std::min(later.cycles[c], rest);
      }
    // What earlier layers' transfers still occupy delays only this layer's own transfers on that channel, which
    // queue behind it (a transfer passing over a layer that uses the channel for nothing may outlast it); the
    // prefetched first weight tile is waited for, so its arrival bounds the layer whichever channel brought it.
    if (sharedChannel ? loads + stores > 0 : loads > 0) loads += carried;
    if (stores > 0) stores += carriedOnWeights;
    if (static_cast<int>(c) < cross.prefetchedCores && c < cross.firstReady.size()) loads = std::max(loads, cross.firstReady[c]);
    b.compute = std::max(b.compute, compute);
    b.dma = std::max(b.dma, sharedChannel ? loads + stores : std::max(loads, stores));
    b.loads = std::max(b.loads, loads);
    b.stores = std::max(b.stores, stores);
  }
  return b;
}

LayerCost estimateLayer(const Target& target, const LayerShape& s, const TileSchedule& schedule, bool doubleBuffer) {
  return estimateLayer(target, s, schedule, OperandBuffers::uniform(doubleBuffer));
}

uint64_t CoreQueues::load(uint64_t cycles, uint64_t at, uint64_t freed, uint64_t& queue) {
  dma += cycles;
  queue = std::max({at, queue, freed}) + cycles;
  if (&queue == &loadFree) ownInputEnd = std::max(ownInputEnd, queue);
  if (sharedChannel) storeFree = std::max(storeFree, loadFree);
  return queue;
}

uint64_t CoreQueues::store(uint64_t cycles, uint64_t after) {
  dma += cycles;
  storeFree = std::max(sharedChannel ? std::max(storeFree, loadFree) : storeFree, after) + cycles;
  if (sharedChannel) loadFree = std::max(loadFree, storeFree);
  return storeFree;
}

void CoreQueues::issue(uint64_t at, uint64_t cycles, int channel, uint64_t& ready) {
  dma += cycles;
  if (weightsOnStoreChannel && channel == 1) {  // queued with the weights and stores
    storeFree = std::max(at, storeFree) + cycles;
    ready = storeFree;
    return;
  }
  loadFree = std::max(at, loadFree) + cycles;
  if (sharedChannel) storeFree = std::max(storeFree, loadFree);
  ready = loadFree;
}

void CoreQueues::issueLaterWeights(size_t c, uint64_t at, const CrossLayerWeights& cross, LayerCost& cost) {
  for (size_t k = 0; k < cross.issueLater.size(); ++k) {
    const LaterWeights& later = cross.issueLater[k];
    if (c < later.cycles.size() && later.cycles[c] > 0) issue(at, later.cycles[c], later.channel, cost.laterReady[k][c]);
  }
}

std::vector<std::vector<uint64_t>> laterReadySlots(const CrossLayerWeights& cross) {
  std::vector<std::vector<uint64_t>> out;
  for (const LaterWeights& later : cross.issueLater) out.emplace_back(later.cycles.size(), 0);
  return out;
}

LayerCost estimateLayer(const Target& target, const LayerShape& s, const TileSchedule& schedule, const OperandBuffers& buffers,
                        const CrossLayerWeights& cross) {
  if (schedule.sharedLoaders > 0 && target.engineDim == 0) return estimateSharedInput(target, s, schedule, buffers, cross);
  LayerCost cost;
  const bool engine = target.engineDim > 0;
  const size_t chunks = schedule.chunkStart.size() - 1;
  cost.laterReady = laterReadySlots(cross);
  for (size_t c = 0; c < chunks; ++c) {
    const size_t first = schedule.chunkStart[c], end = schedule.chunkStart[c + 1];
    uint64_t compute = 0;
    // Queue free times; stores share the load channel when the target has one channel.
    const bool sharedChannel = !engine && target.dmaChannels < 2;
    // Cores with two channels load weights on the store channel (TiledLayerEmitter), or split over both.
    const bool weightsOnStoreChannel = !engine && !sharedChannel;
    CoreQueues queues{sharedChannel, weightsOnStoreChannel};
    uint64_t &loadFree = queues.loadFree, &storeFree = queues.storeFree, &dma = queues.dma;
    uint64_t execFree = 0, now = 0;
    const bool weightsSplit = schedule.weightsSplit && weightsOnStoreChannel;
    uint64_t xReady[2] = {0, 0}, wReady[2] = {0, 0};      // when each half's data has arrived
    uint64_t xFreed[2] = {0, 0}, wFreed[2] = {0, 0};      // when the last compute reading each half ended
    uint64_t yStored[2] = {0, 0};                         // when the last store out of each y half ended
    uint64_t lastStore = 0;                               // when the core's last store ends
    const bool prefetched = static_cast<int>(c) < cross.prefetchedCores;
    // The next layer's first weight tile for this core: on the input channel (the store channel's when there is
    // one channel), after this core's own loads; the core does not wait for it. Then the second later layer's.
    auto issueLater = [&](uint64_t at) { queues.issueLaterWeights(c, at, cross, cost); };
    uint64_t ownLoads = 0;  // the input channel's end without the next layer's transfer
    // A prefetched first weight tile still in flight keeps the input channel (the layer before's) busy.
    // Transfers earlier layers issued (this layer's prefetched first weight tile, or one for a later layer) keep
    // the channels they went on busy (CrossLayerWeights::inputBusy, weightBusy).
    if (!engine && c < cross.inputBusy.size()) loadFree = std::max(loadFree, cross.inputBusy[c]);
    if (sharedChannel) storeFree = loadFree;
    if (weightsOnStoreChannel && c < cross.weightBusy.size()) storeFree = std::max(storeFree, cross.weightBusy[c]);
    if (first == end) issueLater(0);
    // Loads of tile i's operands with two halves (`doubled`) or with one (!doubled).
    auto issueLoads = [&](size_t i, uint64_t at, bool doubled) {
      const TileDesc& t = schedule.tiles[i];
      auto one = [&](bool load, const TileCopy& cp, int buf, uint64_t* ready, uint64_t* freed, uint64_t& queue) {
        if (!load) return;
        if (prefetched && i == first && ready == wReady) {  // loaded by an earlier layer
          ready[buf] = c < cross.firstReady.size() ? cross.firstReady[c] : 0;
          return;
        }
        if (engine && cross.inputHandedOver && i == first && ready == xReady) {  // loaded by the layer before
          ready[buf] = 0;
          return;
        }
        ready[buf] = queues.load(dmaCycles(target, cp), at, freed[buf], queue);
      };
      if (buffers.doubled[0] == doubled) one(t.loadX, t.x, t.xBuf, xReady, xFreed, loadFree);
      if (buffers.doubled[1] != doubled) return;
      if (weightsSplit && t.loadW && !(prefetched && i == first)) {
        // Two transfers, the first part on the weight (store) channel, the rest on the input channel; the tile
        // waits for both.
        const auto [part, rest] = weightLoadParts(t.w);
        uint64_t partReady[2] = {0, 0}, restReady[2] = {0, 0};
        one(true, part, t.wBuf, partReady, wFreed, storeFree);
        if (rest.rows > 0) one(true, rest, t.wBuf, restReady, wFreed, loadFree);
        wReady[t.wBuf] = std::max(partReady[t.wBuf], restReady[t.wBuf]);
        return;
      }
      one(t.loadW, t.w, t.wBuf, wReady, wFreed, weightsOnStoreChannel ? storeFree : loadFree);
    };
    for (size_t i = first; i < end; ++i) {
      const TileDesc& t = schedule.tiles[i];
      // Engine: the host issues everything at once, the queues order it. Cores: at the core's time, after its
      // previous compute. The first tile's doubled operands, then this tile's single ones (their one half is free
      // once the previous compute is done), then the next tile's doubled ones, into the halves the previous tile
      // no longer needs.
      if (i == first) issueLoads(i, 0, true);
      issueLoads(i, engine ? 0 : now, false);
      if (i + 1 < end) issueLoads(i + 1, engine ? 0 : now, true);
      if (i + 1 == end) {
        ownLoads = queues.ownInputEnd;
        issueLater(now);
      }
      const uint64_t cyc = tileComputeCycles(target, s, t);
      compute += cyc;
      const uint64_t ready = std::max({xReady[t.xBuf], wReady[t.wBuf], yStored[t.yBuf]});
      const uint64_t start = engine ? std::max(execFree, ready) : std::max(now, ready);
      const uint64_t done = start + cyc;
      if (engine) execFree = done;
      else now = done;
      xFreed[t.xBuf] = std::max(xFreed[t.xBuf], done);
      wFreed[t.wBuf] = std::max(wFreed[t.wBuf], done);
      // Input handover: the host fences after the last compute call, then stores the last output tile and loads the
      // next layer's first input tile beside it (both issued when every earlier operation has ended).
      const bool handover = engine && i + 1 == end && cross.issueInput > 0;
      const uint64_t fenced = handover ? std::max({loadFree, execFree, storeFree}) : 0;
      if (handover) {
        dma += cross.issueInput;
        loadFree = fenced + cross.issueInput;
      }
      if (!t.storeY) continue;  // a direct output: computed in place
      yStored[t.yBuf] = lastStore = queues.store(dmaCycles(target, t.y), std::max(done, fenced));
    }
    // A core waits for its own stores, not for the next layer's transfer (on one channel, only a store queued
    // behind it waits for it); the engine's fence at the layer's end waits for everything.
    const uint64_t total = std::max({now, execFree, lastStore, engine ? loadFree : ownLoads});
    cost.compute = std::max(cost.compute, compute);
    cost.dma = std::max(cost.dma, dma);
    cost.total = std::max(cost.total, total);
  }
  return cost;
}

}  // namespace stowage
