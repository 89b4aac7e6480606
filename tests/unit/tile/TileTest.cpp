// Unit tests of tile/: tile choice fits the scratch pools and their banks, ping-pong halves in different banks,
// fallbacks with reasons, the planner honours pinned banks, the validator rejects a ping-pong pair in one bank,
// and the board keys of accelerators (engine, DMA, intrinsics, per_core_stride) with located errors.
#include "ReleaseOnly.h"
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "ZooTestGraphs.h"
#include "stowage/codegen/CNames.h"
#include "stowage/driver/Compiler.h"
#include "stowage/plan/PlanProgram.h"
#include "stowage/plan/ValidateProgram.h"
#include "stowage/target/Board.h"
#include "stowage/tile/CostModel.h"
#include "stowage/tile/TileChoice.h"
#include "stowage/tile/TileGeometry.h"
#include "stowage/tile/TileProgram.h"

namespace stowage {
namespace {

using testing::exampleBoard;

/// Every offloaded layer's tile buffers fit each bank of their pool, and the two halves of a pair differ in bank.
void expectFits(const Board& board, const TiledProgram& t) {
  std::map<std::tuple<int, int, int>, size_t> perBank;  // step, pool, bank -> bytes
  for (size_t i = 0; i < t.scratch.size(); ++i) {
    const ScratchRequest& r = t.scratch[i];
    const MemoryPool& pool = board.pools[static_cast<size_t>(r.pool)];
    perBank[{r.step, r.pool, r.bank}] += r.sizeBytes;
    if (pool.banks > 1) {
      ASSERT_GE(r.bank, 0) << r.name;
      if (r.pairedWith >= 0) {
        EXPECT_NE(t.scratch[static_cast<size_t>(r.pairedWith)].bank, r.bank) << r.name;
      }
    }
  }
  for (const auto& [key, bytes] : perBank) {
    const MemoryPool& pool = board.pools[static_cast<size_t>(std::get<1>(key))];
    const size_t capacity = pool.banks > 1 ? pool.bankSizeBytes : *pool.sizeBytes;
    EXPECT_LE(bytes, capacity) << "step " << std::get<0>(key) << " pool " << pool.name << " bank " << std::get<2>(key);
  }
}

TEST(TileChoice, ResNet8OnGemminiFitsBanksAndPairsApart) {
  const Board board = exampleBoard("gemmini-like");
  const Graph g = testing::foldedZooGraph("resnet8");
  const TiledProgram t = tileProgram(g, board, TileOptions{});
  ASSERT_FALSE(t.offloaded.empty());
  expectFits(board, t);
  for (const OffloadedLayer& l : t.offloaded) {
    EXPECT_EQ(l.mode, "engine");
    EXPECT_TRUE(l.doubleBuffer);
    EXPECT_GT(l.tiles, 0);
    EXPECT_GE(l.totalCycles, std::max(l.computeCycles, l.dmaCycles / 2)) << "step " << l.step;
    EXPECT_FALSE(l.buffers[0][1].empty()) << "double buffering needs a second input half";
  }
}

TEST(TileChoice, HexagonPutsPingAndPongInTheTwoVtcmBlocks) {
  const Board board = exampleBoard("hexagon-vtcm");
  const Graph g = testing::foldedZooGraph("resnet8");
  const TiledProgram t = tileProgram(g, board, TileOptions{});
  ASSERT_FALSE(t.offloaded.empty());
  expectFits(board, t);
  bool sawBank1 = false;
  for (const ScratchRequest& r : t.scratch) sawBank1 = sawBank1 || r.bank == 1;
  EXPECT_TRUE(sawBank1);
  // Nodes the accelerator lists but cannot tile stay on the CPU with a reason.
  bool relu = false;
  for (const std::string& r : t.remarks) relu = relu || (r.find("fallback: node") != std::string::npos && r.find("(Relu)") != std::string::npos);
  EXPECT_TRUE(relu);
}

TEST(TileChoice, NoDoubleBufferUsesOneHalf) {
  const Board board = exampleBoard("gemmini-like");
  const Graph g = testing::foldedZooGraph("ds-cnn");
  const TiledProgram t = tileProgram(g, board, TileOptions{false});
  ASSERT_FALSE(t.offloaded.empty());
  for (const ScratchRequest& r : t.scratch) EXPECT_EQ(r.pairedWith, -1) << r.name;
  for (const OffloadedLayer& l : t.offloaded) EXPECT_TRUE(l.buffers[0][1].empty());
}

TEST(TileChoice, SmallL1FallsBackWithTheSizeInTheRemark) {
  Board board = exampleBoard("gap8-cluster");
  board.pools[0].sizeBytes = 64;  // l1: no tile fits
  board.pools[0].bankSizeBytes = 64;
  const Graph g = testing::foldedZooGraph("resnet8");
  const TiledProgram t = tileProgram(g, board, TileOptions{});
  EXPECT_TRUE(t.offloaded.empty());
  bool sized = false;
  for (const std::string& r : t.remarks) sized = sized || r.find("does not fit the scratch pools 'l1'") != std::string::npos;
  EXPECT_TRUE(sized);
}

TEST(TileChoice, StoreBoundIsBelowEveryEstimate) {
  // chooseTiles skips a tiling whose stores alone (storeCyclesAtLeast) are slower than the best so far, without
  // building its schedule; that is only safe if no schedule of the tiling is estimated below it. Every layer of the
  // zoo DS-CNN, ResNet-8 and autoencoder, tile sizes from 1 row / the channel step up, 1 to all cores, one or two
  // buffer halves, both orders, on a matrix engine and on cores with one and with two DMA channels.
  int checked = 0;
  for (const std::string board : {"gemmini-like", "hexagon-vtcm", "gap8-cluster"}) {
    const Board b = testing::exampleBoard(board);
    for (const std::string model : {"ds-cnn", "resnet8", "autoencoder"}) {
      const Graph g = testing::foldedZooGraph(model);
      for (const Node& n : g.nodes) {
        const auto shape = layerShapeOf(g, n).shape;
        if (!shape) continue;
        const LayerShape& s = *shape;
        for (const Target& target : b.targets) {
          if (target.kind != TargetKind::Accelerator) continue;
          const int maxCores = target.engineDim > 0 ? 1 : target.cores;
          for (int64_t th : {int64_t{1}, int64_t{2}, int64_t{5}, s.rows})
            for (int64_t tn : {s.channelStep, 2 * s.channelStep, s.channels})
              for (int cores = 1; cores <= maxCores; cores *= 2)
                for (bool doubled : {false, true})
                  for (TileOrder order : {TileOrder::ChannelsOuter, TileOrder::RowsOuter}) {
                    if (th > s.rows || tn > s.channels) continue;
                    const OperandBuffers buffers = OperandBuffers::uniform(doubled);
                    const TileSchedule sched = scheduleTiles(s, th, tn, cores, buffers, order);
                    EXPECT_LE(storeCyclesAtLeast(target, s, th, tn, cores), estimateLayer(target, s, sched, buffers).total)
                        << board << " " << n.name << " " << th << " x " << tn << " on " << cores;
                    ++checked;
                  }
        }
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

TEST(TileChoice, SimulatorTimesWithTheBoardsExactDmaNumbers) {
  // The generated code tells the simulator the DMA rate and setup; printed with 6 significant digits, a setup of
  // 1,234,567.5 cycles became 1.23457e+06 and 15.9999999 bytes per cycle became 16, and every layer's simulated
  // cycles drifted from the estimate (found by a randomized board sweep).
  const Graph g = testing::foldedZooGraph("autoencoder");
  for (const auto& [rate, setup] : {std::pair{15.9999999, 100.0}, std::pair{16.0, 1234567.5}}) {
    Board board = testing::exampleBoard("gemmini-like");
    for (Target& t : board.targets)
      if (t.engineDim > 0) {
        t.dmaBytesPerCycle = rate;
        t.dmaSetupCycles = setup;
      }
    auto r = compileGraphOnBoard(g, board, testing::quickPlannerOptions());
    ASSERT_TRUE(r.ok()) << r.error().render();
    EXPECT_NE(r->code.source.text.find(fmt::format("stowage_sim_dma(1, 1, {}, {})", doubleLiteral(rate), doubleLiteral(setup))), std::string::npos);
    testing::expectLayersRunAsEstimated(*r, testing::patternInputs(g));
  }
}

TEST(TileChoice, CoreCountsTriedGrowLogarithmically) {
  EXPECT_EQ(coreCountCandidates(1), (std::vector<int>{1}));
  EXPECT_EQ(coreCountCandidates(4), (std::vector<int>{4, 3, 2, 1}));
  EXPECT_EQ(coreCountCandidates(8), (std::vector<int>{8, 7, 6, 5, 4, 3, 2, 1}));
  EXPECT_EQ(coreCountCandidates(32), (std::vector<int>{32, 27, 22, 18, 15, 12, 10, 8, 7, 6, 5, 4, 3, 2, 1}));
  const std::vector<int> many = coreCountCandidates(4096);
  EXPECT_EQ(many.front(), 4096);
  EXPECT_EQ(many.back(), 1);
  EXPECT_LT(many.size(), 50u);
  for (size_t i = 1; i < many.size(); ++i) {
    EXPECT_LT(many[i], many[i - 1]);
    if (many[i] >= 8) {
      EXPECT_GE(many[i] * 10, many[i - 1] * 8) << "no gap wider than about 15% above 8 cores";
    }
  }
}

TEST(TileChoice, SearchObserverSeesEveryTilingAndChangesNoChoice) {
  STOWAGE_RELEASE_BUILD_ONLY("whole models through the tile simulator, 10-50 s under ASan");
  // The observer (bench/accel's tiling-space table) sees the chosen tiling among the candidates of the layer's last
  // search, with its estimate, and the slower tilings the search would otherwise prune; the choice is the same as
  // without an observer. A matrix engine and cores, no resident operands or weights across layers (the chosen
  // tiling's estimate is then the layer's).
  // One model per board (the test is among the slowest under ASan): ResNet-8 on the engine, DS-CNN on cores.
  for (const auto& [board, model] : {std::pair<std::string, std::string>{"gemmini-like", "resnet8"}, {"hexagon-vtcm", "ds-cnn"}}) {
    const Board b = exampleBoard(board);
    {
      const Graph g = testing::foldedZooGraph(model);
      struct Seen {
        int64_t rowTile, channelTile;
        int cores;
        TileOrder order;
        RowBlocks rowBlocks;
        OperandBuffers buffers;
        uint64_t total;
      };
      std::map<int, std::vector<Seen>> seen;
      std::map<int, int> searches;
      TileSearchObserver observer;
      observer.begin = [&](int step) {
        seen[step].clear();
        ++searches[step];
      };
      observer.candidate = [&](int step, const Target&, const LayerShape&, const TileChoice& c) {
        seen[step].push_back({c.rowTile, c.channelTile, c.cores, c.order, c.rowBlocks, c.buffers, c.cost.total});
      };
      TileOptions plain{true, false, false};
      plain.handInputs = false;  // the chooser's own estimates (no input handover between engine layers)
      TileOptions watched = plain;
      watched.observer = &observer;
      const TiledProgram without = tileProgram(g, b, plain);
      const TiledProgram with = tileProgram(g, b, watched);
      ASSERT_EQ(with.offloaded.size(), without.offloaded.size()) << board << " " << model;
      ASSERT_FALSE(with.offloaded.empty());
      for (size_t i = 0; i < with.offloaded.size(); ++i) {
        const OffloadedLayer& l = with.offloaded[i];
        const OffloadedLayer& o = without.offloaded[i];
        const std::string where = board + " " + model + " step " + std::to_string(l.step);
        EXPECT_EQ(l.step, o.step) << where;
        EXPECT_EQ(std::tie(l.rowTile, l.channelTile, l.cores, l.rowsOuter, l.firstRows, l.lastRows, l.rampRows, l.totalCycles),
                  std::tie(o.rowTile, o.channelTile, o.cores, o.rowsOuter, o.firstRows, o.lastRows, o.rampRows, o.totalCycles))
            << where;
        EXPECT_EQ(operandBuffersOf(l), operandBuffersOf(o)) << where;
        EXPECT_EQ(searches[l.step], 1) << where;
        const std::vector<Seen>& all = seen[l.step];
        const bool chosenSeen = std::any_of(all.begin(), all.end(), [&](const Seen& c) {
          return c.rowTile == l.rowTile && c.channelTile == l.channelTile && c.cores == l.cores && c.order == tileOrderOf(l) &&
                 c.rowBlocks == rowBlocksOf(l) && c.buffers == operandBuffersOf(l) && c.total == l.totalCycles;
        });
        EXPECT_TRUE(chosenSeen) << where;
        // Unpruned: the one-row, smallest-channel tiling (every tile a setup) is among them, well slower than the choice.
        const bool smallest = std::any_of(all.begin(), all.end(), [&](const Seen& c) { return c.rowTile == 1 && c.total > l.totalCycles; });
        EXPECT_TRUE(smallest) << where << ": " << all.size() << " tilings seen";
      }
    }
  }
}

TEST(TileChoice, RaggedVariantsOfLargeTilesAreFound) {
  // A uniform tiling of few large tiles is slow (its first load and last store are long) but may be the fastest once
  // its first and last row blocks are smaller; the search tries ragged variants of the tilings with the lowest floor
  // too, not only of the cheapest uniform ones. No tiling the observer sees (every uniform tiling, ragged variants of
  // the 32 cheapest) is faster than the choice. Zoo ResNet-8 on gemmini-like: `stack2.block0.conv2` was 13,164
  // estimated cycles alone with the variants of the 4 cheapest uniform tilings; 12,780 with blocks of 16 rows whose
  // first has 5 and last 3 (fails without the floor-ordered variants: 4 layers slower).
  const Board b = exampleBoard("gemmini-like");
  const Graph g = testing::foldedZooGraph("resnet8");
  std::map<int, uint64_t> fastest;
  TileSearchObserver observer;
  observer.begin = [&](int step) { fastest.erase(step); };
  observer.candidate = [&](int step, const Target&, const LayerShape&, const TileChoice& c) {
    auto [it, fresh] = fastest.try_emplace(step, c.cost.total);
    if (!fresh) it->second = std::min(it->second, c.cost.total);
  };
  TileOptions options{true, false, false};
  options.observer = &observer;
  const TiledProgram t = tileProgram(g, b, options);
  ASSERT_FALSE(t.offloaded.empty());
  for (const OffloadedLayer& l : t.offloaded) {
    ASSERT_EQ(fastest.count(l.step), 1u);
    EXPECT_LE(l.totalCycles, fastest[l.step]) << g.nodes[static_cast<size_t>(l.step)].name;
  }
}

TEST(TileChoice, AFullMainMemoryIsNotRetiled) {
  // When planning fails, the pipeline does not tile again (the tiler worked within the planner's pool budget,
  // plan/PoolBudget.h): the error is the plan's. The observer counts the tile searches: as many with a too-small
  // `dram` as when it fits (one per offloaded layer), and the error names the pool and does not say it was planned
  // again.
  const Graph g = testing::foldedZooGraph("resnet8");
  auto searches = [&](const Board& b, bool& ok, std::string& error) {
    int n = 0;
    TileSearchObserver observer;
    observer.begin = [&](int) { ++n; };
    CompileOptions o = testing::quickPlannerOptions();
    o.tileSearchObserver = &observer;
    auto r = compileGraphOnBoard(g, b, o);
    ok = r.ok();
    error = ok ? "" : r.error().render();
    return n;
  };
  Board fits = exampleBoard("gemmini-like");  // weights prefetched across layers in the scratchpad
  Board full = fits;
  for (MemoryPool& p : full.pools)
    if (p.name == "dram") p.sizeBytes = 4096;
  bool ok = false;
  std::string error;
  const int planned = searches(fits, ok, error);
  ASSERT_TRUE(ok) << error;
  EXPECT_EQ(searches(full, ok, error), planned);
  ASSERT_FALSE(ok);
  EXPECT_NE(error.find("pool 'dram'"), std::string::npos) << error;
  EXPECT_EQ(error.find("planned again"), std::string::npos) << error;
}

TEST(TileChoice, ClusterSplitsTilesOverCores) {
  const Board board = exampleBoard("dsp-cluster4");
  const Graph g = testing::foldedZooGraph("resnet8");
  const TiledProgram t = tileProgram(g, board, TileOptions{});
  ASSERT_FALSE(t.offloaded.empty());
  expectFits(board, t);
  int multi = 0;
  for (const OffloadedLayer& l : t.offloaded) multi += l.cores == 4 ? 1 : 0;
  EXPECT_GT(multi, 0);
}

TEST(CostModel, Formulas) {
  EXPECT_EQ(engineComputeCycles(16, 100, 32, 20), 2u * 2u * 116u);
  EXPECT_EQ(coreComputeCycles(16, 33), 3u);
  Target t;
  t.dmaBytesPerCycle = 16;
  t.dmaSetupCycles = 100;
  EXPECT_EQ(dmaCycles(t, TileCopy{0, 3, 20, 40}), 100u + 4u);
  EXPECT_EQ(dmaCycles(t, TileCopy{0, 0, 0, 0}), 0u);
}

TEST(PlanScratch, PlannerHonoursPinnedBanks) {
  const Board board = exampleBoard("gemmini-like");
  const Graph g = testing::foldedZooGraph("resnet8");
  const TiledProgram t = tileProgram(g, board, TileOptions{});
  PlanOptions o;
  o.nodeTargets = t.nodeTargets;
  o.scratch = t.scratch;
  o.scratchPools = t.scratchPools;
  auto plan = planProgram(g, board, o);
  ASSERT_TRUE(plan.ok()) << plan.error().render();
  // Tile buffers live during their layer's step; a weight buffer whose first block the layer before on the engine
  // loads lives from that layer's step (tile/WeightPrefetch.h), and so does an input buffer whose first tile it
  // loads (tile/InputHandover.h).
  std::map<std::string, int> prefetchedFrom;
  bool handedOver = false;
  for (const OffloadedLayer& l : t.offloaded)
    for (const OffloadedLayer& n : t.offloaded) {
      for (const WeightPrefetchTo& to : l.prefetches)
        if (n.step == to.step) prefetchedFrom[n.buffers[1][0]] = l.step;
      if (n.step == l.handsInputTo) {
        prefetchedFrom[n.buffers[0][0]] = l.step;
        handedOver = true;
      }
    }
  EXPECT_FALSE(prefetchedFrom.empty());
  EXPECT_TRUE(handedOver);
  int scratch = 0;
  for (const PlacedBuffer& b : plan->buffers) {
    if (b.role != BufferRole::Scratch) continue;
    ++scratch;
    if (b.pinnedBank >= 0) {
      EXPECT_EQ(b.slot.bank, b.pinnedBank) << b.name;
    }
    const auto from = prefetchedFrom.find(b.name);
    if (from == prefetchedFrom.end()) {
      EXPECT_EQ(b.endStep, b.firstStep + 1) << b.name;
    } else {
      EXPECT_EQ(b.firstStep, from->second) << b.name;
      EXPECT_GT(b.endStep, b.firstStep + 1) << b.name;
    }
    EXPECT_TRUE(board.pools[static_cast<size_t>(b.slot.pool)].name == "spad" || board.pools[static_cast<size_t>(b.slot.pool)].name == "acc");
  }
  EXPECT_EQ(scratch, static_cast<int>(t.scratch.size()));
  // No activation took the scratchpad away from the tiles.
  for (const PlacedBuffer& b : plan->buffers)
    if (b.role == BufferRole::Activation) {
      EXPECT_EQ(board.pools[static_cast<size_t>(b.slot.pool)].name, "dram");
    }
}

TEST(PlanScratch, ValidatorRejectsPingPongInOneBank) {
  const Board board = exampleBoard("gemmini-like");
  ProgramPlan plan;
  plan.board = board;
  plan.steps = 1;
  const int spad = 1;
  ASSERT_EQ(board.pools[spad].name, "spad");
  for (int h = 0; h < 2; ++h) {
    PlacedBuffer b;
    b.role = BufferRole::Scratch;
    b.name = "s0_x" + std::to_string(h);
    b.sizeBytes = 1024;
    b.firstStep = 0;
    b.endStep = 1;
    b.candidates = {spad};
    b.slot = {spad, 0};
    b.offset = static_cast<size_t>(h) * 1024;
    b.pairedWith = 1 - h;
    plan.buffers.push_back(b);
  }
  Status s = validateProgramPlan(plan);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("ping-pong"), std::string::npos) << s.error().message;
  EXPECT_NE(s.error().message.find("s0_x0"), std::string::npos);
  // In different banks the same pair is fine.
  plan.buffers[1].slot.bank = 1;
  plan.buffers[1].offset = board.pools[spad].bankSizeBytes;
  EXPECT_TRUE(validateProgramPlan(plan).ok());
  // A buffer pinned to a bank must be there.
  plan.buffers[1].pinnedBank = 2;
  EXPECT_FALSE(validateProgramPlan(plan).ok());
}

TEST(BoardAccel, EngineDmaAndIntrinsicKeys) {
  auto b = parseBoardToml(R"(
[[targets]]
name = "cpu"
[[targets]]
name = "npu"
kind = "accelerator"
ops = ["Conv"]
engine_dim = 8
engine_dtypes = ["int8", "float32"]
dma_channels = 2
dma_bytes_per_cycle = 8.5
dma_setup_cycles = 40
[targets.intrinsics]
mvin = { name = "npu_load", args = ["local", "dram", "rows", "row_bytes", "dram_stride"] }
[[pools]]
name = "ws"
[[pools]]
name = "l1"
size = "4KiB"
placement = "fixed"
base = 0x1000
per_core_stride = "8KiB"
access = ["npu"]
)",
                          "b.toml");
  ASSERT_TRUE(b.ok()) << b.error().render();
  const Target& npu = b->targets[1];
  EXPECT_EQ(npu.engineDim, 8);
  EXPECT_TRUE(npu.engineRuns("float32"));
  EXPECT_EQ(npu.dmaChannels, 2);
  EXPECT_DOUBLE_EQ(npu.dmaBytesPerCycle, 8.5);
  EXPECT_EQ(npu.intrinsic("mvin").name, "npu_load");
  EXPECT_EQ(npu.intrinsic("mvin").args.front(), "local");
  EXPECT_EQ(npu.intrinsic("mvout").name, "stowage_accel_mvout");
  EXPECT_EQ(b->findPool("l1")->perCoreStride, 8192u);
}

TEST(BoardAccel, ErrorsNameFileLineAndKey) {
  auto expectError = [](const std::string& text, const std::string& where, const std::string& what) {
    auto b = parseBoardToml(text, "b.toml");
    ASSERT_FALSE(b.ok()) << text;
    EXPECT_NE(b.error().location.find(where), std::string::npos) << b.error().render();
    EXPECT_NE(b.error().message.find(what), std::string::npos) << b.error().render();
  };
  const std::string head = "[[targets]]\nname = \"cpu\"\n[[pools]]\nname = \"ws\"\n[[targets]]\nname = \"npu\"\nkind = \"accelerator\"\n";
  expectError(head + "engine_dtypes = [\"int4\"]\n", "b.toml:8", "engine_dtypes");
  expectError(head + "dma_channels = 0\n", "b.toml:8", "dma_channels");
  // Cost-model numbers whose cycle counts would not fit 64 bits (1e19 wrapped; 1e300 was an undefined conversion).
  expectError(head + "dma_setup_cycles = 1e19\n", "b.toml:8", "'dma_setup_cycles' must be a number from 0 to 1e9");
  expectError(head + "dma_bytes_per_cycle = 1e-300\n", "b.toml:8", "'dma_bytes_per_cycle' must be 0 (no DMA) or a number from 1e-6");
  expectError(head + "macs_per_cycle = 1e300\n", "b.toml:8", "'macs_per_cycle' must be a number from 1e-6 to 1e9");
  expectError(head + "[targets.intrinsics]\nmvn = { name = \"x\" }\n", "b.toml:9", "unknown intrinsic 'mvn'");
  expectError(head + "[targets.intrinsics]\nmvin = { name = \"x\", args = [\"dram\"] }\n", "b.toml:9", "exactly once");
  expectError("[[targets]]\nname = \"cpu\"\nengine_dim = 4\n[[pools]]\nname = \"ws\"\n", "b.toml:3", "only for kind");
  expectError("[[pools]]\nname = \"ws\"\nper_core_stride = 64\n", "b.toml:3", "only for placement");
  expectError("[[pools]]\nname = \"ws\"\n[[pools]]\nname = \"l1\"\nplacement = \"fixed\"\nbase = 0\nsize = 128\nper_core_stride = 64\n",
              "b.toml:8", "smaller than 'size'");
}

}  // namespace
}  // namespace stowage
