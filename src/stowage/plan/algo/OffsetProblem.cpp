// Section compression, deadline and result bookkeeping for the offset algorithms (see OffsetProblem.h).
#include "stowage/plan/algo/OffsetProblem.h"

#include <algorithm>

namespace stowage {

OffsetProblem makeOffsetProblem(const std::vector<Buffer>& buffers) {
  OffsetProblem p;
  const size_t n = buffers.size();
  p.size.resize(n);
  p.alignment.resize(n);
  p.first.assign(n, 0);
  p.end.assign(n, 0);
  p.firstStep.resize(n);
  p.endStep.resize(n);
  p.overlapsInput.assign(n, -1);
  p.overlappedBy.assign(n, -1);
  p.overlapBelow.assign(n, 0);
  p.overlapAbove.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const int x = buffers[i].overlapsWith;
    if (x < 0 || static_cast<size_t>(x) >= n || static_cast<size_t>(x) == i || p.overlappedBy[static_cast<size_t>(x)] >= 0) continue;
    p.overlapsInput[i] = x;
    p.overlappedBy[static_cast<size_t>(x)] = static_cast<int32_t>(i);
    p.overlapBelow[i] = buffers[i].overlapBelow;
    p.overlapAbove[i] = buffers[i].overlapAbove;
    p.hasOverlaps = true;
  }
  std::vector<int> points;
  points.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    const Buffer& b = buffers[i];
    p.size[i] = b.sizeBytes;
    p.alignment[i] = std::max<size_t>(b.alignment, 1);
    p.firstStep[i] = b.firstStep;
    p.endStep[i] = b.endStep;
    if (b.sizeBytes == 0 || b.endStep <= b.firstStep) continue;  // occupies nothing: offset 0
    p.active.push_back(static_cast<uint32_t>(i));
    points.push_back(b.firstStep);
    points.push_back(b.endStep);
  }
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  p.sections = points.empty() ? 0 : static_cast<uint32_t>(points.size() - 1);
  auto indexOf = [&](int t) {
    return static_cast<uint32_t>(std::lower_bound(points.begin(), points.end(), t) - points.begin());
  };
  std::vector<size_t> delta(p.sections + 1, 0), minus(p.sections + 1, 0);
  for (uint32_t i : p.active) {
    p.first[i] = indexOf(buffers[i].firstStep);
    p.end[i] = indexOf(buffers[i].endStep);
    delta[p.first[i]] += p.size[i];
    minus[p.end[i]] += p.size[i];
  }
  // An overlapping pair at its shared sections needs only the extent of the two at the largest allowed overlap.
  std::vector<size_t> saved(p.sections + 1, 0);
  for (uint32_t y = 0; y < n; ++y) {
    const int32_t x = p.overlapsInput[y];
    if (x < 0 || p.size[y] == 0 || p.size[static_cast<size_t>(x)] == 0) continue;
    const int64_t sx = static_cast<int64_t>(p.size[static_cast<size_t>(x)]), sy = static_cast<int64_t>(p.size[y]);
    const int64_t below = std::max(p.overlapBelow[y], -sy), above = std::min(p.overlapAbove[y], sx);
    const int64_t extent = std::min(below <= 0 ? std::max(sx - below, sy) : std::max(sx, below + sy),
                                    above >= 0 ? std::max(sx, above + sy) : std::max(sx - above, sy));
    if (extent >= sx + sy) continue;
    for (uint32_t s = std::max(p.first[y], p.first[static_cast<size_t>(x)]); s < std::min(p.end[y], p.end[static_cast<size_t>(x)]); ++s)
      saved[s] += static_cast<size_t>(sx + sy - extent);
  }
  size_t live = 0;
  for (uint32_t s = 0; s < p.sections; ++s) {
    live = live + delta[s] - minus[s];
    p.disjointBoundBytes = std::max(p.disjointBoundBytes, live);
    p.lowerBoundBytes = std::max(p.lowerBoundBytes, live - std::min(live, saved[s]));
  }
  return p;
}

std::pair<int64_t, int64_t> forbiddenRange(const OffsetProblem& p, uint32_t i, uint32_t j, size_t offsetJ) {
  const int64_t oj = static_cast<int64_t>(offsetJ);
  const int64_t si = static_cast<int64_t>(p.size[i]), sj = static_cast<int64_t>(p.size[j]);
  // Output y over input x: shift = o_y - o_x is forbidden exactly in (max(below, -s_y), min(s_x, above)).
  if (p.overlapsInput[i] == static_cast<int32_t>(j)) {  // i is the output
    const int64_t lo = std::max(p.overlapBelow[i], -si), hi = std::min(sj, p.overlapAbove[i]);
    return {oj + lo + si, oj + hi};
  }
  if (p.overlapsInput[j] == static_cast<int32_t>(i)) {  // i is the input
    const int64_t lo = std::max(p.overlapBelow[j], -sj), hi = std::min(si, p.overlapAbove[j]);
    return {oj - hi + si, oj - lo};
  }
  return {oj, oj + sj};
}

Deadline::Deadline(double seconds) : start_(std::chrono::steady_clock::now()), seconds_(seconds) {}

double Deadline::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

bool Deadline::expired() const { return elapsed() >= seconds_; }

double Deadline::remaining() const { return std::max(0.0, seconds_ - elapsed()); }

size_t peakOf(const OffsetProblem& p, const std::vector<size_t>& offsets) {
  size_t peak = 0;
  for (uint32_t i : p.active) peak = std::max(peak, offsets[i] + p.size[i]);
  return peak;
}

bool triviallyInfeasible(const OffsetProblem& p, size_t capacity) {
  if (p.lowerBoundBytes > capacity) return true;
  for (uint32_t i : p.active)
    if (p.size[i] > capacity) return true;
  return false;
}

void classifyResult(const OffsetProblem& p, const OffsetOptions& options, OffsetResult& r) {
  r.lowerBoundBytes = p.lowerBoundBytes;
  if (triviallyInfeasible(p, options.capacityBytes)) {
    r.offsets.clear();
    r.peakBytes = 0;
    r.status = OffsetStatus::Infeasible;
    return;
  }
  if (r.offsets.size() != p.count()) {  // no plan: keep a proof of infeasibility, else it gave up
    r.offsets.clear();
    r.peakBytes = 0;
    // A proof that places buffers apart (exact) proves nothing when allowed overlaps could still fit.
    if (r.status != OffsetStatus::Infeasible || p.hasOverlaps) r.status = OffsetStatus::TimedOut;
    return;
  }
  r.peakBytes = peakOf(p, r.offsets);
  if (r.status == OffsetStatus::Infeasible || r.peakBytes > options.capacityBytes) {
    r.offsets.clear();
    r.peakBytes = 0;
    r.status = OffsetStatus::TimedOut;
  } else if (r.peakBytes == p.lowerBoundBytes) {
    r.status = OffsetStatus::Optimal;
  } else if (r.status != OffsetStatus::Optimal || p.hasOverlaps) {
    // With allowed overlaps nothing proves optimality: the search (exact) does not use them.
    r.status = OffsetStatus::Feasible;
  }
}

}  // namespace stowage
