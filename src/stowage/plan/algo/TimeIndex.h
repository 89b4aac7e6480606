// An index of buffers by lifetime for the placement algorithms: a segment tree over sections that answers
// "which inserted buffers overlap sections [lo, hi)" in time proportional to the answer (times log of the
// section count), so first-fit placement never scans every placed buffer.
#pragma once

#include <cstdint>
#include <vector>

namespace stowage {

class TimeIndex {
 public:
  /// An empty index over sections [0, sections).
  explicit TimeIndex(uint32_t sections);

  /// Adds buffer `id` live over sections [lo, hi) (half-open, lo < hi <= sections).
  void insert(uint32_t id, uint32_t lo, uint32_t hi);

  /// Calls f(id) for every inserted buffer whose sections intersect [lo, hi); an id may be reported more
  /// than once (at most a few times per tree level), so callers deduplicate.
  template <typename F>
  void forEachOverlapping(uint32_t lo, uint32_t hi, F&& f) const {
    if (lo >= hi) return;
    // Nodes inside [lo, hi) that are maximal: report everything touching them.
    for (uint32_t l = lo + leaves_, r = hi + leaves_; l < r; l >>= 1, r >>= 1) {
      if (l & 1) report(touch_[l++], f);
      if (r & 1) report(touch_[--r], f);
    }
    // Ancestors of the two boundary leaves that stick out of [lo, hi): report what covers them whole.
    for (uint32_t leaf : {lo + leaves_, hi - 1 + leaves_})
      for (uint32_t node = leaf; node >= 1; node >>= 1)
        if (!inside(node, lo, hi)) report(cover_[node], f);
  }

 private:
  template <typename F>
  static void report(const std::vector<uint32_t>& ids, F& f) {
    for (uint32_t id : ids) f(id);
  }
  /// True when node's section range lies inside [lo, hi).
  bool inside(uint32_t node, uint32_t lo, uint32_t hi) const;

  uint32_t leaves_ = 1;  ///< number of leaves, a power of two >= sections
  std::vector<std::vector<uint32_t>> cover_;  ///< per node: ids whose range covers the node (canonical nodes)
  std::vector<std::vector<uint32_t>> touch_;  ///< per node: ids whose range intersects the node
};

}  // namespace stowage
