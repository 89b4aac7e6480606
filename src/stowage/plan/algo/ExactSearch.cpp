// Branch-and-bound offset search (see ExactSearch.h).
//
// Canonical solutions: any valid plan can be turned, without raising its peak, into one where sorting the
// buffers by offset and placing each at the lowest aligned offset above the buffers placed before it (with
// overlapping lifetimes) reproduces every offset. So the search places buffers in non-decreasing offset
// order; a section's "floor" is the top of the highest buffer placed over it, and a buffer's candidate
// offset is its sections' highest floor, aligned up. At each node the level m is the lowest candidate
// offset, and one section whose lowest reachable offset is m is in focus: exactly one unplaced buffer over
// it will sit lowest there, so the branches are "candidate c (over the focus, candidate offset m) sits at
// m", one per candidate, and a last branch "none of them sits at m" (a gap). A buffer tried and backtracked
// is blocked at m: it cannot sit at m until a later placement raises its floor. Pruning: in every section the unplaced
// buffers over it all conflict, so they need their summed size above the lowest offset any of them can
// still take; a blocked buffer can take no offset <= its block level. Identical buffers (same size,
// alignment and lifetime) are branched on once.
#include "stowage/plan/algo/ExactSearch.h"

#include <algorithm>
#include <limits>

#include "stowage/plan/algo/GreedyConflicts.h"
#include "stowage/plan/algo/GreedySize.h"

namespace stowage {

namespace {

constexpr size_t kNone = std::numeric_limits<size_t>::max();

size_t alignUpTo(size_t v, size_t a) { return (v + a - 1) / a * a; }

enum class Outcome { Found, Infeasible, TimedOut };

/// One feasibility search at a fixed capacity over the non-zero-size buffers.
class Search {
 public:
  Search(const OffsetProblem& p) : p_(p) {
    m_ = p.active.size();
    for (uint32_t i : p.active) {
      size_.push_back(p.size[i]);
      align_.push_back(p.alignment[i]);
      first_.push_back(p.first[i]);
      end_.push_back(p.end[i]);
    }
  }

  /// One complete search at `capacity` with value ordering `order` (0..kOrders-1), stopped by `deadline`.
  Outcome run(size_t capacity, int order, const Deadline& deadline, std::vector<size_t>& offsets, size_t& nodes) {
    cap_ = capacity;
    order_ = order;
    deadline_ = &deadline;
    floor_.assign(p_.sections, 0);
    remaining_.assign(p_.sections, 0);
    for (size_t b = 0; b < m_; ++b)
      for (uint32_t s = first_[b]; s < end_[b]; ++s) remaining_[s] += size_[b];
    placed_.assign(m_, 0);
    offset_.assign(m_, 0);
    block_.assign(m_, kNone);
    cand_.assign(m_, 0);
    lowest_.assign(p_.sections, kNone);
    floorTrail_.clear();
    blockTrail_.clear();
    frames_.clear();
    placedCount_ = 0;
    nodes_ = &nodes;

    if (m_ == 0) return finish(offsets);
    Frame root;
    if (!evaluate(0, root)) return Outcome::Infeasible;
    frames_.push_back(std::move(root));
    while (!frames_.empty()) {
      if (deadline_->expired()) return Outcome::TimedOut;
      Frame& f = frames_.back();
      if (f.placed != kNone) {  // back from the branch "f.placed is next at f.level": block it
        unplace(f.placed);
        blockAt(f.placed, f.level);
        f.placed = kNone;
      }
      if (f.next < f.cands.size()) {
        const uint32_t c = f.cands[f.next++];
        if (f.next >= 2 && identical(c, f.cands[f.next - 2])) {  // symmetric to the sibling just tried
          blockAt(c, f.level);
          continue;
        }
        place(c, f.level);
        f.placed = c;
        if (placedCount_ == m_) return finish(offsets);
        Frame child;
        const size_t level = f.level;
        if (evaluate(level, child)) frames_.push_back(std::move(child));
        continue;
      }
      if (!f.gapTried) {  // last branch: none of the candidates sits at this level
        f.gapTried = true;
        Frame child;
        const size_t level = f.level;
        if (evaluate(level, child)) frames_.push_back(std::move(child));
        continue;
      }
      undoBlocks(f.blockMark);
      frames_.pop_back();
    }
    return Outcome::Infeasible;
  }

 private:
  struct Frame {
    size_t level = 0;              ///< the offset every candidate would take
    std::vector<uint32_t> cands;   ///< buffers whose candidate offset is `level`, in branching order
    size_t next = 0;               ///< next candidate to branch on
    size_t placed = kNone;         ///< the candidate placed in the current branch
    bool gapTried = false;
    size_t blockMark = 0;          ///< blockTrail_ size when the frame was made
  };

  Outcome finish(std::vector<size_t>& offsets) {
    offsets.assign(p_.count(), 0);
    for (size_t b = 0; b < m_; ++b) offsets[p_.active[b]] = offset_[b];
    return Outcome::Found;
  }

  bool identical(uint32_t a, uint32_t b) const {
    return size_[a] == size_[b] && align_[a] == align_[b] && first_[a] == first_[b] && end_[a] == end_[b];
  }

  void place(uint32_t b, size_t level) {
    placed_[b] = 1;
    offset_[b] = level;
    ++placedCount_;
    const size_t top = level + size_[b];
    for (uint32_t s = first_[b]; s < end_[b]; ++s) {
      floorTrail_.push_back(floor_[s]);
      floor_[s] = top;
      remaining_[s] -= size_[b];
    }
  }

  void unplace(uint32_t b) {
    placed_[b] = 0;
    --placedCount_;
    for (uint32_t s = end_[b]; s-- > first_[b];) {
      floor_[s] = floorTrail_.back();
      floorTrail_.pop_back();
      remaining_[s] += size_[b];
    }
  }

  void blockAt(uint32_t b, size_t level) {
    blockTrail_.emplace_back(b, block_[b]);
    block_[b] = level;
  }

  void undoBlocks(size_t mark) {
    while (blockTrail_.size() > mark) {
      block_[blockTrail_.back().first] = blockTrail_.back().second;
      blockTrail_.pop_back();
    }
  }

  /// Fills `f` for the current state (placements at or above `minLevel` only); false when the state cannot
  /// be completed within the capacity.
  bool evaluate(size_t minLevel, Frame& f) {
    ++*nodes_;
    f.blockMark = blockTrail_.size();
    size_t level = kNone;
    bool anyEligible = false;
    for (size_t b = 0; b < m_; ++b) {
      if (placed_[b]) continue;
      size_t top = 0;
      for (uint32_t s = first_[b]; s < end_[b]; ++s) top = std::max(top, floor_[s]);
      const size_t o = alignUpTo(top, align_[b]);
      cand_[b] = o;
      if (block_[b] != kNone && o <= block_[b]) continue;  // blocked: needs its floor raised first
      anyEligible = true;
      level = std::min(level, o);
    }
    if (!anyEligible) return false;
    level = std::max(level, minLevel);
    std::fill(lowest_.begin(), lowest_.end(), kNone);
    for (size_t b = 0; b < m_; ++b) {
      if (placed_[b]) continue;
      size_t eff = std::max(cand_[b], alignUpTo(level, align_[b]));
      // A blocked buffer waits for a later placement (at the level or above) to raise its floor.
      if (block_[b] != kNone && cand_[b] <= block_[b])
        eff = std::max(eff, alignUpTo(std::max(block_[b], level) + 1, align_[b]));
      if (eff > cap_ || size_[b] > cap_ - eff) return false;
      for (uint32_t s = first_[b]; s < end_[b]; ++s) lowest_[s] = std::min(lowest_[s], eff);
    }
    for (uint32_t s = 0; s < p_.sections; ++s)
      if (remaining_[s] > 0 && (lowest_[s] > cap_ || remaining_[s] > cap_ - lowest_[s])) return false;
    // Branch at the section whose lowest reachable offset is the level and whose slack is smallest (leftmost
    // on ties): exactly one of the buffers over it sits lowest there, either at the level or above a gap.
    uint32_t focus = p_.sections;
    size_t focusSlack = kNone;
    for (uint32_t s = 0; s < p_.sections; ++s) {
      if (remaining_[s] == 0 || lowest_[s] != level) continue;
      const size_t slack = cap_ - lowest_[s] - remaining_[s];
      if (slack < focusSlack) focus = s, focusSlack = slack;
    }
    if (focus == p_.sections) return false;
    f.level = level;
    f.cands.clear();
    for (size_t b = 0; b < m_; ++b)
      if (!placed_[b] && cand_[b] == level && !(block_[b] != kNone && cand_[b] <= block_[b]) && first_[b] <= focus &&
          focus < end_[b])
        f.cands.push_back(static_cast<uint32_t>(b));
    if (f.cands.empty()) return false;  // only when minLevel is above every candidate: nothing to branch on
    // Value ordering by order_ (0: long lifetimes first, 1: large sizes, 2: large areas, 3: late ends), then
    // long lifetimes, large sizes; identical buffers end up adjacent.
    std::sort(f.cands.begin(), f.cands.end(), [&](uint32_t a, uint32_t b) {
      const uint64_t la = end_[a] - first_[a], lb = end_[b] - first_[b];
      if (order_ == 1 && size_[a] != size_[b]) return size_[a] > size_[b];
      if (order_ == 2 && la * size_[a] != lb * size_[b]) return la * size_[a] > lb * size_[b];
      if (order_ == 3 && end_[a] != end_[b]) return end_[a] > end_[b];
      if (la != lb) return la > lb;
      if (size_[a] != size_[b]) return size_[a] > size_[b];
      if (first_[a] != first_[b]) return first_[a] < first_[b];
      if (align_[a] != align_[b]) return align_[a] > align_[b];
      return a < b;
    });
    return true;
  }

  const OffsetProblem& p_;
  const Deadline* deadline_ = nullptr;
  int order_ = 0;
  size_t m_ = 0, cap_ = 0, placedCount_ = 0;
  size_t* nodes_ = nullptr;
  std::vector<size_t> size_, align_;
  std::vector<uint32_t> first_, end_;
  std::vector<size_t> floor_, remaining_, offset_, block_, cand_, lowest_;
  std::vector<uint8_t> placed_;
  std::vector<size_t> floorTrail_;
  std::vector<std::pair<uint32_t, size_t>> blockTrail_;
  std::vector<Frame> frames_;
};

constexpr int kOrders = 4;

/// Runs the search at `capacity` with the value orderings in turn, restarting with a doubled time slice each
/// round (a portfolio: each ordering solves different instances quickly). Every run is complete, so the first
/// that ends decides; only the overall deadline yields TimedOut.
Outcome decide(Search& search, size_t capacity, const Deadline& deadline, std::vector<size_t>& offsets,
               size_t& nodes) {
  for (double slice = 0.05;; slice *= 2) {
    for (int order = 0; order < kOrders; ++order) {
      const double budget = std::min(slice, deadline.remaining());
      const bool last = budget < slice;  // the overall deadline cuts this run
      Deadline runDeadline(budget);
      const Outcome o = search.run(capacity, order, runDeadline, offsets, nodes);
      if (o != Outcome::TimedOut) return o;
      if (last || deadline.expired()) return Outcome::TimedOut;
    }
  }
}

}  // namespace

OffsetResult placeExact(const OffsetProblem& p, const OffsetOptions& options, const OffsetResult* incumbent,
                        ExactStats* stats) {
  Deadline deadline(options.timeLimitSeconds);
  ExactStats local;
  ExactStats& st = stats ? *stats : local;
  st = ExactStats{};
  OffsetResult r;
  r.algorithm = "exact";
  r.lowerBoundBytes = p.lowerBoundBytes;
  const size_t cap = options.capacityBytes;
  if (triviallyInfeasible(p, cap)) {
    r.status = OffsetStatus::Infeasible;
    return r;
  }
  // The best greedy plan is the starting upper bound.
  OffsetResult best = placeGreedySize(p, options);
  size_t bestPeak = peakOf(p, best.offsets);
  OffsetResult other = placeGreedyConflicts(p, options);
  if (size_t peak = peakOf(p, other.offsets); peak < bestPeak) best = std::move(other), bestPeak = peak;
  if (incumbent && incumbent->offsets.size() == p.count())
    if (size_t peak = peakOf(p, incumbent->offsets); peak < bestPeak) best.offsets = incumbent->offsets, bestPeak = peak;

  Search search(p);
  std::vector<size_t> offsets;
  if (cap != std::numeric_limits<size_t>::max()) {
    if (bestPeak <= cap) {  // a heuristic already decides feasibility
      r.offsets = std::move(best.offsets);
      r.status = bestPeak == p.lowerBoundBytes ? OffsetStatus::Optimal : OffsetStatus::Feasible;
      return r;
    }
    st.decisions = 1;
    switch (decide(search, cap, deadline, offsets, st.nodes)) {
      case Outcome::Found:
        r.offsets = std::move(offsets);
        r.status = peakOf(p, r.offsets) == p.lowerBoundBytes ? OffsetStatus::Optimal : OffsetStatus::Feasible;
        break;
      case Outcome::Infeasible: r.status = OffsetStatus::Infeasible; break;
      case Outcome::TimedOut: r.status = OffsetStatus::TimedOut; break;
    }
    return r;
  }
  // Minimise: the optimum lies in [lo, hi]; hi is always achieved by best.
  size_t lo = p.lowerBoundBytes, hi = bestPeak;
  bool timedOut = false;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    ++st.decisions;
    const Outcome o = decide(search, mid, deadline, offsets, st.nodes);
    if (o == Outcome::TimedOut) {
      timedOut = true;
      break;
    }
    if (o == Outcome::Infeasible) {
      lo = mid + 1;
    } else {
      best.offsets = offsets;
      hi = peakOf(p, offsets);
    }
  }
  r.offsets = std::move(best.offsets);
  r.status = timedOut ? OffsetStatus::Feasible : OffsetStatus::Optimal;
  return r;
}

}  // namespace stowage
