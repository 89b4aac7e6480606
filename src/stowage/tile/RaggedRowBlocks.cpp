// Ragged row blocks in the tile choice (see RaggedRowBlocks.h).
#include "stowage/tile/RaggedRowBlocks.h"

#include <algorithm>
#include <set>

#include "stowage/tile/CostModel.h"

namespace stowage {

namespace {

bool fitsBuffers(const TileSchedule& sched, const TileBytes& bytes) {
  return std::all_of(sched.tiles.begin(), sched.tiles.end(), [&](const TileDesc& t) {
    return t.x.bytes() <= bytes.x && t.w.bytes() <= bytes.w && t.y.bytes() <= bytes.y;
  });
}

}  // namespace

std::vector<RowBlocks> raggedRowBlockCandidates(int64_t rows, int64_t rowTile, int64_t unit) {
  const int64_t t = std::min(rowTile, rows), u = std::max<int64_t>(1, unit);
  std::set<int64_t> sizes = {0};
  for (int64_t n : {u, 2 * u, 3 * u, t / 4 / u * u, t / 3 / u * u, t / 2 / u * u, t * 2 / 3 / u * u, t * 3 / 4 / u * u})
    if (n >= 1 && n < t) sizes.insert(n);
  std::vector<RowBlocks> out;
  for (int64_t first : sizes)
    for (int64_t last : sizes)
      if ((first > 0 || last > 0) && first + last < rows) {
        out.push_back(RowBlocks{first, last});
        if ((first > 0 && 2 * first < t) || (last > 0 && 2 * last < t)) out.push_back(RowBlocks{first, last, true});
      }
  return out;
}

std::optional<TileChoice> cheapestRaggedVariant(const Target& target, const LayerShape& s, const TileChoice& uniform,
                                                const std::function<void(const TileChoice&)>* observe) {
  std::optional<TileChoice> best;
  for (const RowBlocks& r : raggedRowBlockCandidates(s.rows, uniform.rowTile, s.imageRowPixels)) {
    TileChoice c = uniform;
    c.rowBlocks = r;
    c.schedule = scheduleTiles(s, c.rowTile, c.channelTile, c.cores, c.buffers, c.order, r);
    if (!fitsBuffers(c.schedule, c.bytes)) continue;
    bool contiguous = true;
    for (int op = 0; op < 3; ++op) contiguous = contiguous && (!c.direct.direct[op] || copiesContiguous(c.schedule, op));
    if (!contiguous) continue;
    applyDirectOperands(c.schedule, c.direct);
    c.cost = estimateLayer(target, s, c.schedule, c.buffers);
    splitWeightsWhenFaster(target, s, c);
    if (observe) (*observe)(c);
    if (c.cost.total < uniform.cost.total && (!best || c.cost.total < best->cost.total)) best = std::move(c);
  }
  return best;
}

TileChoice copyWithoutSchedule(TileChoice& c) {
  TileSchedule schedule = std::move(c.schedule);
  c.schedule = {};
  TileChoice copy = c;
  c.schedule = std::move(schedule);
  return copy;
}

void RaggedShortlist::offer(TileChoice& uniform) {
  if (size_ == 0) return;
  if (tilings_.size() == size_ && uniform.cost.total >= tilings_.back().cost.total) return;
  auto at = std::upper_bound(tilings_.begin(), tilings_.end(), uniform.cost.total,
                             [](uint64_t cost, const TileChoice& c) { return cost < c.cost.total; });
  tilings_.insert(at, copyWithoutSchedule(uniform));
  if (tilings_.size() > size_) tilings_.pop_back();
}

}  // namespace stowage
