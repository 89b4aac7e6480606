// What each pool can still hold for the tiler's buffers (see PoolBudget.h).
#include "stowage/plan/PoolBudget.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "stowage/plan/MemoryPlan.h"
#include "stowage/plan/analysis/BufferConstraints.h"
#include "stowage/plan/analysis/NodeTargets.h"

namespace stowage {

size_t PoolBudget::forcedBytes(int pool, int step) const {
  const auto it = forced.find({pool, step});
  return it == forced.end() ? 0 : it->second;
}

bool PoolBudget::counts(TensorId t) const { return std::binary_search(tensors.begin(), tensors.end(), t); }

std::optional<size_t> PoolBudget::freeBytes(int pool, int first, int end) const {
  if (pool < 0 || static_cast<size_t>(pool) >= capacity.size() || !capacity[static_cast<size_t>(pool)]) return std::nullopt;
  size_t peak = 0;
  for (int s = first; s < end; ++s) peak = std::max(peak, forcedBytes(pool, s));
  const size_t size = *capacity[static_cast<size_t>(pool)];
  return peak >= size ? 0 : size - peak;
}

std::string PoolBudget::why(const Board& board, int pool, int first, int end) const {
  int at = -1;
  size_t peak = 0;
  for (int s = first; s < end; ++s)
    if (forcedBytes(pool, s) > peak) {
      peak = forcedBytes(pool, s);
      at = s;
    }
  if (at < 0) return "";
  const auto n = names.find({pool, at});
  return fmt::format("'{}' holds {} bytes at step {} that can only live there ({})", board.pools[static_cast<size_t>(pool)].name, peak, at,
                     n == names.end() ? "" : fmt::format("{}", fmt::join(n->second, ", ")));
}

PoolBudget poolBudget(const Graph& g, const Board& board, const PoolBudgetOptions& options) {
  PoolBudget budget;
  for (const MemoryPool& p : board.pools) budget.capacity.push_back(p.sizeBytes);
  const NodeTargets targets = assignNodeTargets(g, board);
  auto buffers = analyzeBuffers(g, board, targets, options.ioInPools, options.viewsShareBuffers);
  if (!buffers) return budget;
  const std::vector<int> producers = g.producers();
  std::map<std::pair<int, int>, std::vector<std::pair<size_t, std::string>>> named;
  for (const PlacedBuffer& b : *buffers) {
    if (b.candidates.size() != 1 || b.sizeBytes == 0) continue;
    // A view's output shares its input's buffer when the planner aliases views: it holds no bytes of its own.
    if (options.viewsShareBuffers && b.tensor != kNoTensor && b.role == BufferRole::Activation) {
      const int p = producers[static_cast<size_t>(b.tensor)];
      if (p >= 0 && g.nodes[static_cast<size_t>(p)].op == OpKind::Reshape) continue;
    }
    const int pool = b.candidates.front();
    const size_t alignment = board.pools[static_cast<size_t>(pool)].alignment;
    const size_t guard = b.role == BufferRole::Activation && options.guardBytes > 0 ? alignUp(options.guardBytes, alignment) + options.guardBytes : 0;
    const size_t bytes = alignUp(b.sizeBytes + guard, alignment);
    const std::string name = b.tensor == kNoTensor ? b.name : g.tensor(b.tensor).name;
    if (b.tensor != kNoTensor) budget.tensors.push_back(b.tensor);
    for (int s = b.firstStep; s < b.endStep; ++s) {
      budget.forced[{pool, s}] += bytes;
      named[{pool, s}].emplace_back(bytes, name);
    }
  }
  std::sort(budget.tensors.begin(), budget.tensors.end());
  for (auto& [poolStep, list] : named) {
    std::stable_sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<std::string>& out = budget.names[poolStep];
    for (const auto& [bytes, name] : list) out.push_back(fmt::format("'{}' {} bytes", name, bytes));
  }
  return budget;
}

}  // namespace stowage
