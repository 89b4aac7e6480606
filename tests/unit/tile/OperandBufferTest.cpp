// Unit tests of per-operand buffering and the rows-outer tile order: halves and load flags of a schedule whose
// input has one half and whose weights and outputs have two, the cost model's overlap for it, the chooser taking
// it on gap8-cluster where double-buffered inputs of enough cores do not fit L1, and a layer so tiled running
// bit-exact on the host simulator against the CPU path.
#include "ReleaseOnly.h"
#include <gtest/gtest.h>

#include <cstring>

#include "ZooTestGraphs.h"
#include "stowage/driver/Compiler.h"
#include "stowage/driver/HostRunner.h"
#include "stowage/target/Board.h"
#include "stowage/tile/CostModel.h"
#include "stowage/tile/ScratchLayout.h"
#include "stowage/tile/TileChoice.h"
#include "stowage/tile/WeightPrefetch.h"
#include "stowage/tile/TileProgram.h"

namespace stowage {
namespace {

/// A QLinearConv layer: x u8 [1,2,5,5], w [4,2,3,3], pad 1, stride 1 (5 output rows x 4 channels).
LayerShape convLayer() {
  stowage_qlinear_conv_params p;
  std::memset(&p, 0, sizeof p);
  p.n = 1, p.c = 2, p.h = 5, p.w = 5, p.m = 4, p.oh = 5, p.ow = 5, p.kh = 3, p.kw = 3, p.group = 1;
  p.stride_h = p.stride_w = p.dil_h = p.dil_w = 1;
  p.pad_top = p.pad_left = 1;
  p.x_type = STOWAGE_ELEM_U8, p.w_type = STOWAGE_ELEM_S8, p.y_type = STOWAGE_ELEM_S8;
  p.w_quant_count = 4;
  QLinearCall call;
  call.kernel = QLinearKernel::QLinearConv;
  call.params = p;
  LayerShape s;
  s.kernel = TileKernel::QLinearConv;
  s.call = KernelCall{call, {}, kNoTensor};
  s.rows = 5;
  s.rowPixels = 5;
  s.channels = 4;
  s.reduction = 18;
  return s;
}

constexpr OperandBuffers kInputSingle{{false, true, true}};

TEST(OperandBuffers, RowsOuterInputSingleLoadsEachRowBlockOnce) {
  const LayerShape s = convLayer();
  // 3 row blocks (2, 2, 1 rows) x 4 channel blocks of 1, on 2 cores: chunks [0, 6) and [6, 12).
  const TileSchedule sched = scheduleTiles(s, 2, 1, 2, kInputSingle, TileOrder::RowsOuter);
  ASSERT_EQ(sched.tiles.size(), 12u);
  ASSERT_EQ(sched.chunkStart, (std::vector<size_t>{0, 6, 12}));
  for (size_t i = 0; i < sched.tiles.size(); ++i) {
    const TileDesc& t = sched.tiles[i];
    const size_t local = i - (i < 6 ? 0 : 6);
    EXPECT_EQ(t.firstRow, static_cast<int64_t>(i / 4) * 2) << i;  // row blocks outer
    EXPECT_EQ(t.channelOffset, static_cast<int64_t>(i % 4)) << i;  // channel blocks inner
    EXPECT_EQ(t.xBuf, 0) << i;
    // The input is loaded when a core starts or reaches a new row block, and kept while the channels change.
    EXPECT_EQ(t.loadX, i % 4 == 0 || i == 6) << i;
    // Weights and outputs alternate halves within each core's chunk; a new channel block always loads.
    EXPECT_EQ(t.wBuf, static_cast<int>(local % 2)) << i;
    EXPECT_TRUE(t.loadW) << i;
    EXPECT_EQ(t.yBuf, static_cast<int>(local % 2)) << i;
  }
  // The same tiles, channel blocks outer: every tile reloads its input rows into the one half.
  const TileSchedule channelsOuter = scheduleTiles(s, 2, 1, 1, kInputSingle, TileOrder::ChannelsOuter);
  for (const TileDesc& t : channelsOuter.tiles) {
    EXPECT_EQ(t.xBuf, 0);
    EXPECT_TRUE(t.loadX);
  }
  // The old signature is the uniform case in the channels-outer order.
  const TileSchedule uniform = scheduleTiles(s, 2, 1, 1, true);
  const TileSchedule explicitUniform = scheduleTiles(s, 2, 1, 1, OperandBuffers::uniform(true), TileOrder::ChannelsOuter);
  ASSERT_EQ(uniform.tiles.size(), explicitUniform.tiles.size());
  for (size_t i = 0; i < uniform.tiles.size(); ++i) {
    EXPECT_EQ(uniform.tiles[i].x, explicitUniform.tiles[i].x);
    EXPECT_EQ(uniform.tiles[i].xBuf, explicitUniform.tiles[i].xBuf);
    EXPECT_EQ(uniform.tiles[i].wBuf, explicitUniform.tiles[i].wBuf);
  }
  EXPECT_EQ(operandBuffersText(kInputSingle), "x single, w/y double-buffered");
  EXPECT_EQ(operandBuffersText(OperandBuffers::uniform(false)), "single-buffered");
}

TEST(OperandBuffers, CostModelOverlapsTheDoubledOperandsOnly) {
  const LayerShape s = convLayer();
  const Target t = testing::coresTarget(1, 1, 1, 10);
  const TileSchedule mixed = scheduleTiles(s, 2, 1, 1, kInputSingle, TileOrder::RowsOuter);
  const TileSchedule single = scheduleTiles(s, 2, 1, 1, OperandBuffers::uniform(false), TileOrder::RowsOuter);
  const LayerCost mixedCost = estimateLayer(t, s, mixed, kInputSingle);
  const LayerCost singleCost = estimateLayer(t, s, single, OperandBuffers::uniform(false));
  const LayerBounds b = layerBounds(t, s, mixed);
  // Same transfers and compute either way; with one half for everything the layer is a chain of load, compute and
  // store per tile, while the doubled weights and outputs move during the compute.
  EXPECT_EQ(mixedCost.compute, singleCost.compute);
  EXPECT_EQ(mixedCost.dma, singleCost.dma);
  EXPECT_LT(mixedCost.total, singleCost.total);
  EXPECT_GE(mixedCost.total, std::max(b.compute, b.dma));
  // The input of each row block still waits for the previous compute: more than the fully doubled estimate.
  const TileSchedule doubled = scheduleTiles(s, 2, 1, 1, OperandBuffers::uniform(true), TileOrder::RowsOuter);
  EXPECT_GT(mixedCost.total, estimateLayer(t, s, doubled, OperandBuffers::uniform(true)).total);
  // The bool overload is the uniform case.
  EXPECT_EQ(estimateLayer(t, s, single, false).total, singleCost.total);
}

Board gap8() { return testing::exampleBoard("gap8-cluster"); }

TEST(OperandBuffers, Gap8KeepsOneInputHalfWhereTwoDoNotFitAndBeatsOneBuffer) {
  STOWAGE_RELEASE_BUILD_ONLY("whole models through the tile simulator, 10-50 s under ASan");
  const Board board = gap8();
  const Graph g = testing::foldedZooGraph("mobilenet-v1-0.25");
  // Without resident tensors (which ones fit beside the tile buffers depends on the buffering) and the weight
  // prefetch (which trades cycles between the layers of a pair): the chooser's choice per layer is what this compares.
  // Each core with its own input (the per-core buffering this tests: a shared input is tile.SharedInput's).
  TileOptions perCore{true, false, false};
  perCore.sharedInput = false;
  const TiledProgram mixed = tileProgram(g, board, perCore);
  TileOptions singleOnly{false, false, false};
  singleOnly.sharedInput = false;
  const TiledProgram single = tileProgram(g, board, singleOnly);
  ASSERT_EQ(mixed.offloaded.size(), single.offloaded.size());
  int inputSingle = 0;
  for (size_t i = 0; i < mixed.offloaded.size(); ++i) {
    const OffloadedLayer& l = mixed.offloaded[i];
    const OffloadedLayer& one = single.offloaded[i];
    ASSERT_EQ(l.step, one.step);
    EXPECT_LE(l.totalCycles, one.totalCycles) << "step " << l.step << ": the chooser also tries one buffer for everything";
    for (int op = 0; op < 3; ++op) EXPECT_FALSE(one.doubled[op]) << "--no-double-buffer: one half for every operand";
    if (l.doubled[0] || !l.doubled[1] || !l.doubled[2]) continue;
    ++inputSingle;
    EXPECT_FALSE(l.doubleBuffer);
    EXPECT_TRUE(l.buffers[0][1].empty()) << "one input half";
    EXPECT_FALSE(l.buffers[1][1].empty()) << "two weight halves";
    EXPECT_FALSE(l.buffers[2][1].empty()) << "two output halves";
    EXPECT_LT(l.totalCycles, one.totalCycles) << "step " << l.step;
    // Double-buffered inputs for this many cores do not fit the cluster's L1.
    const LayerShape s = *layerShapeOf(g, g.nodes[static_cast<size_t>(l.step)]).shape;
    ScratchNeed need;
    need.bytes[0] = l.xBytes;
    need.bytes[1] = l.wBytes;
    need.bytes[2] = l.yBytes;
    need.cores = l.cores;
    size_t stride[3];
    const std::vector<int> pools = scratchPoolsFor(board, l.target, g.nodes[static_cast<size_t>(l.step)]);
    EXPECT_FALSE(layoutScratch(board, pools, need, l.step, stride).has_value()) << "step " << l.step;
    // The recorded choice rebuilds to the estimate (with the weight tiles it hands over to or gets from its neighbours).
    EXPECT_EQ(estimateLayer(board.targets[static_cast<size_t>(l.target)], s, offloadedSchedule(s, l), operandBuffersOf(l),
                            crossLayerTransfers(g, board, mixed.offloaded, i))
                  .total,
              l.totalCycles);
  }
  EXPECT_GT(inputSingle, 0) << "mobilenet's pointwise layers on gap8 keep one input half";
}

TEST(OperandBuffers, MixedLayersRunBitExactOnTheSimulator) {
  STOWAGE_RELEASE_BUILD_ONLY("whole models through the tile simulator, 10-50 s under ASan");
  const Graph g = testing::foldedZooGraph("mobilenet-v1-0.25");
  const Board board = gap8();
  CompileOptions o = testing::quickPlannerOptions();
  o.sharedInput = false;  // each core with its own input (a shared input is tile.SharedInput's)
  auto onBoard = compileGraphOnBoard(g, board, o);
  ASSERT_TRUE(onBoard.ok()) << onBoard.error().render();
  int inputSingle = 0, rowsOuter = 0;
  for (const OffloadedLayer& l : onBoard->plan.offloaded) {
    inputSingle += !l.doubled[0] && l.doubled[1] ? 1 : 0;
    rowsOuter += l.rowsOuter ? 1 : 0;
  }
  ASSERT_GT(inputSingle, 0);
  ASSERT_GT(rowsOuter, 0);
  auto onCpu = compileGraph(g, o);
  ASSERT_TRUE(onCpu.ok()) << onCpu.error().render();
  testing::expectSameHostOutputs(*onBoard, *onCpu, testing::patternInputs(g));
}

}  // namespace
}  // namespace stowage
