// The offset algorithms behind placeOffsets: hand-made instances with known optima, thousands of random
// small instances checked against a brute-force optimum, infeasibility proofs, time limits, alignment.
#include "ReleaseOnly.h"
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <numeric>

#include "PlanTestUtil.h"
#include "stowage/plan/Validate.h"
#include "stowage/plan/algo/ExactSearch.h"
#include "stowage/plan/algo/FirstFit.h"
#include "stowage/plan/algo/GreedySize.h"
#include "stowage/plan/algo/OffsetAlgorithm.h"
#include "stowage/plan/algo/OffsetProblem.h"

namespace stowage {
namespace {

using testing::buf;

constexpr size_t kUnlimited = std::numeric_limits<size_t>::max();

// These tests check what the engines prove, not how fast: a wall-clock limit only guards against a hang, and is
// generous because the Debug+ASan build on a loaded 2-core machine runs the search 20-50x slower than Release
// (a 10 s limit made a 10-buffer proof time out there). Speed is measured in bench/planner.
constexpr double kHangGuardSeconds = 300.0;

OffsetResult run(std::string_view algorithm, const std::vector<Buffer>& buffers, size_t capacity = kUnlimited,
                 double timeLimit = kHangGuardSeconds) {
  OffsetOptions o;
  o.capacityBytes = capacity;
  o.timeLimitSeconds = timeLimit;
  auto r = placeOffsets(algorithm, buffers, o);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().render());
  if (!r.ok()) return {};
  if (!r->offsets.empty()) {
    PlanCheck c = checkOffsets(buffers, r->offsets, capacity);
    EXPECT_TRUE(c.ok()) << algorithm << ": " << c.message;
    EXPECT_EQ(r->peakBytes, [&] {
      size_t peak = 0;
      for (size_t i = 0; i < buffers.size(); ++i) peak = std::max(peak, r->offsets[i] + buffers[i].sizeBytes);
      return peak;
    }());
  }
  return *r;
}

/// The minimum peak by exhaustive search over placement orders, each buffer at the lowest aligned offset above
/// every earlier buffer that overlaps it in time (every plan can be brought to this form without raising its
/// peak). Pruned by the best peak so far. For up to ~8 buffers.
size_t bruteForceOptimum(const std::vector<Buffer>& b) {
  const size_t n = b.size();
  std::vector<size_t> offset(n, 0), order;
  std::vector<bool> used(n, false);
  size_t best = kUnlimited;
  auto recurse = [&](auto&& self, size_t peak) -> void {
    if (peak >= best) return;
    if (order.size() == n) {
      best = peak;
      return;
    }
    for (size_t i = 0; i < n; ++i) {
      if (used[i]) continue;
      size_t o = 0;
      if (b[i].sizeBytes > 0)
        for (size_t j : order)
          if (b[j].sizeBytes > 0 && lifetimesOverlap(b[i], b[j])) o = std::max(o, offset[j] + b[j].sizeBytes);
      o = alignUp(o, b[i].alignment);
      offset[i] = o;
      used[i] = true;
      order.push_back(i);
      self(self, std::max(peak, o + b[i].sizeBytes));
      order.pop_back();
      used[i] = false;
    }
  };
  recurse(recurse, 0);
  return best;
}

/// One engine of exact alone (no greedy shortcut), its plan checked by the validator.
OffsetResult runEngine(ExactEngines engine, const std::vector<Buffer>& buffers, size_t capacity = kUnlimited) {
  OffsetOptions o;
  o.capacityBytes = capacity;
  o.timeLimitSeconds = kHangGuardSeconds;
  OffsetResult r = placeExact(makeOffsetProblem(buffers), o, nullptr, nullptr, engine);
  if (!r.offsets.empty()) {
    PlanCheck c = checkOffsets(buffers, r.offsets, capacity);
    EXPECT_TRUE(c.ok()) << "engine " << static_cast<int>(engine) << ": " << c.message;
    size_t peak = 0;
    for (size_t i = 0; i < buffers.size(); ++i) peak = std::max(peak, r.offsets[i] + buffers[i].sizeBytes);
    r.peakBytes = peak;
  }
  return r;
}

/// splitmix64 for reproducible random instances.
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  int below(int n) { return static_cast<int>(next() % static_cast<uint64_t>(n)); }
};

std::vector<Buffer> randomInstance(Rng& rng, int n, bool aligned) {
  std::vector<Buffer> out;
  for (int i = 0; i < n; ++i) {
    int first = rng.below(8);
    size_t size = static_cast<size_t>(rng.below(10) == 0 ? 0 : 1 + rng.below(12));
    size_t alignment = aligned ? size_t{1} << rng.below(4) : 1;
    out.push_back(buf(size, first, first + 1 + rng.below(5), alignment));
  }
  return out;
}

TEST(OffsetAlgorithms, NamesAreStableWithAutoFirst) {
  const auto& names = offsetAlgorithmNames();
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names.front(), "auto");
  for (const char* n : {"greedy-size", "greedy-conflicts", "hill-climb", "exact"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
}

TEST(OffsetAlgorithms, UnknownNameListsTheKnownOnes) {
  // Negative case: a typo in the algorithm name.
  auto r = placeOffsets("greedy-sise", {buf(4, 0, 1)}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().render().find("greedy-sise"), std::string::npos);
  EXPECT_NE(r.error().render().find("greedy-conflicts"), std::string::npos) << r.error().render();
}

TEST(OffsetAlgorithms, RejectsBadBuffersWithErrorsNotCrashes) {
  // Negative cases: alignment 3 is not a power of two; an empty lifetime [2, 2).
  EXPECT_FALSE(placeOffsets("auto", {buf(4, 0, 1, 3)}, {}).ok());
  EXPECT_FALSE(placeOffsets("auto", {buf(4, 2, 2)}, {}).ok());
  // Negative case: sizes that overflow the address space.
  EXPECT_FALSE(placeOffsets("auto", {buf(kUnlimited - 4, 0, 1), buf(kUnlimited - 4, 0, 1)}, {}).ok());
}

TEST(OffsetAlgorithms, EmptyAndZeroSizeInputs) {
  for (const std::string& name : offsetAlgorithmNames()) {
    OffsetResult empty = run(name, {});
    EXPECT_EQ(empty.status, OffsetStatus::Optimal) << name;
    EXPECT_EQ(empty.peakBytes, 0u);
    OffsetResult zeros = run(name, {buf(0, 0, 5), buf(8, 1, 3), buf(0, 2, 4, 16)});
    ASSERT_EQ(zeros.offsets.size(), 3u) << name;
    EXPECT_EQ(zeros.offsets[0], 0u);
    EXPECT_EQ(zeros.offsets[2], 0u);
    EXPECT_EQ(zeros.peakBytes, 8u);
    EXPECT_EQ(zeros.status, OffsetStatus::Optimal);
  }
}

TEST(OffsetAlgorithms, MiniMallocExampleIsPackedToItsBoundByEveryAlgorithm) {
  // benchmarks/examples/input.12.csv of MiniMalloc: capacity 12, lower bound 12.
  std::vector<Buffer> b = {buf(4, 0, 3), buf(4, 3, 9), buf(4, 0, 9), buf(4, 9, 21), buf(4, 0, 21)};
  for (const std::string& name : offsetAlgorithmNames()) {
    OffsetResult r = run(name, b, 12);
    EXPECT_EQ(r.status, OffsetStatus::Optimal) << name;
    EXPECT_EQ(r.peakBytes, 12u) << name;
    EXPECT_EQ(r.lowerBoundBytes, 12u);
    OffsetResult tight = run(name, b, 11);
    EXPECT_EQ(tight.status, OffsetStatus::Infeasible) << name << ": lower bound 12 > capacity 11";
    EXPECT_TRUE(tight.offsets.empty());
  }
}

/// An instance where greedy-by-size loses: the big buffer goes first at 0 and the two long-lived small
/// ones cannot share a level above it; the optimum (found by brute force) is lower.
std::vector<Buffer> greedyTrap() {
  return {buf(6, 0, 2), buf(6, 2, 4), buf(4, 1, 3), buf(3, 0, 4), buf(5, 3, 5), buf(2, 4, 6)};
}

TEST(OffsetAlgorithms, ExactAndAutoReachTheBruteForceOptimum) {
  std::vector<Buffer> b = greedyTrap();
  const size_t optimum = bruteForceOptimum(b);
  for (const char* name : {"exact", "auto"}) {
    OffsetResult r = run(name, b);
    EXPECT_EQ(r.peakBytes, optimum) << name;
    EXPECT_EQ(r.status, OffsetStatus::Optimal) << name;
  }
  for (const char* name : {"greedy-size", "greedy-conflicts", "hill-climb"}) {
    OffsetResult r = run(name, b);
    EXPECT_GE(r.peakBytes, optimum) << name;
  }
}

TEST(OffsetAlgorithms, RandomSmallInstancesMatchBruteForce) {
  STOWAGE_RELEASE_BUILD_ONLY("thousands of exhaustive searches, 15-18 s under ASan");
  Rng rng{2024};
  int provedInfeasibleAboveBound = 0, greedyMissed = 0;
  for (int iter = 0; iter < 1500; ++iter) {
    const int n = 2 + rng.below(iter % 10 == 0 ? 7 : 5);  // mostly 2..6 buffers, sometimes up to 8
    std::vector<Buffer> b = randomInstance(rng, n, iter % 2 == 1);
    const size_t optimum = bruteForceOptimum(b);
    SCOPED_TRACE(::testing::Message() << "instance " << iter << " (" << n << " buffers, optimum " << optimum << ")");
    OffsetResult exact = run("exact", b);
    ASSERT_EQ(exact.peakBytes, optimum);
    ASSERT_EQ(exact.status, OffsetStatus::Optimal);
    for (const char* name : {"greedy-size", "greedy-conflicts", "hill-climb", "auto"}) {
      OffsetResult r = run(name, b);
      ASSERT_GE(r.peakBytes, optimum) << name;
      ASSERT_GE(r.peakBytes, r.lowerBoundBytes) << name;
      if (std::string(name) == "auto") {
        ASSERT_EQ(r.peakBytes, optimum);
      }
      if (std::string(name) == "greedy-size" && r.peakBytes > optimum) ++greedyMissed;
    }
    // Each engine of the portfolio alone (the canonical search, the gap search) reaches the optimum too, and
    // decides the capacity at the optimum (fits) and one byte below (proved infeasible) without the greedy
    // shortcut.
    for (ExactEngines engine : {ExactEngines::CanonicalOnly, ExactEngines::GapOnly}) {
      SCOPED_TRACE(::testing::Message() << "engine " << static_cast<int>(engine));
      OffsetResult alone = runEngine(engine, b);
      ASSERT_EQ(alone.peakBytes, optimum);
      ASSERT_EQ(alone.status, OffsetStatus::Optimal);
      OffsetResult at = runEngine(engine, b, optimum);
      ASSERT_FALSE(at.offsets.empty());
      ASSERT_LE(at.peakBytes, optimum);
      if (optimum > 0) {
        ASSERT_EQ(runEngine(engine, b, optimum - 1).status, OffsetStatus::Infeasible);
      }
    }
    // Decision mode: the optimum fits, one byte less is proved infeasible.
    OffsetResult fits = run("exact", b, optimum);
    ASSERT_NE(fits.status, OffsetStatus::Infeasible);
    ASSERT_FALSE(fits.offsets.empty());
    if (optimum > 0) {
      OffsetResult below = run("exact", b, optimum - 1);
      ASSERT_EQ(below.status, OffsetStatus::Infeasible);
      if (optimum - 1 >= below.lowerBoundBytes) ++provedInfeasibleAboveBound;
    }
  }
  // The sample must include instances where the proof needed search, and where greedy is not optimal.
  EXPECT_GT(provedInfeasibleAboveBound, 10);
  EXPECT_GT(greedyMissed, 10);
}

TEST(OffsetAlgorithms, ExactEnginesAgreeOnLargerRandomInstances) {
  STOWAGE_RELEASE_BUILD_ONLY("thousands of exhaustive searches, 15-18 s under ASan");
  // Too many buffers for brute force: the two engines, both complete and built differently, must agree on the
  // optimum and on the infeasibility one byte below it; every plan passes the validator (in runEngine).
  Rng rng{31337};
  int searched = 0;
  for (int iter = 0; iter < 300; ++iter) {
    const int n = 9 + rng.below(3);  // 9..11 buffers
    std::vector<Buffer> b = randomInstance(rng, n, iter % 2 == 1);
    SCOPED_TRACE(::testing::Message() << "instance " << iter << " (" << n << " buffers)");
    OffsetResult canonical = runEngine(ExactEngines::CanonicalOnly, b);
    OffsetResult gap = runEngine(ExactEngines::GapOnly, b);
    ASSERT_EQ(canonical.status, OffsetStatus::Optimal);
    ASSERT_EQ(gap.status, OffsetStatus::Optimal);
    ASSERT_EQ(canonical.peakBytes, gap.peakBytes);
    ASSERT_GE(canonical.peakBytes, canonical.lowerBoundBytes);
    if (canonical.peakBytes > canonical.lowerBoundBytes) {
      ++searched;
      for (ExactEngines engine : {ExactEngines::CanonicalOnly, ExactEngines::GapOnly}) {
        ASSERT_EQ(runEngine(engine, b, canonical.peakBytes - 1).status, OffsetStatus::Infeasible)
            << "engine " << static_cast<int>(engine);
      }
    }
    ASSERT_EQ(run("exact", b).peakBytes, canonical.peakBytes);
  }
  EXPECT_GT(searched, 30) << "the sample must include instances whose optimum is above the lower bound";
}

TEST(OffsetAlgorithms, ExactSolvesIndependentPartsAndIdenticalBuffers) {
  // Two groups of buffers joined only by one long buffer: once it is placed the groups are solved apart.
  // Identical buffers (same size and lifetime) and alignment are in both groups.
  std::vector<Buffer> b = {buf(4, 0, 10),    buf(6, 0, 2),      buf(6, 0, 2),     buf(3, 1, 4, 4), buf(5, 2, 5),
                           buf(2, 3, 5),     buf(7, 6, 8, 8),   buf(7, 6, 8, 8),  buf(3, 7, 10),   buf(5, 8, 10)};
  const size_t optimum = bruteForceOptimum(b);
  OffsetResult r = run("exact", b);
  EXPECT_EQ(r.peakBytes, optimum);
  EXPECT_EQ(r.status, OffsetStatus::Optimal);
  EXPECT_FALSE(run("exact", b, optimum).offsets.empty());
  EXPECT_EQ(run("exact", b, optimum - 1).status, OffsetStatus::Infeasible);
}

TEST(OffsetAlgorithms, AlignmentIsHonouredByEveryAlgorithm) {
  std::vector<Buffer> b = {buf(10, 0, 3, 64), buf(3, 1, 4, 8), buf(100, 2, 5, 32), buf(1, 0, 6, 128), buf(7, 4, 6, 4)};
  for (const std::string& name : offsetAlgorithmNames()) {
    OffsetResult r = run(name, b);
    ASSERT_EQ(r.offsets.size(), b.size()) << name;
    for (size_t i = 0; i < b.size(); ++i) EXPECT_EQ(r.offsets[i] % b[i].alignment, 0u) << name << " buffer " << i;
  }
  EXPECT_EQ(run("exact", b).peakBytes, bruteForceOptimum(b));
}

TEST(OffsetAlgorithms, TimeLimitZeroGivesUpCleanly) {
  // Find a small instance where both greedy orders miss the optimum, then ask for the optimum with no time.
  Rng rng{7};
  for (int iter = 0; iter < 5000; ++iter) {
    std::vector<Buffer> b = randomInstance(rng, 7, false);
    const size_t optimum = bruteForceOptimum(b);
    if (run("greedy-size", b).peakBytes == optimum || run("greedy-conflicts", b).peakBytes == optimum) continue;
    OffsetResult r = run("exact", b, optimum, 0.0);
    EXPECT_EQ(r.status, OffsetStatus::TimedOut);
    EXPECT_TRUE(r.offsets.empty());
    OffsetResult a = run("auto", b, optimum, 0.0);
    EXPECT_EQ(a.status, OffsetStatus::TimedOut);
    // Without a capacity, no time still yields the best greedy plan, not proved optimal.
    OffsetResult m = run("exact", b, kUnlimited, 0.0);
    EXPECT_EQ(m.status, OffsetStatus::Feasible);
    EXPECT_GT(m.peakBytes, optimum);
    OffsetResult h = run("hill-climb", b, kUnlimited, 0.0);
    EXPECT_FALSE(h.offsets.empty());
    return;
  }
  FAIL() << "no instance where greedy misses the optimum";
}

TEST(OffsetAlgorithms, ResultsAreDeterministic) {
  Rng rng{99};
  std::vector<Buffer> small = randomInstance(rng, 10, true), large = randomInstance(rng, 40, true);
  for (const std::string& name : offsetAlgorithmNames()) {
    // exact and auto are deterministic when they finish; keep them to an instance they finish quickly.
    const std::vector<Buffer>& b = name == "exact" || name == "auto" ? small : large;
    OffsetResult a = run(name, b, kUnlimited, 60.0), c = run(name, b, kUnlimited, 60.0);
    EXPECT_EQ(a.offsets, c.offsets) << name;
  }
}

TEST(OffsetAlgorithms, TimeIndexAndConflictListsPlaceIdentically) {
  Rng rng{5};
  std::vector<Buffer> b;
  for (int i = 0; i < 3000; ++i) {
    int first = rng.below(2000);
    b.push_back(buf(16 * (1 + static_cast<size_t>(rng.below(64))), first, first + 1 + rng.below(rng.below(20) == 0 ? 500 : 6), 16));
  }
  OffsetProblem p = makeOffsetProblem(b);
  std::vector<uint32_t> order = greedySizeOrder(p);
  FirstFitPlacer lists(p), index(p, 0);
  std::vector<size_t> a, c;
  EXPECT_EQ(lists.place(order, a), index.place(order, c));
  EXPECT_EQ(a, c);
  EXPECT_TRUE(checkOffsets(b, c).ok());
  EXPECT_EQ(lists.place(order, a), index.place(order, c));  // and again, with reused scratch state
  EXPECT_EQ(a, c);
}

TEST(OffsetAlgorithms, GreedySizeScalesTo100kBuffers) {
  Rng rng{11};
  std::vector<Buffer> b;
  for (int i = 0; i < 100000; ++i) {
    int life = rng.below(200) == 0 ? 1 + rng.below(20000) : 1 + rng.below(4);
    b.push_back(buf(16 * (1 + static_cast<size_t>(rng.below(256))), i, i + life, 16));
  }
  OffsetResult r = run("greedy-size", b);
  EXPECT_EQ(r.offsets.size(), b.size());
  EXPECT_GE(r.peakBytes, r.lowerBoundBytes);
  // Its speed (target: under 2 s) is measured by bench/planner, not asserted here: a timed unit test fails on a
  // loaded machine (it did, at 2.86 s, while other builds ran).
}

}  // namespace
}  // namespace stowage
