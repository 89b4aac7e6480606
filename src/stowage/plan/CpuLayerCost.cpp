// CPU layer cost (see CpuLayerCost.h).
#include "stowage/plan/CpuLayerCost.h"

#include <algorithm>
#include <cmath>

#include "stowage/ir/Op.h"

namespace stowage {

namespace {

uint64_t ceilDiv(double amount, double perCycle) {
  if (amount <= 0 || perCycle <= 0) return 0;
  return static_cast<uint64_t>(std::ceil(amount / perCycle));
}

/// Cycles to move `t`'s bytes through the pool it is planned in (reading or writing).
uint64_t trafficCycles(const Graph& g, const ProgramPlan& plan, TensorId t, bool write) {
  if (t == kNoTensor) return 0;
  const int b = plan.bufferOf(t);
  if (b < 0) return 0;
  const int pool = plan.buffers[static_cast<size_t>(b)].slot.pool;
  if (pool < 0 || static_cast<size_t>(pool) >= plan.board.pools.size()) return 0;
  const MemoryPool& p = plan.board.pools[static_cast<size_t>(pool)];
  return ceilDiv(static_cast<double>(g.tensor(t).byteSize()), write ? p.writeBytesPerCycle : p.readBytesPerCycle);
}

/// True when view `n` (a Reshape) was planned with its output on its input's bytes: it runs no code.
bool viewSharesBuffer(const Node& n, const ProgramPlan& plan) {
  if (n.op != OpKind::Reshape || n.inputs.empty() || n.outputs.empty()) return false;
  const int a = plan.bufferOf(n.inputs[0]), b = plan.bufferOf(n.outputs[0]);
  if (a < 0 || b < 0) return false;
  return placedOnSameBytes(plan.buffers[static_cast<size_t>(a)], plan.buffers[static_cast<size_t>(b)]);
}

}  // namespace

uint64_t cpuLayerCycles(const Graph& g, const Node& n, const ProgramPlan& plan, int target) {
  if (target < 0 || static_cast<size_t>(target) >= plan.board.targets.size()) return 0;
  if (viewSharesBuffer(n, plan)) return 0;
  const Target& cpu = plan.board.targets[static_cast<size_t>(target)];
  int64_t ops = macCount(g, n);
  if (ops <= 0) {
    ops = 0;
    for (TensorId out : n.outputs)
      if (out != kNoTensor) ops += g.tensor(out).numElements();
  }
  const uint64_t compute = ceilDiv(static_cast<double>(ops), cpu.macsPerCycle);
  uint64_t memory = 0;
  for (TensorId in : n.inputs) memory += trafficCycles(g, plan, in, false);
  for (TensorId out : n.outputs) memory += trafficCycles(g, plan, out, true);
  return std::max(compute, memory);
}

}  // namespace stowage
