// Bounds checks of the host simulator: a DMA, mvin or mvout that touches a described fixed pool must lie inside
// it (inside one core's copy for per-core pools), else the program aborts naming the pool and the address.
#include <string>
#include <vector>

#include "SimTestUtil.h"
#include "stowage_hal.h"

namespace stowage {
namespace {

using simtest::SimTest;
using simtest::uniqueBase;

class SimMemory : public SimTest {
 protected:
  void SetUp() override {
    SimTest::SetUp();
    stowage_sim_target(0, "host", 1, 0);
    stowage_sim_dma(0, 1, 4.0, 0.0);
    stowage_sim_target(1, "cluster", 4, 0);
    stowage_sim_dma(1, 1, 4.0, 0.0);
    stowage_sim_target(2, "gemmini", 1, 16);
    stowage_sim_dma(2, 1, 16.0, 0.0);
  }
};

TEST_F(SimMemory, DmaInsideThePoolIsAccepted) {
  const uintptr_t base = uniqueBase();
  stowage_sim_pool("spad", base, 256, 0, 1);
  auto* spad = static_cast<uint8_t*>(STOWAGE_FIXED_ADDRESS(base, 256));
  std::vector<uint8_t> src(256, 1);
  stowage_dma_wait(stowage_dma_start(0, spad, src.data(), 256, 1, 256, 256));
  EXPECT_EQ(spad[255], 1);
}

TEST_F(SimMemory, DmaPastThePoolEndAbortsWithThePoolName) {
  const uintptr_t base = uniqueBase();
  stowage_sim_pool("spad", base, 256, 0, 1);
  auto* spad = static_cast<uint8_t*>(STOWAGE_FIXED_ADDRESS(base, 256));
  std::vector<uint8_t> src(100, 1);
  EXPECT_DEATH(stowage_dma_start(0, spad + 200, src.data(), 100, 1, 100, 100),
               "DMA destination \\[0x[0-9a-f]+c8, 0x[0-9a-f]+12c\\) runs 44 bytes past the end of pool 'spad'");
}

TEST_F(SimMemory, StridedDmaReadingPastThePoolAborts) {
  const uintptr_t base = uniqueBase();
  stowage_sim_pool("tcm", base, 1024, 0, 1);
  auto* tcm = static_cast<uint8_t*>(STOWAGE_FIXED_ADDRESS(base, 1024));
  std::vector<uint8_t> dst(64);
  // 4 rows of 16 bytes, 320 bytes apart: the last row ends at 3 * 320 + 16 = 976 (inside), at offset 100: 1076.
  stowage_dma_wait(stowage_dma_start(0, dst.data(), tcm, 16, 4, 16, 320));
  EXPECT_DEATH(stowage_dma_start(0, dst.data(), tcm + 100, 16, 4, 16, 320), "DMA source .* pool 'tcm'");
}

TEST_F(SimMemory, MvinPastTheScratchpadAborts) {
  const uintptr_t base = uniqueBase();
  stowage_sim_pool("spad", base, 4096, 0, 1);
  auto* spad = static_cast<uint8_t*>(STOWAGE_FIXED_ADDRESS(base, 4096));
  std::vector<uint8_t> dram(64 * 16);
  EXPECT_DEATH(stowage_accel_mvin(dram.data(), spad + 4096 - 16 * 16, 64, 16, 16), "mvin destination .* pool 'spad'");
  EXPECT_DEATH(stowage_accel_mvout(dram.data(), spad + 4000, 16, 16, 16), "mvout source .* pool 'spad'");
}

TEST_F(SimMemory, DmaAcrossTwoCoreCopiesAborts) {
  const uintptr_t base = uniqueBase();
  stowage_sim_pool("l1", base, 512, 1024, 4);
  auto* l1 = static_cast<uint8_t*>(STOWAGE_FIXED_ADDRESS(base, 3 * 1024 + 512));
  std::vector<uint8_t> src(256);
  EXPECT_DEATH(stowage_dma_start(0, l1 + 400, src.data(), 256, 1, 256, 256), "not inside one copy of pool 'l1'");
}

struct Touch {
  uint8_t* l1;
  std::vector<uint8_t> src = std::vector<uint8_t>(64, 1);
};

void touchNeighbour(void* arg) {
  auto* t = static_cast<Touch*>(arg);
  const int c = stowage_core_id();
  if (c == 1) stowage_dma_start(0, t->l1 + 2 * 1024, t->src.data(), 64, 1, 64, 64);  // core 2's copy
}

TEST_F(SimMemory, CoreTouchingAnotherCoresCopyAborts) {
  const uintptr_t base = uniqueBase();
  stowage_sim_pool("l1", base, 512, 1024, 4);
  Touch t;
  t.l1 = static_cast<uint8_t*>(STOWAGE_FIXED_ADDRESS(base, 3 * 1024 + 512));
  EXPECT_DEATH(stowage_run_on_cores(1, 4, touchNeighbour, &t), "by core 1 of target 1 is in core 2's copy of pool 'l1'");
}

TEST_F(SimMemory, PoolDescribedDifferentlyAborts) {
  const uintptr_t base = uniqueBase();
  stowage_sim_pool("spad", base, 256, 0, 1);
  EXPECT_DEATH(stowage_sim_pool("spad", base, 512, 0, 1), "pool 'spad' described twice differently");
}

TEST_F(SimMemory, StraddlingAMappedRegionNamesThePool) {
  const uintptr_t base = uniqueBase();
  stowage_sim_pool("acc", base, 256, 0, 1);
  EXPECT_DEATH(STOWAGE_FIXED_ADDRESS(base + 128, 256), "straddles the mapped region .* \\(pool 'acc'\\)");
}

TEST_F(SimMemory, ManyPoolsAndRegionsAreDescribed) {
  // A pool of many non-contiguous banks is described one pool per bank (hexagon-like VTCM in 300 blocks of 1 KiB
  // here): more than the 64 pools and 256 regions the simulator once had room for.
  const uintptr_t base = uniqueBase();
  constexpr int kBanks = 300;
  for (int b = 0; b < kBanks; ++b) stowage_sim_pool(("vtcm.bank" + std::to_string(b)).c_str(), base + uintptr_t(b) * 4096, 1024, 0, 1);
  std::vector<uint8_t> src(1024, 7);
  for (int b : {0, 150, kBanks - 1}) {
    auto* bank = static_cast<uint8_t*>(STOWAGE_FIXED_ADDRESS(base + uintptr_t(b) * 4096, 1024));
    stowage_dma_wait(stowage_dma_start(0, bank, src.data(), 1024, 1, 1024, 1024));
    EXPECT_EQ(bank[1023], 7) << b;
  }
  auto* last = static_cast<uint8_t*>(STOWAGE_FIXED_ADDRESS(base + uintptr_t(kBanks - 1) * 4096, 1024));
  EXPECT_DEATH(stowage_dma_start(0, last + 512, src.data(), 1024, 1, 1024, 1024), "past the end of pool 'vtcm.bank299'");
}

}  // namespace
}  // namespace stowage
