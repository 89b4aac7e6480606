// Hill-climbing over first-fit placement orders (see HillClimb.h).
#include "stowage/plan/algo/HillClimb.h"

#include <algorithm>
#include <limits>

#include "stowage/plan/algo/FirstFit.h"
#include "stowage/plan/algo/GreedySize.h"

namespace stowage {

namespace {
/// splitmix64: a small deterministic generator, identical on every platform and standard library.
struct SplitMix {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  size_t below(size_t n) { return static_cast<size_t>(next() % n); }
};
}  // namespace

OffsetResult placeHillClimb(const OffsetProblem& p, const OffsetOptions& options) {
  Deadline deadline(options.timeLimitSeconds);
  OffsetResult r;
  r.algorithm = "hill-climb";
  FirstFitPlacer placer(p);
  std::vector<uint32_t> order = greedySizeOrder(p);
  size_t best = placer.place(order, r.offsets);
  const size_t target = options.capacityBytes == std::numeric_limits<size_t>::max()
                            ? p.lowerBoundBytes
                            : std::max(p.lowerBoundBytes, std::min(options.capacityBytes, best));
  if (order.size() < 2) return r;
  SplitMix rng{options.seed};
  std::vector<uint32_t> trial;
  std::vector<size_t> offsets;
  for (size_t it = 0; it < kHillClimbMaxIterations && best > target; ++it) {
    if ((it & 7) == 0 && deadline.expired()) break;
    trial = order;
    const size_t a = rng.below(trial.size()), b = rng.below(trial.size());
    if (a == b) continue;
    if (rng.next() & 1) {
      std::swap(trial[a], trial[b]);
    } else {  // move the later one just before the earlier one
      const auto [lo, hi] = std::minmax(a, b);
      std::rotate(trial.begin() + static_cast<ptrdiff_t>(lo), trial.begin() + static_cast<ptrdiff_t>(hi),
                  trial.begin() + static_cast<ptrdiff_t>(hi) + 1);
    }
    const size_t peak = placer.place(trial, offsets, best);
    if (peak > best) continue;
    order.swap(trial);
    if (peak < best) {
      best = peak;
      r.offsets = offsets;
    }
  }
  return r;
}

}  // namespace stowage
