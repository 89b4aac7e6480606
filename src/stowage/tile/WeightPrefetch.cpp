// Weight prefetch across layers (see WeightPrefetch.h).
#include "stowage/tile/WeightPrefetch.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <tuple>

#include "stowage/lower/KernelCall.h"
#include "stowage/tile/WholeModelCycles.h"
#include "stowage/plan/MemoryPlan.h"
#include "stowage/tile/InputHandover.h"
#include "stowage/tile/ResidentTensors.h"
#include "stowage/tile/TileChoice.h"
#include "stowage/tile/TileGeometry.h"
#include "stowage/tile/TileProgram.h"

namespace stowage {

namespace {

/// Layers the issuer search looks back over without far issuers: the layer before `next` on its target and up to 3
/// before it.
constexpr size_t kNearIssuerLookBack = 4;
/// With far issuers: the layer before and up to 9 before it, as candidates of the local search (more found no faster
/// pairs on the bench's models and costs compile time: each is a candidate of every receiver). The regular starts stay
/// within kNearIssuerLookBack: starts farther back found nothing faster.
constexpr size_t kFarIssuerLookBack = 10;
/// Regular starts the pair search also runs from (the fastest ones that beat no pairs).
constexpr size_t kSearchStarts = 3;

uint64_t minus(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

/// The layers of a program (`layers`, by step) with their tile shapes and schedules (weights split or not) built
/// once, estimated in program order with the weight transfers that cross layers (see run()).
class LayerTimeline {
 public:
  /// `stepCycles(step)`: the cycles of a step that is not an offloaded layer (CPU steps; 0 before planning).
  LayerTimeline(const Graph& g, const Board& board, std::vector<OffloadedLayer>& layers, std::function<uint64_t(size_t)> stepCycles)
      : g_(g), board_(board), layers_(layers), stepCycles_(std::move(stepCycles)), shapes_(layers.size()), schedules_(layers.size()),
        estimated_(layers.size()), crosses_(layers.size()), arrival_(layers.size()), stepIndex_(g.nodes.size(), kNoLayer) {
    for (size_t i = 0; i < layers.size(); ++i) {
      shapes_[i] = layerShapeOf(g, g.nodes[static_cast<size_t>(layers[i].step)]).shape;
      if (layers[i].step >= 0 && static_cast<size_t>(layers[i].step) < stepIndex_.size()) stepIndex_[static_cast<size_t>(layers[i].step)] = i;
    }
  }

  const std::optional<LayerShape>& shape(size_t i) const { return shapes_[i]; }
  std::optional<size_t> indexOfStep(int step) const {
    if (step < 0 || static_cast<size_t>(step) >= stepIndex_.size() || stepIndex_[static_cast<size_t>(step)] == kNoLayer) return std::nullopt;
    return stepIndex_[static_cast<size_t>(step)];
  }

  /// Layer i's schedule with its current weightsSplit.
  const TileSchedule& schedule(size_t i) {
    auto& slot = schedules_[i][layers_[i].weightsSplit ? 1 : 0];
    if (!slot) slot = offloadedSchedule(*shapes_[i], layers_[i]);
    return *slot;
  }

  /// Cycles of the first weight transfer of each of the first `n` core chunks of layer i (0 when one loads none).
  std::vector<uint64_t> firstWeightTransfers(size_t i, int n) {
    return firstWeightTransferCycles(board_.targets[static_cast<size_t>(layers_[i].target)], schedule(i), n);
  }
  /// The issuing cores' transfers of receiver i's first weight tiles (receiverTransferCycles), computed once per
  /// (receiver, weight split, prefetched cores, once core): the search asks for them in every run.
  const std::vector<uint64_t>& receiverTransfers(size_t i) {
    const OffloadedLayer& L = layers_[i];
    const auto key = std::make_tuple(i, L.weightsSplit, L.weightsPrefetchedCores, L.weightsOnceCore);
    auto it = transfers_.find(key);
    if (it == transfers_.end())
      it = transfers_.emplace(key, receiverTransferCycles(board_.targets[static_cast<size_t>(L.target)], schedule(i), L)).first;
    return it->second;
  }

  /// What one layer gets from the run: its estimate and the cross-layer times it was estimated with.
  struct Entry {
    LayerCost cost;
    CrossLayerWeights cross;
  };

  /// Estimates every layer in program order under the current pairs (prefetches, weightsPrefetchedCores,
  /// weightsSplit): a receiver's first weight tiles arrive when its issuer's transfers end, counted on one clock
  /// across the steps in between (their cycles: offloaded layers' estimates, other steps' stepCycles); in cores mode
  /// each core's input channel carries the transfer until then, so a layer in between starts its own input
  /// transfers behind it. Returns the entries by layer index and the clock at the end.
  std::pair<std::vector<Entry>, uint64_t> run() {
    std::vector<Entry> out(layers_.size());
    const uint64_t clock = runInto(&out);
    return {std::move(out), clock};
  }
  /// The clock at the end of run() alone (what the search compares), without copying the entries out.
  uint64_t total() { return runInto(nullptr); }

 private:
  uint64_t runInto(std::vector<Entry>* out) {
    for (std::vector<uint64_t>& a : arrival_) a.clear();  // by receiver index, per core: absolute time
    for (std::vector<uint64_t>& f : channelFree_) std::fill(f.begin(), f.end(), 0);  // by (target, channel), per core
    uint64_t clock = 0;
    for (size_t step = 0; step < g_.nodes.size(); ++step) {
      const size_t i = stepIndex_[step];
      if (i == kNoLayer || !shapes_[i]) {
        clock += i != kNoLayer ? layers_[i].totalCycles : stepCycles_(step);
        continue;
      }
      const OffloadedLayer& L = layers_[i];
      const bool cores = L.mode == "cores";
      CrossLayerWeights& x = crosses_[i];
      x.prefetchedCores = L.weightsPrefetchedCores;
      x.firstReady.clear();
      const std::vector<uint64_t>& a = arrival_[i];
      for (int c = 0; c < L.weightsPrefetchedCores; ++c)
        x.firstReady.push_back(static_cast<size_t>(c) < a.size() ? minus(a[static_cast<size_t>(c)], clock) : 0);
      // Per core, how long each channel still carries transfers earlier layers issued (empty: none).
      auto busy = [&](int channel, std::vector<uint64_t>& b) {
        std::vector<uint64_t>& free = channelFree(L.target, channel);
        free.resize(std::max(free.size(), static_cast<size_t>(std::max(1, L.cores))), 0);
        b.clear();
        bool any = false;
        for (int c = 0; c < L.cores; ++c) {
          b.push_back(minus(free[static_cast<size_t>(c)], clock));
          any = any || b.back() > 0;
        }
        if (!any) b.clear();
      };
      x.inputBusy.clear();
      x.weightBusy.clear();
      if (cores) {
        busy(0, x.inputBusy);
        busy(1, x.weightBusy);
      }
      // The later layers whose first weight tiles this layer loads, in issue order (the receivers' indices).
      std::vector<size_t>& receivers = laterIndices_;
      receivers.clear();
      x.issueLater.resize(L.prefetches.size());
      size_t n = 0;
      for (const WeightPrefetchTo& to : L.prefetches)
        if (const auto r = indexOfStep(to.step)) {
          receivers.push_back(*r);
          LaterWeights& later = x.issueLater[n++];
          later.cycles = receiverTransfers(*r);
          later.channel = cores ? to.channel : 0;
          later.inFlight.clear();
        }
      x.issueLater.resize(n);
      x.inputHandedOver = L.inputHandedOver;
      x.issueInput = 0;
      if (L.handsInputTo >= 0)
        if (const auto h = indexOfStep(L.handsInputTo); h && shapes_[*h])
          x.issueInput = dmaCycles(board_.targets[static_cast<size_t>(layers_[*h].target)], handedInputCopy(schedule(*h)));
      const LayerCost& cost = estimate(i, x);
      // Each receiver's arrival times (weights loaded once: every core's when that one transfer ends); the channel
      // a transfer went on is busy until then.
      for (size_t k = 0; k < receivers.size(); ++k) {
        const size_t receiver = receivers[k];
        const std::vector<uint64_t>& ready = cost.laterReady[k];
        LaterWeights& later = x.issueLater[k];
        std::vector<uint64_t>& to = arrival_[receiver];
        const int once = layers_[receiver].weightsOnceCore;
        std::vector<uint64_t>& free = channelFree(L.target, later.channel);
        for (size_t c = 0; c < ready.size(); ++c) {
          to.push_back(clock + (once >= 0 && static_cast<size_t>(once) < ready.size() ? ready[static_cast<size_t>(once)] : ready[c]));
          later.inFlight.push_back(minus(ready[c], cost.total));
          if (cores && c < free.size()) free[c] = std::max(free[c], clock + ready[c]);
        }
      }
      clock += cost.total;
      if (out) (*out)[i] = {cost, x};
    }
    return clock;
  }

  /// The per-core free times of a target's DMA channel (0 or 1) during runInto.
  std::vector<uint64_t>& channelFree(int target, int channel) {
    const size_t slot = static_cast<size_t>(target) * 2 + static_cast<size_t>(channel == 1 ? 1 : 0);
    if (slot >= channelFree_.size()) channelFree_.resize(slot + 1);
    return channelFree_[slot];
  }

 public:
  /// Layer i's estimate under `x`: the search runs the program again for each pair it tries, and most layers see the
  /// same cross-layer times as in the run before (their cost is then the one that run computed).
  const LayerCost& estimate(size_t i, const CrossLayerWeights& x) {
    const OffloadedLayer& L = layers_[i];
    std::optional<Estimated>& last = estimated_[i];
    if (!last || last->weightsSplit != L.weightsSplit || last->buffers != operandBuffersOf(L) || last->cross != x) {
      const Target& target = board_.targets[static_cast<size_t>(L.target)];
      last = Estimated{L.weightsSplit, operandBuffersOf(L), x, estimateLayer(target, *shapes_[i], schedule(i), operandBuffersOf(L), x)};
    }
    return last->cost;
  }

  /// Writes a run's estimates and cross-layer times into the layers.
  void apply(const std::vector<Entry>& entries) {
    for (size_t i = 0; i < layers_.size(); ++i) {
      if (!shapes_[i]) continue;
      OffloadedLayer& L = layers_[i];
      const Entry& e = entries[i];
      recordEstimate(L, e.cost);
      L.weightsReady = e.cross.firstReady;
      for (size_t k = 0; k < L.prefetches.size() && k < e.cross.issueLater.size(); ++k) L.prefetches[k].inFlight = e.cross.issueLater[k].inFlight;
      L.inputChannelBusy = e.cross.inputBusy;
      L.weightChannelBusy = e.cross.weightBusy;
    }
  }

 private:
  const Graph& g_;
  const Board& board_;
  std::vector<OffloadedLayer>& layers_;
  std::function<uint64_t(size_t)> stepCycles_;
  std::vector<std::optional<LayerShape>> shapes_;
  std::vector<std::array<std::optional<TileSchedule>, 2>> schedules_;
  /// Per layer, its last estimate and what it depended on.
  struct Estimated {
    bool weightsSplit = false;
    OperandBuffers buffers;
    CrossLayerWeights cross;
    LayerCost cost;
  };
  std::vector<std::optional<Estimated>> estimated_;
  static constexpr size_t kNoLayer = static_cast<size_t>(-1);
  std::vector<CrossLayerWeights> crosses_;              ///< runInto's cross-layer times per layer (kept: their capacity)
  std::vector<std::vector<uint64_t>> arrival_;          ///< runInto's arrival times per receiver and core
  std::vector<std::vector<uint64_t>> channelFree_;      ///< runInto's channel free times per (target, channel) and core
  std::vector<size_t> laterIndices_;                    ///< runInto's receivers of the layer it estimates
  std::vector<size_t> stepIndex_;                       ///< per node step, the layer's index (kNoLayer: none)
  std::map<std::tuple<size_t, bool, int, int>, std::vector<uint64_t>> transfers_;  ///< receiverTransfers' results
};

/// A cores-mode layer whose cores start no transfer: input, weights (if it has any) and output used in place
/// (tile/ResidentTensors.h).
bool movesNoData(const OffloadedLayer& layer) {
  return layer.direct[0] && (layer.direct[1] || layer.buffers[1][0].empty()) && layer.direct[2] && layer.prefetches.empty();
}

}  // namespace

CrossLayerWeights crossLayerTransfers(const Graph& g, const Board& board, const std::vector<OffloadedLayer>& offloaded, size_t index) {
  CrossLayerWeights x;
  const OffloadedLayer& L = offloaded[index];
  x.prefetchedCores = L.weightsPrefetchedCores;
  x.firstReady = L.weightsReady;
  x.inputBusy = L.inputChannelBusy;
  x.weightBusy = L.weightChannelBusy;
  for (const WeightPrefetchTo& to : L.prefetches) {
    const OffloadedLayer* later = offloadedAtStep(offloaded, to.step);
    if (const auto shape = later ? layerShapeOf(g, g.nodes[static_cast<size_t>(later->step)]).shape : std::nullopt)
      x.issueLater.push_back({receiverTransferCycles(board.targets[static_cast<size_t>(later->target)], offloadedSchedule(*shape, *later), *later),
                              L.mode == "cores" ? to.channel : 0, to.inFlight});
  }
  x.inputHandedOver = L.inputHandedOver;
  const OffloadedLayer* handed = L.handsInputTo >= 0 ? offloadedAtStep(offloaded, L.handsInputTo) : nullptr;
  if (const auto shape = handed ? layerShapeOf(g, g.nodes[static_cast<size_t>(handed->step)]).shape : std::nullopt)
    x.issueInput = dmaCycles(board.targets[static_cast<size_t>(handed->target)], handedInputCopy(offloadedSchedule(*shape, *handed)));
  return x;
}

LayerBounds offloadedLayerBounds(const Graph& g, const Board& board, const std::vector<OffloadedLayer>& offloaded, size_t index) {
  const OffloadedLayer& L = offloaded[index];
  const LayerShape s = *layerShapeOf(g, g.nodes[static_cast<size_t>(L.step)]).shape;
  return layerBounds(board.targets[static_cast<size_t>(L.target)], s, offloadedSchedule(s, L), crossLayerTransfers(g, board, offloaded, index));
}

namespace {

/// The pair search of prefetchWeightsAcrossLayers: the receivers, the bytes live per pool and bank and step, the
/// current pairs (issuerOf) and the moves that change them, estimated on a LayerTimeline.
class PairSearch {
 public:
  PairSearch(const Graph& g, const Board& board, TiledProgram& tiled, const WeightPrefetchOptions& options, const PoolBudget* budget)
      : g_(g), board_(board), tiled_(tiled), layers_(tiled.offloaded), timeline_(g, board, tiled.offloaded, [](size_t) { return uint64_t{0}; }),
        weightsOnce_(options.weightsOnce), everyOnceCore_(options.everyOnceCore), stream_(options.weightStream), budget_(budget),
        lookBack_(options.farIssuers ? kFarIssuerLookBack : kNearIssuerLookBack) {
    countLiveBytes();
    findReceivers();
    rotateReceiverBanks();
    issuerOf_.resize(receivers_.size());
    blockedBy_.resize(receivers_.size());
    for (const OffloadedLayer& L : layers_) maySplit_.push_back(L.weightsSplit);
  }

  /// The search from no pairs, and again from the fastest regular starts that beat no pairs (regularStarts); the
  /// fastest result stays. The search from no pairs ends in a different local optimum than from the best start
  /// (hexagon-vtcm zoo ResNet-8: faster from no pairs, MobileNet from a start, the autoencoder from its third best
  /// start), so it runs from no pairs and the kSearchStarts fastest starts.
  /// A local search from each of `starts` (total cycles, state); the fastest result, this one included, stays.
  template <typename Starts>
  void searchFromStarts(const Starts& starts) {
    for (const auto& [total, state] : starts) {
      const State bestSoFar = save();
      const uint64_t bestSoFarTotal = current_;
      restore(state);
      current_ = total;
      localSearch();
      if (current_ >= bestSoFarTotal) {
        restore(bestSoFar);
        current_ = bestSoFarTotal;
      }
    }
  }

  void search() {
    const State none = save();
    const uint64_t noneTotal = timeline_.total();
    const auto starts = regularStarts(none, noneTotal);
    restore(none);
    current_ = noneTotal;
    localSearch();
    searchFromStarts(starts);
    // Then, from the best pairs of one receiver per issuer, the moves that give an issuer a second receiver on its
    // other channel (cores mode, two channels): taken only where they make the program faster, so the result is
    // never slower than one receiver per issuer (searching with both from the start ends in other local optima,
    // some slower).
    secondReceivers_ = true;
    localSearch();
    // Last, the same moves with the weights loaded once (onceCores), again taken only where the program gets faster:
    // searching with them from the start ends in other local optima, some slower (MLPerf KWS on hexagon-vtcm).
    if (weightsOnce_) {
      onceMoves_ = true;
      localSearch();
      // And from the regular starts with weights loaded once (where every receiver needs one transfer per core, the
      // cores' channels carry as much as they compute: loading the small tiles once frees them for the big ones, which
      // single moves from the pairs above do not reach); the fastest result stays.
      const State found = save();
      const auto onceStarts = regularStarts(none, noneTotal, true);  // (changes the pairs)
      restore(found);
      searchFromStarts(onceStarts);
    }
    // Far issuers and every issuing core for the weights loaded once come last, as one more local search from the
    // pairs found: each multiplies the moves of every receiver (far issuers 10 candidates instead of 4, every core 4x
    // the once moves), which in every phase and from every start took MobileNetV2 224's compile on hexagon-vtcm from
    // 5 s to 15 s (user), for nothing there; so 7 s. (Also from no pairs: 9.5 s, no pair faster.)
    if (lookBack_ > kNearIssuerLookBack || everyOnceCore_) {
      extended_ = true;
      localSearch();
    }
    // The weight stream: for the receivers that mostly wait for transfers under the pairs found (markStreamed), an
    // issuer may load the first weight tiles of any number of later layers, one after the other on each channel, so
    // a run's early layers keep every core's channels busy with the weights of the layers after them. Searched from
    // the pairs found and from the stream's starts (streamStarts); the fastest result stays.
    if (stream_ && markStreamed()) {
      streamMoves_ = true;
      const State found = save();
      const uint64_t foundTotal = current_;
      const auto starts = streamStarts(found);
      restore(found);
      current_ = foundTotal;
      localSearch();
      searchFromStarts(starts);
    }
  }

  /// Writes the chosen pairs: the receivers' weight buffers live from their issuers' steps, every layer gets its
  /// estimate and cross-layer times, and remarks count the pairs and name the layers left out.
  void apply() {
    int taken = 0, notFaster = 0, overLayers = 0, overMoving = 0, far = 0, otherOnceCore = 0;
    size_t takenBytes = 0;
    std::vector<std::string> left;
    for (size_t k = 0; k < receivers_.size(); ++k) {
      const size_t i = receivers_[k].index;
      if (!issuerOf_[k]) {
        if (blockedBy_[k].empty()) ++notFaster;
        else left.push_back(blockedBy_[k]);
        continue;
      }
      const size_t j = *issuerOf_[k];
      tiled_.scratch[receivers_[k].request].firstStep = layers_[j].step;
      ++taken;
      takenBytes += receivers_[k].size;
      bool between = false, moving = false;
      for (size_t m = j + 1; m < i; ++m)
        if (layers_[m].target == layers_[i].target) {
          between = true;
          moving = moving || !movesNoData(layers_[m]);
        }
      overLayers += between;
      overMoving += moving;
      const auto& candidates = receivers_[k].candidates;
      far += std::find(candidates.begin(), candidates.end(), j) - candidates.begin() >= static_cast<std::ptrdiff_t>(kNearIssuerLookBack);
      const OffloadedLayer& R = layers_[i];
      otherOnceCore += R.weightsOnceCore >= 0 && R.weightsPrefetchedCores > 0 && static_cast<size_t>(R.weightsOnceCore) != k % static_cast<size_t>(R.weightsPrefetchedCores);
    }
    timeline_.apply(timeline_.run().first);
    std::vector<std::string>& remarks = tiled_.remarks;
    if (taken > 0)
      remarks.push_back(fmt::format(
          "prefetch: {} layer(s) find their first weight tiles loaded by an earlier layer on their target, during its last "
          "tile ({} bytes of weight buffers live from that layer's step; --no-weight-prefetch turns it off)",
          taken, takenBytes));
    const auto once = std::count_if(layers_.begin(), layers_.end(), [](const OffloadedLayer& L) { return L.weightsOnceCore >= 0; });
    if (once > 0)
      remarks.push_back(fmt::format("prefetch: {} layer(s) get the first weight tiles of all their cores in one transfer by one core of the "
                                    "issuing layer (weights loaded once; --no-weights-once turns it off)",
                                    once));
    if (otherOnceCore > 0)
      remarks.push_back(fmt::format("prefetch: {} of them by an issuing core other than the round-robin one (every issuing core tried; "
                                    "--no-every-once-core turns it off)",
                                    otherOnceCore));
    // Two later layers one on each channel (the pairs), or more, or two on one channel (the weight stream).
    const auto onEachChannel = [](const OffloadedLayer& L) { return L.prefetches.size() == 2 && L.prefetches[0].channel != L.prefetches[1].channel; };
    const auto twice = std::count_if(layers_.begin(), layers_.end(), onEachChannel);
    if (twice > 0)
      remarks.push_back(fmt::format("prefetch: {} layer(s) load the first weight tiles of two later layers, one on each DMA channel", twice));
    int streaming = 0, streamed = 0;
    for (const OffloadedLayer& L : layers_)
      if (L.prefetches.size() > 1 && !onEachChannel(L)) {
        ++streaming;
        streamed += static_cast<int>(L.prefetches.size());
      }
    if (streaming > 0)
      remarks.push_back(fmt::format("prefetch: weight stream: {} layer(s) load the first weight tiles of {} later layers, queued on their cores' "
                                    "channels (the layers mostly wait for DMA; --no-weight-stream turns it off)",
                                    streaming, streamed));
    if (overLayers > 0)
      remarks.push_back(fmt::format("prefetch: {} of them from a layer further back, the transfer running across the layers in between "
                                    "({} over layers that move data of their own, queued behind it)",
                                    overLayers, overMoving));
    if (far > 0)
      remarks.push_back(fmt::format("prefetch: {} of them from more than {} layers back on their target (far issuers, up to {} back; "
                                    "--no-far-weight-prefetch turns it off)",
                                    far, kNearIssuerLookBack, kFarIssuerLookBack));
    if (!left.empty())
      remarks.push_back(fmt::format("prefetch: {} layer(s) load their first weight tiles themselves: {}", left.size(), fmt::join(left, "; ")));
    if (notFaster > 0)
      remarks.push_back(fmt::format("prefetch: {} layer(s) load their first weight tiles themselves: loading them during an earlier layer "
                                    "would not be faster under the cost model",
                                    notFaster));
  }

 private:
  /// A layer that may receive its first weight tiles, and the layers that may issue them (nearest first).
  struct Receiver {
    size_t index;
    std::vector<size_t> candidates;
    size_t request;  ///< its first weight buffer (half 0) in tiled.scratch
    size_t size;
  };
  /// The pairing fields of a layer, to try a move and take it back.
  struct Fields {
    std::vector<WeightPrefetchTo> prefetches;
    int prefetchedCores, onceCore;
    bool split;
  };
  using State = std::pair<std::vector<Fields>, std::vector<std::optional<size_t>>>;

  size_t aligned(int pool, size_t bytes) const { return alignUp(bytes, board_.pools[static_cast<size_t>(pool)].alignment); }

  /// Bytes live per (pool, step) and per (pool, bank, step): tile buffers, resident tensors and (per pool) the bytes
  /// that can only live there (the budget).
  void countLiveBytes() {
    for (size_t i = 0; i < tiled_.scratch.size(); ++i) {
      const ScratchRequest& r = tiled_.scratch[i];
      requestOf_[r.name] = i;
      for (int s = r.firstStep >= 0 ? r.firstStep : r.step; s <= r.step; ++s) {
        poolLive_[{r.pool, s}] += aligned(r.pool, r.sizeBytes);
        if (r.bank >= 0) bankLive_[{r.pool, r.bank, s}] += aligned(r.pool, r.sizeBytes);
      }
    }
    // The tiler keeps every bank free of the resident bytes live at a step (ScratchNeed::reservedBytes: the planner
    // may put a resident tensor in any bank), so an early buffer must leave them free in its bank too.
    for (const auto& [poolStep, size] : residentBytesByPoolAndStep(g_, board_, tiled_.resident)) residentLive_[poolStep] += size;
    std::vector<ResidentTensor> resident = tiled_.resident;  // a pinned one is counted in the budget
    if (budget_) std::erase_if(resident, [&](const ResidentTensor& r) { return budget_->counts(r.viewOf == kNoTensor ? r.tensor : r.viewOf); });
    for (const auto& [poolStep, size] : residentBytesByPoolAndStep(g_, board_, resident)) poolLive_[poolStep] += size;
    if (budget_)
      for (const auto& [poolStep, size] : budget_->forced) poolLive_[poolStep] += size;
  }

  /// The layers that may receive their first weight tiles: tiled on an accelerator, with constant weights (an Add's
  /// or MatMul's second operand may be made by the layer before, still being written) loaded into a tile buffer. The
  /// issuer: the layer before on the target or, in cores mode, one up to 3 (far issuers: 9) further back: the transfer then runs across
  /// the layers in between (their input transfers queue behind it), which hides more of it when the layer before is
  /// short. Engine mode: the layer before (its fence waits for every transfer it issued).
  void findReceivers() {
    for (size_t i = 0; i < layers_.size(); ++i) {
      const OffloadedLayer& next = layers_[i];
      const Target& target = board_.targets[static_cast<size_t>(next.target)];
      const bool tiledMode = next.mode == "cores" || next.mode == "engine";
      if (!tiledMode || target.kind != TargetKind::Accelerator || next.direct[1] || next.buffers[1][0].empty()) continue;
      const auto& shape = timeline_.shape(i);
      if (!shape || shape->call.inputs.size() < 2 || shape->call.inputs[1] == kNoTensor || !g_.tensor(shape->call.inputs[1]).isConstant())
        continue;
      const auto req = requestOf_.find(next.buffers[1][0]);
      if (req == requestOf_.end()) continue;
      Receiver rc{i, {}, req->second, aligned(tiled_.scratch[req->second].pool, tiled_.scratch[req->second].sizeBytes)};
      for (size_t j = i; j > 0 && rc.candidates.size() < lookBack_;) {
        --j;
        if (layers_[j].target != next.target) continue;
        if (layers_[j].mode == next.mode && timeline_.shape(j)) rc.candidates.push_back(j);
        if (next.mode != "cores") break;
      }
      if (!rc.candidates.empty()) receivers_.push_back(std::move(rc));
    }
  }

  /// A receiver's first weight buffer lives from its issuer's step, but its layer's buffers got their banks for its
  /// own step alone. When that buffer does not fit its bank beside what the nearest candidate issuer's steps hold
  /// there, the receiver layer's buffers in that pool move round the pool's banks (all the same size, so its own step
  /// stays valid and ping-pong halves stay apart) to the first rotation where it fits.
  void rotateReceiverBanks() {
    for (const Receiver& rc : receivers_) {
      const ScratchRequest& w0 = tiled_.scratch[rc.request];
      const MemoryPool& pool = board_.pools[static_cast<size_t>(w0.pool)];
      if (w0.bank < 0 || pool.banks < 2 || pool.bankSizeBytes == 0) continue;
      const int step = layers_[rc.index].step, from = layers_[rc.candidates.front()].step;
      auto fitsIn = [&](int bank) {
        for (int s = from; s < step; ++s)
          if (bankLive_[{w0.pool, bank, s}] + residentLive_[{w0.pool, s}] + rc.size > pool.bankSizeBytes) return false;
        return true;
      };
      if (fitsIn(w0.bank)) continue;
      for (int turn = 1; turn < pool.banks; ++turn) {
        if (!fitsIn((w0.bank + turn) % pool.banks)) continue;
        for (ScratchRequest& r : tiled_.scratch) {
          if (r.step != step || r.pool != w0.pool || r.bank < 0) continue;
          const size_t bytes = aligned(r.pool, r.sizeBytes);
          bankLive_[{r.pool, r.bank, step}] -= bytes;
          r.bank = (r.bank + turn) % pool.banks;
          bankLive_[{r.pool, r.bank, step}] += bytes;
        }
        break;
      }
    }
  }

  /// A layer the tiler gave split weight loads (chosen on its own) is also tried without: the transfer an issuer adds
  /// to its input channel queues behind the split's second parts there. Unsplit first: it stays on a tie.
  std::vector<bool> splitOptions(size_t i) const { return maySplit_[i] ? std::vector<bool>{false, true} : std::vector<bool>{false}; }

  /// Cores mode with two channels: the transfer on the input channel or on the weight and store channel.
  bool twoChannels(size_t i) const {
    return layers_[i].mode == "cores" && board_.targets[static_cast<size_t>(layers_[i].target)].dmaChannels >= 2;
  }

  /// The first step in [issuer's step, receiver's step) at which receiver k's weight buffer, live from the issuer's
  /// step, does not fit its pool or bank beside the other pairs' early buffers (except those in `ignore`), or -1.
  int firstBlockedStep(size_t k, size_t issuer, const std::vector<size_t>& ignore) {
    const ScratchRequest& r = tiled_.scratch[receivers_[k].request];
    const MemoryPool& pool = board_.pools[static_cast<size_t>(r.pool)];
    for (int s = layers_[issuer].step; s < layers_[receivers_[k].index].step; ++s) {
      size_t inPool = poolLive_[{r.pool, s}] + receivers_[k].size, inBank = bankLive_[{r.pool, r.bank, s}] + residentLive_[{r.pool, s}] + receivers_[k].size;
      for (size_t o = 0; o < receivers_.size(); ++o) {
        if (o == k || !issuerOf_[o] || std::find(ignore.begin(), ignore.end(), o) != ignore.end()) continue;
        const ScratchRequest& other = tiled_.scratch[receivers_[o].request];
        if (other.pool != r.pool || s < layers_[*issuerOf_[o]].step || s >= layers_[receivers_[o].index].step) continue;
        inPool += receivers_[o].size;
        if (other.bank == r.bank) inBank += receivers_[o].size;
      }
      if ((pool.sizeBytes && inPool > *pool.sizeBytes) || (r.bank >= 0 && pool.bankSizeBytes > 0 && inBank > pool.bankSizeBytes)) return s;
    }
    return -1;
  }

  State save() const {
    std::vector<Fields> f;
    for (const OffloadedLayer& L : layers_)
      f.push_back({L.prefetches, L.weightsPrefetchedCores, L.weightsOnceCore, L.weightsSplit});
    return {f, issuerOf_};
  }

  void restore(const State& st) {
    for (size_t i = 0; i < layers_.size(); ++i) {
      layers_[i].prefetches = st.first[i].prefetches;
      layers_[i].weightsPrefetchedCores = st.first[i].prefetchedCores;
      layers_[i].weightsOnceCore = st.first[i].onceCore;
      layers_[i].weightsSplit = st.first[i].split;
    }
    issuerOf_ = st.second;
  }

  /// Takes receiver k from its issuer (its other receivers keep their channels and order).
  void unpair(size_t k) {
    if (!issuerOf_[k]) return;
    OffloadedLayer& issuer = layers_[*issuerOf_[k]];
    const int step = layers_[receivers_[k].index].step;
    std::erase_if(issuer.prefetches, [&](const WeightPrefetchTo& to) { return to.step == step; });
    layers_[receivers_[k].index].weightsPrefetchedCores = 0;
    layers_[receivers_[k].index].weightsOnceCore = -1;
    issuerOf_[k].reset();
  }

  /// The channel issuer j loads receiver k's first weight tiles on (k must be one of j's receivers).
  int channelOf(size_t k, size_t j) const {
    const OffloadedLayer& issuer = layers_[j];
    for (const WeightPrefetchTo& to : issuer.prefetches)
      if (to.step == layers_[receivers_[k].index].step) return to.channel;
    return 0;
  }

  /// Pairs receiver k with issuer j on `channel`, issued after j's other receivers (no split changes; before the
  /// stream phase j serves no receiver on that channel, and in engine mode or on one channel none at all); false
  /// (and unpaired) when the receiver has no first weight transfer to move.
  bool pair(size_t k, size_t j, int channel) {
    const size_t i = receivers_[k].index;
    layers_[j].prefetches.push_back({layers_[i].step, channel, {}});
    layers_[i].weightsPrefetchedCores = std::min(layers_[j].cores, layers_[i].cores);
    layers_[i].weightsOnceCore = -1;
    issuerOf_[k] = j;
    const std::vector<uint64_t> transfers = timeline_.firstWeightTransfers(i, layers_[i].weightsPrefetchedCores);
    if (std::any_of(transfers.begin(), transfers.end(), [](uint64_t c) { return c > 0; })) return true;
    unpair(k);
    return false;
  }

  /// The issuing core that may load receiver k's first weight tiles for all its cores in one transfer (weights loaded
  /// once, onceWeightCopy), when its cores all get their first tile from the issuer (cores mode) and the copies make
  /// one transfer into its shared pool's regions: core k mod cores first, so that consecutive receivers' transfers go
  /// round the cores' channels, then (everyOnceCore_) every other core in turn: with far issuers an early layer issues
  /// for receivers far apart, and the round-robin core's channels may be the ones its own loads hold (ToyCar on
  /// hexagon-vtcm 8,207 -> 7,917 cycles). None otherwise.
  std::vector<int> onceCores(size_t k) {
    const size_t i = receivers_[k].index;
    const OffloadedLayer& L = layers_[i];
    const int n = L.weightsPrefetchedCores;
    // (Not into a layer sharing its input: its barriers are its own, tile/SharedInput.h.)
    if (!onceMoves_ || L.mode != "cores" || L.sharedInputLoaders > 0 || n < 2 || n != L.cores || !onceWeightCopy(timeline_.schedule(i), n, L.coreStride[1])) return {};
    std::vector<int> cores;
    for (int c = 0; c < (everyOnceCore_ && extended_ ? n : 1); ++c) cores.push_back((static_cast<int>(k % static_cast<size_t>(n)) + c) % n);
    return cores;
  }

  std::optional<size_t> receiverIssuedBy(size_t j) const {
    for (size_t o = 0; o < receivers_.size(); ++o)
      if (issuerOf_[o] == j) return o;
    return std::nullopt;
  }

  /// Marks the receivers the weight stream moves (streamed_): those of the runs whose cores-mode layers, under the
  /// current pairs, spend more than half their estimated cycles beyond their compute (waiting for transfers); true when
  /// there is one. A run is a maximal sequence of layers on one target that no CPU step running code separates (the
  /// receivers of a run share its channels, so the stream reorders them all). Elsewhere the pairs stay as found: in
  /// MobileNetV2 224 on hexagon-vtcm only the last fully connected layer (a run of its own after the CPU's pooling) is
  /// streamed, 1 of 52 receivers, so the phase costs little compile time.
  bool markStreamed() {
    const auto entries = timeline_.run().first;
    std::vector<size_t> runOf(layers_.size(), 0);
    size_t run = 0;
    int lastTarget = -1;
    for (size_t step = 0; step < g_.nodes.size(); ++step) {
      const auto i = timeline_.indexOfStep(static_cast<int>(step));
      if (!i) {
        const auto lowered = lowerNode(g_, g_.nodes[step]);
        if (lowered.ok() && !lowered->empty()) ++run;  // a CPU step that runs code ends the run
        continue;
      }
      if (layers_[*i].target != lastTarget) ++run;
      lastTarget = layers_[*i].target;
      runOf[*i] = run;
    }
    std::map<size_t, std::pair<uint64_t, uint64_t>> cycles;  // by run: total, compute of its cores-mode layers
    for (size_t i = 0; i < layers_.size(); ++i)
      if (layers_[i].mode == "cores" && timeline_.shape(i)) {
        cycles[runOf[i]].first += entries[i].cost.total;
        cycles[runOf[i]].second += std::min(entries[i].cost.compute, entries[i].cost.total);
      }
    streamed_.assign(receivers_.size(), false);
    bool any = false;
    for (size_t k = 0; k < receivers_.size(); ++k) {
      const size_t i = receivers_[k].index;
      const auto [total, compute] = cycles[runOf[i]];
      streamed_[k] = layers_[i].mode == "cores" && total > 2 * compute;
      any = any || streamed_[k];
    }
    return any;
  }

  /// The weight stream's starts: every cores-mode receiver paired with its farthest candidate issuer whose buffer fits
  /// beside those paired before it (the run's first layer, where the run is short), so all their transfers queue from
  /// that layer on. A receiver whose one transfer for all cores (weights loaded once) takes at most the target's mean
  /// queue time - all the receivers' least transfer cycles over its cores x channels - gets it (one setup, one
  /// queue), else each core loads its own (a large tensor in pieces over the cores). The receivers are paired, and so
  /// queued, in one of two orders: program order (the order they are needed) or largest transfer first (the longest
  /// queue work placed first); each takes the channel and issuing core that make the program fastest given those
  /// before it. Returns both starts (total cycles, state).
  std::vector<std::pair<uint64_t, State>> streamStarts(const State& found) {
    // The streamed receivers start unpaired; the others keep the pairs found.
    restore(found);
    for (size_t k = 0; k < receivers_.size(); ++k)
      if (streamed_[k]) unpair(k);
    const State none = save();
    std::vector<size_t> streamed;                // streamed receivers with a candidate
    std::vector<uint64_t> ownCycles(receivers_.size(), 0), onceCycles(receivers_.size(), 0);
    std::map<int, uint64_t> work;  // by target: the receivers' least transfer cycles, summed
    for (size_t k = 0; k < receivers_.size(); ++k) {
      const size_t i = receivers_[k].index;
      if (!streamed_[k] || !pair(k, receivers_[k].candidates.back(), 0)) continue;
      streamed.push_back(k);
      const std::vector<uint64_t> own = timeline_.receiverTransfers(i);
      ownCycles[k] = std::accumulate(own.begin(), own.end(), uint64_t{0});
      if (const std::vector<int> cores = onceCores(k); !cores.empty()) {
        layers_[i].weightsOnceCore = cores.front();
        const std::vector<uint64_t> one = timeline_.receiverTransfers(i);
        onceCycles[k] = *std::max_element(one.begin(), one.end());
      }
      work[layers_[i].target] += onceCycles[k] > 0 ? std::min(ownCycles[k], onceCycles[k]) : ownCycles[k];
      unpair(k);
    }
    std::vector<size_t> largestFirst = streamed;
    std::stable_sort(largestFirst.begin(), largestFirst.end(), [&](size_t a, size_t b) {
      return std::max(ownCycles[a], onceCycles[a]) > std::max(ownCycles[b], onceCycles[b]);
    });
    std::vector<std::pair<uint64_t, State>> starts;
    for (const std::vector<size_t>* order : {&streamed, &largestFirst}) {
      restore(none);
      for (size_t k : *order) {
        const size_t i = receivers_[k].index;
        const auto& candidates = receivers_[k].candidates;
        std::optional<size_t> issuer;
        for (size_t c = candidates.size(); c-- > 0 && !issuer;)
          if (firstBlockedStep(k, candidates[c], {k}) < 0) issuer = candidates[c];
        if (!issuer) continue;
        const Target& target = board_.targets[static_cast<size_t>(layers_[i].target)];
        const uint64_t meanQueue = work[layers_[i].target] / static_cast<uint64_t>(std::max(1, target.cores * std::max(1, target.dmaChannels)));
        // Each issuing core onceCores offers for the one transfer (every one with everyOnceCore), or none.
        std::vector<int> cores;
        if (onceCycles[k] > 0 && onceCycles[k] <= meanQueue && pair(k, *issuer, 0)) {
          cores = onceCores(k);
          unpair(k);
        }
        if (cores.empty()) cores.push_back(-1);
        std::optional<std::pair<int, int>> best;  // channel, once core
        uint64_t bestTotal = 0;
        for (int channel : twoChannels(i) ? std::vector<int>{0, 1} : std::vector<int>{0})
          for (int once : cores) {
            if (!pair(k, *issuer, channel)) continue;
            layers_[i].weightsOnceCore = once;
            const uint64_t total = timeline_.total();
            if (!best || total < bestTotal) {
              best = {channel, once};
              bestTotal = total;
            }
            unpair(k);
          }
        if (best && pair(k, *issuer, best->first)) layers_[i].weightsOnceCore = best->second;
      }
      starts.emplace_back(timeline_.total(), save());
    }
    return starts;
  }

  /// The receivers issuer j serves on `channel` or, where an issuer serves one receiver only (engine mode, one
  /// channel, or before the search's second-receiver moves), on any: a pair of j on that channel takes them from j.
  std::vector<size_t> receiversInTheWay(size_t j, int channel) const {
    std::vector<size_t> out;
    for (size_t o = 0; o < receivers_.size(); ++o)
      if (issuerOf_[o] == j && !(streamMoves_ && layers_[j].mode == "cores") &&
          (!secondReceivers_ || !twoChannels(j) || channelOf(o, j) == channel))
        out.push_back(o);
    return out;
  }

  /// Local search on the program's estimated cycles (CPU steps count 0: they are not planned yet): for each receiver
  /// in turn, every move - no pair, or a pair with one of its candidates (taking it from the receiver it served, if
  /// any), each with the split options of both layers and, in cores mode with two DMA channels, on either channel (the
  /// input channel, or the weight and store channel that layers with operands in place leave idle) - is estimated
  /// over the whole run, and the fastest taken when it beats the current pairs. Rounds until nothing improves (at
  /// most 4): a first round alone is the greedy pass in layer order, and later rounds undo its early choices that
  /// block better later ones.
  void localSearch() {
    for (int round = 0; round < 4; ++round) {
      bool improved = false;
      for (size_t k = 0; k < receivers_.size(); ++k) {
        if (streamMoves_ && !streamed_[k]) continue;  // the weight stream moves only the receivers that wait
        const size_t i = receivers_[k].index;
        const State before = save();
        std::optional<State> best;
        uint64_t bestTotal = current_;
        auto consider = [&] {
          const uint64_t total = timeline_.total();
          if (total < bestTotal) {
            bestTotal = total;
            best = save();
          }
        };
        for (bool si : splitOptions(i)) {  // no pair
          unpair(k);
          layers_[i].weightsSplit = si;
          consider();
          restore(before);
        }
        const auto& candidates = receivers_[k].candidates;
        for (size_t c = 0; c < candidates.size() && (extended_ || c < kNearIssuerLookBack); ++c)
          for (int channel : twoChannels(i) ? std::vector<int>{0, 1} : std::vector<int>{0}) {
            const size_t j = candidates[c];
            // The receiver j serves on this channel (any, where it serves one) loses it; on two channels j may
            // keep serving another on the other channel.
            std::vector<size_t> served;
            for (size_t o : receiversInTheWay(j, channel))
              if (o != k) served.push_back(o);
            std::vector<size_t> ignore = {k};
            ignore.insert(ignore.end(), served.begin(), served.end());
            const int blocked = firstBlockedStep(k, j, ignore);
            if (blocked >= 0) {
              if (blockedBy_[k].empty()) {
                const int pool = tiled_.scratch[receivers_[k].request].pool;
                const std::string only = budget_ ? budget_->why(board_, pool, blocked, blocked + 1) : "";
                blockedBy_[k] = fmt::format("'{}' ({} bytes do not fit '{}' beside what step {} ('{}') holds there{})", g_.nodes[static_cast<size_t>(layers_[i].step)].name,
                                            receivers_[k].size, board_.pools[static_cast<size_t>(pool)].name, blocked,
                                            g_.nodes[static_cast<size_t>(blocked)].name, only.empty() ? "" : ": " + only);
              }
              continue;
            }
            for (bool sj : splitOptions(j))
              for (bool si : splitOptions(i)) {
                unpair(k);
                for (size_t o : served) unpair(o);
                layers_[j].weightsSplit = sj;
                layers_[i].weightsSplit = si;
                if (pair(k, j, channel)) {
                  consider();
                  // The same pair with the weights loaded once, by each issuing core in turn.
                  for (int once : onceCores(k)) {
                    layers_[i].weightsOnceCore = once;
                    consider();
                  }
                }
                restore(before);
              }
          }
        if (best) {
          restore(*best);
          current_ = bestTotal;
          improved = true;
        }
      }
      if (!improved) break;
    }
  }

  /// The regular starts faster than no pairs (`none`, `noneTotal`), fastest first, at most kSearchStarts: every
  /// receiver paired with the candidate `d` layers back on its target (when that one issues for no other receiver
  /// yet, its buffer fits and there is a transfer to make), on a channel that follows a pattern over the receivers:
  /// all on one, or alternating every receiver or every second one. Where every layer receives and the transfers
  /// outlast the layers in between, the pairs must interleave over both channels, which single moves from no pairs
  /// do not reach (each would first take an issuer from the receiver it serves).
  std::vector<std::pair<uint64_t, State>> regularStarts(const State& none, uint64_t noneTotal, bool once = false) {
    std::vector<std::pair<uint64_t, State>> starts;
    for (size_t d = 1; d <= kNearIssuerLookBack; ++d)
      for (int pattern = once ? 4 : 0; pattern < (once ? 12 : 4); ++pattern) {
        // Patterns 4-11 (`once`): those of 0-3 with each receiver that can get its weights loaded once (onceCores;
        // 4-7: every one; 8-11: those whose one transfer takes at most a quarter longer than each core's own): one
        // setup per layer, the transfers spread round the cores' channels.
        restore(none);
        bool paired = false;
        for (size_t k = 0; k < receivers_.size(); ++k) {
          const Receiver& rc = receivers_[k];
          if (rc.candidates.size() < d) continue;
          const size_t j = rc.candidates[d - 1];
          if (receiverIssuedBy(j) || firstBlockedStep(k, j, {k}) >= 0) continue;
          const int p = pattern % 4;
          const int channel = !twoChannels(rc.index) ? 0 : p < 2 ? p : static_cast<int>((k / static_cast<size_t>(p - 1)) % 2);
          const bool ok = pair(k, j, channel);
          paired = ok || paired;
          if (ok && pattern >= 4)
            if (const std::vector<int> cores = onceCores(k); !cores.empty()) {
              const std::vector<uint64_t> own = timeline_.receiverTransfers(rc.index);
              layers_[rc.index].weightsOnceCore = cores.front();
              const std::vector<uint64_t> one = timeline_.receiverTransfers(rc.index);
              const uint64_t ownMax = *std::max_element(own.begin(), own.end()), oneMax = *std::max_element(one.begin(), one.end());
              if (pattern >= 8 && oneMax * 4 > ownMax * 5) layers_[rc.index].weightsOnceCore = -1;
            }
        }
        const uint64_t total = paired ? timeline_.total() : noneTotal;
        if (total < noneTotal) starts.emplace_back(total, save());
      }
    std::stable_sort(starts.begin(), starts.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    if (starts.size() > kSearchStarts) starts.resize(kSearchStarts);
    return starts;
  }

  const Graph& g_;
  const Board& board_;
  TiledProgram& tiled_;
  std::vector<OffloadedLayer>& layers_;
  LayerTimeline timeline_;
  std::map<std::pair<int, int>, size_t> poolLive_;
  std::map<std::tuple<int, int, int>, size_t> bankLive_;
  std::map<std::pair<int, int>, size_t> residentLive_;  ///< resident bytes per (pool, step), kept free in every bank
  std::map<std::string, size_t> requestOf_;
  std::vector<Receiver> receivers_;
  std::vector<bool> maySplit_;
  std::vector<std::optional<size_t>> issuerOf_;  ///< by receiver: the issuing layer's index
  std::vector<std::string> blockedBy_;           ///< by receiver: why a candidate was left out (for the remark)
  uint64_t current_ = 0;                         ///< the estimated total under the current pairs
  bool secondReceivers_ = false;                 ///< an issuer may serve a receiver on each of its two channels
  bool streamMoves_ = false;                     ///< cores mode: an issuer may serve any number of receivers (the weight stream)
  std::vector<bool> streamed_;                   ///< by receiver: moved by the weight stream (markStreamed)
  bool weightsOnce_ = true;                      ///< pairs may load a receiver's first weight tiles once for all its cores
  bool everyOnceCore_ = true;                    ///< those pairs are tried with every issuing core, not only k mod cores
  bool stream_ = true;                           ///< the weight stream phase runs (WeightPrefetchOptions::weightStream)
  bool onceMoves_ = false;                       ///< the search tries those pairs (its last phases)
  bool extended_ = false;                        ///< the last phase: far issuers and every once core (search())
  const PoolBudget* budget_ = nullptr;           ///< what can only live in each pool, or null
  size_t lookBack_ = kNearIssuerLookBack;        ///< candidate issuers per receiver: the layer before on its target and further back
};

}  // namespace

void prefetchWeightsAcrossLayers(const Graph& g, const Board& board, TiledProgram& tiled, const WeightPrefetchOptions& options,
                                 const PoolBudget* budget) {
  PairSearch search(g, board, tiled, options, budget);
  search.search();
  search.apply();
}

void settlePrefetchArrivals(const Graph& g, ProgramPlan& plan) {
  if (std::none_of(plan.offloaded.begin(), plan.offloaded.end(), [](const OffloadedLayer& L) { return !L.prefetches.empty() || L.handsInputTo >= 0; }))
    return;
  LayerTimeline timeline(g, plan.board, plan.offloaded, [&](size_t step) { return cpuStepCycles(g, plan, step); });
  timeline.apply(timeline.run().first);
}

}  // namespace stowage
