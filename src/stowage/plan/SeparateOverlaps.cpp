// Moves overlapping layers' outputs apart from their inputs where that costs no RAM (see SeparateOverlaps.h).
#include "stowage/plan/SeparateOverlaps.h"

#include <algorithm>
#include <vector>

#include "stowage/plan/MemoryPlan.h"

namespace stowage {

namespace {

/// Bytes [begin, end) a root reserves in its slot, counted from the slot's first byte (its bank's start).
struct Reserved {
  size_t begin = 0, end = 0;
};

}  // namespace

int separateNeedlessOverlaps(ProgramPlan& plan, const Board& board, const ReservedAround& reservedAround) {
  auto& bufs = plan.buffers;
  std::vector<int> outputs;
  for (size_t i = 0; i < bufs.size(); ++i)
    if (bufs[i].aliasOf == kNoTensor && bufs[i].overlapsInput != kNoTensor && bufs[i].sizeBytes > 0) outputs.push_back(static_cast<int>(i));
  std::stable_sort(outputs.begin(), outputs.end(), [&](int a, int b) { return bufs[static_cast<size_t>(a)].firstStep < bufs[static_cast<size_t>(b)].firstStep; });

  auto bankStartOf = [&](const PlacedBuffer& b) -> size_t {
    const MemoryPool& pool = board.pools[static_cast<size_t>(b.slot.pool)];
    return pool.banks > 1 ? static_cast<size_t>(b.slot.bank) * pool.bankSizeBytes : 0;
  };
  auto reservedOf = [&](const PlacedBuffer& b) {
    const auto [before, after] = reservedAround(b);
    const size_t start = b.offset - before - bankStartOf(b);
    return Reserved{start, start + alignUp(before + b.sizeBytes + after, std::max<size_t>(1, b.alignment))};
  };

  int moved = 0;
  for (int yi : outputs) {
    PlacedBuffer& y = bufs[static_cast<size_t>(yi)];
    if (y.slot.pool < 0 || static_cast<size_t>(y.slot.pool) >= board.pools.size()) continue;
    const int xi = plan.bufferOf(y.overlapsInput);
    if (xi < 0) continue;
    const PlacedBuffer& x = bufs[static_cast<size_t>(xi)];
    const int xr = x.aliasOf == kNoTensor ? xi : plan.bufferOf(x.aliasOf);
    if (xr < 0 || !(bufs[static_cast<size_t>(xr)].slot == y.slot)) continue;
    const size_t xBegin = bufs[static_cast<size_t>(xr)].offset + (x.aliasOf == kNoTensor ? 0 : x.aliasOffset);
    if (y.offset >= xBegin + x.sizeBytes || xBegin >= y.offset + y.sizeBytes) continue;  // already apart

    // Every other root of the slot: the slot's top, and what is live with y.
    std::vector<Reserved> busy;
    size_t top = 0;
    for (size_t i = 0; i < bufs.size(); ++i) {
      const PlacedBuffer& b = bufs[i];
      if (b.aliasOf != kNoTensor || !(b.slot == y.slot) || b.sizeBytes == 0) continue;
      const Reserved r = reservedOf(b);
      top = std::max(top, r.end);
      if (static_cast<int>(i) != yi && b.firstStep < y.endStep && y.firstStep < b.endStep) busy.push_back(r);
    }
    std::sort(busy.begin(), busy.end(), [](const Reserved& a, const Reserved& b) { return a.begin < b.begin; });
    const Reserved own = reservedOf(y);
    const size_t span = own.end - own.begin, alignment = std::max<size_t>(1, y.alignment);
    size_t at = 0;
    bool found = false;
    for (const Reserved& r : busy) {
      if (alignUp(at, alignment) + span <= r.begin) {
        found = true;
        break;
      }
      at = std::max(at, r.end);
    }
    at = alignUp(at, alignment);
    if (!found && at + span > top) continue;
    y.offset = bankStartOf(y) + at + (y.offset - bankStartOf(y) - own.begin);
    ++moved;
  }
  return moved;
}

}  // namespace stowage
