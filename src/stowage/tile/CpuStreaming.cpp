// Streaming layers through a CPU's fast pool (see CpuStreaming.h).
#include "stowage/tile/CpuStreaming.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "stowage/plan/analysis/PoolCost.h"
#include "stowage/tile/CostModel.h"
#include "stowage/tile/ScratchLayout.h"
#include "stowage/tile/TileChoice.h"
#include "stowage/tile/TileGeometry.h"

namespace stowage {

namespace {

size_t poolCapacity(const MemoryPool& p) { return p.sizeBytes ? *p.sizeBytes : 0; }

std::string poolList(const Board& board, const std::vector<int>& pools) {
  std::string s;
  for (int p : pools) s += (s.empty() ? "'" : ", '") + board.pools[static_cast<size_t>(p)].name + "'";
  return s;
}

/// Tile sizes giving distinct tile counts along one dimension: ceil(units / k) * step for k = 1 .. units.
std::vector<int64_t> distinctTileSizes(int64_t extent, int64_t step) {
  std::set<int64_t> v;
  const int64_t units = (extent + step - 1) / step;
  for (int64_t k = 1; k <= units; ++k) v.insert(std::min(extent, ((units + k - 1) / k) * step));
  return {v.rbegin(), v.rend()};
}

/// The tiling of `s` on the calling core of `cpu` whose tiles fit `pools` of `budget`: the fewest tiles among
/// those within 1% of the lowest estimated cycles. (The cost model has no per-tile overhead, so without this the
/// smallest tiles win by their shorter pipeline fill and the layer becomes thousands of kernel calls.)
std::optional<TileChoice> chooseCpuTiles(const Board& budget, int cpu, const LayerShape& s, const std::vector<int>& pools, int step,
                                         bool doubleBuffer) {
  const Target& target = budget.targets[static_cast<size_t>(cpu)];
  struct Fitting {
    TileChoice choice;  ///< its schedule dropped once estimated
    size_t tiles;
  };
  std::vector<Fitting> fitting;
  // The schedule, the estimate and the weight-load split of a candidate (deterministic, so redone for the winner).
  auto scheduleAndEstimate = [doubleBuffer](const Target& target, const LayerShape& s, TileChoice& c) {
    c.schedule = scheduleTiles(s, c.rowTile, c.channelTile, 1, doubleBuffer);
    c.cost = estimateLayer(target, s, c.schedule, doubleBuffer);
    splitWeightsWhenFaster(target, s, c);
  };
  // A pointwise convolution whose rows are pixels (tile/TileGeometry.h PointwiseRows) streams in whole image rows, as
  // other layers do: one core has no pixels to share out.
  const int64_t rowUnit = std::max<int64_t>(1, s.imageRowPixels);
  std::vector<int64_t> rowTiles = distinctTileSizes(s.rows / rowUnit, 1);
  for (int64_t& th : rowTiles) th *= rowUnit;
  for (int64_t tn : distinctTileSizes(s.channels, s.channelStep))
    for (int64_t th : rowTiles) {
      const TileBytes bytes = tileBytes(s, th, tn);
      ScratchNeed need;
      need.bytes[0] = bytes.x;
      need.bytes[1] = bytes.w;
      need.bytes[2] = bytes.y;
      need.doubleBuffer = doubleBuffer;
      need.cores = 1;
      TileChoice c;
      auto layout = layoutScratch(budget, pools, need, step, c.coreStride);
      if (!layout) continue;
      c.rowTile = th;
      c.channelTile = tn;
      c.cores = 1;
      c.doubleBuffer = doubleBuffer;
      c.buffers = OperandBuffers::uniform(doubleBuffer);
      c.bytes = bytes;
      c.scratch = std::move(*layout);
      scheduleAndEstimate(target, s, c);
      // Only the winner keeps its schedule (rebuilt below): hundreds of candidates' tiles at once took gigabytes'
      // worth of page faults (MobileNetV2 224 on cortex-m7-sdram: tile stage 2.3 s).
      fitting.push_back({std::move(c), 0});
      fitting.back().tiles = fitting.back().choice.schedule.tiles.size();
      fitting.back().choice.schedule = {};
    }
  if (fitting.empty()) return std::nullopt;
  uint64_t lowest = fitting.front().choice.cost.total;
  for (const Fitting& f : fitting) lowest = std::min(lowest, f.choice.cost.total);
  const Fitting* best = nullptr;
  for (const Fitting& f : fitting) {
    if (f.choice.cost.total > lowest + lowest / 100) continue;
    if (!best || f.tiles < best->tiles || (f.tiles == best->tiles && f.choice.cost.total < best->choice.cost.total)) best = &f;
  }
  TileChoice chosen = best->choice;
  scheduleAndEstimate(target, s, chosen);
  return chosen;
}

}  // namespace

std::vector<int> cpuStreamPools(const Board& board, int cpu, const Node& node) {
  const std::string& cpuName = board.targets[static_cast<size_t>(cpu)].name;
  const std::string op(opName(node.op));
  for (const PlacementRule& r : board.rules) {
    if (!r.matches(op, node.name) || !r.scratch) continue;
    std::vector<int> out;
    for (const auto& name : *r.scratch)
      for (size_t i = 0; i < board.pools.size(); ++i)
        if (board.pools[i].name == name && board.pools[i].canAccess(cpuName) && board.pools[i].sizeBytes) out.push_back(static_cast<int>(i));
    return out;
  }
  std::vector<int> workspaces;
  for (int i : poolsCheapestFirst(board)) {
    const MemoryPool& p = board.pools[static_cast<size_t>(i)];
    if (p.kind == PoolKind::Workspace && p.canAccess(cpuName)) workspaces.push_back(i);
  }
  // The cheapest pool streams from the others; it needs a size (an unlimited pool holds any working set).
  if (workspaces.size() < 2 || !board.pools[static_cast<size_t>(workspaces.front())].sizeBytes) return {};
  return {workspaces.front()};
}

size_t layerWorkingSetBytes(const Graph& g, const Node& node) {
  size_t bytes = 0;
  for (TensorId t : node.inputs)
    if (t != kNoTensor) bytes += g.tensor(t).byteSize();
  for (TensorId t : node.outputs)
    if (t != kNoTensor) bytes += g.tensor(t).byteSize();
  return bytes;
}

bool streamOnCpu(const Graph& g, const Board& board, int cpu, int step, const TileOptions& options, TiledProgram& r) {
  const Target& target = board.targets[static_cast<size_t>(cpu)];
  if (target.dmaBytesPerCycle <= 0) return false;
  const Node& n = g.nodes[static_cast<size_t>(step)];
  const std::vector<int> pools = cpuStreamPools(board, cpu, n);
  if (pools.empty()) return false;
  size_t capacity = 0;
  for (int p : pools) capacity += poolCapacity(board.pools[static_cast<size_t>(p)]);
  const size_t workingSet = layerWorkingSetBytes(g, n);
  if (workingSet <= capacity) return false;
  const std::string op(opName(n.op));
  auto stays = [&](const std::string& why) {
    r.remarks.push_back(fmt::format("node '{}' ({}) on '{}' does not stream through {}: working set {} bytes > capacity {} bytes, but {}",
                                    n.name, op, target.name, poolList(board, pools), workingSet, capacity, why));
    return false;
  };
  const LayerShapeResult shape = layerShapeOf(g, n);
  if (!shape.shape) return stays(shape.whyNot);
  // Tiles get at most half of each stream pool: the planner keeps placing activations in the rest.
  Board budget = board;
  for (int p : pools) {
    MemoryPool& pool = budget.pools[static_cast<size_t>(p)];
    const size_t half = poolCapacity(pool) / 2 / pool.alignment * pool.alignment;
    pool.sizeBytes = half;
    if (pool.banks > 1) pool.bankSizeBytes = std::min(pool.bankSizeBytes, half / static_cast<size_t>(pool.banks));
  }
  auto choice = chooseCpuTiles(budget, cpu, *shape.shape, pools, step, options.doubleBuffer);
  if (!choice) {
    const TileBytes smallest = tileBytes(*shape.shape, 1, shape.shape->channelStep);
    return stays(fmt::format("even its smallest tile (1 row x {} channels: input {} + weights {} + output {} bytes{}) does not fit half of {}",
                             shape.shape->channelStep, smallest.x, smallest.w, smallest.y,
                             options.doubleBuffer ? ", twice for double buffering" : "", poolList(board, pools)));
  }
  const size_t tiles = choice->schedule.tiles.size();
  recordTiledLayer(r, step, cpu, "cores", *shape.shape, std::move(*choice), false);
  r.remarks.push_back(fmt::format("streams node '{}' ({}) on '{}' through {} in {} tiles: working set {} bytes > capacity {} bytes",
                                  n.name, op, target.name, poolList(board, pools), tiles, workingSet, capacity));
  return true;
}

}  // namespace stowage
