// First-fit placement, the engine of the greedy algorithms and hill-climb: buffers are taken in a given
// order and each goes to the lowest offset (aligned) that is free of every earlier-placed buffer whose
// lifetime overlaps (an allowed overlap of a layer's output on its input narrows that). Also the conflict
// counts the greedy orders are built from.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "stowage/plan/algo/OffsetProblem.h"
#include "stowage/plan/algo/TimeIndex.h"

namespace stowage {

/// Per buffer, how many other non-zero-size buffers have an overlapping lifetime (0 for zero-size ones).
/// O(n log n).
std::vector<size_t> conflictCounts(const OffsetProblem& p);

/// Places buffers in a given order, reusable across many orders (hill-climb). Small instances use a
/// precomputed conflict list; large ones a TimeIndex, so memory stays O(n log n).
class FirstFitPlacer {
 public:
  /// Conflict lists are used when they would hold at most `maxListEntries` entries (4 bytes each).
  explicit FirstFitPlacer(const OffsetProblem& p, size_t maxListEntries = kDefaultMaxListEntries);
  static constexpr size_t kDefaultMaxListEntries = size_t{1} << 23;

  /// Fills `offsets` (resized to p.count(); buffers not in `order` and zero-size ones get 0) and returns the
  /// peak in bytes. Stops early and returns max() once some buffer would end above `abortAbove` bytes.
  size_t place(const std::vector<uint32_t>& order, std::vector<size_t>& offsets,
               size_t abortAbove = std::numeric_limits<size_t>::max());

 private:
  size_t placeOne(uint32_t i, const std::vector<size_t>& offsets);
  /// Adds what placed buffer j forbids to buffer i (forbiddenRange) to busy_.
  void addBusy(uint32_t i, uint32_t j, size_t offsetJ);

  const OffsetProblem& p_;
  bool useLists_ = false;
  std::vector<uint32_t> adjStart_, adj_;  ///< conflict lists (CSR) when useLists_
  std::vector<uint32_t> placedStamp_;     ///< == round_ when a buffer is placed in this round
  std::vector<uint32_t> seenStamp_;       ///< dedup of TimeIndex reports
  uint32_t round_ = 0, seen_ = 0;
  std::optional<TimeIndex> index_;        ///< placed buffers by lifetime when !useLists_
  std::vector<std::pair<size_t, size_t>> busy_;  ///< scratch: [offset, end) of conflicting placed buffers
};

}  // namespace stowage
