// Tile choice (see TileChoice.h): every distinct tile count per dimension, fit first, then cost.
#include "stowage/tile/TileChoice.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "stowage/tile/ScratchLayout.h"

namespace stowage {

namespace {

/// Tile sizes giving distinct tile counts: ceil(units / k) * step for k = 1 .. units (units = extent / step),
/// plus multiples of `prefer` (the engine dim) that are multiples of step.
std::vector<int64_t> tileSizes(int64_t extent, int64_t step, int64_t prefer) {
  std::set<int64_t> v;
  const int64_t units = (extent + step - 1) / step;
  for (int64_t k = 1; k <= units; ++k) v.insert(std::min(extent, ((units + k - 1) / k) * step));
  if (prefer > 1)
    for (int64_t t = prefer; t < extent; t += prefer)
      if (t % step == 0) v.insert(t);
  return {v.rbegin(), v.rend()};  // largest first
}

}  // namespace

std::optional<TileChoice> chooseTiles(const Board& board, int targetIndex, const LayerShape& s, const std::vector<int>& pools, int step,
                                      bool doubleBuffer, std::string& whyNot) {
  const Target& target = board.targets[static_cast<size_t>(targetIndex)];
  const bool engine = target.engineDim > 0;
  // Cores mode may use fewer cores than the target has when their tiles do not fit (or it is cheaper): every
  // count, since e.g. 6 of 8 cores may fit double-buffered tiles where 8 fit only single-buffered ones.
  std::vector<int> coreCounts;
  for (int c = engine ? 1 : target.cores; c >= 1; --c) coreCounts.push_back(c);
  // Double buffering when asked, unless one buffer per tile is cheaper (e.g. it lets more cores' tiles fit).
  std::vector<bool> buffering = {doubleBuffer};
  if (doubleBuffer) buffering.push_back(false);
  std::optional<TileChoice> best;
  for (bool db : buffering)
  for (int cores : coreCounts)
  for (int64_t tn : tileSizes(s.channels, s.channelStep, engine ? target.engineDim : 0)) {
    for (int64_t th : tileSizes(s.rows, 1, 0)) {
      const TileBytes bytes = tileBytes(s, th, tn);
      ScratchNeed need;
      need.bytes[0] = bytes.x;
      need.bytes[1] = bytes.w;
      need.bytes[2] = bytes.y;
      need.doubleBuffer = db;
      need.cores = cores;
      TileChoice c;
      auto layout = layoutScratch(board, pools, need, step, c.coreStride);
      if (!layout) continue;
      c.rowTile = th;
      c.cores = cores;
      c.channelTile = tn;
      c.bytes = bytes;
      c.scratch = std::move(*layout);
      c.doubleBuffer = db;
      c.schedule = scheduleTiles(s, th, tn, cores, db);
      c.cost = estimateLayer(target, s, c.schedule, db);
      auto better = [](const TileChoice& a, const TileChoice& b) {
        if (a.cost.total != b.cost.total) return a.cost.total < b.cost.total;
        if (a.doubleBuffer != b.doubleBuffer) return a.doubleBuffer;
        if (a.cores != b.cores) return a.cores > b.cores;
        if (a.schedule.tiles.size() != b.schedule.tiles.size()) return a.schedule.tiles.size() < b.schedule.tiles.size();
        return a.rowTile > b.rowTile;
      };
      if (!best || better(c, *best)) best = std::move(c);
    }
  }
  if (!best) {
    const TileBytes smallest = tileBytes(s, 1, s.channelStep);
    std::string poolNames;
    for (int p : pools) poolNames += (poolNames.empty() ? "'" : ", '") + board.pools[static_cast<size_t>(p)].name + "'";
    whyNot = fmt::format("even the smallest tile (1 row x {} channels: input {} + weights {} + output {} bytes{}{}) does not fit the "
                         "scratch pools {}",
                         s.channelStep, smallest.x, smallest.w, smallest.y, doubleBuffer ? ", twice for double buffering" : "",
                         "", poolNames);
  }
  return best;
}

}  // namespace stowage
