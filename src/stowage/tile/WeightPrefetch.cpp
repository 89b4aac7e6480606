// Weight prefetch across layers (see WeightPrefetch.h).
#include "stowage/tile/WeightPrefetch.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "stowage/codegen/KernelCall.h"
#include "stowage/plan/CpuLayerCost.h"
#include "stowage/plan/MemoryPlan.h"
#include "stowage/tile/ResidentTensors.h"
#include "stowage/tile/TileChoice.h"
#include "stowage/tile/TileGeometry.h"
#include "stowage/tile/TileProgram.h"

namespace stowage {

namespace {

/// Cycles of the first weight transfer of each of the first `n` core chunks of `layer` (shape `s`; 0 when a chunk
/// loads none).
std::vector<uint64_t> firstWeightTransfers(const Board& board, const LayerShape& s, const OffloadedLayer& layer, int n) {
  const Target& target = board.targets[static_cast<size_t>(layer.target)];
  std::vector<uint64_t> out;
  for (const TileCopy& w : firstWeightCopies(offloadedSchedule(s, layer), n)) out.push_back(dmaCycles(target, w));
  return out;
}

/// Layers the issuer search looks back over: the layer before `next` on its target and up to 3 before it.
constexpr size_t kMaxIssuerLookBack = 4;

/// A cores-mode layer whose cores start no transfer: input, weights (if it has any) and output used in place
/// (tile/ResidentTensors.h).
bool movesNoData(const OffloadedLayer& layer) {
  return layer.direct[0] && (layer.direct[1] || layer.buffers[1][0].empty()) && layer.direct[2] && layer.prefetchNext < 0;
}

}  // namespace

std::vector<TileCopy> firstWeightCopies(const TileSchedule& schedule, int n) {
  std::vector<TileCopy> out(static_cast<size_t>(std::max(0, n)));
  for (size_t c = 0; c < out.size() && c + 1 < schedule.chunkStart.size(); ++c) {
    const size_t i = schedule.chunkStart[c];
    if (i < schedule.chunkStart[c + 1] && schedule.tiles[i].loadW) out[c] = schedule.tiles[i].w;
  }
  return out;
}

CrossLayerWeights crossLayerTransfers(const Graph& g, const Board& board, const std::vector<OffloadedLayer>& offloaded, size_t index) {
  CrossLayerWeights x;
  const OffloadedLayer& L = offloaded[index];
  x.prefetchedCores = L.weightsPrefetchedCores;
  x.firstReady = L.weightsReady;
  const OffloadedLayer* next = L.prefetchNext >= 0 ? offloadedAtStep(offloaded, L.prefetchNext) : nullptr;
  if (const auto shape = next ? layerShapeOf(g, g.nodes[static_cast<size_t>(next->step)]).shape : std::nullopt) {
    x.issueNext = firstWeightTransfers(board, *shape, *next, next->weightsPrefetchedCores);
    x.nextInFlight = L.nextWeightsInFlight;
  }
  return x;
}

void prefetchWeightsAcrossLayers(const Graph& g, const Board& board, TiledProgram& tiled) {
  std::vector<OffloadedLayer>& layers = tiled.offloaded;
  auto aligned = [&](int pool, size_t bytes) { return alignUp(bytes, board.pools[static_cast<size_t>(pool)].alignment); };
  // Bytes live per (pool, step) and per (pool, bank, step): tile buffers and resident tensors.
  std::map<std::pair<int, int>, size_t> poolLive;
  std::map<std::tuple<int, int, int>, size_t> bankLive;
  std::map<std::string, size_t> requestOf;
  for (size_t i = 0; i < tiled.scratch.size(); ++i) {
    const ScratchRequest& r = tiled.scratch[i];
    requestOf[r.name] = i;
    for (int s = r.firstStep >= 0 ? r.firstStep : r.step; s <= r.step; ++s) {
      poolLive[{r.pool, s}] += aligned(r.pool, r.sizeBytes);
      if (r.bank >= 0) bankLive[{r.pool, r.bank, s}] += aligned(r.pool, r.sizeBytes);
    }
  }
  for (const auto& [poolStep, size] : residentBytesByPoolAndStep(g, board, tiled.resident)) poolLive[poolStep] += size;

  // Current estimates (with the pairs taken so far), by index; a pair is taken only when the cost model says the two
  // layers together get faster (a transfer on the input channel can delay the next layer's input loads).
  // Each layer's tile shape, lowered once.
  std::vector<LayerCost> cost(layers.size());
  std::vector<std::optional<LayerShape>> shapes(layers.size());
  for (size_t i = 0; i < layers.size(); ++i) {
    cost[i] = {layers[i].computeCycles, layers[i].dmaCycles, layers[i].totalCycles, {}};
    shapes[i] = layerShapeOf(g, g.nodes[static_cast<size_t>(layers[i].step)]).shape;
  }
  // Layer i with `cross`, its weight loads split over both DMA channels or not (`split`).
  auto estimate = [&](size_t i, const CrossLayerWeights& cross, bool split) {
    OffloadedLayer L = layers[i];
    L.weightsSplit = split;
    return estimateLayer(board.targets[static_cast<size_t>(L.target)], *shapes[i], offloadedSchedule(*shapes[i], L), operandBuffersOf(L), cross);
  };
  // A layer the tiler gave split weight loads (chosen on its own) is also tried without: the transfer the issuer
  // adds to its input channel queues behind the split's second parts there. Unsplit first: it stays on a tie (a
  // layer whose only weight tiles come with the layer before splits nothing).
  auto splitOptions = [](const OffloadedLayer& L) { return L.weightsSplit ? std::vector<bool>{false, true} : std::vector<bool>{false}; };
  int taken = 0, notFaster = 0, overDataFree = 0;
  size_t takenBytes = 0;
  std::vector<std::string> left;
  for (size_t i = 0; i < layers.size(); ++i) {
    OffloadedLayer& next = layers[i];
    const Target& target = board.targets[static_cast<size_t>(next.target)];
    const bool tiledMode = next.mode == "cores" || next.mode == "engine";
    if (!tiledMode || target.kind != TargetKind::Accelerator || next.direct[1] || next.buffers[1][0].empty()) continue;
    // Only constant weights: an Add's or MatMul's second operand may be made by the layer before (still being written).
    const auto& shape = shapes[i];
    if (!shape || shape->call.inputs.size() < 2 || shape->call.inputs[1] == kNoTensor || !g.tensor(shape->call.inputs[1]).isConstant())
      continue;
    // The issuer: the layer before on the target, or, when that one moves no data (cores mode: every operand in
    // place, so its cores start no transfer and the channel is free), one before it: a layer of a few cycles hides
    // little of the transfer, the one before it more. Each candidate is estimated; the fastest pair is taken.
    std::vector<size_t> candidates;
    for (size_t j = i; j > 0 && candidates.size() < kMaxIssuerLookBack;) {
      --j;
      if (layers[j].target != next.target) continue;
      candidates.push_back(j);
      if (next.mode != "cores" || !movesNoData(layers[j])) break;
    }
    const auto req = requestOf.find(next.buffers[1][0]);
    if (candidates.empty() || req == requestOf.end()) continue;
    ScratchRequest& r = tiled.scratch[req->second];
    const MemoryPool& pool = board.pools[static_cast<size_t>(r.pool)];
    const size_t size = aligned(r.pool, r.sizeBytes);
    // The first step in [from, next.step) at which the weight buffer does not fit its pool or bank, or -1.
    auto firstBlockedStep = [&](int from) {
      for (int s = from; s < next.step; ++s) {
        const bool poolFits = !pool.sizeBytes || poolLive[{r.pool, s}] + size <= *pool.sizeBytes;
        const bool bankFits = r.bank < 0 || pool.bankSizeBytes == 0 || bankLive[{r.pool, r.bank, s}] + size <= pool.bankSizeBytes;
        if (!poolFits || !bankFits) return s;
      }
      return -1;
    };
    struct Pair {
      size_t issuer;
      int cores;
      LayerCost issuerWith, nextWith;
      std::vector<uint64_t> inFlight;  ///< per core: still in flight when the issuer ends
      std::vector<uint64_t> ready;     ///< per core: arrival counted from `next`'s start
      bool overLayers;                 ///< layers that move no data run in between
      int64_t saved;
      bool issuerSplit, nextSplit;     ///< weight loads split over both channels (TileSchedule::weightsSplit)
    };
    std::optional<Pair> best;
    uint64_t between = 0;  // cycles of the layers between the candidate and `next` (they move no data)
    std::string blockedBy;
    for (size_t k = 0; k < candidates.size(); ++k) {
      const size_t j = candidates[k];
      if (k > 0) between += cost[candidates[k - 1]].total;
      OffloadedLayer& prev = layers[j];
      if (prev.mode != next.mode || prev.prefetchNext >= 0 || !shapes[j]) continue;
      const int n = std::min(prev.cores, next.cores);
      const std::vector<uint64_t> transfers = firstWeightTransfers(board, *shape, next, n);
      if (std::all_of(transfers.begin(), transfers.end(), [](uint64_t c) { return c == 0; })) continue;
      const int blocked = firstBlockedStep(prev.step);
      if (blocked >= 0) {
        if (blockedBy.empty())
          blockedBy = fmt::format("'{}' ({} bytes do not fit '{}' beside what step {} ('{}') holds there)", g.nodes[static_cast<size_t>(next.step)].name,
                                  size, pool.name, blocked, g.nodes[static_cast<size_t>(blocked)].name);
        continue;
      }
      // The two layers with the transfer moved: the next layer's first weights arrive when the transfer ends, counted
      // from its start (the issuer's end plus the layers between when nothing else runs in between; later
      // otherwise, which only helps).
      CrossLayerWeights issuing;
      issuing.prefetchedCores = prev.weightsPrefetchedCores;
      issuing.firstReady = prev.weightsReady;
      issuing.issueNext = transfers;
      for (bool issuerSplit : splitOptions(prev)) {
        const LayerCost prevWith = estimate(j, issuing, issuerSplit);
        CrossLayerWeights getting;
        getting.prefetchedCores = n;
        std::vector<uint64_t> inFlight;
        for (uint64_t ready : prevWith.nextReady) {
          inFlight.push_back(ready > prevWith.total ? ready - prevWith.total : 0);
          getting.firstReady.push_back(inFlight.back() > between ? inFlight.back() - between : 0);
        }
        for (bool nextSplit : splitOptions(next)) {
          const LayerCost nextWith = estimate(i, getting, nextSplit);
          const int64_t saved = static_cast<int64_t>(cost[j].total + cost[i].total) - static_cast<int64_t>(prevWith.total + nextWith.total);
          if (!best || saved > best->saved)
            best = Pair{j, n, prevWith, nextWith, inFlight, getting.firstReady, k > 0, saved, issuerSplit, nextSplit};
        }
      }
    }
    if (!best) {
      if (!blockedBy.empty()) left.push_back(blockedBy);
      continue;
    }
    if (best->saved <= 0) {
      ++notFaster;
      continue;
    }
    OffloadedLayer& prev = layers[best->issuer];
    for (int s = prev.step; s < next.step; ++s) {
      poolLive[{r.pool, s}] += size;
      if (r.bank >= 0) bankLive[{r.pool, r.bank, s}] += size;
    }
    r.firstStep = prev.step;
    prev.prefetchNext = next.step;
    prev.nextWeightsInFlight = best->inFlight;
    prev.weightsSplit = best->issuerSplit;
    next.weightsSplit = best->nextSplit;
    next.weightsPrefetchedCores = best->cores;
    next.weightsReady = best->ready;
    if (best->overLayers) ++overDataFree;
    cost[best->issuer] = best->issuerWith;
    cost[i] = best->nextWith;
    for (size_t k : {best->issuer, i}) {
      layers[k].computeCycles = cost[k].compute;
      layers[k].dmaCycles = cost[k].dma;
      layers[k].totalCycles = cost[k].total;
    }
    ++taken;
    takenBytes += size;
  }
  if (taken > 0)
    tiled.remarks.push_back(fmt::format(
        "prefetch: {} layer(s) find their first weight tiles loaded by the previous layer on their target, during its last "
        "tile ({} bytes of weight buffers live from that layer's step; --no-weight-prefetch turns it off)",
        taken, takenBytes));
  if (overDataFree > 0)
    tiled.remarks.push_back(fmt::format("prefetch: {} of them from a layer further back, over layers that move no data (all their operands in "
                                        "place) and are too short to hide the transfer",
                                        overDataFree));
  if (!left.empty())
    tiled.remarks.push_back(fmt::format("prefetch: {} layer(s) load their first weight tiles themselves: {}", left.size(), fmt::join(left, "; ")));
  if (notFaster > 0)
    tiled.remarks.push_back(fmt::format("prefetch: {} layer(s) load their first weight tiles themselves: loading them during the layer "
                                        "before would not be faster under the cost model",
                                        notFaster));
}

void settlePrefetchArrivals(const Graph& g, ProgramPlan& plan) {
  std::vector<OffloadedLayer>& layers = plan.offloaded;
  const Board& board = plan.board;
  auto stepCycles = [&](size_t step) -> uint64_t {
    if (const OffloadedLayer* o = offloadedAtStep(layers, static_cast<int>(step))) return o->totalCycles;
    const Node& n = g.nodes[step];
    const auto lowered = lowerNode(g, n);
    if (!lowered.ok() || lowered->empty() || step >= plan.nodeTargets.size()) return 0;
    return cpuLayerCycles(g, n, plan, plan.nodeTargets[step]);
  };
  auto reestimate = [&](size_t i) {
    OffloadedLayer& L = layers[i];
    const auto shape = layerShapeOf(g, g.nodes[static_cast<size_t>(L.step)]).shape;
    if (!shape) return LayerCost{};
    const LayerCost c = estimateLayer(board.targets[static_cast<size_t>(L.target)], *shape, offloadedSchedule(*shape, L), operandBuffersOf(L),
                                      crossLayerTransfers(g, board, layers, i));
    L.computeCycles = c.compute;
    L.dmaCycles = c.dma;
    L.totalCycles = c.total;
    return c;
  };
  std::vector<std::optional<LayerCost>> redone(layers.size());  // the estimates this pass redid
  for (size_t i = 0; i < layers.size(); ++i) {
    OffloadedLayer& issuer = layers[i];
    if (issuer.prefetchNext < 0) continue;
    size_t r = i + 1;
    while (r < layers.size() && layers[r].step != issuer.prefetchNext) ++r;
    if (r == layers.size()) continue;
    // Adjacent layers whose issuer is as the tiler estimated it: the tiler's arrival times stand.
    if (issuer.step + 1 == issuer.prefetchNext && !redone[i]) continue;
    uint64_t gap = 0;
    for (int s = issuer.step + 1; s < issuer.prefetchNext; ++s) gap += stepCycles(static_cast<size_t>(s));
    if (const auto& own = redone[i]) {
      // The issuer received weights over a gap itself: its remainder in flight changed with its estimate.
      for (size_t c = 0; c < issuer.nextWeightsInFlight.size() && c < own->nextReady.size(); ++c)
        issuer.nextWeightsInFlight[c] = own->nextReady[c] > own->total ? own->nextReady[c] - own->total : 0;
    }
    OffloadedLayer& receiver = layers[r];
    for (size_t c = 0; c < receiver.weightsReady.size() && c < issuer.nextWeightsInFlight.size(); ++c)
      receiver.weightsReady[c] = issuer.nextWeightsInFlight[c] > gap ? issuer.nextWeightsInFlight[c] - gap : 0;
    redone[r] = reestimate(r);
  }
}

}  // namespace stowage
