// Tile buffer layout over scratch pools and banks (see ScratchLayout.h).
#include "stowage/tile/ScratchLayout.h"

#include <algorithm>
#include <limits>

#include "stowage/plan/MemoryPlan.h"

namespace stowage {

std::vector<int> scratchPoolsFor(const Board& board, int target, const Node& node) {
  const std::string op(opName(node.op));
  std::vector<int> out;
  for (const PlacementRule& r : board.rules) {
    if (!r.matches(op, node.name) || !r.scratch) continue;
    for (const auto& name : *r.scratch)
      for (size_t i = 0; i < board.pools.size(); ++i)
        if (board.pools[i].name == name && board.pools[i].canAccess(board.targets[static_cast<size_t>(target)].name))
          out.push_back(static_cast<int>(i));
    return out;
  }
  for (size_t i = 0; i < board.pools.size(); ++i) {
    const MemoryPool& p = board.pools[i];
    if (p.kind != PoolKind::Workspace || p.placement != PoolPlacement::Fixed || !p.canAccess(board.targets[static_cast<size_t>(target)].name))
      continue;
    bool cpuToo = false;
    for (const Target& t : board.targets)
      if (t.kind == TargetKind::Cpu && p.canAccess(t.name)) cpuToo = true;
    if (!cpuToo) out.push_back(static_cast<int>(i));
  }
  return out;
}

namespace {

/// Packs `items` (operand, size) into the banks of `pool`; halves of one operand in different banks. Returns the
/// bank of each item, or nullopt.
std::optional<std::vector<int>> packBanks(const MemoryPool& pool, const std::vector<std::pair<int, size_t>>& items, size_t reserved) {
  const int banks = std::max(1, pool.banks);
  size_t capacity = pool.banks > 1 ? pool.bankSizeBytes : (pool.sizeBytes ? *pool.sizeBytes : std::numeric_limits<size_t>::max());
  // Resident tensors may sit in any bank: each bank keeps room for all of them.
  if (reserved >= capacity) return std::nullopt;
  if (capacity != std::numeric_limits<size_t>::max()) capacity -= reserved;
  std::vector<size_t> used(static_cast<size_t>(banks), 0);
  std::vector<int> bankOf(items.size(), -1);
  std::vector<size_t> order(items.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return items[a].second > items[b].second; });
  for (size_t i : order) {
    int best = -1;
    for (int b = 0; b < banks; ++b) {
      // The other half of the same operand must not share the bank.
      bool partnerHere = false;
      for (size_t j = 0; j < items.size(); ++j)
        if (j != i && items[j].first == items[i].first && bankOf[j] == b && banks > 1) partnerHere = true;
      if (partnerHere || used[static_cast<size_t>(b)] + items[i].second > capacity) continue;
      if (best < 0 || used[static_cast<size_t>(b)] < used[static_cast<size_t>(best)]) best = b;
    }
    if (best < 0) return std::nullopt;
    used[static_cast<size_t>(best)] += items[i].second;
    bankOf[i] = best;
  }
  return bankOf;
}

}  // namespace

std::optional<std::vector<ScratchRequest>> layoutScratch(const Board& board, const std::vector<int>& pools, const ScratchNeed& need,
                                                         int step, size_t coreStride[3]) {
  if (pools.empty()) return std::nullopt;
  const char* names[3] = {"x", "w", "y"};
  // Assignments to try: outputs in the last pool (an accumulator), else everything in one pool.
  std::vector<std::vector<int>> tries;
  if (pools.size() > 1) tries.push_back({pools.front(), pools.front(), pools.back()});
  for (int p : pools) tries.push_back({p, p, p});
  for (const auto& poolOf : tries) {
    std::vector<ScratchRequest> reqs;
    bool ok = true;
    size_t strides[3] = {0, 0, 0};
    for (int pi : std::vector<int>(pools.begin(), pools.end())) {
      if (!ok) break;
      const MemoryPool& pool = board.pools[static_cast<size_t>(pi)];
      std::vector<std::pair<int, size_t>> items;
      std::vector<std::pair<int, int>> which;  // operand, half
      for (int op = 0; op < 3; ++op) {
        if (poolOf[static_cast<size_t>(op)] != pi || need.bytes[op] == 0) continue;
        const size_t one = alignUp(need.bytes[op], pool.alignment);
        if (op == 0 && need.sharedX && pool.perCoreStride != 0) ok = false;  // every core would read its own copy
        const int regions = pool.perCoreStride != 0 || (op == 0 && need.sharedX) ? 1 : std::max(1, need.cores);
        strides[op] = regions > 1 ? one : 0;
        const int halves = need.doubleBuffer && !need.singleBuffered[op] ? 2 : 1;
        for (int h = 0; h < halves; ++h) {
          items.push_back({op, one * static_cast<size_t>(regions)});
          which.push_back({op, h});
        }
      }
      if (!ok) break;
      if (items.empty()) continue;
      auto banks = packBanks(pool, items, need.reservedBytes);
      if (!banks) {
        ok = false;
        break;
      }
      for (size_t i = 0; i < items.size(); ++i) {
        ScratchRequest r;
        r.name = "s" + std::to_string(step) + "_" + names[which[i].first] + std::to_string(which[i].second);
        r.step = step;
        r.sizeBytes = items[i].second;
        r.pool = pi;
        r.bank = pool.banks > 1 ? (*banks)[i] : -1;
        reqs.push_back(r);
      }
    }
    if (!ok) continue;
    // Pair the halves (indices within this layer's requests).
    for (size_t i = 0; i < reqs.size(); ++i)
      for (size_t j = 0; j < reqs.size(); ++j)
        if (i != j && reqs[i].name.substr(0, reqs[i].name.size() - 1) == reqs[j].name.substr(0, reqs[j].name.size() - 1))
          reqs[i].pairedWith = static_cast<int>(j);
    for (int op = 0; op < 3; ++op) coreStride[op] = strides[op];
    return reqs;
  }
  return std::nullopt;
}

}  // namespace stowage
