// Branch-and-bound offset search (see ExactSearch.h), after the algorithm described in MiniMalloc (Moffitt,
// ASPLOS 2024); this is an independent implementation.
//
// Canonical solutions. Among the plans within the capacity take one whose sum of offsets is smallest. In it
// every buffer sits at the lowest aligned offset above the buffers that overlap it in time and lie below it
// (else it could drop). Sorting its buffers by (offset, preorder rank) gives a sequence in which each buffer's
// offset is its "minimum offset" given the buffers before it: the aligned top of the highest earlier buffer
// that overlaps it. The search enumerates exactly such sequences: at each node every unplaced buffer has a
// minimum offset, and a branch places one of them there, never going back below (offset, rank) of the
// previous placement.
//
// Sections. The search works on the maximal sections only: those whose set of live buffers is not contained
// in a neighbour's (a buffer starts at the left boundary and one ends at the right one), the maximal cliques of
// the interval graph. Two buffers overlap in time exactly when they share one, each buffer's ones are
// consecutive, and the bound below on any other section is implied by a maximal one.
//
// Pruning, all valid for the minimum-sum plan above:
//  - dominance: a buffer is not placed at an offset at or above the lowest top (minimum offset + size) of
//    another unplaced buffer: that buffer would fit entirely below, so a smaller-sum plan exists;
//  - identical buffers (same size, alignment and sections) are branched on once per node;
//  - inference: a buffer whose minimum offset + size exceeds the capacity fails the branch;
//  - section bound: in a section, the unplaced buffers crossing it overlap pairwise, so they need their summed
//    size above the lowest offset any of them can still take: the lowest minimum offset among them (kept
//    exact per section, and recomputed only where the buffer holding it rose or was placed), and at least the
//    current offset, since placements never go down;
//  - the same bound at the offset of the next placement, before any propagation: no candidate can start above
//    the capacity minus the largest remaining section total, and as candidates come by offset, the first one
//    above ends the node (this rejects most failing placements without propagating them).
// Minimum offsets, lowest minimum offsets and remaining sizes are updated incrementally on every placement and
// restored from trails on backtrack. When the placements leave a section boundary that no unplaced buffer
// crosses, the two sides are independent and are solved one after the other, each from scratch (its buffers
// re-ranked with the current remaining sizes); a failing side fails the branch. Several preorderings are run
// in turn, interleaved with the previous engine (GapSearch below), every run under the same node limit,
// doubling each round: a deterministic portfolio. Any run that finishes is complete and decides.
#include "stowage/plan/algo/ExactSearch.h"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

#include "stowage/plan/algo/GreedyConflicts.h"
#include "stowage/plan/algo/GreedySize.h"

namespace stowage {

namespace {

constexpr size_t kNone = std::numeric_limits<size_t>::max();
/// The search recurses once per placement and keeps one candidate list per level (quadratic memory), so it
/// gives up on more buffers than this (as on a timeout); such inputs are left to the heuristics.
constexpr size_t kMaxSearchBuffers = 5000;
/// Above this many overlap / section-membership entries the search gives up (memory bound for huge inputs).
constexpr size_t kMaxEntries = size_t{24} << 20;

size_t alignUpTo(size_t v, size_t a) { return (v + a - 1) / a * a; }

enum class Outcome { Found, Infeasible, TimedOut, NodeLimit };

/// The preorderings of the portfolio: keys compared in turn, larger first. T: the largest initial sum of
/// sizes over the buffer's sections; A: size x width; Z: size; W: the lifetime's width in time steps.
constexpr const char* kHeuristics[] = {"WAT", "TAW", "TWA"};

class Search {
 public:
  explicit Search(const OffsetProblem& p) : p_(p) {}

  /// Builds the overlap and section lists; false when the deadline passes or the input is too large.
  bool prepare(const Deadline& deadline) {
    m_ = p_.active.size();
    if (m_ > kMaxSearchBuffers) return false;
    // Only the sections whose live set is a maximal clique matter: every other section's buffers are a
    // subset of a neighbour's, whose bound is at least as strong, and every overlap is witnessed in one of
    // them. A section is maximal when a buffer starts at its left boundary and one ends at its right one.
    std::vector<uint8_t> starts(p_.sections + 1, 0), ends(p_.sections + 1, 0);
    for (uint32_t i : p_.active) starts[p_.first[i]] = 1, ends[p_.end[i]] = 1;
    std::vector<uint32_t> cliqueBefore(p_.sections + 1, 0);  // maximal sections before each fine boundary
    for (uint32_t s = 0; s < p_.sections; ++s)
      cliqueBefore[s + 1] = cliqueBefore[s] + (starts[s] && ends[s + 1] ? 1 : 0);
    S_ = cliqueBefore[p_.sections];
    for (uint32_t i : p_.active) {
      size_.push_back(p_.size[i]);
      align_.push_back(p_.alignment[i]);
      first_.push_back(cliqueBefore[p_.first[i]]);
      end_.push_back(cliqueBefore[p_.end[i]]);
      width_.push_back(static_cast<uint64_t>(std::max(1, p_.endStep[i] - p_.firstStep[i])));
    }
    const uint32_t S = S_;
    // Buffers crossing each section (CSR).
    secStart_.assign(S + 1, 0);
    size_t entries = 0;
    for (size_t b = 0; b < m_; ++b) {
      entries += end_[b] - first_[b];
      if (entries > kMaxEntries) return false;
    }
    {
      std::vector<size_t> diff(S + 1, 0);
      for (size_t b = 0; b < m_; ++b) ++diff[first_[b]], --diff[end_[b]];
      size_t live = 0;
      for (uint32_t s = 0; s < S; ++s) live += diff[s], secStart_[s + 1] = secStart_[s] + live;
    }
    secList_.assign(secStart_[S], 0);
    {
      std::vector<size_t> fill(secStart_.begin(), secStart_.end() - 1);
      for (size_t b = 0; b < m_; ++b) {
        if ((b & 1023) == 0 && deadline.expired()) return false;
        for (uint32_t s = first_[b]; s < end_[b]; ++s) secList_[fill[s]++] = static_cast<uint32_t>(b);
      }
    }
    // Overlapping pairs (CSR): sweep buffers by first section.
    std::vector<uint32_t> byFirst(m_);
    for (size_t b = 0; b < m_; ++b) byFirst[b] = static_cast<uint32_t>(b);
    std::sort(byFirst.begin(), byFirst.end(), [&](uint32_t a, uint32_t b) {
      return std::tie(first_[a], a) < std::tie(first_[b], b);
    });
    std::vector<std::vector<uint32_t>> ov(m_);
    size_t pairs = 0;
    for (size_t i = 0; i < m_; ++i) {
      if ((i & 255) == 0 && deadline.expired()) return false;
      const uint32_t a = byFirst[i];
      for (size_t j = i + 1; j < m_ && first_[byFirst[j]] < end_[a]; ++j) {
        const uint32_t b = byFirst[j];
        ov[a].push_back(b);
        ov[b].push_back(a);
        pairs += 2;
        if (pairs + entries > kMaxEntries) return false;
      }
    }
    ovStart_.assign(m_ + 1, 0);
    for (size_t b = 0; b < m_; ++b) ovStart_[b + 1] = ovStart_[b] + ov[b].size();
    ovList_.reserve(ovStart_[m_]);
    for (size_t b = 0; b < m_; ++b) ovList_.insert(ovList_.end(), ov[b].begin(), ov[b].end());
    // Classes of identical buffers.
    std::map<std::tuple<size_t, size_t, uint32_t, uint32_t>, uint32_t> classes;
    klass_.resize(m_);
    for (size_t b = 0; b < m_; ++b)
      klass_[b] = classes.emplace(std::make_tuple(size_[b], align_[b], first_[b], end_[b]),
                                  static_cast<uint32_t>(classes.size()))
                      .first->second;
    // Initial sum of sizes per section, and the keys of the preorderings.
    initialTotal_.assign(S, 0);
    for (size_t b = 0; b < m_; ++b)
      for (uint32_t s = first_[b]; s < end_[b]; ++s) initialTotal_[s] += size_[b];
    maxTotal_.assign(m_, 0);
    for (size_t b = 0; b < m_; ++b)
      for (uint32_t s = first_[b]; s < end_[b]; ++s) maxTotal_[b] = std::max(maxTotal_[b], initialTotal_[s]);
    return !deadline.expired();
  }

  size_t bufferCount() const { return m_; }

  /// One complete search at `capacity` with preordering `heuristic`, stopped by `deadline` or after
  /// `nodeLimit` nodes.
  Outcome run(size_t capacity, int heuristic, size_t nodeLimit, const Deadline& deadline,
              std::vector<size_t>& offsets, size_t& nodes) {
    cap_ = capacity;
    setRanks(heuristic);
    const uint32_t S = S_;
    lowest_.assign(S, 0);
    total_ = initialTotal_;
    offset_.assign(m_, kNone);
    solution_.assign(m_, 0);
    minOff_.assign(m_, 0);
    reach_.assign(m_, 0);
    stale_.assign(S, 0);
    offTrail_.clear();
    lowestTrail_.clear();
    cuts_.assign(S, 0);
    for (size_t b = 0; b < m_; ++b)
      for (uint32_t s = first_[b]; s + 1 < end_[b]; ++s) ++cuts_[s];
    nodeLimit_ = nodeLimit;
    used_ = 0;
    nodes_ = &nodes;
    deadline_ = &deadline;
    for (size_t b = 0; b < m_; ++b)
      if (size_[b] > cap_) return Outcome::Infeasible;
    for (uint32_t s = 0; s < S; ++s)
      if (total_[s] > cap_) return Outcome::Infeasible;
    std::vector<uint32_t> all(m_);
    for (size_t b = 0; b < m_; ++b) all[b] = static_cast<uint32_t>(b);
    const Outcome o = solveSplit(0, S, all);
    if (o == Outcome::Found) {
      offsets.assign(p_.count(), 0);
      for (size_t b = 0; b < m_; ++b) offsets[p_.active[b]] = solution_[b];
    }
    return o;
  }

 private:
  /// Solves the unplaced buffers of `buffers` over sections [lo, hi), splitting at every inner boundary no
  /// unplaced buffer crosses: the parts are independent.
  Outcome solveSplit(uint32_t lo, uint32_t hi, const std::vector<uint32_t>& buffers) {
    uint32_t a = lo;
    while (a < hi) {
      uint32_t b = a + 1;
      while (b < hi && cuts_[b - 1] > 0) ++b;
      std::vector<uint32_t> part;
      for (uint32_t x : buffers)
        if (offset_[x] == kNone && first_[x] < b && a < end_[x]) part.push_back(x);
      if (!part.empty()) {
        // Re-rank the part's buffers with the current remaining sizes (key T), reusing their rank values.
        std::vector<uint32_t> saved(part.size());
        for (size_t k = 0; k < part.size(); ++k) saved[k] = rank_[part[k]];
        std::vector<uint32_t> values = saved;
        std::sort(values.begin(), values.end());
        std::vector<size_t> curTotal(part.size(), 0);
        for (size_t k = 0; k < part.size(); ++k)
          for (uint32_t s = first_[part[k]]; s < end_[part[k]]; ++s) curTotal[k] = std::max(curTotal[k], total_[s]);
        std::vector<uint32_t> idx(part.size());
        for (size_t k = 0; k < part.size(); ++k) idx[k] = static_cast<uint32_t>(k);
        std::sort(idx.begin(), idx.end(), [&](uint32_t x, uint32_t y) {
          for (const char* c = keys_; *c; ++c) {
            const uint64_t kx = *c == 'T' ? curTotal[x] : key(*c, part[x]), ky = *c == 'T' ? curTotal[y] : key(*c, part[y]);
            if (kx != ky) return kx > ky;
          }
          return part[x] < part[y];
        });
        std::vector<uint32_t> ordered(part.size());
        for (size_t r = 0; r < idx.size(); ++r) rank_[part[idx[r]]] = values[r], ordered[r] = part[idx[r]];
        const Outcome o = search(a, b, ordered, 0, 0);
        for (size_t k = 0; k < part.size(); ++k) rank_[part[k]] = saved[k];
        if (o != Outcome::Found) return o;
      }
      a = b;
    }
    return Outcome::Found;
  }

  /// Depth-first search over the partition [lo, hi); `parent` holds its buffers (placed ones are skipped).
  Outcome search(uint32_t lo, uint32_t hi, const std::vector<uint32_t>& parent, size_t lastOff, uint32_t lastRank) {
    if (++used_ > nodeLimit_) return Outcome::NodeLimit;
    ++*nodes_;
    if ((used_ & 15) == 0 && deadline_->expired()) return Outcome::TimedOut;
    std::vector<uint32_t> order;
    order.reserve(parent.size());
    size_t minHeight = kNone;
    for (uint32_t b : parent) {
      if (offset_[b] != kNone) continue;
      if (minOff_[b] > cap_ || size_[b] > cap_ - minOff_[b]) return Outcome::Infeasible;
      minHeight = std::min(minHeight, minOff_[b] + size_[b]);
      order.push_back(b);
    }
    if (order.empty()) return Outcome::Found;
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return minOff_[a] != minOff_[b] ? minOff_[a] < minOff_[b] : rank_[a] < rank_[b];
    });
    std::vector<uint32_t> tried;
    // Placements never go down, so the unplaced buffers over a section all end up at or above the offset of
    // the next placement; they overlap pairwise there, so that offset must leave room for their summed size
    // in every section: no candidate above cap - (largest remaining section total) can succeed.
    size_t fullest = 0;
    for (uint32_t s = lo; s < hi; ++s) fullest = std::max(fullest, total_[s]);
    if (fullest > cap_) return Outcome::Infeasible;
    const size_t highestStart = cap_ - fullest;
    for (uint32_t b : order) {
      const size_t off = minOff_[b];
      if (off >= minHeight) break;     // dominated, and so is every later buffer
      if (off > highestStart) break;  // and so is every later buffer (the order is by offset)
      if (off < lastOff || (off == lastOff && rank_[b] < lastRank)) continue;  // not canonical
      if (std::find(tried.begin(), tried.end(), klass_[b]) != tried.end()) continue;
      tried.push_back(klass_[b]);
      const size_t offMark = offTrail_.size(), lowestMark = lowestTrail_.size();
      Outcome o = Outcome::Infeasible;
      if (place(b, lo, hi)) {
        solution_[b] = off;
        bool split = false;
        for (uint32_t s = first_[b]; s + 1 < end_[b]; ++s)
          if (--cuts_[s] == 0 && lo <= s && s + 1 < hi) split = true;
        o = split ? solveSplit(lo, hi, order) : search(lo, hi, order, off, rank_[b]);
        for (uint32_t s = first_[b]; s + 1 < end_[b]; ++s) ++cuts_[s];
      }
      unplace(b, offMark, lowestMark);
      if (o != Outcome::Infeasible) return o;
      // Nothing unplaced overlaps b: its minimum offset can never rise, so after any later sibling it could
      // no longer be placed canonically. Its own branch covered every completion.
      if (hatless(b)) break;
    }
    return Outcome::Infeasible;
  }

  bool hatless(uint32_t b) const {
    for (size_t k = ovStart_[b]; k < ovStart_[b + 1]; ++k)
      if (offset_[ovList_[k]] == kNone) return false;
    return true;
  }

  uint64_t key(char c, uint32_t b) const {
    const uint64_t len = width_[b];
    switch (c) {
      case 'T': return maxTotal_[b];
      case 'A': return len * size_[b];
      case 'Z': return size_[b];
      default: return len;  // 'W'
    }
  }

  void setRanks(int heuristic) {
    const char* keys = kHeuristics[heuristic];
    keys_ = keys;
    std::vector<uint32_t> idx(m_);
    for (size_t b = 0; b < m_; ++b) idx[b] = static_cast<uint32_t>(b);
    std::sort(idx.begin(), idx.end(), [&](uint32_t a, uint32_t b) {
      for (const char* k = keys; *k; ++k) {
        const uint64_t ka = key(*k, a), kb = key(*k, b);
        if (ka != kb) return ka > kb;
      }
      return a < b;
    });
    rank_.assign(m_, 0);
    for (size_t r = 0; r < m_; ++r) rank_[idx[r]] = static_cast<uint32_t>(r);
  }

  /// Places `b` at its minimum offset and propagates; false when the section bound fails in [lo, hi).
  /// Undo with unplace() in either case.
  bool place(uint32_t b, uint32_t lo, uint32_t hi) {
    const size_t off = minOff_[b];
    const size_t top = off + size_[b];
    offset_[b] = off;
    reach_[b] = kNone;
    for (uint32_t s = first_[b]; s < end_[b]; ++s) total_[s] -= size_[b];
    dirty_.clear();
    // A section's lowest minimum offset can only change where the buffer holding it rose or was placed.
    auto touch = [&](uint32_t s, size_t old) {
      if (lowest_[s] == old && !stale_[s]) stale_[s] = 1, dirty_.push_back(s);
    };
    for (size_t k = ovStart_[b]; k < ovStart_[b + 1]; ++k) {
      const uint32_t o = ovList_[k];
      if (offset_[o] != kNone || minOff_[o] >= top) continue;
      const size_t old = minOff_[o];
      offTrail_.emplace_back(o, old);
      minOff_[o] = reach_[o] = alignUpTo(top, align_[o]);
      for (uint32_t s = first_[o]; s < end_[o]; ++s) touch(s, old);
    }
    for (uint32_t s = first_[b]; s < end_[b]; ++s) touch(s, off);
    for (uint32_t s : dirty_) {
      stale_[s] = 0;
      size_t lowest = kNone;
      for (size_t k = secStart_[s]; k < secStart_[s + 1]; ++k) lowest = std::min(lowest, reach_[secList_[k]]);
      if (lowest != lowest_[s]) {
        lowestTrail_.emplace_back(s, lowest_[s]);
        lowest_[s] = lowest;
      }
    }
    // Every unplaced buffer over a section lies at or above the section's lowest minimum offset and (placements
    // never go down) at or above `off`; they overlap pairwise there, so they need their summed size above it.
    for (uint32_t s = lo; s < hi; ++s) {
      if (total_[s] == 0) continue;
      const size_t fl = std::max(lowest_[s], off);
      if (fl > cap_ || total_[s] > cap_ - fl) return false;
    }
    return true;
  }

  void unplace(uint32_t b, size_t offMark, size_t lowestMark) {
    while (lowestTrail_.size() > lowestMark) {
      lowest_[lowestTrail_.back().first] = lowestTrail_.back().second;
      lowestTrail_.pop_back();
    }
    while (offTrail_.size() > offMark) {
      minOff_[offTrail_.back().first] = reach_[offTrail_.back().first] = offTrail_.back().second;
      offTrail_.pop_back();
    }
    reach_[b] = minOff_[b];
    for (uint32_t s = first_[b]; s < end_[b]; ++s) total_[s] += size_[b];
    offset_[b] = kNone;
  }

  const OffsetProblem& p_;
  size_t m_ = 0, cap_ = 0, nodeLimit_ = 0, used_ = 0;
  uint32_t S_ = 0;  ///< maximal sections (the search's sections; first_/end_ index them)
  size_t* nodes_ = nullptr;
  const char* keys_ = "";
  const Deadline* deadline_ = nullptr;
  std::vector<size_t> size_, align_;
  std::vector<uint32_t> first_, end_, klass_, rank_, cuts_;
  std::vector<size_t> secStart_, ovStart_;
  std::vector<uint32_t> secList_, ovList_;
  std::vector<size_t> initialTotal_, maxTotal_;
  std::vector<uint64_t> width_;
  std::vector<size_t> total_, offset_, minOff_, solution_;
  std::vector<size_t> lowest_;  ///< per section: the lowest minimum offset of an unplaced buffer over it (kNone: none)
  std::vector<size_t> reach_;   ///< per buffer: its minimum offset while unplaced, kNone once placed
  std::vector<uint8_t> stale_;  ///< per section: queued in dirty_
  std::vector<uint32_t> dirty_;  ///< sections whose lowest minimum offset may have changed in place()
  std::vector<std::pair<uint32_t, size_t>> offTrail_, lowestTrail_;
};

/// The previous engine, kept as a second member of the portfolio (it solves some instances the canonical
/// search above does not, and vice versa). It also enumerates canonical placements, but branches per level:
/// at the lowest level m and a focus section whose lowest reachable offset is m, one branch per buffer over
/// the focus that can sit at m, and a last branch "none of them sits at m" (a gap); a buffer tried and
/// backtracked is blocked at m until a later placement raises its floor. Pruning: in every section the
/// unplaced buffers need their summed size above the lowest offset any of them can still take.
class GapSearch {
 public:
  explicit GapSearch(const OffsetProblem& p) : p_(p) {
    m_ = p.active.size();
    for (uint32_t i : p.active) {
      size_.push_back(p.size[i]);
      align_.push_back(p.alignment[i]);
      first_.push_back(p.first[i]);
      end_.push_back(p.end[i]);
    }
  }

  /// One complete search at `capacity` with value ordering `order` (0..kGapOrders-1), stopped by `deadline`
  /// or after `nodeLimit` nodes.
  Outcome run(size_t capacity, int order, size_t nodeLimit, const Deadline& deadline, std::vector<size_t>& offsets,
              size_t& nodes) {
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
    used_ = 0;
    nodeLimit_ = nodeLimit;
    nodes_ = &nodes;

    if (m_ == 0) return finish(offsets);
    Frame root;
    if (!evaluate(0, root)) return Outcome::Infeasible;
    frames_.push_back(std::move(root));
    for (size_t step = 1; !frames_.empty(); ++step) {
      if (used_ > nodeLimit_) return Outcome::NodeLimit;
      if ((step & 15) == 0 && deadline_->expired()) return Outcome::TimedOut;
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
    ++used_;
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
  size_t m_ = 0, cap_ = 0, placedCount_ = 0, nodeLimit_ = 0, used_ = 0;
  size_t* nodes_ = nullptr;
  std::vector<size_t> size_, align_;
  std::vector<uint32_t> first_, end_;
  std::vector<size_t> floor_, remaining_, offset_, block_, cand_, lowest_;
  std::vector<uint8_t> placed_;
  std::vector<size_t> floorTrail_;
  std::vector<std::pair<uint32_t, size_t>> blockTrail_;
  std::vector<Frame> frames_;
};

constexpr int kOrders = static_cast<int>(sizeof(kHeuristics) / sizeof(kHeuristics[0]));
constexpr int kGapOrders = 4;

/// Runs the portfolio at `capacity` in rounds: the canonical search with each preordering, then the gap search
/// with each of its orderings, all under the same node limit, which doubles every round (a deterministic
/// schedule). Every run that ends within its limit is complete, so the first such run decides; only the
/// overall deadline yields TimedOut.
Outcome decide(Search& search, GapSearch& gap, ExactEngines engines, size_t capacity, const Deadline& deadline,
               std::vector<size_t>& offsets, size_t& nodes) {
  if (deadline.expired()) return Outcome::TimedOut;
  const int orders = engines == ExactEngines::GapOnly ? 0 : kOrders;
  const int gapOrders = engines == ExactEngines::CanonicalOnly ? 0 : kGapOrders;
  for (size_t limit = std::max<size_t>(search.bufferCount(), 64);; limit *= 2) {
    for (int order = 0; order < orders; ++order) {
      const Outcome o = search.run(capacity, order, limit, deadline, offsets, nodes);
      if (o != Outcome::NodeLimit) return o;
    }
    for (int order = 0; order < gapOrders; ++order) {
      const Outcome o = gap.run(capacity, order, limit, deadline, offsets, nodes);
      if (o != Outcome::NodeLimit) return o;
    }
  }
}

}  // namespace

OffsetResult placeExact(const OffsetProblem& p, const OffsetOptions& options, const OffsetResult* incumbent,
                        ExactStats* stats, ExactEngines engines) {
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
  // The starting upper bound: the incumbent when the caller has one (auto passes its best greedy plan),
  // else the better of the two greedy plans.
  OffsetResult best;
  size_t bestPeak = kNone;
  if (incumbent && incumbent->offsets.size() == p.count()) {
    best.offsets = incumbent->offsets;
    bestPeak = peakOf(p, best.offsets);
  } else {
    best = placeGreedySize(p, options);
    bestPeak = peakOf(p, best.offsets);
    OffsetResult other = placeGreedyConflicts(p, options);
    if (size_t peak = peakOf(p, other.offsets); peak < bestPeak) best = std::move(other), bestPeak = peak;
  }
  const bool minimise = cap == std::numeric_limits<size_t>::max();
  const bool shortcut = engines == ExactEngines::Portfolio;
  // A heuristic already decides: its plan reaches the lower bound, or fits the capacity (when one is asked).
  if ((minimise && bestPeak == p.disjointBoundBytes) || (shortcut && !minimise && bestPeak <= cap)) {
    r.offsets = std::move(best.offsets);
    r.status = bestPeak == p.disjointBoundBytes ? OffsetStatus::Optimal : OffsetStatus::Feasible;
    return r;
  }

  Search search(p);
  GapSearch gap(p);
  const bool prepared = search.prepare(deadline);
  std::vector<size_t> offsets;
  if (!minimise) {
    st.decisions = 1;
    const Outcome o = prepared ? decide(search, gap, engines, cap, deadline, offsets, st.nodes) : Outcome::TimedOut;
    switch (o) {
      case Outcome::Found:
        r.offsets = std::move(offsets);
        r.status = peakOf(p, r.offsets) == p.disjointBoundBytes ? OffsetStatus::Optimal : OffsetStatus::Feasible;
        break;
      case Outcome::Infeasible: r.status = OffsetStatus::Infeasible; break;
      default: r.status = OffsetStatus::TimedOut; break;
    }
    return r;
  }
  // Minimise by bisection: hi is always achieved by best, and the optimum is proved to lie in [lo, hi] until a
  // probe times out. Each probe gets a quarter of the remaining time (at least 10 ms); a probe that times out
  // leaves the lower half unproved and the search goes on in the upper half, so a hard capacity does not stop
  // the search for better plans above it.
  size_t lo = p.disjointBoundBytes, hi = bestPeak;
  bool timedOut = !prepared;
  while (prepared && lo < hi && !deadline.expired()) {
    const size_t mid = lo + (hi - lo) / 2;
    ++st.decisions;
    const Deadline probe(std::min(deadline.remaining(), std::max(0.01, deadline.remaining() / 4)));
    const Outcome o = decide(search, gap, engines, mid, probe, offsets, st.nodes);
    if (o == Outcome::Infeasible) {
      lo = mid + 1;
    } else if (o == Outcome::Found) {
      best.offsets = offsets;
      hi = peakOf(p, offsets);
    } else {
      timedOut = true;
      lo = mid + 1;
    }
  }
  if (lo < hi) timedOut = true;  // the deadline ended the bisection
  r.offsets = std::move(best.offsets);
  r.status = timedOut ? OffsetStatus::Feasible : OffsetStatus::Optimal;
  return r;
}

}  // namespace stowage
