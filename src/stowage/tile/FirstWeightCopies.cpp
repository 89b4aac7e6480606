// The first weight tiles of a layer's core chunks (see FirstWeightCopies.h).
#include "stowage/tile/FirstWeightCopies.h"

#include <algorithm>

namespace stowage {

std::vector<TileCopy> firstWeightCopies(const TileSchedule& schedule, int n) {
  std::vector<TileCopy> out(static_cast<size_t>(std::max(0, n)));
  for (size_t c = 0; c < out.size() && c + 1 < schedule.chunkStart.size(); ++c) {
    const size_t i = schedule.chunkStart[c];
    if (i < schedule.chunkStart[c + 1] && schedule.tiles[i].loadW) out[c] = schedule.tiles[i].w;
  }
  return out;
}

std::vector<uint64_t> firstWeightTransferCycles(const Target& target, const TileSchedule& schedule, int n) {
  std::vector<uint64_t> out;
  for (const TileCopy& w : firstWeightCopies(schedule, n)) out.push_back(dmaCycles(target, w));
  return out;
}

std::optional<TileCopy> onceWeightCopy(const TileSchedule& schedule, int n, size_t coreStride) {
  if (n < 2 || coreStride == 0) return std::nullopt;
  const std::vector<TileCopy> copies = firstWeightCopies(schedule, n);
  const TileCopy& w0 = copies.front();
  const size_t bytes = w0.bytes();
  if (bytes == 0 || bytes > coreStride || copies[1].offset < w0.offset) return std::nullopt;
  const size_t spacing = copies[1].offset - w0.offset;
  for (size_t c = 0; c < copies.size(); ++c) {
    const TileCopy& w = copies[c];
    const bool contiguous = w.rows == 1 || w.stride == w.rowBytes;
    if (w.rows == 0 || !contiguous || w.bytes() != bytes || w.offset != w0.offset + c * spacing) return std::nullopt;
  }
  // Shared: core 0's region of half 0 holds the block until every core's first tile has read it, and no core's later
  // tile expects the block in its own half 0 without loading it.
  bool shared = spacing == 0;
  for (size_t c = 0; shared && c < copies.size(); ++c) {
    const size_t first = schedule.chunkStart[c];
    if (schedule.tiles[first].wBuf != 0) shared = false;
    for (size_t i = first + 1; shared && i < schedule.chunkStart[c + 1]; ++i) {
      const TileDesc& t = schedule.tiles[i];
      if (t.wBuf == 0 && (c == 0 ? t.loadW : !t.loadW)) shared = false;
    }
  }
  if (shared) return TileCopy{w0.offset, 1, bytes, bytes};
  return TileCopy{w0.offset, copies.size(), bytes, spacing};
}

std::vector<uint64_t> receiverTransferCycles(const Target& target, const TileSchedule& schedule, const OffloadedLayer& receiver) {
  const int n = receiver.weightsPrefetchedCores;
  if (receiver.weightsOnceCore < 0 || receiver.weightsOnceCore >= n) return firstWeightTransferCycles(target, schedule, n);
  std::vector<uint64_t> out(static_cast<size_t>(n), 0);
  if (const auto once = onceWeightCopy(schedule, n, receiver.coreStride[1])) out[static_cast<size_t>(receiver.weightsOnceCore)] = dmaCycles(target, *once);
  return out;
}

}  // namespace stowage
