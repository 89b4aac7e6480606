// Offloaded-layer lines of the reports (see OffloadSummary.h).
#include "stowage/report/OffloadSummary.h"

#include <fmt/format.h>

#include "stowage/tile/TileChoice.h"
#include "stowage/tile/WholeModelCycles.h"

namespace stowage {

namespace {

/// Who loaded `l`'s first weight tiles: "the layer before" (the previous layer on its target), else "step N 'name'".
std::string weightIssuerText(const Graph& g, const ProgramPlan& plan, const OffloadedLayer& l) {
  const OffloadedLayer* before = nullptr;  // the previous layer on l's target
  for (const OffloadedLayer& o : plan.offloaded)
    if (o.target == l.target && o.step < l.step && (before == nullptr || o.step > before->step)) before = &o;
  for (const OffloadedLayer& o : plan.offloaded)
    for (const WeightPrefetchTo& to : o.prefetches)
      if (to.step == l.step && &o != before) return fmt::format("step {} '{}'", o.step, g.nodes[static_cast<size_t>(o.step)].name);
  return "the layer before";
}

}  // namespace

std::string offloadText(const Graph& g, const ProgramPlan& plan, const OffloadedLayer* l) {
  if (l == nullptr) return "";
  const std::string issuer = l->weightsPrefetchedCores > 0 ? weightIssuerText(g, plan, *l) : "";
  return fmt::format("{}{}, {} tile{} of {} {} x {} channels, {}, est. {} cycles (compute {}, DMA {})", l->mode,
                     l->cores > 1 ? fmt::format(" x{} cores", l->cores) : "", l->tiles, l->tiles == 1 ? "" : "s", l->rowTile,
                     l->rowsArePixels ? "pixels" : "rows",
                     l->channelTile, tilingText(*l) + (l->weightsPrefetchedCores > 0
                                             ? l->weightsOnceCore >= 0 ? ", first weights loaded once for all cores by " + issuer
                                                                       : ", first weights loaded by " + issuer
                                             : "") + (l->inputHandedOver ? ", first input loaded by the layer before" : ""),
                     l->totalCycles, l->computeCycles,
                     l->dmaCycles);
}

std::string offloadSummary(const Graph& g, const ProgramPlan& plan) {
  if (plan.offloaded.empty()) return "";
  std::string out = fmt::format("offloaded layers: {}\n", plan.offloaded.size());
  uint64_t total = 0;
  for (const OffloadedLayer& l : plan.offloaded) {
    const Node& n = g.nodes[static_cast<size_t>(l.step)];
    out += fmt::format("  step {} '{}' ({}) on '{}': {}\n", l.step, n.name, opName(n.op), plan.board.targets[static_cast<size_t>(l.target)].name,
                       offloadText(g, plan, &l));
    total += l.totalCycles;
  }
  out += fmt::format("  estimated cycles of the offloaded layers: {}\n", total);
  out += wholeModelText(wholeModelCycles(g, plan));
  return out;
}

std::string wholeModelText(const WholeModelCycles& w) {
  std::string out = fmt::format("whole model: estimated {} cycles ({} of them CPU layers), bound {} cycles set by {}, ratio {:.3f}\n",
                                w.estimate, w.cpuCycles, w.bound, w.boundUnit, w.ratio());
  if (w.offloadedRuns > 0)
    out += fmt::format("  fill and drain floor: {} cycles over {} run(s) of offloaded layers (a DMA setup before and after each, which "
                       "nothing overlaps); bound + floor {} cycles, ratio {:.3f}\n",
                       w.fillDrainFloor, w.offloadedRuns, w.bound + w.fillDrainFloor, w.ratioToBoundAndFloor());
  for (const TransferBound& t : w.transferBounds)
    out += fmt::format("  transfer bound: {} cycles ('{}': its layers receive {} tensor(s), {} bytes, by DMA, in at least {} "
                       "transfer(s) (a tensor whose one transfer would not fit goes in pieces, each with its setup) over {} queue(s): "
                       "{} cycles from its first layer's start to its last load; then {} of its last layer's output store; CPU layers "
                       "before {}, after {})\n",
                       t.cycles, t.targetName, t.tensors, t.bytes, t.transfers, t.queues, t.window, t.drain, t.cpuBefore, t.cpuAfter);
  if (w.offloadedRuns > 0) {
    const DependencyParts parts = dependencyParts(w);
    out += fmt::format("  dependency bound: {} cycles (each step waits for the step before it: a layer's input made by the step "
                       "before is loaded after it ends; per step max(setup + compute, load), over {} step(s): offloaded compute {}, "
                       "CPU layers {}, setups before and after {}, loads beyond setup + compute {} in {} step(s)); best bound {} "
                       "cycles, ratio {:.3f}\n",
                       w.dependencyBound, w.dependencySteps.size(), parts.offloadedCompute, parts.cpuCycles, parts.setups,
                       parts.loadsBeyond, parts.loadBoundSteps, w.bestBound(),
                       w.ratioToBestBound());
  }
  for (const UnitBound& u : w.units)
    out += fmt::format("  {}: at least {} cycles busy ({} with the CPU layers)\n", u.unit, u.offloadedCycles, u.cycles);
  const MinimumDmaBytes& m = w.dmaBytesMinimum;
  out += fmt::format("  DMA bytes: {} planned, at least {} (weights {}, graph inputs {}, graph outputs {}, other activations {})\n",
                     w.dmaBytesPlanned, m.total(), m.weights, m.graphInputs, m.graphOutputs, m.activations);
  return out;
}

}  // namespace stowage
