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
  size_t live = 0;
  for (uint32_t s = 0; s < p.sections; ++s) {
    live = live + delta[s] - minus[s];
    p.lowerBoundBytes = std::max(p.lowerBoundBytes, live);
  }
  return p;
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
    if (r.status != OffsetStatus::Infeasible) r.status = OffsetStatus::TimedOut;
    return;
  }
  r.peakBytes = peakOf(p, r.offsets);
  if (r.status == OffsetStatus::Infeasible || r.peakBytes > options.capacityBytes) {
    r.offsets.clear();
    r.peakBytes = 0;
    r.status = OffsetStatus::TimedOut;
  } else if (r.peakBytes == p.lowerBoundBytes) {
    r.status = OffsetStatus::Optimal;
  } else if (r.status != OffsetStatus::Optimal) {
    r.status = OffsetStatus::Feasible;
  }
}

}  // namespace stowage
