// Unit tests of a layer's cores sharing one input buffer (tile/SharedInput.h): the schedule (every core walks the same
// row blocks, its own channel blocks), the estimate against the per-core one, and the zoo ResNet-8 on gap8-cluster,
// whose float convolutions run on more cores and in fewer cycles with it, bit-exact with the CPU and as estimated on
// the host simulator (and dsp-cluster4, whose private per-core L1 shares nothing, unchanged).
#include "ReleaseOnly.h"
#include <gtest/gtest.h>

#include "ZooTestGraphs.h"
#include "stowage/driver/Compiler.h"
#include "stowage/driver/HostRunner.h"
#include "stowage/tile/CostModel.h"
#include "stowage/tile/SharedInput.h"
#include "stowage/tile/TileChoice.h"
#include "stowage/tile/TileProgram.h"

namespace stowage {
namespace {

TEST(SharedInput, EveryCoreWalksTheSameRowBlocksWithItsOwnChannels) {
  const LayerShape s = testing::smallConvLayer();  // 5 rows x 4 channels
  // Row blocks of 2, 2, 1 rows; 4 channel blocks of 1 over 2 cores: core 0 channels 0-1, core 1 channels 2-3.
  const auto sched = scheduleSharedInput(s, 2, 1, 2, OperandBuffers::uniform(true), 1);
  ASSERT_TRUE(sched.has_value());
  EXPECT_EQ(sched->sharedLoaders, 1);
  ASSERT_EQ(sched->chunkStart, (std::vector<size_t>{0, 6, 12}));
  for (size_t k = 0; k < 2; ++k)
    for (size_t j = 0; j < 6; ++j) {
      const TileDesc& t = sched->tiles[6 * k + j];
      EXPECT_EQ(t.firstRow, static_cast<int64_t>(j / 2) * 2) << k << " " << j;
      EXPECT_EQ(t.channelOffset, static_cast<int64_t>(2 * k + j % 2)) << k << " " << j;
      EXPECT_EQ(t.loadX, j % 2 == 0) << "the row block's first tile: the shared input";
      EXPECT_EQ(t.xBuf, static_cast<int>((j / 2) % 2)) << "two shared halves, one per row block in turn";
    }
  // The part each loader moves: rows cut evenly, offsets on the main-memory stride.
  const TileCopy x{100, 5, 40, 100};
  EXPECT_EQ(sharedInputPart(x, 2, 0), (TileCopy{100, 2, 40, 100}));
  EXPECT_EQ(sharedInputPart(x, 2, 1), (TileCopy{300, 3, 40, 100}));
  EXPECT_EQ(sharedInputPart(x, 1, 0), x);
  // Fewer channel blocks than cores: some core would have nothing to do at the barriers.
  EXPECT_FALSE(scheduleSharedInput(s, 2, 4, 2, OperandBuffers::uniform(true), 1).has_value());
}

TEST(SharedInput, EstimateLoadsEachRowBlockOnce) {
  const LayerShape s = testing::smallConvLayer();
  const Target t = testing::coresTarget(2, 4, 4, 100);
  for (bool twoHalves : {true, false}) {
    const OperandBuffers b{{twoHalves, true, true}};
    const auto shared = scheduleSharedInput(s, 2, 1, 2, b, 1);
    ASSERT_TRUE(shared.has_value());
    const TileSchedule own = scheduleTiles(s, 2, 1, 2, b, TileOrder::RowsOuter);
    const LayerCost sharedCost = estimateLayer(t, s, *shared, b);
    const LayerCost ownCost = estimateLayer(t, s, own, b);
    // The same tiles, split otherwise: the busiest core's compute is its chunk's.
    uint64_t busiest = 0;
    for (size_t c = 0; c + 1 < shared->chunkStart.size(); ++c) {
      uint64_t sum = 0;
      for (size_t i = shared->chunkStart[c]; i < shared->chunkStart[c + 1]; ++i) sum += tileComputeCycles(t, s, shared->tiles[i]);
      busiest = std::max(busiest, sum);
    }
    EXPECT_EQ(sharedCost.compute, busiest);
    EXPECT_GT(ownCost.total, 0u);
    const LayerBounds bounds = layerBounds(t, s, *shared);
    EXPECT_GE(sharedCost.total, std::max(bounds.compute, bounds.dma));
    // All loaders: each moves part of the row block, so the input arrives sooner than from core 0 alone.
    const auto split = scheduleSharedInput(s, 2, 1, 2, b, 2);
    ASSERT_TRUE(split.has_value());
    EXPECT_GT(sharedCost.total, 0u);
    EXPECT_GT(estimateLayer(t, s, *split, b).total, 0u);
  }
}

TEST(SharedInput, Gap8ResNet8UsesMoreCoresInFewerCycles) {
  STOWAGE_RELEASE_BUILD_ONLY("whole models through the tile simulator, 10-50 s under ASan");
  const Board board = testing::exampleBoard("gap8-cluster");
  const Graph g = testing::foldedZooGraph("resnet8");
  TileOptions with, without;
  without.sharedInput = false;
  const TiledProgram shared = tileProgram(g, board, with);
  const TiledProgram own = tileProgram(g, board, without);
  ASSERT_EQ(shared.offloaded.size(), own.offloaded.size());
  int sharing = 0, moreCores = 0;
  uint64_t sharedTotal = 0, ownTotal = 0;
  for (size_t i = 0; i < shared.offloaded.size(); ++i) {
    const OffloadedLayer& l = shared.offloaded[i];
    EXPECT_EQ(own.offloaded[i].sharedInputLoaders, 0) << "--no-shared-input";
    sharedTotal += l.totalCycles;
    ownTotal += own.offloaded[i].totalCycles;
    if (l.sharedInputLoaders == 0) continue;
    ++sharing;
    // Row blocks outer, or one row block whose whole input the cores share (its tiles are the same in either order).
    EXPECT_TRUE(l.rowsOuter || l.doubled[0] == false);
    EXPECT_TRUE(l.buffers[0][0] != "") << "one shared input buffer";
    EXPECT_EQ(l.coreStride[0], 0u) << "no per-core input regions";
    moreCores += l.cores > own.offloaded[i].cores ? 1 : 0;
  }
  EXPECT_GT(sharing, 0) << "ResNet-8's float convolutions on gap8 share their input";
  EXPECT_GT(moreCores, 0) << "sharing the input lets more cores' tiles fit the 36 KiB L1";
  EXPECT_LT(sharedTotal, ownTotal);
}

TEST(SharedInput, Gap8AutoencoderFullyConnectedLayerSharesItsInputOnMoreCores) {
  STOWAGE_RELEASE_BUILD_ONLY("whole models through the tile simulator, 10-50 s under ASan");
  // encoder1.fc (640 -> 128, float) has one row block: each core's two 2.5 KiB weight rows fit the 36 KiB L1 on 4
  // cores beside their own copies of the input, on 6 beside one shared input.
  const Graph g = testing::foldedZooGraph("autoencoder");
  const CompileOptions o = testing::quickPlannerOptions();
  auto shared = compileGraphOnBoard(g, testing::exampleBoard("gap8-cluster"), o);
  ASSERT_TRUE(shared.ok()) << shared.error().render();
  CompileOptions ownOptions = o;
  ownOptions.sharedInput = false;
  auto own = compileGraphOnBoard(g, testing::exampleBoard("gap8-cluster"), ownOptions);
  ASSERT_TRUE(own.ok()) << own.error().render();
  const OffloadedLayer& fc = testing::offloadedLayerNamed(*shared, "encoder1.fc");
  EXPECT_GT(fc.sharedInputLoaders, 0);
  EXPECT_FALSE(fc.rowsOuter) << "one row block: the whole input shared";
  EXPECT_GT(fc.cores, testing::offloadedLayerNamed(*own, "encoder1.fc").cores);
  EXPECT_LT(fc.totalCycles, testing::offloadedLayerNamed(*own, "encoder1.fc").totalCycles);
  testing::expectFasterThanWithoutAndAsTheCpu(g, o, *shared, *own);
}

TEST(SharedInput, RunsBitExactAndAsEstimatedOnTheSimulator) {
  STOWAGE_RELEASE_BUILD_ONLY("whole models through the tile simulator, 10-50 s under ASan");
  const Graph g = testing::foldedZooGraph("resnet8");
  const CompileOptions o = testing::quickPlannerOptions();
  for (const char* name : {"gap8-cluster", "dsp-cluster4"}) {
    auto onBoard = compileGraphOnBoard(g, testing::exampleBoard(name), o);
    ASSERT_TRUE(onBoard.ok()) << onBoard.error().render();
    int sharing = 0;
    for (const OffloadedLayer& l : onBoard->plan.offloaded) sharing += l.sharedInputLoaders > 0 ? 1 : 0;
    // dsp-cluster4's L1 is private to each core (per_core_stride): nothing to share there.
    if (std::string(name) == "gap8-cluster") EXPECT_GT(sharing, 0) << name;
    else EXPECT_EQ(sharing, 0) << name;
    auto onCpu = compileGraph(g, o);
    ASSERT_TRUE(onCpu.ok()) << onCpu.error().render();
    testing::expectSameHostOutputs(*onBoard, *onCpu, testing::patternInputs(g));
    testing::expectLayersRunAsEstimated(*onBoard, testing::patternInputs(g));
  }
}

TEST(SharedInput, ContiguousInputSplitsEvenlyOverTheLoaders) {
  TileSchedule sched;
  sched.chunkStart = {0, 3};
  sched.tiles.resize(3);
  sched.tiles[0].x = TileCopy{64, 3, 96, 96};    // 3 whole planes, one run of 288 bytes
  sched.tiles[1].x = TileCopy{0, 3, 40, 100};    // strided rows: as they are
  sched.tiles[2].x = TileCopy{0, 1, 100, 100};   // 100 bytes: no 4 parts of a multiple of 4 bytes
  splitSharedInputEvenly(sched, 4);
  EXPECT_EQ(sched.tiles[0].x, (TileCopy{64, 4, 72, 72}));
  // Every loader moves 72 bytes (as 3 planes, loader 0 would move none and the others 96 each).
  for (int k = 0; k < 4; ++k) EXPECT_EQ(sharedInputPart(sched.tiles[0].x, 4, k).bytes(), 72u) << k;
  EXPECT_EQ(sched.tiles[1].x, (TileCopy{0, 3, 40, 100}));
  EXPECT_EQ(sched.tiles[2].x, (TileCopy{0, 1, 100, 100}));
}

/// The offloaded layers of `r` whose cores share their whole input (one row block of every output row).
std::vector<std::string> wholeInputLayers(const CompileResult& r) {
  std::vector<std::string> names;
  for (const OffloadedLayer& l : r.plan.offloaded)
    if (l.sharedInputLoaders > 0 && !l.rowsOuter) names.push_back(r.graph.nodes[static_cast<size_t>(l.step)].name);
  return names;
}

TEST(SharedInput, HexagonMobileNetStemLoadsItsWholeInputOnceOverEveryCore) {
  STOWAGE_RELEASE_BUILD_ONLY("whole models through the tile simulator, 10-50 s under ASan");
  // The float NCHW stem writes its output in place in VTCM, so each core takes whole output planes (channels) and reads
  // the whole 3x96x96 image from DDR. Row blocks outer (2 blocks of 24 rows), the cores shared each block's input; one
  // row block loads it once, split evenly over the 4 cores' DMA (27,648 bytes each, one 1,000-cycle setup per core).
  const Graph g = testing::foldedZooGraph("mobilenet-v1-0.25");
  const Board board = testing::exampleBoard("hexagon-vtcm");
  const CompileOptions with = testing::quickPlannerOptions();
  CompileOptions without = with;
  without.sharedWholeInput = false;
  auto shared = compileGraphOnBoard(g, board, with);
  ASSERT_TRUE(shared.ok()) << shared.error().render();
  auto rowBlocks = compileGraphOnBoard(g, board, without);
  ASSERT_TRUE(rowBlocks.ok()) << rowBlocks.error().render();
  EXPECT_EQ(wholeInputLayers(*shared), std::vector<std::string>{"stem.conv"});
  EXPECT_TRUE(wholeInputLayers(*rowBlocks).empty()) << "--no-shared-whole-input";
  auto stemOf = [](const CompileResult& r) -> const OffloadedLayer* {
    for (const OffloadedLayer& l : r.plan.offloaded)
      if (r.graph.nodes[static_cast<size_t>(l.step)].name == "stem.conv") return &l;
    return nullptr;
  };
  const OffloadedLayer* stem = stemOf(*shared);
  ASSERT_NE(stem, nullptr);
  ASSERT_NE(stemOf(*rowBlocks), nullptr);
  EXPECT_EQ(stem->rowTile, 48) << "every output row in one block";
  EXPECT_TRUE(stem->direct[2]) << "the output in place";
  EXPECT_EQ(stem->sharedInputLoaders, 4);
  EXPECT_LT(stem->totalCycles, stemOf(*rowBlocks)->totalCycles);
  const std::vector<Tensor> inputs = testing::patternInputs(g);
  const uint64_t sharedCycles = testing::expectLayersRunAsEstimated(*shared, inputs);
  const uint64_t rowBlockCycles = testing::expectLayersRunAsEstimated(*rowBlocks, inputs);
  EXPECT_GT(sharedCycles, 0u);
  EXPECT_LT(sharedCycles, rowBlockCycles);
  auto onCpu = compileGraph(g, with);
  ASSERT_TRUE(onCpu.ok()) << onCpu.error().render();
  testing::expectSameHostOutputs(*shared, *onCpu, inputs);
}

TEST(SharedInput, WholeInputKeptOnlyWhereTheProgramGetsFaster) {
  STOWAGE_RELEASE_BUILD_ONLY("whole models through the tiler, seconds under ASan");
  // The autoencoder's FC layers (one row each) may share their whole input. On gap8-cluster the program gets faster;
  // on hexagon-vtcm with pairs of layers only (no weight stream) each layer would, but a shared input rules out the
  // first weights loaded once for all cores, and the program would be slower: the tiler keeps the program without it
  // there (and says so). With the weight stream (tile/WeightPrefetch.h) the first layer issues every later layer's
  // weights, its own first weights are loaded by no one, and sharing its input is faster again: kept.
  const Graph g = testing::foldedZooGraph("autoencoder");
  CompileOptions with = testing::quickPlannerOptions();
  for (const char* name : {"gap8-cluster", "hexagon-vtcm", "hexagon-vtcm with the weight stream"}) {
    const std::string label = name;
    with.weightStream = label != "hexagon-vtcm";
    CompileOptions without = with;
    without.sharedWholeInput = false;
    const Board board = testing::exampleBoard(label.substr(0, label.find(' ')));
    auto shared = compileGraphOnBoard(g, board, with);
    ASSERT_TRUE(shared.ok()) << shared.error().render();
    auto rowBlocks = compileGraphOnBoard(g, board, without);
    ASSERT_TRUE(rowBlocks.ok()) << rowBlocks.error().render();
    uint64_t sharedTotal = 0, rowBlockTotal = 0;
    for (const OffloadedLayer& l : shared->plan.offloaded) sharedTotal += l.totalCycles;
    for (const OffloadedLayer& l : rowBlocks->plan.offloaded) rowBlockTotal += l.totalCycles;
    if (label != "hexagon-vtcm") {
      EXPECT_FALSE(wholeInputLayers(*shared).empty()) << name;
      EXPECT_LT(sharedTotal, rowBlockTotal) << name;
      continue;
    }
    EXPECT_TRUE(wholeInputLayers(*shared).empty()) << name;
    EXPECT_EQ(sharedTotal, rowBlockTotal) << name;
    bool remarked = false;
    for (const std::string& r : shared->plan.remarks) remarked = remarked || r.find("would share their whole input") != std::string::npos;
    EXPECT_TRUE(remarked) << name;
  }
}

}  // namespace
}  // namespace stowage
