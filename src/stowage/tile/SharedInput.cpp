// One input buffer shared by a layer's cores (see SharedInput.h).
#include "stowage/tile/SharedInput.h"

#include <algorithm>

namespace stowage {

std::optional<TileSchedule> scheduleSharedInput(const LayerShape& s, int64_t rowTile, int64_t channelTile, int cores,
                                                const OperandBuffers& buffers, int loaders) {
  if (cores < 2 || loaders < 1 || loaders > cores) return std::nullopt;
  // Row blocks outer on one core: each row block's channel blocks in a row.
  const TileSchedule one = scheduleTiles(s, rowTile, channelTile, 1, OperandBuffers::uniform(false), TileOrder::RowsOuter);
  std::vector<std::pair<size_t, size_t>> blocks;  // [begin, end) of each row block in `one`
  for (size_t i = 0; i < one.tiles.size(); ++i) {
    const TileDesc& t = one.tiles[i];
    if (i == 0 || t.batch != one.tiles[i - 1].batch || t.firstRow != one.tiles[i - 1].firstRow) blocks.emplace_back(i, i);
    blocks.back().second = i + 1;
  }
  if (blocks.empty()) return std::nullopt;
  const size_t per = blocks.front().second - blocks.front().first;
  const size_t c = static_cast<size_t>(cores);
  if (per < c) return std::nullopt;
  for (const auto& [b, e] : blocks) {
    if (e - b != per) return std::nullopt;
    for (size_t i = b; i < e; ++i)
      if (!(one.tiles[i].x == one.tiles[b].x) || one.tiles[i].x.bytes() == 0) return std::nullopt;
  }
  TileSchedule out;
  out.sharedLoaders = loaders;
  out.tiles.reserve(one.tiles.size());
  out.chunkStart.push_back(0);
  for (size_t k = 0; k < c; ++k) {
    for (const auto& [b, e] : blocks)
      for (size_t i = b + per * k / c; i < b + per * (k + 1) / c; ++i) out.tiles.push_back(one.tiles[i]);
    out.chunkStart.push_back(out.tiles.size());
  }
  assignBufferHalves(out, buffers);
  // The shared input: loaded at each row block's first tile, half row block % 2 (one half: 0).
  for (size_t k = 0; k < c; ++k) {
    int64_t block = -1;
    for (size_t i = out.chunkStart[k]; i < out.chunkStart[k + 1]; ++i) {
      TileDesc& t = out.tiles[i];
      const bool starts = i == out.chunkStart[k] || t.batch != out.tiles[i - 1].batch || t.firstRow != out.tiles[i - 1].firstRow;
      if (starts) ++block;
      t.loadX = starts;
      t.xBuf = buffers.doubled[0] ? static_cast<int>(block % 2) : 0;
    }
  }
  if (rowTile >= s.rows) splitSharedInputEvenly(out, cores);  // the whole input: every core loads an equal part
  return out;
}

void splitSharedInputEvenly(TileSchedule& schedule, int loaders) {
  const size_t parts = static_cast<size_t>(std::max(1, loaders));
  for (TileDesc& t : schedule.tiles) {
    TileCopy& x = t.x;
    const bool contiguous = x.rows == 1 || x.stride == x.rowBytes;
    if (!contiguous || x.rows % parts == 0 || x.bytes() % (parts * 4) != 0) continue;
    const size_t rowBytes = x.bytes() / parts;
    x = TileCopy{x.offset, parts, rowBytes, rowBytes};
  }
}

TileCopy sharedInputPart(const TileCopy& x, int loaders, int core) {
  const size_t n = static_cast<size_t>(std::max(1, loaders)), k = static_cast<size_t>(core);
  const size_t r0 = x.rows * k / n, r1 = x.rows * (k + 1) / n;
  TileCopy part = x;
  part.offset = x.offset + r0 * x.stride;
  part.rows = r1 > r0 ? r1 - r0 : 0;
  return part;
}

namespace {

/// One core's walk over its chunk, paused at each barrier (the estimate runs the cores in lockstep).
struct CoreWalk {
  const Target& target;
  const LayerShape& s;
  const TileSchedule& schedule;
  const OperandBuffers& buffers;
  const CrossLayerWeights& cross;
  LayerCost& cost;
  const std::vector<const TileCopy*>& rowBlockX;  // every row block's input copy, in order
  size_t c = 0, first = 0, end = 0, i = 0;
  int stage = 0;  // at tile i: 0 not begun, 1 before the input's load (after barrier A), 2 after barrier B
  size_t block = 0;
  bool loader = false, twoX = false, weightsSplit = false, prefetched = false;
  CoreQueues q{};  // this core's DMA channels
  uint64_t compute = 0, now = 0;
  uint64_t wReady[2] = {0, 0}, wFreed[2] = {0, 0}, yStored[2] = {0, 0};
  uint64_t lastStore = 0, ownLoads = 0, xEnd = 0;
  bool xPending = false;

  void issueLater(uint64_t at) { q.issueLaterWeights(c, at, cross, cost); }
  void oneLoad(const TileCopy& cp, int buf, uint64_t* ready, uint64_t& queue, uint64_t at) {
    ready[buf] = q.load(dmaCycles(target, cp), at, wFreed[buf], queue);
  }
  /// The weight loads of tile j with two halves (`doubled`) or one (the input is the shared one).
  void issueWeights(size_t j, uint64_t at, bool doubled) {
    const TileDesc& t = schedule.tiles[j];
    if (buffers.doubled[1] != doubled || !t.loadW) return;
    if (prefetched && j == first) {
      wReady[t.wBuf] = c < cross.firstReady.size() ? cross.firstReady[c] : 0;
      return;
    }
    if (weightsSplit) {
      const auto [part, rest] = weightLoadParts(t.w);
      uint64_t partReady[2] = {0, 0}, restReady[2] = {0, 0};
      oneLoad(part, t.wBuf, partReady, q.storeFree, at);
      if (rest.rows > 0) oneLoad(rest, t.wBuf, restReady, q.loadFree, at);
      wReady[t.wBuf] = std::max(partReady[t.wBuf], restReady[t.wBuf]);
      return;
    }
    oneLoad(t.w, t.wBuf, wReady, q.weightsOnStoreChannel ? q.storeFree : q.loadFree, at);
  }
  /// This core's part of row block `b`'s input, on the input channel at `at`.
  void startInput(size_t b, uint64_t at) {
    const TileCopy part = sharedInputPart(*rowBlockX[b], schedule.sharedLoaders, static_cast<int>(c));
    if (part.rows == 0) return;
    xEnd = q.load(dmaCycles(target, part), at, 0, q.loadFree);
    xPending = true;
  }
  void computeAndStore(size_t j) {
    const TileDesc& t = schedule.tiles[j];
    if (j + 1 == end) {
      ownLoads = q.ownInputEnd;
      issueLater(now);
    }
    const uint64_t cyc = tileComputeCycles(target, s, t);
    compute += cyc;
    const uint64_t start = std::max({now, wReady[t.wBuf], yStored[t.yBuf]});
    const uint64_t done = start + cyc;
    now = done;
    wFreed[t.wBuf] = std::max(wFreed[t.wBuf], done);
    if (!t.storeY) return;
    yStored[t.yBuf] = lastStore = q.store(dmaCycles(target, t.y), done);
  }
  /// Runs to the next barrier (true) or to the chunk's end (false).
  bool run() {
    while (i < end) {
      const TileDesc& t = schedule.tiles[i];
      if (stage == 0) {
        if (!t.loadX) {
          issueWeights(i, now, false);
          if (i + 1 < end) issueWeights(i + 1, now, true);
          computeAndStore(i);
          ++i;
          continue;
        }
        if (i == first) issueWeights(i, 0, true);
        stage = 1;
        if (!twoX && block > 0) return true;  // barrier A: every core is done reading the one half
      }
      if (stage == 1) {
        if (loader && (!twoX || block == 0)) startInput(block, now);
        issueWeights(i, now, false);
        if (i + 1 < end) issueWeights(i + 1, now, true);
        if (xPending) now = std::max(now, xEnd);
        xPending = false;
        stage = 2;
        return true;  // barrier B: the input has arrived
      }
      if (twoX && loader && block + 1 < rowBlockX.size()) startInput(block + 1, now);
      ++block;
      computeAndStore(i);
      ++i;
      stage = 0;
    }
    return false;
  }
};

}  // namespace

LayerCost estimateSharedInput(const Target& target, const LayerShape& s, const TileSchedule& schedule, const OperandBuffers& buffers,
                              const CrossLayerWeights& cross) {
  LayerCost cost;
  const size_t chunks = schedule.chunkStart.size() - 1;
  cost.laterReady = laterReadySlots(cross);
  // Every core walks the same row blocks: core 0's list of them.
  std::vector<const TileCopy*> rowBlockX;
  for (size_t i = schedule.chunkStart[0]; i < schedule.chunkStart[1]; ++i)
    if (schedule.tiles[i].loadX) rowBlockX.push_back(&schedule.tiles[i].x);
  std::vector<CoreWalk> walks;
  walks.reserve(chunks);
  const bool sharedChannel = target.dmaChannels < 2;
  for (size_t c = 0; c < chunks; ++c) {
    CoreWalk w{target, s, schedule, buffers, cross, cost, rowBlockX};
    w.c = c;
    w.first = w.i = schedule.chunkStart[c];
    w.end = schedule.chunkStart[c + 1];
    w.loader = static_cast<int>(c) < schedule.sharedLoaders;
    w.twoX = buffers.doubled[0];
    w.q.sharedChannel = sharedChannel;
    w.q.weightsOnStoreChannel = !sharedChannel;
    w.weightsSplit = schedule.weightsSplit && !sharedChannel;
    w.prefetched = static_cast<int>(c) < cross.prefetchedCores;
    if (c < cross.inputBusy.size()) w.q.loadFree = std::max(w.q.loadFree, cross.inputBusy[c]);
    if (sharedChannel) w.q.storeFree = w.q.loadFree;
    if (!sharedChannel && c < cross.weightBusy.size()) w.q.storeFree = std::max(w.q.storeFree, cross.weightBusy[c]);
    if (w.first == w.end) w.issueLater(0);
    walks.push_back(w);
  }
  for (;;) {
    bool any = false;
    uint64_t latest = 0;
    for (CoreWalk& w : walks)
      if (w.run()) {
        any = true;
        latest = std::max(latest, w.now);
      }
    if (!any) break;
    for (CoreWalk& w : walks) w.now = std::max(w.now, latest);
  }
  for (const CoreWalk& w : walks) {
    cost.compute = std::max(cost.compute, w.compute);
    cost.dma = std::max(cost.dma, w.q.dma);
    cost.total = std::max(cost.total, std::max({w.now, w.lastStore, w.ownLoads}));
  }
  return cost;
}

}  // namespace stowage
