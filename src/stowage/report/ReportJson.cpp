// report.json and plan CSV (see ReportJson.h).
#include "stowage/report/ReportJson.h"

#include <fmt/format.h>

#include "stowage/ir/LoweringAttributes.h"

#include <algorithm>
#include <set>
#include <limits>

#include "stowage/lower/KernelCall.h"
#include "stowage/ir/Op.h"
#include "stowage/plan/CpuLayerCost.h"
#include "stowage/plan/analysis/NodeTargets.h"
#include "stowage/tile/WholeModelCycles.h"

namespace stowage {

namespace {

nlohmann::ordered_json capacityJson(size_t bytes) {
  if (bytes == std::numeric_limits<size_t>::max()) return nullptr;
  return bytes;
}

}  // namespace

size_t liveBytesAt(const ProgramPlan& plan, int pool, int step) {
  size_t live = 0;
  for (const PlacedBuffer& b : plan.buffers)
    if (b.slot.pool == pool && b.aliasOf == kNoTensor && b.firstStep <= step && step < b.endStep) live += b.sizeBytes;
  return live;
}

nlohmann::ordered_json buildReportJson(const Graph& g, const ProgramPlan& plan, const ReportContext& context) {
  using json = nlohmann::ordered_json;
  const Board& board = plan.board;
  json r;
  r["schema"] = 1;
  r["model"] = {{"file", context.modelPath}, {"name", g.name}, {"symbol_prefix", context.name}, {"nodes", g.nodes.size()}};
  r["board"] = {{"name", board.name}, {"file", board.sourcePath}};

  json pools = json::array();
  for (const PoolUse& u : plan.pools) {
    const MemoryPool& p = board.pools[static_cast<size_t>(u.pool)];
    json j;
    j["name"] = p.name;
    j["kind"] = std::string(poolKindName(p.kind));
    j["placement"] = std::string(poolPlacementName(p.placement));
    j["capacity"] = capacityJson(u.capacityBytes);
    j["used"] = u.usedBytes;
    j["lower_bound"] = u.lowerBoundBytes;
    j["peak_live"] = u.peakLiveBytes;
    j["peak_step"] = u.peakStep < 0 ? json(nullptr) : json(u.peakStep);
    j["buffers"] = u.buffers;
    j["alignment"] = p.alignment;
    j["access"] = p.access;
    if (!p.section.empty()) j["section"] = p.section;
    if (p.base) j["base"] = fmt::format("0x{:X}", *p.base);
    if (p.banks > 1) {
      j["banks"] = p.banks;
      j["bank_size"] = p.bankSizeBytes;
      j["bank_used"] = u.bankUsedBytes;
    }
    j["algorithm"] = u.algorithm;
    j["status"] = u.status;
    pools.push_back(std::move(j));
  }
  r["pools"] = std::move(pools);

  json buffers = json::array();
  for (const PlacedBuffer& b : plan.buffers) {
    const MemoryPool& p = board.pools[static_cast<size_t>(b.slot.pool)];
    json j;
    j["name"] = b.tensor == kNoTensor ? b.name : g.tensor(b.tensor).name;
    j["role"] = bufferRoleName(b.role);
    j["pool"] = p.name;
    if (p.banks > 1) j["bank"] = b.slot.bank;
    j["offset"] = b.offset;
    j["size"] = b.sizeBytes;
    j["first"] = b.firstStep;
    j["last"] = b.endStep - 1;
    json cands = json::array();
    for (int c : b.candidates) cands.push_back(board.pools[static_cast<size_t>(c)].name);
    j["candidates"] = std::move(cands);
    j["reason"] = b.reason;
    if (b.aliasOf != kNoTensor) {
      j["alias_of"] = g.tensor(b.aliasOf).name;
      j["alias_offset"] = b.aliasOffset;
      if (b.aliasRunBytes != 0) {
        j["alias_run"] = b.aliasRunBytes;
        j["alias_stride"] = b.aliasStrideBytes;
      }
    }
    if (sharesBytesWithInput(plan, b)) {
      j["overlaps"] = g.tensor(b.overlapsInput).name;
      if (b.rowBand != 0) j["row_band"] = b.rowBand;  // pools have none: pixel order
    }
    buffers.push_back(std::move(j));
  }
  r["buffers"] = std::move(buffers);

  NodeTargets targets = assignNodeTargets(g, board);
  if (plan.nodeTargets.size() == g.nodes.size()) targets.targetOf = plan.nodeTargets;
  json layers = json::array();
  const std::vector<size_t> stackByStep = kernelStackByStep(g, plan);
  for (size_t step = 0; step < g.nodes.size(); ++step) {
    const Node& n = g.nodes[step];
    json j;
    j["step"] = step;
    j["name"] = n.name;
    j["op"] = std::string(opName(n.op));
    j["target"] = board.targets.empty() ? "cpu" : board.targets[static_cast<size_t>(targets.targetOf[step])].name;
    json ins = json::array(), weights = json::array(), outs = json::array();
    for (TensorId id : n.inputs) {
      if (id == kNoTensor) continue;
      (g.tensor(id).isConstant() ? weights : ins).push_back(g.tensor(id).name);
    }
    for (TensorId id : n.outputs) outs.push_back(g.tensor(id).name);
    j["inputs"] = std::move(ins);
    j["weights"] = std::move(weights);
    j["outputs"] = std::move(outs);
    j["macs"] = macCount(g, n);
    if (n.attrs.has(kBandOfAttr)) j[kBandOfAttr] = n.attrs.getString(kBandOfAttr);
    json live = json::object();
    for (const PoolUse& u : plan.pools) live[board.pools[static_cast<size_t>(u.pool)].name] = liveBytesAt(plan, u.pool, static_cast<int>(step));
    j["live_bytes"] = std::move(live);
    const OffloadedLayer* offloaded = plan.offloadedAt(static_cast<int>(step));
    j["estimated_cycles"] = offloaded != nullptr ? offloaded->totalCycles : cpuLayerCycles(g, n, plan, targets.targetOf[step]);
    if (step < context.layerKernels.size() && !context.layerKernels[step].kernel.empty()) {
      const LayerKernel& k = context.layerKernels[step];
      j["kernel"] = k.function;
      j["kernel_variant"] = kernelVariantName(k.variant);
    }
    if (offloaded == nullptr) j["kernel_stack_bytes"] = stackByStep[step];
    if (const OffloadedLayer* o = offloaded) {
      json t;
      t["mode"] = o->mode;
      t["kernel"] = o->kernel;
      t["cores"] = o->cores;
      t["row_tile"] = o->rowTile;
      if (o->rowsArePixels) t["rows_are_pixels"] = true;  // a pointwise conv tiled pixel by pixel: row_tile counts pixels
      t["channel_tile"] = o->channelTile;
      t["tiles"] = o->tiles;
      t["double_buffer"] = o->doubleBuffer;
      t["buffer_halves"] = {{"input", o->doubled[0] ? 2 : 1}, {"weights", o->doubled[1] ? 2 : 1}, {"output", o->doubled[2] ? 2 : 1}};
      t["tile_order"] = o->rowsOuter ? "rows_outer" : "channels_outer";
      t["first_rows"] = o->firstRows;
      t["last_rows"] = o->lastRows;
      t["ramp_rows"] = o->rampRows;
      t["weights_on_both_channels"] = o->weightsSplit;
      t["shared_input_loaders"] = o->sharedInputLoaders;  // 0: each core loads its own input tiles
      t["in_place"] = {{"input", o->direct[0]}, {"weights", o->direct[1]}, {"output", o->direct[2]}};
      // Weight prefetch across layers: how many cores found their first weight tile loaded by an earlier layer, and
      // the node whose first weight tiles this layer's cores load (null: none).
      t["weights_prefetched_cores"] = o->weightsPrefetchedCores;
      // Weights loaded once: the issuing layer's core that loaded every core's first weight tile in one transfer.
      t["weights_once_core"] = o->weightsOnceCore >= 0 && o->weightsPrefetchedCores > 0 ? json(o->weightsOnceCore) : json(nullptr);
      // Every later layer in issue order (`prefetches`); the first two also as before (first and second receiver).
      json later = json::array();
      for (const WeightPrefetchTo& to : o->prefetches) later.push_back({{"node", g.nodes[static_cast<size_t>(to.step)].name}, {"channel", to.channel}});
      const auto laterName = [&](size_t k) { return k < o->prefetches.size() ? json(g.nodes[static_cast<size_t>(o->prefetches[k].step)].name) : json(nullptr); };
      t["prefetches_weights_of"] = laterName(0);
      t["prefetch_channel"] = o->prefetches.empty() ? json(nullptr) : json(o->prefetches[0].channel);
      t["prefetches_second_weights_of"] = laterName(1);
      t["prefetches"] = std::move(later);
      // Input handover (engine mode): the node whose first input tile this layer loads beside its last store (null:
      // none), and whether this layer's first input tile was loaded so by the layer before.
      t["hands_input_to"] = o->handsInputTo >= 0 ? json(g.nodes[static_cast<size_t>(o->handsInputTo)].name) : json(nullptr);
      t["input_handed_over"] = o->inputHandedOver;
      t["tile_bytes"] = {{"input", o->xBytes}, {"weights", o->wBytes}, {"output", o->yBytes}};
      t["estimated_cycles"] = {{"compute", o->computeCycles}, {"dma", o->dmaCycles}, {"total", o->totalCycles}};
      j["offload"] = std::move(t);
    }
    layers.push_back(std::move(j));
  }
  r["layers"] = std::move(layers);
  // The whole model under the cost model: the estimate of one run and its bound (tile/WholeModelCycles.h).
  const WholeModelCycles whole = wholeModelCycles(g, plan);
  json units = json::array();
  for (const UnitBound& u : whole.units)
    units.push_back({{"unit", u.unit}, {"kind", u.kind}, {"target", u.target >= 0 ? json(board.targets[static_cast<size_t>(u.target)].name) : json(nullptr)},
                     {"offloaded_cycles", u.offloadedCycles}, {"cycles", u.cycles}});
  json dependencySteps = json::array();
  for (const DependencyStep& d : whole.dependencySteps)
    dependencySteps.push_back({{"step", d.step}, {"layer", g.nodes[static_cast<size_t>(d.step)].name}, {"offloaded", d.offloaded},
                               {"input_bytes", d.inputBytes}, {"fill", d.fill}, {"compute", d.compute}, {"load", d.load},
                               {"cycles", d.cycles}});
  json transferBounds = json::array();
  for (const TransferBound& t : whole.transferBounds)
    transferBounds.push_back({{"target", t.targetName}, {"tensors", t.tensors}, {"bytes", t.bytes}, {"transfers", t.transfers},
                              {"queues", t.queues}, {"setup", t.setup}, {"window", t.window}, {"drain", t.drain}, {"cpu_before", t.cpuBefore},
                              {"cpu_after", t.cpuAfter}, {"cycles", t.cycles}});
  const MinimumDmaBytes& least = whole.dmaBytesMinimum;
  r["whole_model"] = {{"estimated_cycles", whole.estimate},
                      {"cpu_cycles", whole.cpuCycles},
                      {"bound_cycles", whole.bound},
                      {"bound_unit", whole.boundUnit},
                      {"ratio", whole.ratio()},
                      {"offloaded_runs", whole.offloadedRuns},
                      {"fill_drain_floor_cycles", whole.fillDrainFloor},
                      {"ratio_to_bound_and_floor", whole.ratioToBoundAndFloor()},
                      {"bound_with_floor_cycles", whole.boundWithFloor},
                      {"dependency_bound_cycles", whole.dependencyBound},
                      {"dependency_steps", std::move(dependencySteps)},
                      {"final_drain_cycles", whole.finalDrain},
                      {"transfer_bound_cycles", whole.transferBound},
                      {"transfer_bounds", std::move(transferBounds)},
                      {"best_bound_cycles", whole.bestBound()},
                      {"ratio_to_best_bound", whole.ratioToBestBound()},
                      {"units", std::move(units)},
                      {"dma_bytes", whole.dmaBytesPlanned},
                      {"dma_bytes_minimum", {{"total", least.total()}, {"weights", least.weights}, {"graph_inputs", least.graphInputs},
                                             {"graph_outputs", least.graphOutputs}, {"activations", least.activations}}}};
  r["kernel_stack_bytes"] = stackByStep.empty() ? 0 : *std::max_element(stackByStep.begin(), stackByStep.end());
  {
    std::set<std::string> tags;  // one "fused chain N" per chain (cached halos add Concats of their own)
    for (const Node& n : g.nodes)
      if (n.attrs.has(kBandOfAttr)) tags.insert(n.attrs.getString(kBandOfAttr));
    const int chains = static_cast<int>(tags.size());
    r["fused_bands"] = {{"chains", chains}, {"extra_macs", context.fusedBandExtraMacs}};
  }
  r["planner"] = {{"algorithm", plan.algorithm}, {"seconds", plan.seconds}};
  r["remarks"] = plan.remarks;
  return r;
}

std::string reportJsonText(const Graph& g, const ProgramPlan& plan, const ReportContext& context) {
  return buildReportJson(g, plan, context).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

std::string poolPlanCsv(const Graph& g, const ProgramPlan& plan, int pool) {
  std::string out = "id,lower,upper,size,offset\n";
  for (const PlacedBuffer& b : plan.buffers) {
    if (b.slot.pool != pool) continue;  // declared aliases too: one row each, on their root's bytes
    std::string id = b.tensor == kNoTensor ? b.name : g.tensor(b.tensor).name;
    for (char& c : id)
      if (c == ',' || c == '"' || c == '\n' || c == '\r') c = '_';
    out += fmt::format("{},{},{},{},{}\n", id, b.firstStep, b.endStep, b.sizeBytes, b.offset);
  }
  return out;
}

}  // namespace stowage
