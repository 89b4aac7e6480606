// Unit tests of tile/CpuStreaming: on a CPU-only board with a DMA and a small fast pool, a layer whose working set
// exceeds the pool streams through it (cores mode on the CPU, tiles within half of the pool, a remark), a small
// layer does not, nothing streams without a DMA, a rule's `scratch` list chooses the pool, and the planned
// program keeps the fast pool within its capacity.
#include <gtest/gtest.h>

#include <algorithm>

#include "ZooTestGraphs.h"
#include "stowage/driver/Compiler.h"
#include "stowage/target/Board.h"
#include "stowage/tile/CpuStreaming.h"

namespace stowage {
namespace {

Graph resnet8() { return testing::foldedZooGraph("resnet8"); }

/// A CPU with a DMA (unless `dma` is false), a 32 KiB fast pool and a big slow one; `extra` is appended.
Board mcuBoard(bool dma, const std::string& extra = "") {
  std::string text = R"(
[[targets]]
name = "cpu"
kind = "cpu"
)";
  if (dma) text += "dma_channels = 2\ndma_bytes_per_cycle = 4\ndma_setup_cycles = 20\n";
  text += R"(
[[pools]]
name = "dtcm"
size = "32KiB"
alignment = 8
read_bytes_per_cycle = 8
write_bytes_per_cycle = 8
latency_cycles = 1
[[pools]]
name = "sram"
size = "4MiB"
alignment = 8
read_bytes_per_cycle = 2
write_bytes_per_cycle = 2
latency_cycles = 20
[[pools]]
name = "tcm2"
size = "32KiB"
alignment = 8
)" + extra;
  auto b = parseBoardToml(text, "mcu.toml");
  EXPECT_TRUE(b.ok()) << (b.ok() ? "" : b.error().render());
  return *b;
}

TEST(CpuStreaming, LargeLayersStreamThroughTheFastPoolSmallOnesDoNot) {
  const Board board = mcuBoard(true);
  const Graph g = resnet8();
  const TiledProgram t = tileProgram(g, board, TileOptions{});
  ASSERT_FALSE(t.offloaded.empty());
  EXPECT_TRUE(t.scratchPools.empty()) << "activations may still use the fast pool";
  for (const OffloadedLayer& l : t.offloaded) {
    const Node& n = g.nodes[static_cast<size_t>(l.step)];
    EXPECT_EQ(l.target, 0);
    EXPECT_EQ(l.mode, "cores");
    EXPECT_EQ(l.cores, 1);
    EXPECT_GT(layerWorkingSetBytes(g, n), 32u * 1024u) << n.name;
  }
  size_t perStep[256] = {};
  for (const ScratchRequest& r : t.scratch) {
    EXPECT_EQ(board.pools[static_cast<size_t>(r.pool)].name, "dtcm") << r.name;
    perStep[r.step] += r.sizeBytes;
  }
  for (size_t s : perStep) EXPECT_LE(s, 16u * 1024u) << "tiles take at most half of the pool";
  // Every tileable layer that fits the pool runs whole: the final Gemm (64 x 10 floats) is one of them.
  bool smallGemmStays = false;
  for (size_t step = 0; step < g.nodes.size(); ++step) {
    const Node& n = g.nodes[step];
    const bool streamed = std::any_of(t.offloaded.begin(), t.offloaded.end(), [&](const OffloadedLayer& l) { return l.step == static_cast<int>(step); });
    if (n.op == OpKind::Gemm) {
      EXPECT_LE(layerWorkingSetBytes(g, n), 32u * 1024u);
      EXPECT_FALSE(streamed);
      smallGemmStays = true;
    }
  }
  EXPECT_TRUE(smallGemmStays);
  size_t streamRemarks = 0;
  for (const std::string& r : t.remarks)
    if (r.rfind("streams node '", 0) == 0) {
      ++streamRemarks;
      EXPECT_NE(r.find("through 'dtcm' in "), std::string::npos) << r;
      EXPECT_NE(r.find("> capacity 32768 bytes"), std::string::npos) << r;
    }
  EXPECT_EQ(streamRemarks, t.offloaded.size());
}

TEST(CpuStreaming, NoDmaNoStreaming) {
  const TiledProgram t = tileProgram(resnet8(), mcuBoard(false), TileOptions{});
  EXPECT_TRUE(t.offloaded.empty());
  EXPECT_TRUE(t.scratch.empty());
}

TEST(CpuStreaming, RuleScratchListChoosesThePool) {
  const Board board = mcuBoard(true, "[[rules]]\nop = \"Conv\"\nscratch = [\"tcm2\"]\n");
  const Graph g = resnet8();
  const TiledProgram t = tileProgram(g, board, TileOptions{});
  ASSERT_FALSE(t.scratch.empty());
  // The rule names Conv: the convs' tiles use tcm2, the streamed residual Adds the board's default fast pool.
  int convTiles = 0, addTiles = 0;
  for (const ScratchRequest& r : t.scratch) {
    const bool conv = g.nodes[static_cast<size_t>(r.step)].op == OpKind::Conv;
    (conv ? convTiles : addTiles) += 1;
    EXPECT_EQ(board.pools[static_cast<size_t>(r.pool)].name, conv ? "tcm2" : "dtcm") << r.name;
  }
  EXPECT_GT(convTiles, 0);
}

TEST(CpuStreaming, PlannedProgramKeepsTheFastPoolWithinCapacity) {
  const Board board = mcuBoard(true);
  auto r = compileGraphOnBoard(resnet8(), board, CompileOptions{});
  ASSERT_TRUE(r.ok()) << r.error().render();
  EXPECT_FALSE(r->plan.offloaded.empty());
  const PoolUse& dtcm = r->plan.pools[0];
  EXPECT_GT(dtcm.usedBytes, 0u);
  EXPECT_LE(dtcm.usedBytes, 32u * 1024u);
  EXPECT_NE(r->code.source.text.find("_core(&a);"), std::string::npos) << "the CPU runs its tiles itself";
  EXPECT_EQ(r->code.source.text.find("stowage_run_on_cores("), std::string::npos);
}

}  // namespace
}  // namespace stowage
