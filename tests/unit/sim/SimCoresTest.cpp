// Cores in the host simulator: stowage_run_on_cores runs one thread per core with its own clock, core id and
// DMA channels; the caller resumes at the latest core's clock; barriers line the clocks up; splitting work over
// 4 cores finishes 4x sooner; results and cycle counts do not depend on thread scheduling.
#include <atomic>
#include <numeric>
#include <vector>

#include "SimTestUtil.h"
#include "stowage_hal.h"

namespace stowage {
namespace {

using simtest::SimTest;
using simtest::uniqueBase;

class SimCores : public SimTest {
 protected:
  void SetUp() override {
    SimTest::SetUp();
    stowage_sim_target(0, "fc", 1, 0);
    stowage_sim_target(1, "cluster", 8, 0);
    stowage_sim_dma(1, 1, 8.0, 10.0);
  }
};

struct Work {
  std::vector<uint8_t> src, dst;
  int tiles = 0;
  size_t tileBytes = 0;
  uint64_t computeCycles = 0;
  uintptr_t l1Base = 0;
  size_t l1Stride = 0;
};

/// Each core takes tiles c, c + n, ...: fetch into its own L1 copy, "compute" (copy to dst), charge cycles.
void splitTiles(void* arg) {
  Work& w = *static_cast<Work*>(arg);
  const int c = stowage_core_id(), n = stowage_num_cores();
  auto* l1 = static_cast<uint8_t*>(STOWAGE_FIXED_ADDRESS(w.l1Base + c * w.l1Stride, w.tileBytes));
  for (int t = c; t < w.tiles; t += n) {
    stowage_dma_wait(stowage_dma_start(0, l1, w.src.data() + t * w.tileBytes, w.tileBytes, 1, 0, 0));
    STOWAGE_SIM_COMPUTE("tile", w.computeCycles);
    stowage_dma_wait(stowage_dma_start(0, w.dst.data() + t * w.tileBytes, l1, w.tileBytes, 1, 0, 0));
  }
}

uint64_t runSplit(int cores) {
  Work w;
  w.tiles = 32;
  w.tileBytes = 64;
  w.computeCycles = 200;
  w.src.resize(w.tiles * w.tileBytes);
  std::iota(w.src.begin(), w.src.end(), uint8_t{3});
  w.dst.assign(w.src.size(), 0);
  w.l1Base = uniqueBase();
  w.l1Stride = 4096;
  stowage_sim_pool("l1", w.l1Base, w.tileBytes, w.l1Stride, cores);
  const uint64_t start = stowage_sim_now();
  stowage_run_on_cores(1, cores, splitTiles, &w);
  EXPECT_EQ(w.dst, w.src);
  return stowage_sim_now() - start;
}

TEST_F(SimCores, FourCoresAreFourTimesFaster) {
  const uint64_t perTile = 2 * (10 + 64 / 8) + 200;
  const uint64_t one = runSplit(1);
  EXPECT_EQ(one, 32 * perTile);
  stowage_sim_reset();
  SetUp();
  const uint64_t four = runSplit(4);
  EXPECT_EQ(four, 8 * perTile);
  for (int c = 0; c < 4; ++c) {
    EXPECT_EQ(stowage_sim_core_compute_cycles(1, c), 8u * 200u) << "core " << c;
    EXPECT_EQ(stowage_sim_core_clock(1, c), 8 * perTile) << "core " << c;
  }
  EXPECT_EQ(stowage_sim_core_compute_cycles(1, 4), 0u);
}

struct Ids {
  std::atomic<int> seen[8];
  int cores[8];
};

void recordIds(void* arg) {
  auto* ids = static_cast<Ids*>(arg);
  ids->seen[stowage_core_id()].fetch_add(1);
  ids->cores[stowage_core_id()] = stowage_num_cores();
}

TEST_F(SimCores, CoreIdsInsideAndOutside) {
  EXPECT_EQ(stowage_core_id(), 0);
  EXPECT_EQ(stowage_num_cores(), 1);
  Ids ids;
  for (auto& s : ids.seen) s = 0;
  stowage_run_on_cores(1, 5, recordIds, &ids);
  for (int c = 0; c < 5; ++c) {
    EXPECT_EQ(ids.seen[c].load(), 1) << "core " << c;
    EXPECT_EQ(ids.cores[c], 5);
  }
  for (int c = 5; c < 8; ++c) EXPECT_EQ(ids.seen[c].load(), 0);
  EXPECT_EQ(stowage_core_id(), 0);
  EXPECT_EQ(stowage_num_cores(), 1);
}

struct BarrierWork {
  int values[4] = {0, 0, 0, 0};
  int seen[4] = {0, 0, 0, 0};
};

void unevenThenBarrier(void* arg) {
  auto* b = static_cast<BarrierWork*>(arg);
  const int c = stowage_core_id();
  STOWAGE_SIM_COMPUTE("before", 100 * (c + 1));
  b->values[c] = 10 * (c + 1);
  stowage_barrier();
  b->seen[c] = b->values[(c + 1) % 4];  // written by another core before the barrier
  STOWAGE_SIM_COMPUTE("after", 10);
}

TEST_F(SimCores, BarrierWaitsForTheLatestCore) {
  for (int repeat = 0; repeat < 20; ++repeat) {
    stowage_sim_reset();
    SetUp();
    STOWAGE_SIM_COMPUTE("setup", 7);
    BarrierWork b;
    stowage_run_on_cores(1, 4, unevenThenBarrier, &b);
    for (int c = 0; c < 4; ++c) {
      EXPECT_EQ(b.seen[c], 10 * ((c + 1) % 4 + 1)) << "core " << c;
      EXPECT_EQ(stowage_sim_core_barrier_wait_cycles(1, c), uint64_t(100 * (3 - c))) << "core " << c;
      EXPECT_EQ(stowage_sim_core_clock(1, c), 7u + 400u + 10u);  // cores start at the caller's clock
    }
    EXPECT_EQ(stowage_sim_now(), 417u);
  }
}

TEST_F(SimCores, BarrierOutsideCoresIsANoOp) {
  STOWAGE_SIM_COMPUTE("k", 5);
  stowage_barrier();
  EXPECT_EQ(stowage_sim_now(), 5u);
}

TEST_F(SimCores, PerCoreCopiesShareTheFixedAddressMapping) {
  const uintptr_t base = uniqueBase();
  stowage_sim_pool("l1", base, 512, 1024, 4);
  auto* whole = static_cast<uint8_t*>(STOWAGE_FIXED_ADDRESS(base, 3 * 1024 + 512));
  for (int c = 0; c < 4; ++c)
    EXPECT_EQ(STOWAGE_FIXED_ADDRESS(base + c * 1024, 512), static_cast<void*>(whole + c * 1024)) << "core " << c;
  stowage_sim_pool("l1", base, 512, 1024, 4);  // described again by the next net_run: accepted
}

void nothing(void*) {}

TEST_F(SimCores, TooManyCoresAborts) {
  EXPECT_DEATH(stowage_run_on_cores(1, 9, nothing, nullptr), "9 cores asked of target 1 \\('cluster'\\), which has 8");
}

TEST_F(SimCores, UndescribedTargetAborts) {
  EXPECT_DEATH(stowage_run_on_cores(3, 1, nothing, nullptr), "target 3 was not described");
}

void nested(void*) { stowage_run_on_cores(1, 2, nothing, nullptr); }

TEST_F(SimCores, NestedRunsAbort) {
  EXPECT_DEATH(stowage_run_on_cores(1, 2, nested, nullptr), "runs on cores do not nest");
}

}  // namespace
}  // namespace stowage
