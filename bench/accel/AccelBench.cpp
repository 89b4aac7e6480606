// Accelerator benchmark (issue 5): for every offloaded layer of the zoo models and of the MLPerf Tiny int8
// ResNet-8 on every accelerator board, the cycles the host simulator measures for that layer against the cost
// model's bounds (compute of the busiest core / engine, transfers of the busiest DMA queue, summed over its
// tiles), the same layer with --no-double-buffer, and ResNet-8's conv layers on each cluster board with 1 core
// against 4, every model as a whole (all layers, CPU ones included) with and without Relu/Clip fusion and weight
// prefetch, and for the layers above the ratio target the tiling space the tile search saw (what meeting the target
// would cost). First, every model as a whole against the whole-model bound (tile/WholeModelCycles.h), the MLPerf
// Tiny int8 models KWS, VWW and ToyCar included. Prints markdown tables for bench/RESULTS.md ("## Accelerators").
// Every pair's outputs are checked against the CPU run of the model, as simulated and in guard mode.
// A plain executable: built by `make bench`, not run by ctest.
// Usage: stowage_bench_accel [--whole-model | --sweep] [SHARED_DIR] (--whole-model: the first tables only; --sweep:
// every other model under SHARED_DIR/models, float and ImageNet-sized ones included, on the four boards: outputs
// against the CPU run's, as simulated and in guard mode, with cycles and the bound).
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "stowage/driver/Compiler.h"
#include "stowage/driver/HostRunner.h"
#include "stowage/frontend/OnnxImporter.h"
#include "stowage/frontend/TfliteImporter.h"
#include "stowage/tile/CostModel.h"
#include "stowage/tile/TileChoice.h"
#include "stowage/tile/TileGeometry.h"
#include "stowage/tile/WeightPrefetch.h"
#include "stowage/tile/WholeModelCycles.h"
#include "stowage/zoo/ZooGraph.h"
#include "stowage/zoo/ZooModels.h"

namespace fs = std::filesystem;
using namespace stowage;

namespace {

constexpr double kRatioTarget = 1.15;     // simulated / max(compute bound, DMA bound), every offloaded layer
constexpr double kCoresTarget = 3.2;      // ResNet-8 conv layers, 4 cores against 1

const std::vector<std::string> kBoards = {"gemmini-like", "hexagon-vtcm", "dsp-cluster4", "gap8-cluster"};

std::string boardPath(const std::string& name) { return std::string(STOWAGE_SOURCE_DIR) + "/examples/boards/" + name + ".toml"; }

/// A model to compile, with the inputs of one run.
struct ModelCase {
  std::string label;
  Graph graph;
  std::vector<Tensor> inputs;
};

/// Deterministic inputs for the graph inputs of `g` (floats uniform in [-1, 1), other types random bytes).
std::vector<Tensor> deterministicInputs(const Graph& g) {
  std::vector<Tensor> inputs;
  uint32_t s = 12345;
  for (TensorId id : g.inputs) {
    Tensor t = g.tensor(id);
    t.kind = TensorKind::Activation;
    t.data.assign(t.byteSize(), 0);
    if (t.dtype == DType::Float32) {
      for (size_t i = 0; i + 4 <= t.data.size(); i += 4) {
        s = s * 1103515245u + 12345u;
        const float v = static_cast<float>((s >> 8) % 2001) / 1000.0f - 1.0f;
        std::memcpy(&t.data[i], &v, 4);
      }
    } else {
      for (uint8_t& b : t.data) {
        s = s * 1103515245u + 12345u;
        b = static_cast<uint8_t>(s >> 24);
      }
    }
    inputs.push_back(std::move(t));
  }
  return inputs;
}

/// How a tiling is buffered and walked, for the tables: ", 1 buffer" (every operand) or ", x 1 buffer" (per operand),
/// ", rows outer", its ragged row blocks, ", w on 2 channels", ", x/y in place" as they apply ("" for none).
std::string tilingNotes(const OperandBuffers& buffers, TileOrder order, const RowBlocks& rowBlocks, bool weightsSplit,
                        const DirectOperands& direct) {
  std::string t;
  const char* names[3] = {"x", "w", "y"};
  if (buffers.none()) t += ", 1 buffer";
  else
    for (int op = 0; op < 3; ++op)
      if (!buffers.doubled[op]) t += fmt::format(", {} 1 buffer", names[op]);
  if (order == TileOrder::RowsOuter) t += ", rows outer";
  t += rowBlocksText(rowBlocks);
  if (weightsSplit) t += ", w on 2 channels";
  if (direct.any()) t += ", " + directOperandsText(direct) + " in place";
  return t;
}

/// One offloaded layer's measurements.
struct LayerRow {
  std::string node, mode;
  int tiles = 0, cores = 1;
  int64_t rowTile = 0, channelTile = 0;
  LayerBounds bounds;
  bool doubleBuffer = true;  ///< the tiler may choose one buffer per tile when it is cheaper
  std::string buffering;     ///< ", 1 buffer" (every operand), ", x 1 buffer" (input only), ...; ", rows outer" (tile order)
  uint64_t floor = 0;      ///< the chosen tiling's bounds plus the smallest fill and drain any tile could have
  uint64_t estimate = 0;   ///< the compiler's pipelined estimate (report.json layers[].offload)
  uint64_t simulated = 0;  ///< measured by the simulator (the layer's span)
  uint64_t simulatedSingle = 0;  ///< with --no-double-buffer
  double ratio() const {
    const uint64_t b = std::max(bounds.compute, bounds.dma);
    return b > 0 ? static_cast<double>(simulated) / static_cast<double>(b) : 0.0;
  }
};

/// A lower bound on the layer under the chosen tiling's bounds: nothing computes before a first tile's input and
/// weights arrive, and the last store follows the last compute; the smallest tile the tiler can make (one output
/// row by the smallest channel block) gives the smallest fill (its loads), compute and drain (its store). So
/// floor = max(C + fill + drain, loads + compute + drain, fill + compute + stores) (one shared DMA channel per core:
/// its loads and stores plus the part of the first compute no other load can overlap; cores with two channels: the
/// fill is the slower of input and weights, and channel 1 carries weights and stores).
/// Operands the layer uses in place (resident activations) move nothing: no fill or drain for them.
uint64_t fillDrainFloor(const Target& target, const LayerShape& s, const LayerBounds& b, const DirectOperands& direct, bool weightsPrefetched) {
  TileSchedule smallest = scheduleTiles(s, 1, s.channelStep, 1, true);
  applyDirectOperands(smallest, direct);
  const TileDesc& first = smallest.tiles.front();
  const TileDesc& last = smallest.tiles.back();
  const bool engine = target.engineDim > 0, sharedChannel = !engine && target.dmaChannels < 2;
  const uint64_t x = first.loadX ? dmaCycles(target, first.x) : 0, w = first.loadW && !weightsPrefetched ? dmaCycles(target, first.w) : 0;
  // Cores with two channels load inputs and weights in parallel (channel 0 / channel 1).
  const uint64_t fill = engine || sharedChannel ? x + w : std::max(x, w);
  const uint64_t compute = std::min(tileComputeCycles(target, s, first), tileComputeCycles(target, s, last));
  const uint64_t drain = first.storeY ? std::min(dmaCycles(target, first.y), dmaCycles(target, last.y)) : 0;
  // One channel: it carries the busiest core's loads and stores (b.dma; b.loads and b.stores may be two cores') and
  // idles during the first compute unless loads other than the fill are left for it (b.loads is the most any core has).
  if (sharedChannel) return std::max(b.compute + fill + drain, b.dma + (compute > b.loads - std::min(b.loads, fill) ? compute - (b.loads - std::min(b.loads, fill)) : 0));
  if (!engine) return std::max({b.compute + fill + drain, b.loads + compute + drain, b.stores});
  return std::max({b.compute + fill + drain, b.loads + compute + drain, fill + compute + b.stores});
}

/// Node names of the offloaded layers (the simulator's layer spans are by name; the CPU's layers have spans too).
std::set<std::string> offloadedNames(const CompileResult& compiled) {
  std::set<std::string> names;
  for (const OffloadedLayer& l : compiled.plan.offloaded) names.insert(compiled.graph.nodes[static_cast<size_t>(l.step)].name);
  return names;
}

/// A model compiled for a board and run once on the simulator.
struct SimulatedRun {
  CompileResult compiled;
  HostSimReport sim;
  std::vector<Tensor> outputs;
};

Result<SimulatedRun> compileAndSimulate(const ModelCase& m, const Board& board, bool doubleBuffer, bool fuse, bool prefetchWeights = true) {
  CompileOptions o;
  o.planner.timeLimitSeconds = 2;
  o.doubleBuffer = doubleBuffer;
  o.fuse = fuse;
  o.prefetchWeights = prefetchWeights;
  SimulatedRun r;
  STOWAGE_ASSIGN_OR_RETURN(r.compiled, compileGraphOnBoard(m.graph, board, o));
  HostRunOptions run;
  run.compiler.clear();
  run.simReport = &r.sim;
  STOWAGE_ASSIGN_OR_RETURN(r.outputs, runOnHost(r.compiled, m.inputs, run));
  return r;
}

/// The outputs of `m` compiled with `options` for `board` and run on the host (no simulator report).
Result<std::vector<Tensor>> runOutputs(const ModelCase& m, const Board& board, const CompileOptions& options) {
  STOWAGE_ASSIGN_OR_RETURN(CompileResult compiled, compileGraphOnBoard(m.graph, board, options));
  HostRunOptions run;
  run.compiler.clear();
  return runOnHost(compiled, m.inputs, run);
}

/// Whether two runs' outputs hold the same bytes.
bool sameBytes(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].data != b[i].data) return false;
  return true;
}

/// Compiles `m` for `board` and runs it on the simulator; returns one row per offloaded layer (simulated set,
/// or simulatedSingle when !doubleBuffer).
Result<std::vector<LayerRow>> measure(const ModelCase& m, const Board& board, bool doubleBuffer) {
  STOWAGE_ASSIGN_OR_RETURN(SimulatedRun simulated, compileAndSimulate(m, board, doubleBuffer, true));
  const CompileResult& compiled = simulated.compiled;
  const HostSimReport& sim = simulated.sim;
  // Spans of the offloaded layers (the CPU's layers have spans too).
  const std::set<std::string> offloaded = offloadedNames(compiled);
  std::vector<std::pair<std::string, uint64_t>> spans;
  for (auto& span : sim.layerSpans())
    if (offloaded.count(span.first) != 0) spans.push_back(std::move(span));
  if (spans.size() != compiled.plan.offloaded.size())
    return makeError(m.label, fmt::format("the simulator reported {} layer spans for {} offloaded layers", spans.size(),
                                          compiled.plan.offloaded.size()));
  std::vector<LayerRow> rows;
  for (size_t i = 0; i < spans.size(); ++i) {
    const OffloadedLayer& l = compiled.plan.offloaded[i];
    const Node& node = compiled.graph.nodes[static_cast<size_t>(l.step)];
    if (spans[i].first != node.name)
      return makeError(m.label, fmt::format("layer span {} is '{}', expected node '{}'", i, spans[i].first, node.name));
    const LayerShapeResult shape = layerShapeOf(compiled.graph, node);
    if (!shape.shape) return makeError(m.label, "offloaded node '" + node.name + "' has no tile shape: " + shape.whyNot);
    const Target& target = compiled.plan.board.targets[static_cast<size_t>(l.target)];
    LayerRow r;
    r.node = node.name;
    r.mode = l.mode;
    r.tiles = l.tiles;
    r.cores = l.cores;
    r.rowTile = l.rowTile;
    r.channelTile = l.channelTile;
    r.doubleBuffer = l.doubleBuffer;
    r.buffering = tilingNotes(operandBuffersOf(l), tileOrderOf(l), rowBlocksOf(l), l.weightsSplit, directOperandsOf(l));
    if (l.weightsPrefetchedCores > 0) r.buffering += ", w prefetched";
    // Transfers moved across layers (weight prefetch) are in neither layer's bounds: no span has to contain them.
    const CrossLayerWeights cross = crossLayerTransfers(compiled.graph, compiled.plan.board, compiled.plan.offloaded, i);
    r.bounds = offloadedLayerBounds(compiled.graph, compiled.plan.board, compiled.plan.offloaded, i);
    // The floor's pipeline terms take the layer's own transfers (the later layers' it loads do not precede its compute).
    CrossLayerWeights own = cross;
    own.issueLater.clear();
    r.floor = fillDrainFloor(target, *shape.shape, layerBounds(target, *shape.shape, offloadedSchedule(*shape.shape, l), own),
                             directOperandsOf(l), l.weightsPrefetchedCores > 0);
    r.estimate = l.totalCycles;
    (doubleBuffer ? r.simulated : r.simulatedSingle) = spans[i].second;
    rows.push_back(std::move(r));
  }
  return rows;
}

/// A whole model on the simulator: total cycles and the part spent in layers the CPU runs.
struct ModelCycles {
  uint64_t total = 0, cpu = 0;
  size_t offloaded = 0, layers = 0;
  size_t prefetched = 0;  ///< layers whose first weight tiles the layer before loads
};

Result<ModelCycles> measureModel(const ModelCase& m, const Board& board, bool fuse, bool prefetchWeights = true) {
  STOWAGE_ASSIGN_OR_RETURN(SimulatedRun simulated, compileAndSimulate(m, board, true, fuse, prefetchWeights));
  const CompileResult& compiled = simulated.compiled;
  const HostSimReport& sim = simulated.sim;
  ModelCycles c;
  c.total = sim.totalCycles();
  if (c.total == 0) return makeError(m.label, "the simulator printed no total");
  const std::set<std::string> offloaded = offloadedNames(compiled);
  for (const auto& span : sim.layerSpans())
    if (offloaded.count(span.first) == 0) c.cpu += span.second;
  c.offloaded = compiled.plan.offloaded.size();
  for (const OffloadedLayer& l : compiled.plan.offloaded) c.prefetched += l.weightsPrefetchedCores > 0 ? 1 : 0;
  c.layers = compiled.graph.nodes.size();
  return c;
}

/// A whole model against its bound: the simulator's cycles and DMA bytes, the compiler's estimate and bound.
struct WholeModelRow {
  uint64_t simulated = 0, simulatedCpu = 0, simulatedDmaBytes = 0, simulatedDmaTransfers = 0;
  WholeModelCycles compiler;
  /// The CPU layers plus, over the offloaded layers as tiled, the busiest core's (engine's) compute (layerBounds), and
  /// plus each layer's max(compute, DMA) bound: what running the layers one after another with these tiles costs at
  /// the least.
  uint64_t tiledCompute = 0, layerByLayer = 0;
  size_t offloaded = 0, layers = 0;
  /// The outputs' bytes against the CPU's run of the model (the default board): as simulated, and in guard mode on the
  /// board (every activation in main memory, canaries and checksums checked).
  bool equalsCpu = false, guardEqualsCpu = false;
  /// Where the cycles over the bound go (the "why" table): the compute units' bound (with the CPU layers; the
  /// largest over targets), and of the tiled compute beyond it the part that layers on fewer cores than their target
  /// has cost (their compute spread over all cores instead), with those layers' names.
  uint64_t computeBound = 0, fewerCoresLoss = 0;
  std::vector<std::string> fewerCores;
  /// Runs of offloaded layers that the CPU's layers (or the program's ends) separate, and the floor of their fill and
  /// drain: each run's first layer waits for one transfer (its input, or weights no earlier layer loaded) and its last
  /// layer's output is stored after its last compute, at least the target's DMA setup each.
  size_t runs = 0;
  uint64_t fillDrainFloor = 0;
  /// The offloaded layers that wait longest for DMA (estimate - compute), largest first: name and cycles.
  std::vector<std::pair<std::string, uint64_t>> waiting;
  /// The bound is set by a matrix engine's unit: its layers' outputs go to main memory (mvout) and come back (mvin).
  bool engineBound = false;
  /// Cores mode, the bound set by a DMA unit: that target's setup cycles per transfer and its queues (cores x
  /// channels), which share the transfers' setups.
  uint64_t setupCycles = 0, queues = 0;
  double ratio() const { return compiler.bound > 0 ? static_cast<double>(simulated) / static_cast<double>(compiler.bound) : 0.0; }
};

/// Fills the "why" fields of `r` (see WholeModelRow) from the compiled model.
void explainOverBound(const CompileResult& compiled, WholeModelRow& r) {
  const Graph& g = compiled.graph;
  const ProgramPlan& plan = compiled.plan;
  for (const UnitBound& u : r.compiler.units) {
    if (u.kind == "compute" || u.kind == "cpu") r.computeBound = std::max(r.computeBound, u.cycles);
    if (u.unit == r.compiler.boundUnit && u.target >= 0) {
      const Target& t = plan.board.targets[static_cast<size_t>(u.target)];
      r.engineBound = t.engineDim > 0;
      r.setupCycles = setupCycles(t);
      r.queues = static_cast<uint64_t>(loadQueues(t));
    }
  }
  r.runs = r.compiler.offloadedRuns;
  r.fillDrainFloor = r.compiler.fillDrainFloor;
  for (size_t step = 0; step < g.nodes.size(); ++step) {
    const OffloadedLayer* L = plan.offloadedAt(static_cast<int>(step));
    if (L == nullptr) continue;
    const Target& target = plan.board.targets[static_cast<size_t>(L->target)];
    const std::string& name = g.nodes[step].name;
    if (L->mode == "cores" && target.cores > L->cores) {
      r.fewerCores.push_back(fmt::format("{} x{}", name, L->cores));
      r.fewerCoresLoss += L->computeCycles - (L->computeCycles * static_cast<uint64_t>(L->cores) + static_cast<uint64_t>(target.cores) - 1) /
                                                 static_cast<uint64_t>(target.cores);
    }
    if (L->totalCycles > L->computeCycles) r.waiting.emplace_back(name, L->totalCycles - L->computeCycles);
  }
  std::stable_sort(r.waiting.begin(), r.waiting.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
}

Result<WholeModelRow> measureWholeModel(const ModelCase& m, const Board& board, const std::vector<Tensor>& cpuOutputs) {
  STOWAGE_ASSIGN_OR_RETURN(SimulatedRun simulated, compileAndSimulate(m, board, true, true));
  const CompileResult& compiled = simulated.compiled;
  WholeModelRow r;
  r.equalsCpu = sameBytes(simulated.outputs, cpuOutputs);
  CompileOptions guard;
  guard.planner.timeLimitSeconds = 2;
  guard.guard = true;
  STOWAGE_ASSIGN_OR_RETURN(std::vector<Tensor> guarded, runOutputs(m, board, guard));
  r.guardEqualsCpu = sameBytes(guarded, cpuOutputs);
  r.simulated = simulated.sim.totalCycles();
  if (r.simulated == 0) return makeError(m.label, "the simulator printed no total");
  r.simulatedDmaBytes = simulated.sim.dmaBytes();
  r.simulatedDmaTransfers = simulated.sim.dmaTransfers();
  const std::set<std::string> offloaded = offloadedNames(compiled);
  for (const auto& span : simulated.sim.layerSpans())
    if (offloaded.count(span.first) == 0) r.simulatedCpu += span.second;
  r.compiler = wholeModelCycles(compiled.graph, compiled.plan);
  r.tiledCompute = r.layerByLayer = r.compiler.cpuCycles;
  for (size_t i = 0; i < compiled.plan.offloaded.size(); ++i) {
    const LayerBounds b = offloadedLayerBounds(compiled.graph, compiled.plan.board, compiled.plan.offloaded, i);
    r.tiledCompute += b.compute;
    r.layerByLayer += std::max(b.compute, b.dma);
  }
  r.offloaded = compiled.plan.offloaded.size();
  r.layers = compiled.graph.nodes.size();
  explainOverBound(compiled, r);
  return r;
}

std::string num(uint64_t n) {
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return s;
}

/// One sentence: the largest share of the cycles over the bound and what causes it, after what the dependency bound
/// says when the schedule is within the target of it and it is the best bound.
std::string whyOverBoundAlone(const WholeModelRow& r);

std::string whyOverBound(const WholeModelRow& r) {
  const WholeModelCycles& w = r.compiler;
  auto over = [&](uint64_t bound) { return bound > 0 ? static_cast<double>(r.simulated) / static_cast<double>(bound) : 0.0; };
  // Where the best bound is itself above the target, no schedule reaches the target: say so first, with the term that
  // sets the best bound.
  std::string unreachable;
  const uint64_t best = w.bestBound();
  if (w.bound > 0 && static_cast<double>(best) > kRatioTarget * static_cast<double>(w.bound)) {
    const std::string term = bestBoundTerm(w);
    unreachable = fmt::format("no schedule reaches {:.2f} of the bound: the {} is {} ({:.3f} of the bound; simulated {:.3f} of it): ",
                              kRatioTarget, term, num(best), static_cast<double>(best) / static_cast<double>(w.bound), over(best));
    if (term == "transfer bound") {
      const TransferBound& t = *std::find_if(w.transferBounds.begin(), w.transferBounds.end(),
                                             [&](const TransferBound& b) { return b.cycles == best; });
      unreachable += fmt::format("the {} tensors '{}' receives by DMA need at least {} transfers of {} setup cycles over {} queues, "
                                 "the large ones in pieces that fit the window ({} cycles to the last load), and its last store "
                                 "follows (the bound counts one setup per tensor and no order); ",
                                 t.tensors, t.targetName, t.transfers, num(t.setup), t.queues, num(t.window));
    } else if (term == "dependency bound") {
      const DependencyParts parts = dependencyParts(w);
      unreachable += fmt::format("the steps run one after another and {} of them wait at least one DMA setup for the step before "
                                 "({} cycles of setups with the last drain), which the bound lets overlap compute; ",
                                 parts.waitingSteps, num(parts.setups));
    } else {
      unreachable += fmt::format("each of {} run(s) of offloaded layers starts with a load and ends with a store that nothing "
                                 "overlaps; ",
                                 r.runs);
    }
    if (term == "transfer bound") return unreachable + whyOverBoundAlone(r);
  }
  // Only where the dependency bound is what brings the pair within the target (the bound with the floor does not).
  const double toDependency = over(w.dependencyBound);
  if (w.dependencyBound <= w.boundWithFloor || toDependency > kRatioTarget || over(w.boundWithFloor) <= kRatioTarget)
    return unreachable + whyOverBoundAlone(r);
  const DependencyParts parts = dependencyParts(w);
  const std::string loads =
      parts.loadsBeyond > 0 ? fmt::format(", and {} layer(s) load inputs made by the step before, which they may load only after it "
                                          "ends, {} cycles beyond their setup and compute",
                                          parts.loadBoundSteps, num(parts.loadsBeyond))
                            : "";
  return unreachable + fmt::format("within {:.3f} of the dependency bound ({}, {} above the bound with the floor): the steps run one after another; "
                     "{} step(s) wait at least one DMA setup for the step before them ({} cycles with the last drain){}; ",
                     toDependency, num(w.dependencyBound), num(w.dependencyBound - w.boundWithFloor), parts.waitingSteps,
                     num(parts.setups), loads) +
         whyOverBoundAlone(r);
}

std::string whyOverBoundAlone(const WholeModelRow& r) {
  const uint64_t over = r.simulated - std::min(r.simulated, r.compiler.bound);
  const uint64_t computeOver = r.tiledCompute - std::min(r.tiledCompute, r.computeBound);
  const uint64_t waiting = r.simulated - std::min(r.simulated, r.tiledCompute);
  auto list = [](const std::vector<std::string>& names, size_t most) {
    std::string s;
    for (size_t i = 0; i < names.size() && i < most; ++i) s += (i ? ", " : "") + names[i];
    return names.size() > most ? s + fmt::format(" and {} more", names.size() - most) : s;
  };
  if (r.compiler.boundUnit.find("DMA") != std::string::npos || r.compiler.boundUnit.find("(mv") != std::string::npos) {
    // The fill and the drain are transfers on the very queues that set the bound: no reason of their own here.
    const std::string longest = "(waiting longest: " +
                                (r.waiting.empty() ? std::string("-") : r.waiting.front().first + " " + num(r.waiting.front().second)) +
                                "; docs/accelerators.md)";
    if (r.engineBound)
      return "DMA-bound on the engine's queues: each layer's loads start after the fence that ends the layer before, which loads only "
             "its first weight block early (the weight stream is for cores mode), and its outputs go to main memory and come back " +
             longest;
    const std::string setups =
        r.queues == 0 ? std::string()
                      : fmt::format(": {} simulated transfers x {} setup cycles over {} queues = {} cycles of setup per queue",
                                    num(r.simulatedDmaTransfers), num(r.setupCycles), r.queues, num(r.simulatedDmaTransfers * r.setupCycles / r.queues));
    return "DMA-bound: the bound counts one transfer (one DMA setup) per tensor, shared evenly over every channel; the schedule "
           "moves the first layer's weights, each core's input and output part and the large tensors as one transfer per core or per "
           "channel, each paying a setup" + setups + "; the weight stream queues the later layers' weights from the run's first layer, "
           "but nothing can load before the run starts and the last store follows the last compute " + longest;
  }
  if (r.fewerCoresLoss * 2 >= over)
    return fmt::format("per-core tiles do not fit the scratch pool for every core: {} run on fewer cores ({} cycles of compute the "
                       "idle cores could have taken)",
                       list(r.fewerCores, 4), num(r.fewerCoresLoss));
  if (r.fillDrainFloor * 2 >= over)
    return fmt::format("fill and drain: {} run(s) of offloaded layers between CPU layers each start with a load and end with a store "
                       "that nothing can overlap, at least {} cycles the bound leaves out (bound + that: ratio {:.3f})",
                       r.runs, num(r.fillDrainFloor), static_cast<double>(r.simulated) / static_cast<double>(r.compiler.bound + r.fillDrainFloor));
  if (computeOver >= waiting)
    return fmt::format("tile shapes: the layers as tiled compute {} cycles more than as one tile each (partial engine blocks, per-tile "
                       "overhead, uneven core shares)",
                       num(computeOver));
  std::vector<std::string> top;
  for (size_t i = 0; i < r.waiting.size() && i < 3; ++i) top.push_back(fmt::format("{} {}", r.waiting[i].first, num(r.waiting[i].second)));
  const double movedOverLeast =
      static_cast<double>(r.simulatedDmaBytes) / static_cast<double>(std::max<uint64_t>(1, r.compiler.dmaBytesMinimum.total()));
  if (r.engineBound && movedOverLeast > 1.2)
    return fmt::format("DMA not hidden: the engine writes every output to main memory (mvout) and the next layer loads it back (mvin) "
                       "after the fence between them (bytes moved {:.2f}x the least); the compute waits {} cycles, most in {}",
                       movedOverLeast, num(waiting), list(top, 3));
  const std::string bytes =
      movedOverLeast <= 1.2 ? fmt::format("bytes moved {:.2f}x the least: the time is in transfers nothing overlaps, such as a layer's "
                                          "first tiles and its last store", movedOverLeast)
                            : fmt::format("bytes moved {:.2f}x the least: tiles read inputs or weights more than once, or activations "
                                          "leave the local pool", movedOverLeast);
  return fmt::format("DMA not hidden: the compute units wait {} cycles for transfers ({}); most in {}", num(waiting), bytes, list(top, 3));
}

/// The MLPerf Tiny int8 models besides ResNet-8 (file under SHARED_DIR/models/mlperf-tiny, label).
const std::vector<std::pair<std::string, std::string>> kMoreMlperfTiny = {
    {"kws_ref_model.tflite", "MLPerf Tiny KWS DS-CNN int8"},
    {"vww_96_int8.tflite", "MLPerf Tiny VWW int8"},
    {"model_ToyCar_quant_fullint_micro.tflite", "MLPerf Tiny ToyCar AD int8"}};

/// One tiling the tile search tried for a layer (TileSearchObserver), standalone (no weights across layers): its
/// estimate against its own bounds.
struct SearchedTiling {
  int64_t rowTile = 0, channelTile = 0;
  int cores = 1;
  size_t tiles = 0;
  OperandBuffers buffers;
  TileOrder order = TileOrder::ChannelsOuter;
  RowBlocks rowBlocks;
  DirectOperands direct;
  bool weightsSplit = false;
  uint64_t estimate = 0, bound = 0;
  double ratio() const { return bound > 0 ? static_cast<double>(estimate) / static_cast<double>(bound) : 0.0; }
  /// The tiling `l` has (its weight loads split or not aside: the weight prefetch across layers may change that).
  bool sameTiling(const OffloadedLayer& l) const {
    return rowTile == l.rowTile && channelTile == l.channelTile && cores == l.cores && buffers == operandBuffersOf(l) &&
           order == tileOrderOf(l) && rowBlocks == rowBlocksOf(l) && direct == directOperandsOf(l);
  }
  std::string text() const {
    return fmt::format("{} ({} x {}{}{})", tiles, rowTile, channelTile, cores > 1 ? fmt::format(", {} cores", cores) : "",
                       tilingNotes(buffers, order, rowBlocks, weightsSplit, direct));
  }
};

/// Every tiling of the last tile search of each step (a layer searched again starts afresh).
class TilingSpace {
 public:
  TilingSpace() {
    observer_.begin = [this](int step) { byStep_[step].clear(); };
    observer_.candidate = [this](int step, const Target& target, const LayerShape& s, const TileChoice& c) {
      SearchedTiling t;
      t.rowTile = c.rowTile;
      t.channelTile = c.channelTile;
      t.cores = c.cores;
      t.tiles = c.schedule.tiles.size();
      t.buffers = c.buffers;
      t.order = c.order;
      t.rowBlocks = c.rowBlocks;
      t.direct = c.direct;
      t.weightsSplit = c.schedule.weightsSplit;
      t.estimate = c.cost.total;
      const LayerBounds b = layerBounds(target, s, c.schedule);
      t.bound = std::max(b.compute, b.dma);
      byStep_[step].push_back(t);
    };
  }
  const TileSearchObserver* observer() const { return &observer_; }
  const std::vector<SearchedTiling>& at(int step) const {
    static const std::vector<SearchedTiling> none;
    auto it = byStep_.find(step);
    return it == byStep_.end() ? none : it->second;
  }

 private:
  TileSearchObserver observer_;
  std::map<int, std::vector<SearchedTiling>> byStep_;
};

/// A layer above the ratio target, as the tile search saw it: the chosen tiling alone (estimate / its bounds, without
/// the weights moved across layers), the candidate with the lowest ratio, and the fastest candidate within the target.
struct SpaceRow {
  std::string node;
  size_t candidates = 0;
  std::optional<SearchedTiling> chosen, lowestRatio, fastestWithin;
};

Result<std::vector<SpaceRow>> searchSpaceOf(const ModelCase& m, const Board& board, const std::set<std::string>& nodes) {
  TilingSpace space;
  CompileOptions o;
  o.planner.timeLimitSeconds = 2;
  o.tileSearchObserver = space.observer();
  STOWAGE_ASSIGN_OR_RETURN(CompileResult compiled, compileGraphOnBoard(m.graph, board, o));
  std::vector<SpaceRow> rows;
  for (const OffloadedLayer& l : compiled.plan.offloaded) {
    const std::string& name = compiled.graph.nodes[static_cast<size_t>(l.step)].name;
    if (nodes.count(name) == 0) continue;
    SpaceRow r;
    r.node = name;
    const std::vector<SearchedTiling>& all = space.at(l.step);
    r.candidates = all.size();
    for (const SearchedTiling& t : all) {
      if (!r.chosen && t.sameTiling(l)) r.chosen = t;
      if (!r.lowestRatio || t.ratio() < r.lowestRatio->ratio() ||
          (t.ratio() == r.lowestRatio->ratio() && t.estimate < r.lowestRatio->estimate))
        r.lowestRatio = t;
      if (t.ratio() <= kRatioTarget && (!r.fastestWithin || t.estimate < r.fastestWithin->estimate)) r.fastestWithin = t;
    }
    if (!r.chosen) return makeError(m.label, fmt::format("the tile search of '{}' did not report the tiling it chose ({})", name, tilingText(l)));
    rows.push_back(std::move(r));
  }
  return rows;
}

/// The first accelerator target without an engine (a cluster run in cores mode), or -1.
int clusterTarget(const Board& b) {
  for (size_t t = 0; t < b.targets.size(); ++t)
    if (b.targets[t].kind == TargetKind::Accelerator && b.targets[t].engineDim == 0 && b.targets[t].cores >= 4) return static_cast<int>(t);
  return -1;
}

bool isConv(const Node& n) { return n.op == OpKind::Conv || n.op == OpKind::QConv2d || n.op == OpKind::QDepthwiseConv2d; }

/// `text` with its line breaks as spaces (a diagnostic in a table cell).
std::string oneLine(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

/// The models under SHARED_DIR/models that the whole-model table leaves out (float MLPerf Tiny models, TFLM's, the ONNX
/// ones), sorted by path; files already in `taken` (by file name) are skipped.
std::vector<fs::path> sweepModelFiles(const fs::path& shared, const std::set<std::string>& taken) {
  std::vector<fs::path> files;
  const fs::path root = shared / "models";
  if (!fs::is_directory(root)) return files;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    const fs::path& p = e.path();
    if (!e.is_regular_file() || (p.extension() != ".tflite" && p.extension() != ".onnx") || taken.count(p.filename().string())) continue;
    if (p.string().find("/reference/") != std::string::npos || p.string().find("_vela") != std::string::npos) continue;  // TFLM refs; Ethos-U ops
    files.push_back(p);
  }
  std::sort(files.begin(), files.end());
  return files;
}

/// --sweep: every model of sweepModelFiles on every board against its CPU run, as simulated and in guard mode.
int runSweep(const fs::path& shared, const std::map<std::string, Board>& boards, const std::set<std::string>& taken) {
  std::printf("Every other shared model on the four boards: outputs against the CPU run (default board), as simulated and in "
              "guard mode:\n\n| model | board | layers (offloaded) | bytes = CPU run | guard mode = CPU run | simulated | bound | ratio | best "
              "bound | ratio to best bound |\n|---|---|---:|---|---|---:|---:|---:|---:|---:|\n");
  int differ = 0, pairs = 0, tooBig = 0, underBest = 0;
  for (const fs::path& file : sweepModelFiles(shared, taken)) {
    const std::string label = fs::relative(file, shared / "models").string();
    auto graph = file.extension() == ".onnx" ? importOnnxFile(file.string()) : importTfliteFile(file.string());
    if (!graph.ok()) {
      std::printf("| %s | - | does not import: %s ||||||\n", label.c_str(), graph.error().message.c_str());
      continue;
    }
    ModelCase m{label, std::move(*graph), {}};
    m.inputs = deterministicInputs(m.graph);
    CompileOptions options;
    options.planner.timeLimitSeconds = 2;
    auto cpu = runOutputs(m, defaultBoard(), options);
    if (!cpu.ok()) {
      std::printf("| %s | cpu | does not run: %s ||||||\n", label.c_str(), cpu.error().message.c_str());
      continue;
    }
    for (const std::string& b : kBoards) {
      ++pairs;
      auto simulated = compileAndSimulate(m, boards.at(b), true, true);
      if (!simulated.ok()) {
        // A plan that needs more memory than the board has (the planner's "is too small": the pool, the step and
        // the size that would fit) is the model not fitting the board, not a wrong result.
        const bool doesNotFit = simulated.error().message.find("is too small") != std::string::npos;
        if (doesNotFit) ++tooBig;
        else ++differ;
        std::printf("| %s | %s | %s: %s ||||||\n", label.c_str(), b.c_str(), doesNotFit ? "does not fit the board" : "FAILS",
                    oneLine(simulated.error().render()).c_str());
        continue;
      }
      CompileOptions guard = options;
      guard.guard = true;
      auto guarded = runOutputs(m, boards.at(b), guard);
      const bool same = sameBytes(simulated->outputs, *cpu);
      const bool guardSame = guarded.ok() && sameBytes(*guarded, *cpu);
      if (!same || !guardSame) ++differ;
      const WholeModelCycles w = wholeModelCycles(simulated->compiled.graph, simulated->compiled.plan);
      const uint64_t cycles = simulated->sim.totalCycles();
      underBest += cycles < w.bestBound() ? 1 : 0;
      std::printf("| %s | %s | %zu (%zu) | %s | %s | %s | %s | %.3f | %s | %.3f%s |\n", label.c_str(), b.c_str(),
                  simulated->compiled.graph.nodes.size(), simulated->compiled.plan.offloaded.size(), same ? "yes" : "NO, differs",
                  guardSame ? "yes" : (guarded.ok() ? "NO, differs" : ("FAILS: " + guarded.error().message).c_str()), num(cycles).c_str(),
                  num(w.bound).c_str(), w.bound > 0 ? static_cast<double>(cycles) / static_cast<double>(w.bound) : 0.0,
                  num(w.bestBound()).c_str(), w.bestBound() > 0 ? static_cast<double>(cycles) / static_cast<double>(w.bestBound()) : 0.0,
                  cycles < w.bestBound() ? " (below: a bound that is none)" : "");
      std::fflush(stdout);
    }
  }
  std::printf("\n%d model / board pairs; %d do not fit the board; %d fail or differ from the CPU run; %d simulated below the best "
              "bound\n", pairs, tooBig, differ, underBest);
  return differ == 0 && underBest == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  fs::path shared = STOWAGE_SHARED_DIR;
  bool wholeModelOnly = false, sweep = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--whole-model") wholeModelOnly = true;
    else if (std::string(argv[i]) == "--sweep") sweep = true;
    else shared = argv[i];
  }
  std::vector<ModelCase> models;
  for (const zoo::ZooModelInfo& info : zoo::zooModels()) {
    auto graph = zoo::zooGraph(info.name, 1);
    if (!graph.ok()) {
      std::fprintf(stderr, "%s\n", graph.error().render().c_str());
      return 2;
    }
    ModelCase m{"zoo " + info.name, std::move(*graph), {}};
    m.inputs = {zoo::sampleInput(info, 3)};
    models.push_back(std::move(m));
  }
  const fs::path resnet = shared / "models/mlperf-tiny/pretrainedResnet_quant.tflite";
  std::optional<size_t> resnetIndex;
  if (fs::exists(resnet)) {
    auto graph = importTfliteFile(resnet.string());
    if (!graph.ok()) {
      std::fprintf(stderr, "%s\n", graph.error().render().c_str());
      return 2;
    }
    ModelCase m{"MLPerf Tiny ResNet-8 int8", std::move(*graph), {}};
    m.inputs = deterministicInputs(m.graph);
    resnetIndex = models.size();
    models.push_back(std::move(m));
  } else {
    std::printf("(skipped MLPerf Tiny ResNet-8: %s not found)\n\n", resnet.string().c_str());
  }

  std::map<std::string, Board> boards;
  for (const std::string& b : kBoards) {
    BoardFlags flags;
    flags.boardPath = boardPath(b);
    auto board = resolveBoard(flags);
    if (!board.ok()) {
      std::fprintf(stderr, "%s\n", board.error().render().c_str());
      return 2;
    }
    boards.emplace(b, std::move(*board));
  }
  if (sweep) {
    std::set<std::string> taken = {resnet.filename().string()};
    for (const auto& [file, label] : kMoreMlperfTiny) taken.insert(file);
    return runSweep(shared, boards, taken);
  }

  // Table 0: every model as a whole against the whole-model bound; the other MLPerf Tiny int8 models join here.
  std::vector<ModelCase> wholeModels;
  for (const ModelCase& m : models) wholeModels.push_back(ModelCase{m.label, m.graph, m.inputs});
  for (const auto& [file, label] : kMoreMlperfTiny) {
    const fs::path path = shared / "models/mlperf-tiny" / file;
    if (!fs::exists(path)) {
      std::printf("(skipped %s: %s not found)\n\n", label.c_str(), path.string().c_str());
      continue;
    }
    auto graph = importTfliteFile(path.string());
    if (!graph.ok()) {
      std::fprintf(stderr, "%s\n", graph.error().render().c_str());
      return 2;
    }
    ModelCase m{label, std::move(*graph), {}};
    m.inputs = deterministicInputs(m.graph);
    wholeModels.push_back(std::move(m));
  }
  std::printf("Whole models against the whole-model bound (docs/accelerators.md, \"Whole-model bound\"):\n\n");
  std::printf("| model | board | layers (offloaded) | simulated | bound | set by | ratio | CPU layers | tiled compute | layer by "
              "layer | DMA bytes moved | DMA bytes at least | moved / least | bytes = CPU run (guard mode) |\n"
              "|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
  int wholeOver = 0, wholeRows = 0, wholeOff = 0, wholeDiffer = 0;
  std::vector<std::pair<std::string, WholeModelRow>> wholeRowsByPair;  // label and board, row: every pair that compiles
  const Board cpuBoard = defaultBoard();
  for (const ModelCase& m : wholeModels) {
    CompileOptions cpuOptions;
    cpuOptions.planner.timeLimitSeconds = 2;
    auto cpuOutputs = runOutputs(m, cpuBoard, cpuOptions);
    if (!cpuOutputs.ok()) {
      std::fprintf(stderr, "%s on the CPU: %s\n", m.label.c_str(), cpuOutputs.error().render().c_str());
      return 2;
    }
    for (const std::string& b : kBoards) {
      auto row = measureWholeModel(m, boards.at(b), *cpuOutputs);
      if (!row.ok()) {
        std::printf("| %s | %s | does not compile: %s |||||||||\n", m.label.c_str(), b.c_str(), row.error().message.c_str());
        continue;
      }
      const WholeModelRow& r = *row;
      const uint64_t least = r.compiler.dmaBytesMinimum.total();
      ++wholeRows;
      wholeRowsByPair.emplace_back(m.label + " | " + b, r);
      if (r.ratio() > kRatioTarget) ++wholeOver;
      const bool off = r.simulated != r.compiler.estimate || r.simulatedCpu != r.compiler.cpuCycles;
      if (off) ++wholeOff;
      if (!r.equalsCpu || !r.guardEqualsCpu) ++wholeDiffer;
      std::printf("| %s | %s | %zu (%zu) | %s%s | %s | %s | %.3f%s | %s | %s | %s | %s | %s | %s | %s (%s) |\n", m.label.c_str(), b.c_str(), r.layers,
                  r.offloaded, num(r.simulated).c_str(), off ? fmt::format(" (estimate {})", num(r.compiler.estimate)).c_str() : "",
                  num(r.compiler.bound).c_str(), r.compiler.boundUnit.c_str(), r.ratio(), r.ratio() > kRatioTarget ? " **" : "",
                  num(r.simulatedCpu).c_str(), num(r.tiledCompute).c_str(), num(r.layerByLayer).c_str(), num(r.simulatedDmaBytes).c_str(),
                  num(least).c_str(),
                  least > 0 ? fmt::format("{:.2f}", static_cast<double>(r.simulatedDmaBytes) / static_cast<double>(least)).c_str() : "-",
                  r.equalsCpu ? "yes" : "NO, differs", r.guardEqualsCpu ? "yes" : "NO, differs");
      std::fflush(stdout);
    }
  }
  std::printf("\n%d model / board pairs; %d above the %.2f target (marked **); %d where the simulator differs from the "
              "compiler's whole-model estimate; %d whose outputs differ from the CPU run's (simulated or in guard mode)\n\n",
              wholeRows, wholeOver, kRatioTarget, wholeOff, wholeDiffer);
  // Every pair against the best lower bound the compiler knows: the bound with the fill and drain floor (added to the
  // compute units only) or the dependency bound (docs/accelerators.md, "Dependency bound"), whichever is larger.
  std::printf("Whole models against the best bound (max of the bound with the floor on the compute units, the dependency bound and "
              "the transfer bound; best / bound: the least ratio to the bound any schedule can reach):\n\n"
              "| model | board | simulated | bound | bound + floor | bound with floor | dependency bound | transfer bound | best bound | "
              "best / bound | ratio to best bound |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  int overBest = 0, underBest = 0, unreachable = 0;
  for (const auto& [pair, r] : wholeRowsByPair) {
    const WholeModelCycles& w = r.compiler;
    const double toBest = w.bestBound() > 0 ? static_cast<double>(r.simulated) / static_cast<double>(w.bestBound()) : 0.0;
    const double least = w.bound > 0 ? static_cast<double>(w.bestBound()) / static_cast<double>(w.bound) : 0.0;
    overBest += toBest > kRatioTarget ? 1 : 0;
    underBest += r.simulated < w.bestBound() ? 1 : 0;
    unreachable += least > kRatioTarget ? 1 : 0;
    std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %.3f%s | %.3f%s |\n", pair.c_str(), num(r.simulated).c_str(), num(w.bound).c_str(),
                num(w.bound + w.fillDrainFloor).c_str(), num(w.boundWithFloor).c_str(), num(w.dependencyBound).c_str(),
                num(w.transferBound).c_str(), num(w.bestBound()).c_str(), least, least > kRatioTarget ? " !!" : "", toBest,
                toBest > kRatioTarget ? " **" : "");
  }
  std::printf("\n%zu pairs; %d above %.2f of the best bound (marked **); %d simulated below it (a bound that is none); %d whose best "
              "bound is itself above %.2f of the bound (marked !!: no schedule reaches the target there)\n\n",
              wholeRowsByPair.size(), overBest, kRatioTarget, underBest, unreachable, kRatioTarget);
  // Why the pairs above the target stay there: the cycles over the bound split into compute beyond the bound's (as
  // tiled) and time the compute units wait for DMA, with the floor of each run's fill and drain that the bound leaves out.
  std::printf("Pairs above %.2f: where the cycles over the bound go (compute as tiled beyond the compute units' bound; waiting = "
              "simulated - tiled compute; fill + drain floor: one DMA setup before each run of offloaded layers and one after, "
              "which nothing can overlap):\n\n",
              kRatioTarget);
  std::printf("| model | board | over the bound | compute beyond the bound's | of it, layers on fewer cores | waiting for DMA | runs | "
              "fill + drain floor | ratio to bound + floor | dependency bound | ratio to best bound | why |\n"
              "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
  for (const auto& [pair, r] : wholeRowsByPair) {
    if (r.ratio() <= kRatioTarget) continue;
    std::printf("| %s | %s | %s | %s | %s | %zu | %s | %.3f | %s | %.3f | %s |\n", pair.c_str(), num(r.simulated - r.compiler.bound).c_str(),
                num(r.tiledCompute - std::min(r.tiledCompute, r.computeBound)).c_str(), num(r.fewerCoresLoss).c_str(),
                num(r.simulated - std::min(r.simulated, r.tiledCompute)).c_str(), r.runs, num(r.fillDrainFloor).c_str(),
                static_cast<double>(r.simulated) / static_cast<double>(r.compiler.bound + r.fillDrainFloor), num(r.compiler.dependencyBound).c_str(),
                static_cast<double>(r.simulated) / static_cast<double>(std::max<uint64_t>(1, r.compiler.bestBound())), whyOverBound(r).c_str());
  }
  std::printf("\n");
  if (wholeDiffer > 0) {
    std::fprintf(stderr, "error: %d model / board pairs give other bytes than the CPU run (table above)\n", wholeDiffer);
    return 1;
  }
  if (underBest > 0) {
    std::fprintf(stderr, "error: %d model / board pairs simulate in fewer cycles than their best bound (table above)\n", underBest);
    return 1;
  }
  if (wholeModelOnly) return 0;

  // Table 1: every offloaded layer, double-buffered against the bounds and against one buffer per tile.
  std::printf("| model | board | layer | mode | tiles (rows x ch, cores) | compute bound | DMA bound | simulated | ratio | "
              "floor | ratio to floor | no double buffer | speedup |\n");
  std::printf("|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  int over = 0, layers = 0, floorLimited = 0, estimateOff = 0;
  double worst = 0;
  std::string worstName;
  std::map<std::pair<size_t, std::string>, std::set<std::string>> overTarget;  // (model, board) -> layers above the target
  for (size_t mi = 0; mi < models.size(); ++mi) {
    const ModelCase& m = models[mi];
    for (const std::string& b : kBoards) {
      auto db = measure(m, boards.at(b), true);
      auto sb = measure(m, boards.at(b), false);
      if (!db.ok() || !sb.ok()) {
        std::fprintf(stderr, "%s on %s: %s\n", m.label.c_str(), b.c_str(), (!db.ok() ? db.error() : sb.error()).render().c_str());
        return 2;
      }
      for (size_t i = 0; i < db->size(); ++i) {
        LayerRow& r = (*db)[i];
        if (i < sb->size() && (*sb)[i].node == r.node) r.simulatedSingle = (*sb)[i].simulatedSingle;
        const double ratio = r.ratio();
        ++layers;
        if (ratio > kRatioTarget) {
          ++over;
          overTarget[{mi, b}].insert(r.node);
        }
        if (ratio > worst) {
          worst = ratio;
          worstName = fmt::format("{} / {} / {}", m.label, b, r.node);
        }
        const double toFloor = r.floor > 0 ? static_cast<double>(r.simulated) / static_cast<double>(r.floor) : 0.0;
        if (ratio > kRatioTarget && r.floor > 0 && toFloor <= kRatioTarget) ++floorLimited;
        if (r.estimate != r.simulated) ++estimateOff;
        const std::string extra = (r.cores > 1 ? fmt::format(", {} cores", r.cores) : "") + r.buffering;
        const std::string simulated =
            num(r.simulated) + (r.estimate != r.simulated ? fmt::format(" (estimate {})", num(r.estimate)) : std::string());
        std::printf("| %s | %s | %s | %s | %d (%lld x %lld%s) | %s | %s | %s | %.3f%s | %s | %.3f | %s | %.2fx |\n", m.label.c_str(),
                    b.c_str(), r.node.c_str(), r.mode.c_str(), r.tiles, static_cast<long long>(r.rowTile),
                    static_cast<long long>(r.channelTile), extra.c_str(), num(r.bounds.compute).c_str(), num(r.bounds.dma).c_str(),
                    simulated.c_str(), ratio, ratio > kRatioTarget ? " **" : "", num(r.floor).c_str(), toFloor,
                    num(r.simulatedSingle).c_str(),
                    r.simulated > 0 ? static_cast<double>(r.simulatedSingle) / static_cast<double>(r.simulated) : 0.0);
      }
      std::fflush(stdout);
    }
  }
  std::printf("\n%d offloaded layers; %d above the %.2f target (marked **), of which %d are within %.2f of their fill/drain "
              "floor; worst %.3f (%s); %d layers where the simulator differs from the compiler's estimate\n\n",
              layers, over, kRatioTarget, floorLimited, kRatioTarget, worst, worstName.c_str(), estimateOff);

  // Table 1b: the layers above the target, against every tiling the tile search tried for them (standalone
  // estimates: no weights moved across layers; each against its own bounds).
  std::printf("Layers above the target, against every tiling the tile search tried for them (estimates of each tiling alone, "
              "without weights moved across layers, against its own bounds):\n\n");
  std::printf("| model | board | layer | tilings tried | chosen alone: estimate (ratio) | lowest ratio of any tiling: estimate "
              "(ratio), tiling | fastest tiling within %.2f: estimate (vs chosen), tiling |\n|---|---|---|---:|---:|---|---|\n",
              kRatioTarget);
  int none = 0, slowerOnly = 0, aheadOrEqual = 0;
  double leastSlowdown = 1e9;
  for (const auto& [key, nodes] : overTarget) {
    const ModelCase& m = models[key.first];
    auto space = searchSpaceOf(m, boards.at(key.second), nodes);
    if (!space.ok()) {
      std::fprintf(stderr, "%s on %s: %s\n", m.label.c_str(), key.second.c_str(), space.error().render().c_str());
      return 2;
    }
    for (const SpaceRow& r : *space) {
      const SearchedTiling& c = *r.chosen;
      std::string within = "none";
      if (r.fastestWithin) {
        const double vs = static_cast<double>(r.fastestWithin->estimate) / static_cast<double>(std::max<uint64_t>(1, c.estimate));
        if (r.fastestWithin->estimate <= c.estimate) ++aheadOrEqual;
        else {
          ++slowerOnly;
          leastSlowdown = std::min(leastSlowdown, vs);
        }
        within = fmt::format("{} ({:.2f}x), {}", num(r.fastestWithin->estimate), vs, r.fastestWithin->text());
      } else {
        ++none;
      }
      std::printf("| %s | %s | %s | %zu | %s (%.3f) | %s (%.3f), %s | %s |\n", m.label.c_str(), key.second.c_str(), r.node.c_str(),
                  r.candidates, num(c.estimate).c_str(), c.ratio(), num(r.lowestRatio->estimate).c_str(), r.lowestRatio->ratio(),
                  r.lowestRatio->text().c_str(), within.c_str());
    }
    std::fflush(stdout);
  }
  std::printf("\n%d layers above the target: for %d no tiling tried meets it; for %d only slower tilings do (the least slowdown "
              "%.2fx); for %d a tiling as fast or faster does\n\n",
              over, none, slowerOnly, slowerOnly > 0 ? leastSlowdown : 0.0, aheadOrEqual);

  // Table 2: ResNet-8 conv layers on each cluster board, 1 core against 4 (the board's target with `cores`
  // overridden; everything else as the board gives it).
  const ModelCase& r8 = resnetIndex ? models[*resnetIndex] : models.front();
  std::printf("ResNet-8 conv layers (%s), 1 core vs 4:\n\n", r8.label.c_str());
  std::printf("| board | layer | 1 core | 4 cores | speedup |\n|---|---|---:|---:|---:|\n");
  double minSpeedup = 1e9;
  for (const std::string& b : kBoards) {
    const int t = clusterTarget(boards.at(b));
    if (t < 0) continue;
    std::map<int, std::vector<LayerRow>> byCores;
    for (int cores : {1, 4}) {
      Board variant = boards.at(b);
      variant.targets[static_cast<size_t>(t)].cores = cores;
      auto rows = measure(r8, variant, true);
      if (!rows.ok()) {
        std::fprintf(stderr, "%s on %s with %d cores: %s\n", r8.label.c_str(), b.c_str(), cores, rows.error().render().c_str());
        return 2;
      }
      byCores[cores] = std::move(*rows);
    }
    uint64_t sum1 = 0, sum4 = 0;
    for (const LayerRow& one : byCores[1]) {
      const auto four = std::find_if(byCores[4].begin(), byCores[4].end(), [&](const LayerRow& r) { return r.node == one.node; });
      if (four == byCores[4].end()) continue;
      const Node* node = nullptr;
      for (const Node& n : r8.graph.nodes)
        if (n.name == one.node) node = &n;
      if (node == nullptr || !isConv(*node)) continue;
      const double speedup = four->simulated > 0 ? static_cast<double>(one.simulated) / static_cast<double>(four->simulated) : 0.0;
      minSpeedup = std::min(minSpeedup, speedup);
      sum1 += one.simulated;
      sum4 += four->simulated;
      std::printf("| %s | %s | %s | %s (%d tiles, %d cores) | %.2fx%s |\n", b.c_str(), one.node.c_str(), num(one.simulated).c_str(),
                  num(four->simulated).c_str(), four->tiles, four->cores, speedup, speedup < kCoresTarget ? " **" : "");
    }
    std::printf("| %s | all conv layers | %s | %s | %.2fx |\n", b.c_str(), num(sum1).c_str(), num(sum4).c_str(),
                sum4 > 0 ? static_cast<double>(sum1) / static_cast<double>(sum4) : 0.0);
  }
  std::printf("\nlowest per-layer speedup %.2fx (target >= %.1fx, below marked **)\n", minSpeedup, kCoresTarget);

  // Table 3: whole models, every layer (the CPU's too), Relu/Clip fused into the Conv / Gemm before them (the
  // default) against --no-fuse.
  std::printf("\nWhole models (every layer, the CPU's included), fused (default) vs --no-fuse:\n\n");
  std::printf("| model | board | layers (offloaded) | cycles | of which CPU layers | --no-fuse: layers (offloaded) | cycles | "
              "of which CPU layers | speedup |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const ModelCase& m : models)
    for (const std::string& b : kBoards) {
      auto fused = measureModel(m, boards.at(b), true);
      auto apart = measureModel(m, boards.at(b), false);
      if (!fused.ok() || !apart.ok()) {
        std::fprintf(stderr, "%s on %s: %s\n", m.label.c_str(), b.c_str(), (!fused.ok() ? fused.error() : apart.error()).render().c_str());
        return 2;
      }
      std::printf("| %s | %s | %zu (%zu) | %s | %s | %zu (%zu) | %s | %s | %.2fx |\n", m.label.c_str(), b.c_str(), fused->layers,
                  fused->offloaded, num(fused->total).c_str(), num(fused->cpu).c_str(), apart->layers, apart->offloaded,
                  num(apart->total).c_str(), num(apart->cpu).c_str(),
                  fused->total > 0 ? static_cast<double>(apart->total) / static_cast<double>(fused->total) : 0.0);
    }

  // Table 4: whole models with the weight prefetch across layers (the default) against --no-weight-prefetch.
  std::printf("\nWhole models, weight prefetch across layers (default) vs --no-weight-prefetch:\n\n");
  std::printf("| model | board | offloaded layers | of which weights prefetched | cycles | --no-weight-prefetch | speedup |\n"
              "|---|---|---:|---:|---:|---:|---:|\n");
  for (const ModelCase& m : models)
    for (const std::string& b : kBoards) {
      auto with = measureModel(m, boards.at(b), true, true);
      auto without = measureModel(m, boards.at(b), true, false);
      if (!with.ok() || !without.ok()) {
        std::fprintf(stderr, "%s on %s: %s\n", m.label.c_str(), b.c_str(), (!with.ok() ? with.error() : without.error()).render().c_str());
        return 2;
      }
      std::printf("| %s | %s | %zu | %zu | %s | %s | %.2fx |\n", m.label.c_str(), b.c_str(), with->offloaded, with->prefetched,
                  num(with->total).c_str(), num(without->total).c_str(),
                  with->total > 0 ? static_cast<double>(without->total) / static_cast<double>(with->total) : 0.0);
    }
  return 0;
}
