// Partition, tile choice and scratch requests for a whole program (see TileProgram.h).
#include "stowage/tile/TileProgram.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "stowage/tile/CpuStreaming.h"
#include "stowage/tile/ResidentTensors.h"
#include "stowage/tile/ScratchLayout.h"
#include "stowage/tile/TileChoice.h"
#include "stowage/tile/TileGeometry.h"
#include "stowage/tile/InputHandover.h"
#include "stowage/tile/WeightPrefetch.h"

namespace stowage {

void recordTiledLayer(TiledProgram& r, int step, int target, const std::string& mode, const LayerShape& s, TileChoice choice,
                      bool reservePools) {
  OffloadedLayer L;
  L.step = step;
  L.target = target;
  L.mode = mode;
  L.kernel = tileKernelIntrinsic(s.kernel);
  L.cores = choice.cores;
  L.rowTile = choice.rowTile;
  L.rowsArePixels = s.imageRowPixels > 0;
  L.channelTile = choice.channelTile;
  L.firstRows = choice.rowBlocks.first;
  L.lastRows = choice.rowBlocks.last;
  L.rampRows = choice.rowBlocks.ramp;
  L.tiles = static_cast<int>(choice.schedule.tiles.size());
  L.doubleBuffer = choice.doubleBuffer;
  for (int op = 0; op < 3; ++op) L.doubled[op] = choice.buffers.doubled[op];
  for (int op = 0; op < 3; ++op) L.direct[op] = choice.direct.direct[op];
  L.rowsOuter = choice.order == TileOrder::RowsOuter;
  L.weightsSplit = choice.schedule.weightsSplit;
  L.sharedInputLoaders = choice.schedule.sharedLoaders;
  L.xBytes = choice.bytes.x;
  L.wBytes = choice.bytes.w;
  L.yBytes = choice.bytes.y;
  recordEstimate(L, choice.cost);
  const int base = static_cast<int>(r.scratch.size());
  for (ScratchRequest req : choice.scratch) {
    if (req.pairedWith >= 0) req.pairedWith += base;
    const char opChar = req.name[req.name.size() - 2];
    const int op = opChar == 'x' ? 0 : opChar == 'w' ? 1 : 2;
    L.buffers[op][req.name.back() - '0'] = req.name;
    if (reservePools && std::find(r.scratchPools.begin(), r.scratchPools.end(), req.pool) == r.scratchPools.end())
      r.scratchPools.push_back(req.pool);
    r.scratch.push_back(req);
  }
  for (int op = 0; op < 3; ++op) L.coreStride[op] = choice.coreStride[op];
  r.offloaded.push_back(L);
}

namespace {

/// The tile searches of one program (same graph, board and options), each (step, target, reserved bytes, operands in
/// place) searched once: the tiling with residents searches most layers again with what the first tiling searched them
/// with, and MobileNetV2 224 on hexagon-vtcm spent half its compile time doing so. Not with an observer (it sees every
/// search). `wider`: the searches of the same program that also tried whole inputs shared (TileOptions::sharedWholeInput)
/// where this one does not: a layer it tiled without one is taken from there (it tried a superset of the tilings, and
/// its pruning drops only tilings slower than one it found, so this search would choose the same).
class TileSearches {
 public:
  TileSearches(const Board& board, const TileOptions& options, const TileSearches* wider = nullptr)
      : board_(board), options_(options), wider_(wider) {}
  /// chooseTiles of the layer `s` at `step` on `target` with tiles in `pools` (whyNot: why it does not tile). The tiles
  /// also keep free what can only live in their pools at this step (the budget; the most of any of the pools). A layer
  /// whose tiles fit only without that is tiled so all the same: the plan then fails naming the pool, its buffers and
  /// the size that would fit, where a fallback to the CPU would hide it (or fail on a pin the CPU cannot reach).
  const std::optional<TileChoice>& choose(int target, const LayerShape& s, const std::vector<int>& pools, int step,
                                          const ResidentOperands& resident, std::string& whyNot) {
    ResidentOperands operands = resident;
    if (options_.budget)
      for (int pool : pools) operands.reservedBytes = std::max(operands.reservedBytes, resident.reservedBytes + options_.budget->forcedBytes(pool, step));
    const std::optional<TileChoice>& within = search(target, s, pools, step, operands, whyNot);
    if (within || operands.reservedBytes == resident.reservedBytes) return within;
    std::string whyNotAtAll;
    const std::optional<TileChoice>& atAll = search(target, s, pools, step, resident, whyNotAtAll);
    if (atAll) whyNot.clear();
    return atAll ? atAll : within;
  }

 private:
  const std::optional<TileChoice>& search(int target, const LayerShape& s, const std::vector<int>& pools, int step,
                                          const ResidentOperands& operands, std::string& whyNot) {
    const Key key{step, target, operands.reservedBytes,
                  int{operands.resident.direct[0]} | int{operands.resident.direct[1]} << 1 | int{operands.resident.direct[2]} << 2};
    auto it = done_.find(key);
    if (it == done_.end() && wider_ && !options_.observer) {
      const auto w = wider_->done_.find(key);
      if (w != wider_->done_.end() && !sharesWholeInput(w->second.choice)) it = done_.emplace(key, w->second).first;
    }
    if (it == done_.end() || options_.observer) {
      Search found;
      found.choice = chooseTiles(board_, target, s, pools, step, options_.doubleBuffer, found.whyNot, operands, options_.observer,
                                 options_.sharedInput, options_.sharedWholeInput);
      it = done_.insert_or_assign(key, std::move(found)).first;
    }
    whyNot = it->second.whyNot;
    return it->second.choice;
  }

  /// A choice whose cores share their whole input (one row block, tile/SharedInput.h).
  static bool sharesWholeInput(const std::optional<TileChoice>& c) {
    return c && c->schedule.sharedLoaders > 0 && c->order == TileOrder::ChannelsOuter;
  }

  using Key = std::tuple<int, int, size_t, int>;
  struct Search {
    std::optional<TileChoice> choice;
    std::string whyNot;
  };
  const Board& board_;
  const TileOptions& options_;
  const TileSearches* wider_;
  std::map<Key, Search> done_;
};

/// One tiling of the program; `resident`: per step, the operands its layer may use in place.
TiledProgram tilePass(const Graph& g, const Board& board, const TileOptions& options, const std::map<int, ResidentOperands>& resident,
                      TileSearches& searches) {
  TiledProgram r;
  int cpu = -1;
  for (size_t t = 0; t < board.targets.size() && cpu < 0; ++t)
    if (board.targets[t].kind == TargetKind::Cpu) cpu = static_cast<int>(t);
  if (cpu < 0) cpu = 0;
  r.nodeTargets.assign(g.nodes.size(), cpu);
  for (size_t step = 0; step < g.nodes.size(); ++step) {
    const Node& n = g.nodes[step];
    const std::string op(opName(n.op));
    int accel = -1;
    for (size_t t = 0; t < board.targets.size() && accel < 0; ++t)
      if (board.targets[t].kind == TargetKind::Accelerator && board.targets[t].runs(op)) accel = static_cast<int>(t);
    if (accel < 0) {
      if (!board.targets[static_cast<size_t>(cpu)].runs(op))
        r.remarks.push_back(fmt::format("node '{}' ({}) runs on '{}' although its ops list does not name {}: no target of the board lists it",
                                        n.name, op, board.targets[static_cast<size_t>(cpu)].name, op));
      streamOnCpu(g, board, cpu, static_cast<int>(step), options, r);  // a fast pool too small for the layer
      continue;
    }
    const Target& target = board.targets[static_cast<size_t>(accel)];
    auto fallback = [&](const std::string& why) {
      r.remarks.push_back(fmt::format("fallback: node '{}' ({}) runs on '{}' instead of '{}': {}", n.name, op,
                                      board.targets[static_cast<size_t>(cpu)].name, target.name, why));
    };
    const LayerShapeResult shape = layerShapeOf(g, n);
    if (!shape.shape) {
      fallback(shape.whyNot);
      continue;
    }
    // The kernel's data type: int8 for the TFLite and ONNX integer kernels (int8 / uint8 operands), else float32.
    const std::string dtype = tileKernelDtype(shape.shape->kernel);
    if (target.engineDim > 0 && runsOnCoresOnly(shape.shape->kernel)) {
      fallback(fmt::format("the matrix engine runs no {} (it is tiled for targets that run layers on their cores)",
                           isPoolTileKernel(shape.shape->kernel) ? "pooling" : "element-wise Add"));
      continue;
    }
    if (target.engineDim > 0 && !target.engineRuns(dtype)) {
      fallback(fmt::format("the engine computes {} but the layer is {}", fmt::join(target.engineDtypes, ", "), dtype));
      continue;
    }
    if (target.dmaBytesPerCycle <= 0) {
      fallback("the target has no DMA (give dma_bytes_per_cycle in the board)");
      continue;
    }
    const std::vector<int> pools = scratchPoolsFor(board, accel, n);
    if (pools.empty()) {
      fallback("the target has no scratch pool (a fixed workspace pool only it can access, or a rule's `scratch` list)");
      continue;
    }
    std::string whyNot;
    const auto res = resident.find(static_cast<int>(step));
    const auto& choice = searches.choose(accel, *shape.shape, pools, static_cast<int>(step),
                                         res == resident.end() ? ResidentOperands{} : res->second, whyNot);
    if (!choice) {
      fallback(whyNot);
      continue;
    }
    r.nodeTargets[step] = accel;
    recordTiledLayer(r, static_cast<int>(step), accel, target.engineDim > 0 ? "engine" : "cores", *shape.shape, TileChoice(*choice), true);
  }
  std::sort(r.scratchPools.begin(), r.scratchPools.end());
  return r;
}

/// The estimated cycles of the layer at `step` tiled for `target` with `operands` resident (nullopt: it does not tile).
std::optional<uint64_t> cyclesRetiled(const Graph& g, const Board& board, TileSearches& searches, int target, int step,
                                      const ResidentOperands& operands) {
  const Node& n = g.nodes[static_cast<size_t>(step)];
  const LayerShapeResult shape = layerShapeOf(g, n);
  if (!shape.shape) return std::nullopt;
  std::string whyNot;
  const auto& choice = searches.choose(target, *shape.shape, scratchPoolsFor(board, target, n), step, operands, whyNot);
  if (!choice) return std::nullopt;
  return choice->cost.total;
}

/// The tiling with resident activations when they fit (tileProgram without the weight prefetch).
TiledProgram tileWithResidents(const Graph& g, const Board& board, const TileOptions& options, TileSearches& searches) {
  TiledProgram first = tilePass(g, board, options, {}, searches);
  if (!options.resident) return first;
  // A layer of the first tiling tiled again with other resident operands (same target, pools and options); each
  // (step, reservation, operands in place) once.
  std::map<std::tuple<int, size_t, int>, std::optional<uint64_t>> seen;
  const RetiledCycles retiled = [&](int step, const ResidentOperands& operands) -> std::optional<uint64_t> {
    const int direct = int{operands.resident.direct[0]} | int{operands.resident.direct[1]} << 1 | int{operands.resident.direct[2]} << 2;
    const auto [it, fresh] = seen.try_emplace({step, operands.reservedBytes, direct});
    if (fresh) it->second = cyclesRetiled(g, board, searches, first.nodeTargets[static_cast<size_t>(step)], step, operands);
    return it->second;
  };
  std::vector<std::string> leftOut;
  std::vector<ResidentTensor> resident = chooseResidentTensors(g, board, first, options.viewsShareBuffers, retiled, options.budget, &leftOut);
  // The second tiling reserves the residents' bytes; a layer that no longer fits falls back to the CPU, and the
  // tensors it touches go back to main memory (a few rounds at most: each drops at least one).
  for (int round = 0; round < 4 && !resident.empty(); ++round) {
    TiledProgram second = tilePass(g, board, options, residentOperandsByStep(g, board, resident), searches);
    std::vector<ResidentTensor> kept = residentsStillOffloaded(g, second, resident);
    if (kept.size() == resident.size()) {
      int inPlace = 0;
      for (const OffloadedLayer& L : second.offloaded) inPlace += int{L.direct[0]} + int{L.direct[1]} + int{L.direct[2]};
      // One remark per (pool, target).
      std::map<std::pair<int, int>, std::pair<std::vector<std::string>, size_t>> groups;
      for (const ResidentTensor& t : resident) {
        auto& [names, bytes] = groups[{t.pool, t.target}];
        if (t.viewOf != kNoTensor) {
          names.push_back(fmt::format("'{}' (a view of '{}')", g.tensor(t.tensor).name, g.tensor(t.viewOf).name));
          continue;
        }
        names.push_back("'" + g.tensor(t.tensor).name + "'");
        bytes += g.tensor(t.tensor).byteSize();
      }
      for (const auto& [key, group] : groups)
        second.remarks.push_back(fmt::format(
            "resident: {} activation(s) ({} bytes) stay in '{}' between the layers of '{}' that make and read them (--no-resident "
            "moves them through main memory): {}",
            group.first.size(), group.second, board.pools[static_cast<size_t>(key.first)].name,
            board.targets[static_cast<size_t>(key.second)].name, fmt::join(group.first, ", ")));
      second.remarks.push_back(fmt::format("resident: {} operand(s) of offloaded layers are used in place, with no tile buffer and no DMA",
                                           inPlace));
      second.remarks.insert(second.remarks.end(), leftOut.begin(), leftOut.end());
      second.resident = std::move(resident);
      return second;
    }
    resident = std::move(kept);
  }
  first.remarks.insert(first.remarks.end(), leftOut.begin(), leftOut.end());
  return first;
}

/// tileWithResidents, then the weight prefetch and input handover the options ask for.
TiledProgram tileAcrossLayers(const Graph& g, const Board& board, const TileOptions& options, TileSearches& searches) {
  TiledProgram tiled = tileWithResidents(g, board, options, searches);
  if (options.prefetchWeights) {
    const WeightPrefetchOptions prefetch{.weightsOnce = options.weightsOnce, .farIssuers = options.farWeightPrefetch, .everyOnceCore = options.everyOnceCore,
                                        .weightStream = options.weightStream};
    prefetchWeightsAcrossLayers(g, board, tiled, prefetch, options.budget);
  }
  if (options.handInputs) handInputsAcrossLayers(g, board, tiled, options.budget);
  return tiled;
}

/// The estimated cycles of every offloaded layer of `tiled`, its cross-layer transfers counted.
uint64_t offloadedCycles(const TiledProgram& tiled) {
  uint64_t sum = 0;
  for (const OffloadedLayer& L : tiled.offloaded) sum += L.totalCycles;
  return sum;
}

/// The names of the layers whose cores share their whole input (one row block: tile/SharedInput.h), quoted.
std::vector<std::string> wholeInputLayers(const Graph& g, const TiledProgram& tiled) {
  std::vector<std::string> names;
  for (const OffloadedLayer& L : tiled.offloaded)
    if (L.sharedInputLoaders > 0 && !L.rowsOuter) names.push_back("'" + g.nodes[static_cast<size_t>(L.step)].name + "'");
  return names;
}

}  // namespace

TiledProgram tileProgram(const Graph& g, const Board& board, const TileOptions& options) {
  TileSearches searches(board, options);
  TiledProgram tiled = tileAcrossLayers(g, board, options, searches);
  const std::vector<std::string> wholeInput = wholeInputLayers(g, tiled);
  if (wholeInput.empty()) return tiled;
  // Each layer's choice is its own, but a shared input rules out the layer's first weights loaded once for all its
  // cores (tile/WeightPrefetch.h): the whole program may be slower. Then the program without it is kept.
  TileOptions rowBlocksOnly = options;
  rowBlocksOnly.sharedWholeInput = false;
  rowBlocksOnly.observer = nullptr;
  TileSearches rowBlockSearches(board, rowBlocksOnly, &searches);
  TiledProgram without = tileAcrossLayers(g, board, rowBlocksOnly, rowBlockSearches);
  const uint64_t with = offloadedCycles(tiled), withoutCycles = offloadedCycles(without);
  if (withoutCycles < with) {
    // The observer sees the searches whose choices stand.
    if (options.observer) {
      TileOptions observed = rowBlocksOnly;
      observed.observer = options.observer;
      TileSearches observedSearches(board, observed);
      without = tileAcrossLayers(g, board, observed, observedSearches);
    }
    without.remarks.push_back(fmt::format("shared input: {} layer(s) would share their whole input, but the offloaded layers take fewer "
                                          "estimated cycles without (a shared input rules out first weights loaded once for all cores): {} against {}: {}",
                                          wholeInput.size(), withoutCycles, with, fmt::join(wholeInput, ", ")));
    return without;
  }
  tiled.remarks.push_back(fmt::format("shared input: {} layer(s) compute every output row in one row block whose whole input their cores "
                                      "load once into one shared buffer ({} estimated cycles of offloaded layers, {} without; "
                                      "--no-shared-whole-input turns it off): {}",
                                      wholeInput.size(), with, withoutCycles, fmt::join(wholeInput, ", ")));
  return tiled;
}

}  // namespace stowage
