// Pool summary table (see PoolSummary.h).
#include "stowage/report/PoolSummary.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "stowage/lower/KernelCall.h"
#include "stowage/plan/PlanProgram.h"
#include "stowage/report/OffloadSummary.h"

namespace stowage {

namespace {

const char* placementName(PoolPlacement p) {
  switch (p) {
    case PoolPlacement::User: return "user";
    case PoolPlacement::Static: return "static";
    case PoolPlacement::Fixed: return "fixed";
  }
  return "?";
}

}  // namespace

std::string poolSummary(const Graph& g, const ProgramPlan& plan) {
  std::string out = fmt::format("  {:<12} {:<9} {:<7} {:>12} {:>12} {:>12} {:>6}  {}\n", "pool", "kind", "place", "capacity", "used",
                                "only here", "util", "peak at");
  for (const PoolUse& u : plan.pools) {
    const MemoryPool& pool = plan.board.pools[static_cast<size_t>(u.pool)];
    const bool unlimited = u.capacityBytes == std::numeric_limits<size_t>::max();
    std::string util = "-";
    if (!unlimited && u.capacityBytes > 0)
      util = fmt::format("{:.1f}%", 100.0 * static_cast<double>(u.usedBytes) / static_cast<double>(u.capacityBytes));
    std::string peak = "-";
    if (u.peakStep >= 0 && static_cast<size_t>(u.peakStep) < g.nodes.size()) {
      const Node& n = g.nodes[static_cast<size_t>(u.peakStep)];
      peak = fmt::format("step {} '{}' ({}), {} bytes live", u.peakStep, n.name, opName(n.op), u.peakLiveBytes);
    } else if (u.buffers > 0) {
      peak = fmt::format("{} bytes live", u.peakLiveBytes);
    }
    out += fmt::format("  {:<12} {:<9} {:<7} {:>12} {:>12} {:>12} {:>6}  {}\n", pool.name,
                       pool.kind == PoolKind::Constant ? "constant" : "workspace", placementName(pool.placement),
                       unlimited ? "unlimited" : std::to_string(u.capacityBytes), u.usedBytes, u.lowerBoundBytes, util, peak);
  }
  // All workspace pools together against the schedule's bound: the bytes of activations live at the busiest step.
  size_t usedTotal = 0;
  int workspacePools = 0;
  for (const PoolUse& u : plan.pools)
    if (plan.board.pools[static_cast<size_t>(u.pool)].kind == PoolKind::Workspace) usedTotal += u.usedBytes, ++workspacePools;
  std::vector<int> activations;
  for (size_t i = 0; i < plan.buffers.size(); ++i)
    if (plan.buffers[i].role == BufferRole::Activation) activations.push_back(static_cast<int>(i));
  const auto [liveAll, liveStep] = peakLiveBytes(plan.buffers, activations);
  if (workspacePools > 1)
    out += fmt::format("  {:<12} {:<9} {:<7} {:>12} {:>12} {:>12}\n", "(all)", "workspace", "", "", usedTotal, liveAll);
  (void)liveStep;
  out += "  only here: the most bytes live at once of buffers that no other pool may hold (0 when every buffer placed\n"
         "  here could have gone elsewhere); used: what the plan places there";
  out += workspacePools > 1 ? "; (all): every activation, against the bytes live at the busiest step\n" : "\n";
  out += fmt::format("  planner: {} in {:.1f} ms", plan.algorithm, plan.seconds * 1000.0);
  std::string algos;
  for (const PoolUse& u : plan.pools)
    if (u.buffers > 0) algos += fmt::format("{}{}: {} ({})", algos.empty() ? "" : ", ", plan.board.pools[static_cast<size_t>(u.pool)].name, u.algorithm, u.status);
  out += algos.empty() ? "\n" : " (" + algos + ")\n";
  out += offloadSummary(g, plan);
  // Stack the portable kernels use for buffers of their own (the int8 convolution's im2col buffer), on top of the pools.
  const std::vector<size_t> stackByStep = kernelStackByStep(g, plan);
  size_t stack = 0;
  std::string stackLayers;
  for (size_t step = 0; step < stackByStep.size(); ++step) {
    if (stackByStep[step] == 0) continue;
    stack = std::max(stack, stackByStep[step]);
    stackLayers += (stackLayers.empty() ? "" : ", ") + g.nodes[step].name;
  }
  if (stack > 0)
    out += fmt::format("  kernel stack: {} bytes at most, on the stack beside the pools (kernel buffers of {})\n", stack, stackLayers);
  for (const std::string& r : plan.remarks) out += "  remark: " + r + "\n";
  return out;
}

}  // namespace stowage
