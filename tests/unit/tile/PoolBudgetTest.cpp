// Unit tests of the pool budget (plan/PoolBudget.h) and of the tiler keeping within it: a pinned activation counts in
// its pool at the steps it lives, and ResNet-8 on a 256 KiB VTCM with an activation pinned there plans on the first
// tiling (the tiles, residents and prefetched weights leave room for it; the driver used to tile again, twice, and fail);
// a VTCM too small for the pinned activation and the tiles is an error naming the pool and the size that would fit.
#include "ReleaseOnly.h"
#include <gtest/gtest.h>

#include <algorithm>

#include "ZooTestGraphs.h"
#include "stowage/driver/Compiler.h"
#include "stowage/plan/PoolBudget.h"
#include "stowage/target/Board.h"

namespace stowage {
namespace {

/// hexagon-vtcm with a VTCM of `bytes` in one bank and 'stack1.block0.bn2' (made and read by HVX layers) pinned there.
Board vtcmWithPinnedActivation(size_t bytes) {
  Board b = testing::exampleBoard("hexagon-vtcm");
  MemoryPool& vtcm = b.pools[static_cast<size_t>(testing::poolIndex(b, "vtcm"))];
  vtcm.sizeBytes = bytes;
  vtcm.banks = 1;
  vtcm.bankSizeBytes = 0;
  vtcm.bankBases.clear();
  b.pins.push_back(PoolPin{"stack1.block0.bn2", "vtcm", "test pin"});
  return b;
}

TEST(PoolBudget, APinnedActivationCountsInItsPoolWhileItLives) {
  const Board board = vtcmWithPinnedActivation(8 * 1024 * 1024);
  const int vtcm = testing::poolIndex(board, "vtcm");
  auto r = compileGraphOnBoard(testing::foldedZooGraph("resnet8"), board, testing::quickPlannerOptions());
  ASSERT_TRUE(r.ok()) << r.error().render();
  const Graph& g = r->graph;
  const PoolBudget budget = poolBudget(g, board, PoolBudgetOptions{});
  int first = -1, last = -1;
  for (const PlacedBuffer& b : r->plan.buffers)
    if (b.tensor != kNoTensor && g.tensor(b.tensor).name == "stack1.block0.bn2") {
      first = b.firstStep;
      last = b.endStep - 1;
      EXPECT_EQ(b.slot.pool, vtcm);
    }
  ASSERT_GE(first, 0);
  for (int s = 0; s < static_cast<int>(g.nodes.size()); ++s)
    EXPECT_EQ(budget.forcedBytes(vtcm, s), s >= first && s <= last ? 65536u : 0u) << "step " << s;
  EXPECT_EQ(budget.freeBytes(vtcm, first, last + 1), 8u * 1024 * 1024 - 65536);
  EXPECT_EQ(budget.freeBytes(vtcm, last + 1, last + 2), 8u * 1024 * 1024);
  EXPECT_FALSE(budget.freeBytes(testing::poolIndex(board, "weights"), 0, 1)) << "unlimited";
  const std::string why = budget.why(board, vtcm, 0, static_cast<int>(g.nodes.size()));
  EXPECT_NE(why.find("'vtcm' holds 65536 bytes"), std::string::npos) << why;
  EXPECT_NE(why.find("'stack1.block0.bn2'"), std::string::npos) << why;
}

TEST(PoolBudget, TilesResidentsAndPrefetchLeaveRoomForWhatMustLiveInThePool) {
  STOWAGE_RELEASE_BUILD_ONLY("a whole model through the tile simulator");
  // 256 KiB of VTCM, 64 KiB of it pinned to one activation at steps 2-3. Without the budget the tiler filled VTCM at
  // step 2 with tiles and the plan failed, tiled again without the prefetch and again without residents ("is too
  // small ... 296 KiB would fit them"). With it the first tiling plans.
  const Board board = vtcmWithPinnedActivation(256 * 1024);
  const int vtcm = testing::poolIndex(board, "vtcm");
  const Graph g = testing::foldedZooGraph("resnet8");
  const CompileOptions o = testing::quickPlannerOptions();
  auto r = compileGraphOnBoard(g, board, o);
  ASSERT_TRUE(r.ok()) << r.error().render();
  bool pinned = false;
  for (const PlacedBuffer& b : r->plan.buffers)
    if (b.tensor != kNoTensor && r->graph.tensor(b.tensor).name == "stack1.block0.bn2") pinned = b.slot.pool == vtcm;
  EXPECT_TRUE(pinned);
  EXPECT_FALSE(r->plan.offloaded.empty());
  const bool residents = std::any_of(r->plan.remarks.begin(), r->plan.remarks.end(),
                                     [](const std::string& m) { return m.rfind("resident: ", 0) == 0; });
  EXPECT_TRUE(residents);
  // The remarks say why a prefetch was left out: what can only live in VTCM at that step.
  const bool why = std::any_of(r->plan.remarks.begin(), r->plan.remarks.end(), [](const std::string& m) {
    return m.rfind("prefetch: ", 0) == 0 && m.find("that can only live there ('stack1.block0.bn2' 65536 bytes)") != std::string::npos;
  });
  EXPECT_TRUE(why);
  auto onCpu = compileGraph(g, o);
  ASSERT_TRUE(onCpu.ok()) << onCpu.error().render();
  testing::expectSameHostOutputs(*r, *onCpu, testing::patternInputs(g));
}

TEST(PoolBudget, APoolTooSmallForWhatMustLiveThereIsNamedByThePlan) {
  // 64 KiB of VTCM, all of it the pinned activation's: the layers keep their tiles there all the same (not the CPU,
  // which cannot reach the pin), and the plan's error names the pool, the buffers and the size that would fit.
  auto r = compileGraphOnBoard(testing::foldedZooGraph("resnet8"), vtcmWithPinnedActivation(64 * 1024), testing::quickPlannerOptions());
  ASSERT_FALSE(r.ok());
  const std::string text = r.error().render();
  EXPECT_NE(text.find("pool 'vtcm': is too small"), std::string::npos) << text;
  EXPECT_NE(text.find("activation 'stack1.block0.bn2': 65536 bytes"), std::string::npos) << text;
  EXPECT_NE(text.find("would fit them"), std::string::npos) << text;
  EXPECT_EQ(text.find("planned again"), std::string::npos) << text;
}

}  // namespace
}  // namespace stowage
