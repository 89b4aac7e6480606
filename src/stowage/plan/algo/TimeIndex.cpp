// Segment tree of buffer lifetimes (see TimeIndex.h).
#include "stowage/plan/algo/TimeIndex.h"

#include <algorithm>
#include <bit>

namespace stowage {

TimeIndex::TimeIndex(uint32_t sections) {
  leaves_ = std::bit_ceil(std::max<uint32_t>(sections, 1));
  cover_.resize(2 * static_cast<size_t>(leaves_));
  touch_.resize(2 * static_cast<size_t>(leaves_));
}

bool TimeIndex::inside(uint32_t node, uint32_t lo, uint32_t hi) const {
  const int level = std::bit_width(node) - 1;  // root is level 0
  const uint32_t width = leaves_ >> level;
  const uint32_t start = (node - (1u << level)) * width;
  return lo <= start && start + width <= hi;
}

void TimeIndex::insert(uint32_t id, uint32_t lo, uint32_t hi) {
  if (lo >= hi) return;
  for (uint32_t l = lo + leaves_, r = hi + leaves_; l < r; l >>= 1, r >>= 1) {
    if (l & 1) {
      cover_[l].push_back(id);
      touch_[l++].push_back(id);
    }
    if (r & 1) {
      cover_[--r].push_back(id);
      touch_[r].push_back(id);
    }
  }
  // Every strict ancestor of a canonical node lies on the path of one of the two boundary leaves; nodes on
  // those paths all intersect [lo, hi), so listing the id there is always correct.
  const uint32_t a = lo + leaves_, b = hi - 1 + leaves_;
  for (uint32_t node = a >> 1; node >= 1; node >>= 1) touch_[node].push_back(id);
  for (uint32_t node = b >> 1, stop = a >> 1; node >= 1; node >>= 1, stop >>= 1) {
    if (node == stop) break;  // the paths have joined: already listed
    touch_[node].push_back(id);
  }
}

}  // namespace stowage
