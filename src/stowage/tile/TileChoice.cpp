// Tile choice (see TileChoice.h): every distinct tile count per dimension, fit first, then cost.
#include "stowage/tile/TileChoice.h"

#include <cmath>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "stowage/tile/RaggedRowBlocks.h"
#include "stowage/tile/ScratchLayout.h"
#include "stowage/tile/SharedInput.h"

namespace stowage {

namespace {

/// Core counts the tiler tries every one of (above it, fewer: see coreCountCandidates).
constexpr int kEveryCoreCountUpTo = 8;

/// Uniform tilings that get ragged variants after the search: the cheapest few, and up to kRaggedByFloor more whose
/// floor (raggedVariantFloor) is below the best estimate, lowest floor first; with an observer, the cheapest
/// kObservedRaggedShortlist get variants the observer sees (they do not change the choice).
constexpr size_t kRaggedShortlist = 4;
constexpr size_t kRaggedByFloor = 32;
constexpr size_t kObservedRaggedShortlist = 32;

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

/// The row tiles the search tries for `s` on `cores` cores: every size tileSizes gives, or for a pointwise convolution
/// whose rows are pixels (LayerShape::imageRowPixels) whole image rows (as without that view) and, with
/// `pixelBlocks`, where the image rows do not split evenly over the cores, the blocks that split its pixels evenly
/// into one or two tiles per core, which cut image rows. A search over every pixel count took MobileNetV2 224 on
/// hexagon-vtcm about 4 times as long (36 s, ragged variants in pixels included).
std::vector<int64_t> rowTileSizes(const LayerShape& s, int cores, bool pixelBlocks) {
  if (s.imageRowPixels <= 1) return tileSizes(s.rows, 1, 0);
  std::set<int64_t> v;
  const int64_t w = s.imageRowPixels, imageRows = s.rows / w;
  for (int64_t r : tileSizes(imageRows, 1, 0)) v.insert(r * w);
  if (pixelBlocks)
    for (int64_t k : {int64_t{cores}, int64_t{2} * cores})
      if (k <= s.rows && imageRows % k != 0) v.insert((s.rows + k - 1) / k);
  return {v.rbegin(), v.rend()};  // largest first
}

/// Operands with two halves counted (the tie-break: more overlap for the same estimate).
int doubledCount(const OperandBuffers& b) { return int{b.doubled[0]} + int{b.doubled[1]} + int{b.doubled[2]}; }

/// A lower bound on the estimate of any ragged variant of the uniform tiling `c` (same tiles, rows cut into more
/// blocks): its bounds are at least c's, and its busiest core (or the engine) computes no earlier than one transfer
/// after it starts (the first tile's input or weights, unless both are used in place) and stores for at least one
/// transfer after its last compute (unless the output is used in place). A transfer takes the setup plus at least
/// one cycle.
/// `computeOnly`: the compute part alone (for a schedule whose weight loads may still be split over both channels,
/// which changes its DMA bound).
uint64_t raggedVariantFloor(const Target& target, const LayerShape& s, const TileChoice& c, bool computeOnly = false) {
  const LayerBounds b = layerBounds(target, s, c.schedule);
  const uint64_t transfer = static_cast<uint64_t>(std::ceil(target.dmaSetupCycles)) + 1;
  const uint64_t fill = c.direct.direct[0] && c.direct.direct[1] ? 0 : transfer;
  const uint64_t drain = c.direct.direct[2] ? 0 : transfer;
  return computeOnly ? b.compute + fill + drain : std::max({b.compute + fill + drain, b.dma});
}

}  // namespace

std::vector<int> coreCountCandidates(int cores) {
  std::vector<int> out;
  for (int c = std::max(1, cores); c > kEveryCoreCountUpTo; c = std::min(c - 1, static_cast<int>(c * 0.85))) out.push_back(c);
  for (int c = std::min(std::max(1, cores), kEveryCoreCountUpTo); c >= 1; --c) out.push_back(c);
  return out;
}

OperandBuffers operandBuffersOf(const OffloadedLayer& layer) { return {{layer.doubled[0], layer.doubled[1], layer.doubled[2]}}; }

TileOrder tileOrderOf(const OffloadedLayer& layer) { return layer.rowsOuter ? TileOrder::RowsOuter : TileOrder::ChannelsOuter; }

DirectOperands directOperandsOf(const OffloadedLayer& layer) { return {{layer.direct[0], layer.direct[1], layer.direct[2]}}; }

RowBlocks rowBlocksOf(const OffloadedLayer& layer) { return {layer.firstRows, layer.lastRows, layer.rampRows}; }

std::string tilingText(const OffloadedLayer& layer) {
  const DirectOperands direct = directOperandsOf(layer);
  return operandBuffersText(operandBuffersOf(layer)) + (layer.rowsOuter ? ", row blocks outer" : "") +
         rowBlocksText(rowBlocksOf(layer)) + (direct.any() ? ", " + directOperandsText(direct) + " in place" : "") +
         (layer.weightsSplit ? ", weights on both DMA channels" : "") +
         (layer.sharedInputLoaders == 0 ? std::string()
          : fmt::format(", {}input shared by all cores (loaded by {})", layer.rowsOuter ? "" : "whole ",
                        layer.sharedInputLoaders == 1 ? std::string("core 0") : fmt::format("{} cores", layer.sharedInputLoaders)));
}

void recordEstimate(OffloadedLayer& layer, const LayerCost& cost) {
  layer.computeCycles = cost.compute;
  layer.dmaCycles = cost.dma;
  layer.totalCycles = cost.total;
}

TileSchedule offloadedSchedule(const LayerShape& s, const OffloadedLayer& layer) {
  std::optional<TileSchedule> shared;
  if (layer.sharedInputLoaders > 0)
    shared = scheduleSharedInput(s, layer.rowTile, layer.channelTile, layer.cores, operandBuffersOf(layer), layer.sharedInputLoaders);
  TileSchedule schedule = shared ? std::move(*shared) : scheduleTiles(s, layer.rowTile, layer.channelTile, layer.cores, operandBuffersOf(layer), tileOrderOf(layer),
                                       rowBlocksOf(layer));
  applyDirectOperands(schedule, directOperandsOf(layer));
  if (layer.weightsSplit) splitWeightLoads(schedule);
  return schedule;
}

uint64_t storeCyclesAtLeast(const Target& target, const LayerShape& s, int64_t rowTile, int64_t channelTile, int cores) {
  const int64_t tiles = s.batches * ((s.rows + rowTile - 1) / rowTile) * ((s.channels + channelTile - 1) / channelTile);
  const double bytes = static_cast<double>(s.batches * s.rows * s.rowPixels * s.channels) * static_cast<double>(s.outElemBytes);
  const double bpc = target.dmaBytesPerCycle > 0 ? target.dmaBytesPerCycle : 1.0;
  const double all = static_cast<double>(tiles) * std::ceil(target.dmaSetupCycles) + std::floor(bytes / bpc);
  return static_cast<uint64_t>(std::floor(all / static_cast<double>(std::max(1, cores))));
}

void splitWeightsWhenFaster(const Target& target, const LayerShape& s, TileChoice& c) {
  if (target.engineDim > 0 || target.dmaChannels < 2 || c.direct.direct[1]) return;
  // The flag is all the estimate needs (weightLoadParts splits one-row copies itself): no copy of the schedule.
  c.schedule.weightsSplit = true;
  LayerCost cost = estimateLayer(target, s, c.schedule, c.buffers);
  if (cost.total >= c.cost.total) {
    c.schedule.weightsSplit = false;
    return;
  }
  splitWeightLoads(c.schedule);  // the copies as the emitter issues them
  c.cost = std::move(cost);
}

std::optional<TileChoice> chooseTiles(const Board& board, int targetIndex, const LayerShape& s, const std::vector<int>& pools, int step,
                                      bool doubleBuffer, std::string& whyNot, const ResidentOperands& resident,
                                      const TileSearchObserver* observer, bool sharedInput, bool sharedWholeInput) {
  const Target& target = board.targets[static_cast<size_t>(targetIndex)];
  if (observer && observer->begin) observer->begin(step);
  const std::function<void(const TileChoice&)> observe = [&](const TileChoice& c) {
    if (observer && observer->candidate) observer->candidate(step, target, s, c);
  };
  const bool engine = target.engineDim > 0;
  // Cores mode may use fewer cores than the target has when their tiles do not fit (or it is cheaper), e.g. 6 of 8
  // cores may fit double-buffered tiles where 8 fit only single-buffered ones (coreCountCandidates).
  const std::vector<int> coreCounts = engine ? std::vector<int>{1} : coreCountCandidates(target.cores);
  // Double buffering when asked, unless one buffer per tile is cheaper (e.g. it lets more cores' tiles fit), for
  // every operand or for the big one only: one input half (x loaded once per row block with the rows-outer order)
  // or one weight half (w once per channel block), the other operands still overlapping their transfers.
  std::vector<OperandBuffers> buffering = {OperandBuffers::uniform(doubleBuffer)};
  if (doubleBuffer) {
    buffering.push_back(OperandBuffers::uniform(false));
    buffering.push_back({{false, true, true}});
    buffering.push_back({{true, false, true}});
  }
  const int64_t totalMacs = s.batches * s.rows * s.rowPixels * s.channels * s.reduction;
  std::optional<TileChoice> best;
  auto better = [](const TileChoice& a, const TileChoice& b) {
    if (a.cost.total != b.cost.total) return a.cost.total < b.cost.total;
    if (a.schedule.sharedLoaders != b.schedule.sharedLoaders) return a.schedule.sharedLoaders < b.schedule.sharedLoaders;
    if (a.direct.any() != b.direct.any()) return a.direct.any();
    if (a.doubleBuffer != b.doubleBuffer) return a.doubleBuffer;
    if (doubledCount(a.buffers) != doubledCount(b.buffers)) return doubledCount(a.buffers) > doubledCount(b.buffers);
    if (a.order != b.order) return a.order == TileOrder::ChannelsOuter;
    if (a.cores != b.cores) return a.cores > b.cores;
    if (a.schedule.tiles.size() != b.schedule.tiles.size()) return a.schedule.tiles.size() < b.schedule.tiles.size();
    if (a.rowBlocks.uniform() != b.rowBlocks.uniform()) return a.rowBlocks.uniform();
    return a.rowTile > b.rowTile;
  };
  // Ragged variants (smaller first / last row blocks) after the search: of the cheapest uniform tilings, and of the
  // tilings whose floor is lowest (few large tiles: slow uniform, as their first load and last store are long, but
  // the ones ragged blocks gain most on), while the floor is below the best estimate so far.
  RaggedShortlist shortlist(kRaggedShortlist);
  std::vector<std::pair<uint64_t, TileChoice>> raggedBases;  // (floor, uniform tiling without its schedule)
  RaggedShortlist observedShortlist(observer ? kObservedRaggedShortlist : 0);
  std::map<std::pair<int64_t, int64_t>, TileBytes> bytesOfSize;  // tileBytes by (row tile, channel tile)
  for (const OperandBuffers& buffers : buffering)
  for (TileOrder order : {TileOrder::ChannelsOuter, TileOrder::RowsOuter})
  for (int cores : coreCounts)
  for (int64_t tn : tileSizes(s.channels, s.channelStep, engine ? target.engineDim : 0)) {
    // Blocks that cut image rows share the pixels evenly over every core (cores mode) where the input or output is
    // used in place, so that channel blocks (not contiguous in NHWC) cannot be: without an operand in place a channel
    // split moves its tiles by 2-D copies and shares the cores as well.
    const bool pixelBlocks = !engine && cores == target.cores && (resident.resident.direct[0] || resident.resident.direct[2]);
    for (int64_t th : rowTileSizes(s, cores, pixelBlocks)) {
      // With one row block or one channel block both orders are the same.
      if (order == TileOrder::RowsOuter && (th >= s.rows || tn >= s.channels)) continue;
      // One row block of several channel blocks: the cores may still share it, the whole input loaded once.
      const bool wholeInput = th >= s.rows && tn < s.channels;
      // Cores: the busiest core computes at least its share of every MAC, so a tiling on too few cores to beat
      // the best so far needs no schedule.
      bool slower = !engine && best && coreComputeCycles(target.macsPerCycle * cores, totalMacs) > best->cost.total + 1;
      // Every tile stores its output block once, one after the other on its core's store queue, so the busiest
      // core's stores take at least the average: a tiling whose stores alone are slower than the best so far (many
      // small tiles under a large DMA setup) needs no schedule either. Not when the output may be used in place.
      const uint64_t storesAtLeast = resident.resident.direct[2] ? 0 : storeCyclesAtLeast(target, s, th, tn, cores);
      slower = slower || (best && storesAtLeast > best->cost.total);
      if (slower && !observer) continue;
      const bool db = buffers.all();
      // The same sizes come round once per buffering, order and core count: their bytes are measured once.
      auto [sized, fresh] = bytesOfSize.try_emplace({th, tn});
      if (fresh) sized->second = tileBytes(s, th, tn);
      const TileBytes bytes = sized->second;
      std::optional<std::optional<TileSchedule>> sharedTiles;  // scheduleSharedInput's tiles, once built
      // `loaders` 0: each core loads its own input tiles; else the cores share one input buffer that `loaders` of them
      // fill (tile/SharedInput.h).
      auto consider = [&](int loaders) {
        // Every core needs a channel block of each row block. The busiest core computes ceil(B / cores) of the B
        // channel blocks of every row block (all full but perhaps the layer's last), after the first input arrives (a
        // transfer): a shared tiling that cannot beat the best so far that way needs no schedule.
        const int64_t channelBlocks = (s.channels + tn - 1) / tn;
        if (loaders > 0 && channelBlocks < cores) return;
        // The whole input is loaded once: a second half of it would never be used.
        if (loaders > 0 && wholeInput && s.batches == 1 && buffers.doubled[0]) return;
        if (loaders > 0 && best && !observer) {
          const int64_t busiest = ((channelBlocks + cores - 1) / cores - 1) * tn + (s.channels - (channelBlocks - 1) * tn);
          const uint64_t floor = coreComputeCycles(target.macsPerCycle, s.batches * s.rows * s.rowPixels * busiest * s.reduction) +
                                 static_cast<uint64_t>(std::ceil(target.dmaSetupCycles)) + 1;
          if (floor > best->cost.total) return;
        }
        auto build = [&]() -> std::optional<TileSchedule> {
          if (loaders == 0) return scheduleTiles(s, th, tn, cores, buffers, order);
          // The same tiles whoever loads the input: built once for both loader counts.
          if (!sharedTiles) sharedTiles = scheduleSharedInput(s, th, tn, cores, buffers, 1);
          if (!*sharedTiles) return std::nullopt;
          TileSchedule copy = **sharedTiles;
          copy.sharedLoaders = loaders;
          return copy;
        };
        std::optional<TileSchedule> schedule;
        // Resident operands whose every tile copy is contiguous are used in place: no buffer, no DMA.
        DirectOperands direct;
        if (resident.resident.any()) {
          schedule = build();
          if (!schedule) return;
          for (int op = 0; op < 3; ++op) direct.direct[op] = resident.resident.direct[op] && copiesContiguous(*schedule, op);
          if (loaders > 0 && direct.direct[0]) return;  // an input in place needs no shared buffer
          applyDirectOperands(*schedule, direct);
        }
        ScratchNeed need;
        need.bytes[0] = direct.direct[0] ? 0 : bytes.x;
        need.bytes[1] = direct.direct[1] ? 0 : bytes.w;
        need.bytes[2] = direct.direct[2] ? 0 : bytes.y;
        need.reservedBytes = resident.reservedBytes;
        need.doubleBuffer = !buffers.none();
        for (int op = 0; op < 3; ++op) need.singleBuffered[op] = !buffers.doubled[op];
        need.cores = cores;
        need.sharedX = loaders > 0;
        TileChoice c;
        auto layout = layoutScratch(board, pools, need, step, c.coreStride);
        if (!layout) return;
        c.rowTile = th;
        c.cores = cores;
        c.channelTile = tn;
        c.bytes = bytes;
        c.scratch = std::move(*layout);
        c.doubleBuffer = db;
        c.buffers = buffers;
        c.order = order;
        c.direct = direct;
        if (!schedule) schedule = build();
        if (!schedule) return;
        c.schedule = std::move(*schedule);
        // A tiling whose floor (its own, or with the weight loads split over both channels: the compute part alone)
        // is above the best estimate so far cannot win, nor can its ragged variants: no estimate.
        if (best && !observer) {
          const bool maySplit = target.engineDim == 0 && target.dmaChannels >= 2 && !c.direct.direct[1];
          if (raggedVariantFloor(target, s, c, maySplit) > best->cost.total) return;
        }
        c.cost = estimateLayer(target, s, c.schedule, buffers);
        splitWeightsWhenFaster(target, s, c);
        if (observer) {
          observe(c);
          if (loaders == 0) observedShortlist.offer(c);
        }
        if (slower) return;  // seen by the observer only
        // Ragged variants are per-core walks (tile/RaggedRowBlocks.h): not of a shared input.
        if (loaders == 0) {
          shortlist.offer(c);
          // A tiling whose floor is not below its own estimate has no faster variant.
          if (const uint64_t floor = raggedVariantFloor(target, s, c); floor < c.cost.total) raggedBases.emplace_back(floor, copyWithoutSchedule(c));
        }
        if (!best || better(c, *best)) best = std::move(c);
      };
      consider(0);
      // Rows outer, the cores may share each row block's input: loaded by core 0, or split over every core's DMA; with
      // one row block (either order: the same tiles), its whole input.
      const bool shareable = order == TileOrder::RowsOuter || (sharedWholeInput && wholeInput);
      if (sharedInput && !engine && cores > 1 && shareable && !resident.resident.direct[0]) {
        consider(1);
        consider(cores);
      }
    }
  }
  auto tryVariants = [&](const TileChoice& uniform) {
    if (auto ragged = cheapestRaggedVariant(target, s, uniform, observer ? &observe : nullptr); ragged && better(*ragged, *best))
      best = std::move(*ragged);
  };
  for (const TileChoice& uniform : shortlist.tilings()) tryVariants(uniform);
  std::stable_sort(raggedBases.begin(), raggedBases.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < raggedBases.size() && i < kRaggedByFloor && raggedBases[i].first < best->cost.total; ++i)
    tryVariants(raggedBases[i].second);
  for (const TileChoice& uniform : observedShortlist.tilings()) cheapestRaggedVariant(target, s, uniform, &observe);
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
