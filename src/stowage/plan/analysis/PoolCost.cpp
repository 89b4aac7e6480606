// Pool cost model (see PoolCost.h).
#include "stowage/plan/analysis/PoolCost.h"

#include <algorithm>
#include <numeric>

namespace stowage {

std::optional<double> poolCyclesPerByte(const MemoryPool& pool) {
  if (pool.readBytesPerCycle <= 0 && pool.writeBytesPerCycle <= 0 && pool.latencyCycles <= 0) return std::nullopt;
  double cycles = pool.latencyCycles > 0 ? pool.latencyCycles : 0.0;
  if (pool.readBytesPerCycle > 0) cycles += 1.0 / pool.readBytesPerCycle;
  if (pool.writeBytesPerCycle > 0) cycles += 1.0 / pool.writeBytesPerCycle;
  return cycles;
}

std::vector<int> poolsCheapestFirst(const Board& board) {
  std::vector<int> order(board.pools.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    auto ca = poolCyclesPerByte(board.pools[static_cast<size_t>(a)]);
    auto cb = poolCyclesPerByte(board.pools[static_cast<size_t>(b)]);
    if (ca.has_value() != cb.has_value()) return ca.has_value();
    return ca && *ca < *cb;
  });
  return order;
}

}  // namespace stowage
