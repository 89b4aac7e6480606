// First-fit placement and conflict counts (see FirstFit.h).
#include "stowage/plan/algo/FirstFit.h"

#include <algorithm>

namespace stowage {

std::vector<size_t> conflictCounts(const OffsetProblem& p) {
  std::vector<uint32_t> firsts, ends;
  for (uint32_t i : p.active) {
    firsts.push_back(p.first[i]);
    ends.push_back(p.end[i]);
  }
  std::sort(firsts.begin(), firsts.end());
  std::sort(ends.begin(), ends.end());
  std::vector<size_t> counts(p.count(), 0);
  for (uint32_t i : p.active) {
    // j overlaps i when first[j] < end[i] and end[j] > first[i]; every j with end[j] <= first[i] also has
    // first[j] < end[i], so the second count is a subset of the first. Minus one for i itself.
    size_t startsBefore = static_cast<size_t>(std::lower_bound(firsts.begin(), firsts.end(), p.end[i]) - firsts.begin());
    size_t endedBefore = static_cast<size_t>(std::upper_bound(ends.begin(), ends.end(), p.first[i]) - ends.begin());
    counts[i] = startsBefore - endedBefore - 1;
  }
  return counts;
}

FirstFitPlacer::FirstFitPlacer(const OffsetProblem& p, size_t maxListEntries) : p_(p) {
  placedStamp_.assign(p.count(), 0);
  std::vector<size_t> counts = conflictCounts(p);
  size_t total = 0;
  for (size_t c : counts) total += c;
  useLists_ = total <= maxListEntries;
  if (!useLists_) return;
  adjStart_.assign(p.count() + 1, 0);
  for (size_t i = 0; i < p.count(); ++i) adjStart_[i + 1] = adjStart_[i] + static_cast<uint32_t>(counts[i]);
  adj_.resize(total);
  std::vector<uint32_t> fill(adjStart_.begin(), adjStart_.end() - 1);
  std::vector<uint32_t> byFirst = p.active;
  std::sort(byFirst.begin(), byFirst.end(), [&](uint32_t a, uint32_t b) {
    return p.first[a] != p.first[b] ? p.first[a] < p.first[b] : a < b;
  });
  // Sorted by start: i overlaps exactly the later j that start before i ends.
  for (size_t x = 0; x < byFirst.size(); ++x) {
    const uint32_t i = byFirst[x];
    for (size_t y = x + 1; y < byFirst.size() && p.first[byFirst[y]] < p.end[i]; ++y) {
      const uint32_t j = byFirst[y];
      adj_[fill[i]++] = j;
      adj_[fill[j]++] = i;
    }
  }
  // Deterministic neighbour order regardless of the sweep.
  for (size_t i = 0; i < p.count(); ++i) std::sort(adj_.begin() + adjStart_[i], adj_.begin() + adjStart_[i + 1]);
}

void FirstFitPlacer::addBusy(uint32_t i, uint32_t j, size_t offsetJ) {
  if (!p_.hasOverlaps) {
    busy_.emplace_back(offsetJ, offsetJ + p_.size[j]);
    return;
  }
  // Offsets strictly between start - size and end are forbidden; start may exceed end (an overlap leaves a narrow
  // forbidden range), which the sweep in placeOne handles like any other entry.
  auto [start, end] = forbiddenRange(p_, i, j, offsetJ);
  if (end - (start - static_cast<int64_t>(p_.size[i])) <= 1 || end <= 0) return;
  busy_.emplace_back(static_cast<size_t>(std::max<int64_t>(start, 0)), static_cast<size_t>(end));
}

size_t FirstFitPlacer::placeOne(uint32_t i, const std::vector<size_t>& offsets) {
  const size_t size = p_.size[i], align = p_.alignment[i];
  busy_.clear();
  if (useLists_) {
    for (uint32_t k = adjStart_[i]; k < adjStart_[i + 1]; ++k) {
      const uint32_t j = adj_[k];
      if (placedStamp_[j] == round_) addBusy(i, j, offsets[j]);
    }
  } else {
    ++seen_;
    if (seen_ == 0) {
      std::fill(seenStamp_.begin(), seenStamp_.end(), 0);
      seen_ = 1;
    }
    seenStamp_.resize(p_.count(), 0);
    index_->forEachOverlapping(p_.first[i], p_.end[i], [&](uint32_t j) {
      if (seenStamp_[j] == seen_) return;
      seenStamp_[j] = seen_;
      addBusy(i, j, offsets[j]);
    });
  }
  std::sort(busy_.begin(), busy_.end());
  size_t offset = 0;
  for (const auto& [start, end] : busy_) {
    if (offset + size <= start) break;
    offset = std::max(offset, (end + align - 1) / align * align);
  }
  return offset;
}

size_t FirstFitPlacer::place(const std::vector<uint32_t>& order, std::vector<size_t>& offsets, size_t abortAbove) {
  offsets.assign(p_.count(), 0);
  ++round_;
  if (round_ == 0) {
    std::fill(placedStamp_.begin(), placedStamp_.end(), 0);
    round_ = 1;
  }
  if (!useLists_) index_.emplace(p_.sections);
  size_t peak = 0;
  for (uint32_t i : order) {
    if (p_.size[i] == 0) continue;
    const size_t offset = placeOne(i, offsets);
    offsets[i] = offset;
    peak = std::max(peak, offset + p_.size[i]);
    if (peak > abortAbove) return std::numeric_limits<size_t>::max();
    placedStamp_[i] = round_;
    if (!useLists_) index_->insert(i, p_.first[i], p_.end[i]);
  }
  return peak;
}

}  // namespace stowage
