// A whole model's estimated cycles and its bound (see WholeModelCycles.h).
#include "stowage/tile/WholeModelCycles.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "stowage/lower/KernelCall.h"
#include "stowage/ir/Op.h"
#include "stowage/plan/CpuLayerCost.h"
#include "stowage/tile/CostModel.h"
#include "stowage/tile/CpuStreaming.h"
#include "stowage/tile/TileChoice.h"
#include "stowage/tile/TileGeometry.h"
#include "stowage/tile/TileProgram.h"
#include "stowage/tile/FirstWeightCopies.h"
#include "stowage/tile/ScratchLayout.h"

namespace stowage {

const char* bestBoundTerm(const WholeModelCycles& w) {
  const uint64_t best = w.bestBound();
  return best == w.transferBound ? "transfer bound" : best == w.dependencyBound ? "dependency bound" : "bound with the floor";
}

int computeUnits(const Target& target) {
  if (target.engineDim > 0 || target.kind == TargetKind::Cpu) return 1;
  return std::max(1, target.cores);
}

int loadQueues(const Target& target) {
  return target.engineDim > 0 ? 1 : computeUnits(target) * std::max(1, target.dmaChannels);
}

uint64_t setupCycles(const Target& target) { return static_cast<uint64_t>(std::ceil(target.dmaSetupCycles)); }

namespace {

uint64_t ceilDiv(uint64_t a, uint64_t b) { return b == 0 ? a : (a + b - 1) / b; }

/// One transfer of `bytes` bytes on `target`'s DMA: setup + ceil(bytes / rate).
uint64_t transferCycles(const Target& target, uint64_t bytes) {
  TileCopy copy;
  copy.rows = 1;
  copy.rowBytes = copy.stride = static_cast<size_t>(bytes);
  return dmaCycles(target, copy);
}

/// A layer's compute as one tile of all its rows and channels on `target`: the least any tiling of it costs.
uint64_t oneTileComputeCycles(const Target& target, const LayerShape& s) {
  uint64_t cycles = 0;
  for (const TileDesc& tile : scheduleTiles(s, s.rows, s.channels, 1, true).tiles) cycles += tileComputeCycles(target, s, tile);
  return cycles;
}

/// Tensors seen through views: a Reshape's output is its input's bytes (the planner aliases it, or it is a copy
/// the CPU makes: either way no transfer has to move it again), so a tensor and the views of it form one group.
class ViewGroups {
 public:
  explicit ViewGroups(const Graph& g) : g_(g), producer_(g.producers()), readers_(g.tensors.size()) {
    for (size_t step = 0; step < g.nodes.size(); ++step)
      for (TensorId t : g.nodes[step].inputs)
        if (t != kNoTensor) readers_[static_cast<size_t>(t)].push_back(static_cast<int>(step));
    for (TensorId t : g.inputs) graphInput_.insert(t);
    for (TensorId t : g.outputs) graphOutput_.insert(t);
  }

  /// The tensor whose bytes `t` views (itself when its producer is no view).
  TensorId root(TensorId t) const {
    for (int p = producer_[static_cast<size_t>(t)]; p >= 0 && isView(g_.nodes[static_cast<size_t>(p)]);
         p = producer_[static_cast<size_t>(t)])
      t = g_.nodes[static_cast<size_t>(p)].inputs[0];
    return t;
  }
  int producer(TensorId t) const { return producer_[static_cast<size_t>(root(t))]; }
  /// The steps that read the group of `t` other than through views, and whether the group holds a graph input or
  /// output.
  struct Uses {
    std::vector<int> readers;
    bool graphInput = false, graphOutput = false;
  };
  Uses uses(TensorId t) const {
    Uses u;
    std::vector<TensorId> group = {root(t)};
    for (size_t k = 0; k < group.size(); ++k) {
      const TensorId m = group[k];
      u.graphInput = u.graphInput || graphInput_.count(m) != 0;
      u.graphOutput = u.graphOutput || graphOutput_.count(m) != 0;
      for (int r : readers_[static_cast<size_t>(m)]) {
        const Node& n = g_.nodes[static_cast<size_t>(r)];
        if (isView(n) && !n.outputs.empty() && n.outputs[0] != kNoTensor) group.push_back(n.outputs[0]);
        else u.readers.push_back(r);
      }
    }
    return u;
  }

 private:
  static bool isView(const Node& n) { return n.op == OpKind::Reshape && !n.inputs.empty() && n.inputs[0] != kNoTensor; }
  const Graph& g_;
  std::vector<int> producer_;
  std::vector<std::vector<int>> readers_;
  std::set<TensorId> graphInput_, graphOutput_;
};

/// What one target that tiles layers needs at the least.
struct TargetWork {
  uint64_t compute = 0;                  ///< every tiled layer's compute as one tile, summed
  /// Tensors (group roots) moved in / out once, with their bytes: a weight's and an output's whole bytes, an input
  /// activation's at most what one layer's tiles load of it (a strided layer's tiles skip the rows no window reads).
  std::map<TensorId, uint64_t> loads, stores;
  /// Every tensor its layers receive by DMA (not used in place), with the same bytes: `loads` and the activations that
  /// stay local but are still copied into tile buffers (the transfer bound's tensors).
  std::map<TensorId, uint64_t> received;
  uint64_t localCapacity = 0;            ///< bytes of the largest scratch pool of its tiled layers
  int firstStep = -1, lastStep = -1;     ///< its first and last offloaded steps
};

/// What the dependency bound needs of one offloaded layer (by step): its shape, its compute as one tile, and the bytes
/// its tiles load of x and of w as planned.
struct LayerWork {
  std::optional<LayerShape> shape;
  uint64_t oneTileCompute = 0;
  uint64_t plannedBytes[2] = {0, 0};  ///< x, w
};

/// The runs of offloaded layers in `plan` and their fill and drain floor (WholeModelCycles::offloadedRuns,
/// fillDrainFloor).
void countRunsAndFloor(const Graph& g, const ProgramPlan& plan, const std::vector<uint64_t>& cpuAt, WholeModelCycles& w);

/// The dependency bound and its steps (WholeModelCycles::dependencyBound, dependencySteps, finalDrain).
void addDependencyBound(const Graph& g, const ProgramPlan& plan, const ViewGroups& groups, const std::vector<LayerWork>& layerAt,
                        const std::vector<uint64_t>& cpuAt, WholeModelCycles& w);

/// The transfer bound per target (WholeModelCycles::transferBound, transferBounds) from each target's received
/// tensors and its first and last steps.
void addTransferBound(const ProgramPlan& plan, const std::map<int, TargetWork>& work, const std::vector<uint64_t>& cpuAt,
                      WholeModelCycles& w);

}  // namespace

uint64_t transferWindow(const std::vector<uint64_t>& bytes, uint64_t setup, double bytesPerCycle, int queues, size_t* transfers) {
  if (transfers) *transfers = 0;
  if (bytes.empty()) return 0;
  const double rate = bytesPerCycle > 0 ? bytesPerCycle : 1.0;
  const double q = static_cast<double>(std::max(1, queues));
  double byteCycles = 0;
  for (uint64_t b : bytes) byteCycles += static_cast<double>(b) / rate;
  // Pieces each tensor needs in a window of `window` cycles, and whether the pieces fit the queues.
  auto pieces = [&](uint64_t window, uint64_t b) -> uint64_t {
    const double room = static_cast<double>(window) - static_cast<double>(setup);
    return std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(static_cast<double>(b) / (rate * room))));
  };
  auto fits = [&](uint64_t window, size_t* count) {
    if (window <= setup) return false;
    double setups = 0;
    size_t n = 0;
    for (uint64_t b : bytes) {
      const uint64_t p = pieces(window, b);
      n += static_cast<size_t>(p);
      setups += static_cast<double>(p) * static_cast<double>(setup);
    }
    if (count) *count = n;
    return setups + byteCycles <= q * static_cast<double>(window);
  };
  // Every tensor in one transfer, one after another on one queue, always fits: the search's upper end.
  uint64_t hi = 0;
  for (uint64_t b : bytes) hi += setup + static_cast<uint64_t>(std::ceil(static_cast<double>(b) / rate));
  hi = std::max<uint64_t>(hi, setup + 1);
  uint64_t lo = setup + 1;
  while (lo < hi) {  // fits() is monotone in the window: more room, fewer pieces, less work
    const uint64_t mid = lo + (hi - lo) / 2;
    if (fits(mid, nullptr)) hi = mid;
    else lo = mid + 1;
  }
  fits(lo, transfers);
  return lo;
}

DependencyParts dependencyParts(const WholeModelCycles& w) {
  DependencyParts p;
  p.setups = w.finalDrain;
  for (const DependencyStep& d : w.dependencySteps) {
    (d.offloaded ? p.offloadedCompute : p.cpuCycles) += d.compute;
    p.setups += d.fill;
    p.waitingSteps += d.fill > 0 ? 1 : 0;
    p.loadsBeyond += d.cycles - d.fill - d.compute;  // cycles >= fill + compute
    p.loadBoundSteps += d.cycles > d.fill + d.compute ? 1 : 0;
  }
  return p;
}

uint64_t cpuStepCycles(const Graph& g, const ProgramPlan& plan, size_t step) {
  if (step >= g.nodes.size() || step >= plan.nodeTargets.size() || plan.offloadedAt(static_cast<int>(step)) != nullptr) return 0;
  const Node& n = g.nodes[step];
  const auto lowered = lowerNode(g, n);
  if (!lowered.ok() || lowered->empty()) return 0;
  return cpuLayerCycles(g, n, plan, plan.nodeTargets[step]);
}

WholeModelCycles wholeModelCycles(const Graph& g, const ProgramPlan& plan) {
  WholeModelCycles w;
  const Board& board = plan.board;
  std::vector<uint64_t> cpuAt(g.nodes.size(), 0);  // cpuStepCycles of each step, lowered once
  for (size_t step = 0; step < g.nodes.size(); ++step) {
    if (const OffloadedLayer* L = plan.offloadedAt(static_cast<int>(step))) {
      w.estimate += L->totalCycles;
      continue;
    }
    cpuAt[step] = cpuStepCycles(g, plan, step);
    w.cpuCycles += cpuAt[step];
    w.estimate += cpuAt[step];
  }

  // Per target: its tiled layers' least compute, the bytes they move as planned, and their local pools.
  std::map<int, TargetWork> work;
  std::map<int, std::pair<int, int>> spans;  // target -> its first and last offloaded steps, whatever their shape
  std::vector<LayerWork> layerAt(g.nodes.size());
  for (const OffloadedLayer& L : plan.offloaded) {
    auto [span, fresh] = spans.try_emplace(L.target, L.step, L.step);
    if (!fresh) span->second = {std::min(span->second.first, L.step), std::max(span->second.second, L.step)};
    const Node& node = g.nodes[static_cast<size_t>(L.step)];
    const Target& target = board.targets[static_cast<size_t>(L.target)];
    LayerWork& layer = layerAt[static_cast<size_t>(L.step)];
    layer.shape = layerShapeOf(g, node).shape;
    const std::optional<LayerShape>& s = layer.shape;
    if (!s) continue;
    TargetWork& t = work[L.target];
    layer.oneTileCompute = oneTileComputeCycles(target, *s);
    t.compute += layer.oneTileCompute;
    const TileSchedule schedule = offloadedSchedule(*s, L);
    for (size_t i = 0; i < schedule.tiles.size(); ++i) {
      const TileDesc& tile = schedule.tiles[i];
      // A shared input (tile/SharedInput.h) moves once per row block: core 0's row blocks count it.
      const bool xMoves = tile.loadX && (schedule.sharedLoaders <= 0 || i < schedule.chunkStart[1]);
      layer.plannedBytes[0] += xMoves ? tile.x.bytes() : 0;
      layer.plannedBytes[1] += tile.loadW ? tile.w.bytes() : 0;
      w.dmaBytesPlanned += (xMoves ? tile.x.bytes() : 0) + (tile.loadW ? tile.w.bytes() : 0) + (tile.storeY ? tile.y.bytes() : 0);
    }
    // Weights loaded once and shared: the cores' first weight tiles, one block, move once.
    if (L.mode == "cores" && L.weightsOnceCore >= 0 && L.weightsPrefetchedCores > 1)
      if (const auto once = onceWeightCopy(schedule, L.weightsPrefetchedCores, L.coreStride[1]); once && onceWeightsShared(*once))
        w.dmaBytesPlanned -= static_cast<uint64_t>(L.weightsPrefetchedCores - 1) * once->bytes();
    const std::vector<int> pools = target.kind == TargetKind::Cpu ? cpuStreamPools(board, L.target, node) : scratchPoolsFor(board, L.target, node);
    for (int p : pools)
      t.localCapacity = std::max<uint64_t>(t.localCapacity, board.pools[static_cast<size_t>(p)].sizeBytes.value_or(0));
  }

  // The bytes that must move: weights once, activations that leave their target or do not fit its local pools.
  const ViewGroups groups(g);
  auto targetOf = [&](int step) { return step >= 0 && static_cast<size_t>(step) < plan.nodeTargets.size() ? plan.nodeTargets[static_cast<size_t>(step)] : -1; };
  auto staysLocal = [&](TensorId t, int target) {
    // A matrix engine writes every output to main memory (mvout) and keeps no activation resident (ResidentTensors.h
    // picks cores-mode targets only): what one of its layers makes is stored once and loaded once.
    if (board.targets[static_cast<size_t>(target)].engineDim > 0) return false;
    const ViewGroups::Uses u = groups.uses(t);
    if (u.graphInput || u.graphOutput || targetOf(groups.producer(t)) != target) return false;
    if (std::any_of(u.readers.begin(), u.readers.end(), [&](int r) { return targetOf(r) != target; })) return false;
    return g.tensor(groups.root(t)).byteSize() <= work.at(target).localCapacity;
  };
  for (const OffloadedLayer& L : plan.offloaded) {
    const std::optional<LayerShape>& s = layerAt[static_cast<size_t>(L.step)].shape;
    if (!s) continue;
    TargetWork& t = work[L.target];
    const LayerWork& layer = layerAt[static_cast<size_t>(L.step)];
    const size_t operands = std::min<size_t>(isPoolTileKernel(s->kernel) ? 1 : 2, s->call.inputs.size());
    for (size_t op = 0; op < operands; ++op) {
      const TensorId in = s->call.inputs[op];
      if (in == kNoTensor || L.direct[op]) continue;  // used in place: no transfer
      // Constant weights are read whole, whoever loads them (a layer before may prefetch them all); of an activation,
      // at most what the tiles load as planned (a strided layer's tiles may skip rows of its input).
      const TensorId root = groups.root(in);
      const uint64_t need = g.tensor(in).isConstant() ? g.tensor(root).byteSize()
                                                      : std::min<uint64_t>(g.tensor(root).byteSize(), layer.plannedBytes[op]);
      if (need == 0) continue;
      uint64_t& received = t.received[root];
      received = std::max(received, need);
      if (g.tensor(in).isConstant() || !staysLocal(in, L.target)) t.loads[root] = received;
    }
    // An output written in place (a pool the target's cores reach) moves nothing.
    const TensorId out = s->call.output;
    if (out == kNoTensor || L.direct[2] || staysLocal(out, L.target)) continue;
    const TensorId root = groups.root(out);
    t.stores[root] = g.tensor(root).byteSize();
  }
  for (const auto& [index, t] : work) {
    for (const auto& [id, bytes] : t.loads)
      (g.tensor(id).isConstant() ? w.dmaBytesMinimum.weights
                                 : groups.uses(id).graphInput ? w.dmaBytesMinimum.graphInputs : w.dmaBytesMinimum.activations) += bytes;
    for (const auto& [id, bytes] : t.stores)
      (groups.uses(id).graphOutput ? w.dmaBytesMinimum.graphOutputs : w.dmaBytesMinimum.activations) += bytes;
  }

  // The units, each busy at least its share of its target's work, plus the CPU layers.
  auto add = [&](std::string unit, const char* kind, int target, uint64_t offloaded) {
    w.units.push_back(UnitBound{std::move(unit), kind, target, offloaded, offloaded + w.cpuCycles});
  };
  for (const auto& [index, t] : work) {
    const Target& target = board.targets[static_cast<size_t>(index)];
    uint64_t loads = 0, stores = 0;
    for (const auto& [id, bytes] : t.loads) loads += transferCycles(target, bytes);
    for (const auto& [id, bytes] : t.stores) stores += transferCycles(target, bytes);
    if (target.engineDim > 0) {
      add(fmt::format("'{}' engine execute", target.name), "compute", index, t.compute);
      add(fmt::format("'{}' engine load (mvin)", target.name), "dma", index, loads);
      add(fmt::format("'{}' engine store (mvout)", target.name), "dma", index, stores);
      continue;
    }
    const int cores = computeUnits(target);
    const int queues = loadQueues(target);
    add(cores == 1 ? fmt::format("'{}' core", target.name) : fmt::format("'{}' each of {} cores", target.name, cores), "compute", index,
        ceilDiv(t.compute, static_cast<uint64_t>(cores)));
    add(queues == 1 ? fmt::format("'{}' DMA channel", target.name) : fmt::format("'{}' DMA (each of {} channels)", target.name, queues), "dma",
        index, ceilDiv(loads + stores, static_cast<uint64_t>(queues)));
  }
  if (w.units.empty()) add("cpu", "cpu", -1, 0);
  for (const auto& [index, span] : spans) {
    TargetWork& t = work[index];
    std::tie(t.firstStep, t.lastStep) = span;
  }
  countRunsAndFloor(g, plan, cpuAt, w);
  addDependencyBound(g, plan, groups, layerAt, cpuAt, w);
  addTransferBound(plan, work, cpuAt, w);
  for (const UnitBound& u : w.units) {
    if (u.cycles > w.bound || w.boundUnit.empty()) {
      w.bound = u.cycles;
      w.boundUnit = u.unit;
    }
    w.boundWithFloor = std::max(w.boundWithFloor, u.cycles + (u.kind == "dma" ? 0 : w.fillDrainFloor));
  }
  return w;
}

namespace {

void countRunsAndFloor(const Graph& g, const ProgramPlan& plan, const std::vector<uint64_t>& cpuAt, WholeModelCycles& w) {
  auto setup = [&](const OffloadedLayer& L) { return setupCycles(plan.board.targets[static_cast<size_t>(L.target)]); };
  const OffloadedLayer* last = nullptr;  // the last layer of the current run
  auto endRun = [&] {
    if (last != nullptr && !last->direct[2]) w.fillDrainFloor += setup(*last);
    last = nullptr;
  };
  for (size_t step = 0; step < g.nodes.size(); ++step) {
    const OffloadedLayer* L = plan.offloadedAt(static_cast<int>(step));
    if (L == nullptr) {
      if (cpuAt[step] > 0) endRun();  // a view or constant step runs no code: the run goes on
      continue;
    }
    if (last != nullptr && last->target != L->target) endRun();
    if (last == nullptr) {
      ++w.offloadedRuns;
      const bool waitsForWeights = !L->direct[1] && L->weightsPrefetchedCores == 0;
      if (!L->direct[0] || waitsForWeights) w.fillDrainFloor += setup(*L);
    }
    last = L;
  }
  endRun();
}

void addDependencyBound(const Graph& g, const ProgramPlan& plan, const ViewGroups& groups, const std::vector<LayerWork>& layerAt,
                        const std::vector<uint64_t>& cpuAt, WholeModelCycles& w) {
  auto targetOf = [&](const OffloadedLayer& L) -> const Target& { return plan.board.targets[static_cast<size_t>(L.target)]; };
  // The layer's last output tile is stored after its last compute, before the host goes on (fence or join), unless
  // it is written in place.
  auto drainOf = [&](const OffloadedLayer* L) { return L != nullptr && !L->direct[2] ? setupCycles(targetOf(*L)) : 0; };
  int previous = -1;                           // the previous step that runs code
  const OffloadedLayer* previousLayer = nullptr;  // that step, when it is an offloaded layer
  for (size_t step = 0; step < g.nodes.size(); ++step) {
    const OffloadedLayer* L = plan.offloadedAt(static_cast<int>(step));
    DependencyStep d;
    d.step = static_cast<int>(step);
    if (L == nullptr) {
      d.compute = cpuAt[step];
      if (d.compute == 0) continue;  // a view or constant step runs no code: the steps around it meet through it
      d.fill = drainOf(previousLayer);
      d.cycles = d.fill + d.compute;
    } else {
      const Target& target = targetOf(*L);
      const LayerWork& layer = layerAt[step];
      d.offloaded = true;
      if (layer.shape) {
        // x, and w when a layer makes it: the bytes the step before made (the graph's inputs before the first step that
        // runs code) and this layer receives by DMA. Its loads start after that step's last compute (the host starts
        // this layer after it; an engine's input handover issues the first one right after that compute).
        const std::vector<TensorId>& inputs = layer.shape->call.inputs;
        for (size_t op = 0; op < 2 && op < inputs.size(); ++op) {
          const TensorId in = inputs[op];
          if (in == kNoTensor || L->direct[op] || g.tensor(in).isConstant()) continue;
          if (op == 1 && isPoolTileKernel(layer.shape->kernel)) continue;
          const TensorId root = groups.root(in);
          const bool madeBefore = previous >= 0 ? groups.producer(in) == previous : groups.uses(root).graphInput;
          if (!madeBefore) continue;
          // At most what the tiles load as planned: a strided layer's tiles may skip rows of its input.
          d.inputBytes += std::min<uint64_t>(g.tensor(root).byteSize(), layer.plannedBytes[op]);
        }
        d.compute = ceilDiv(layer.oneTileCompute, static_cast<uint64_t>(computeUnits(target)));
      }
      // Every tile reads part of x (and of a w a layer made), so the first compute waits for one such transfer; the
      // store of the layer before ends before this layer computes. They may run side by side: one setup.
      d.fill = std::max(d.inputBytes > 0 ? setupCycles(target) : 0, drainOf(previousLayer));
      if (d.inputBytes > 0) {
        const double bytesPerCycle = target.dmaBytesPerCycle > 0 ? target.dmaBytesPerCycle : 1.0;
        d.load = setupCycles(target) +
                 static_cast<uint64_t>(std::ceil(static_cast<double>(d.inputBytes) / (bytesPerCycle * loadQueues(target))));
      }
      d.cycles = std::max(d.fill + d.compute, d.load);
    }
    w.dependencyBound += d.cycles;
    w.dependencySteps.push_back(d);
    previous = static_cast<int>(step);
    previousLayer = L;
  }
  w.finalDrain = drainOf(previousLayer);
  w.dependencyBound += w.finalDrain;
}

void addTransferBound(const ProgramPlan& plan, const std::map<int, TargetWork>& work, const std::vector<uint64_t>& cpuAt,
                      WholeModelCycles& w) {
  for (const auto& [index, tw] : work) {
    if (tw.received.empty()) continue;
    const Target& target = plan.board.targets[static_cast<size_t>(index)];
    TransferBound t;
    t.target = index;
    t.targetName = target.name;
    t.tensors = tw.received.size();
    std::vector<uint64_t> bytes;
    for (const auto& [id, b] : tw.received) {
      bytes.push_back(b);
      t.bytes += b;
    }
    t.queues = loadQueues(target);
    t.setup = setupCycles(target);
    t.window = transferWindow(bytes, t.setup, target.dmaBytesPerCycle, t.queues, &t.transfers);
    const OffloadedLayer* lastLayer = plan.offloadedAt(tw.lastStep);
    t.drain = lastLayer != nullptr && !lastLayer->direct[2] ? t.setup : 0;
    for (size_t step = 0; step < cpuAt.size(); ++step) {
      if (static_cast<int>(step) < tw.firstStep) t.cpuBefore += cpuAt[step];
      if (static_cast<int>(step) > tw.lastStep) t.cpuAfter += cpuAt[step];
    }
    t.cycles = t.cpuBefore + t.window + t.drain + t.cpuAfter;
    w.transferBound = std::max(w.transferBound, t.cycles);
    w.transferBounds.push_back(t);
  }
}

}  // namespace

}  // namespace stowage
