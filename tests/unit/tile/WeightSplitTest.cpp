// Unit tests of weight loads split over both DMA channels: the parts of a split copy, the cost model's queues for
// them, and the zoo autoencoder on dsp-cluster4, whose FC layers move far more weights than inputs, taking the
// split, running it on the simulator in the cycles the compiler estimated, with the CPU's outputs.
#include <gtest/gtest.h>


#include "ZooTestGraphs.h"
#include "stowage/driver/Compiler.h"
#include "stowage/driver/HostRunner.h"
#include "stowage/tile/CostModel.h"
#include "stowage/tile/TileChoice.h"
#include "stowage/tile/WeightPrefetch.h"

namespace stowage {
namespace {

TEST(WeightSplit, PartsCoverTheCopyAndOneRowCopiesBecomeTwoRows) {
  TileSchedule sched;
  sched.tiles.resize(3);
  sched.tiles[0].w = {64, 1, 8192, 8192};  // a contiguous FC weight block
  sched.tiles[1].w = {0, 1, 36, 36};       // halves of 18 bytes are not a multiple of 4: stays one transfer
  sched.tiles[2].w = {100, 5, 12, 40};     // 5 strided rows
  sched.chunkStart = {0, 3};
  splitWeightLoads(sched);
  EXPECT_TRUE(sched.weightsSplit);
  EXPECT_EQ(sched.tiles[0].w, (TileCopy{64, 2, 4096, 4096}));
  EXPECT_EQ(sched.tiles[1].w, (TileCopy{0, 1, 36, 36}));
  EXPECT_EQ(sched.tiles[2].w, (TileCopy{100, 5, 12, 40}));

  auto [part, rest] = weightLoadParts(sched.tiles[0].w);
  EXPECT_EQ(part, (TileCopy{64, 1, 4096, 4096}));
  EXPECT_EQ(rest, (TileCopy{64 + 4096, 1, 4096, 4096}));
  std::tie(part, rest) = weightLoadParts(sched.tiles[1].w);
  EXPECT_EQ(part, (TileCopy{0, 1, 36, 36}));
  EXPECT_EQ(rest.rows, 0u);
  std::tie(part, rest) = weightLoadParts(sched.tiles[2].w);
  EXPECT_EQ(part, (TileCopy{100, 3, 12, 40}));
  EXPECT_EQ(rest, (TileCopy{100 + 3 * 40, 2, 12, 40}));
}

TEST(WeightSplit, CostModelLoadsTheWeightPartsInParallel) {
  // One tile on one core: the input and the second weight part on channel 0, the first part on channel 1, the
  // compute when both have arrived, the store on channel 1 after it. 16 output channels: 1,152 bytes of weights
  // against 200 of input.
  LayerShape s = testing::smallConvLayer();
  std::get<ConvCall>(s.call.params).params.m = 16;
  s.channels = 16;
  const Target t = testing::coresTarget(1, 4, 4, 10);
  const TileSchedule plain = scheduleTiles(s, 5, 16, 1, true);
  ASSERT_EQ(plain.tiles.size(), 1u);
  TileSchedule split = plain;
  splitWeightLoads(split);
  const TileDesc& tile = split.tiles.front();
  ASSERT_EQ(tile.w.rows, 2u) << "1,152 contiguous weight bytes become 2 rows of 576";
  const auto [part, rest] = weightLoadParts(tile.w);
  const uint64_t dx = dmaCycles(t, tile.x), dPart = dmaCycles(t, part), dRest = dmaCycles(t, rest), dy = dmaCycles(t, tile.y);
  const uint64_t compute = tileComputeCycles(t, s, tile);
  const OperandBuffers both = OperandBuffers::uniform(true);
  EXPECT_EQ(estimateLayer(t, s, split, both).total, std::max(dx + dRest, dPart) + compute + dy);
  EXPECT_EQ(estimateLayer(t, s, plain, both).total, std::max(dx, dmaCycles(t, plain.tiles.front().w)) + compute + dy);
  EXPECT_LT(estimateLayer(t, s, split, both).total, estimateLayer(t, s, plain, both).total);
  const LayerBounds b = layerBounds(t, s, split);
  EXPECT_EQ(b.loads, dx + dRest);
  EXPECT_EQ(b.stores, dPart + dy);

  // The chooser's helper takes the split only where it is faster: not with one DMA channel.
  TileChoice c;
  c.schedule = plain;
  c.buffers = both;
  c.cost = estimateLayer(t, s, plain, both);
  Target oneChannel = t;
  oneChannel.dmaChannels = 1;
  splitWeightsWhenFaster(oneChannel, s, c);
  EXPECT_FALSE(c.schedule.weightsSplit);
  splitWeightsWhenFaster(t, s, c);
  EXPECT_TRUE(c.schedule.weightsSplit);
  EXPECT_EQ(c.cost.total, estimateLayer(t, s, split, both).total);
}

TEST(WeightSplit, AutoencoderOnDspClusterSplitsItsWeightLoadsAndRunsAsEstimated) {
  const Graph g = testing::foldedZooGraph("autoencoder");
  const Board board = testing::exampleBoard("dsp-cluster4");
  const CompileOptions o = testing::quickPlannerOptions();
  auto r = compileGraphOnBoard(g, board, o);
  ASSERT_TRUE(r.ok()) << r.error().render();
  const ProgramPlan& plan = r->plan;
  int split = 0;
  for (const OffloadedLayer& l : plan.offloaded) {
    if (!l.weightsSplit) continue;
    ++split;
    // Chosen because it is faster than loading the weights on one channel (the layer alone, as the chooser saw it).
    const LayerShape s = *layerShapeOf(r->graph, r->graph.nodes[static_cast<size_t>(l.step)]).shape;
    OffloadedLayer oneChannel = l;
    oneChannel.weightsSplit = false;
    const Target& t = board.targets[static_cast<size_t>(l.target)];
    EXPECT_LT(estimateLayer(t, s, offloadedSchedule(s, l), operandBuffersOf(l)).total,
              estimateLayer(t, s, offloadedSchedule(s, oneChannel), operandBuffersOf(l)).total)
        << r->graph.nodes[static_cast<size_t>(l.step)].name;
  }
  EXPECT_GE(split, 4) << "the autoencoder's 128x128 FC layers load 8 KiB of weights per 16-channel tile";
  EXPECT_NE(r->code.source.text.find("tw2[d->w_buf]"), std::string::npos);

  const std::vector<Tensor> inputs = testing::patternInputs(g);
  testing::expectLayersRunAsEstimated(*r, inputs);
  auto onCpu = compileGraph(g, o);
  ASSERT_TRUE(onCpu.ok()) << onCpu.error().render();
  testing::expectSameHostOutputs(*r, *onCpu, inputs);
}

TEST(WeightSplit, PrefetchIssuerDropsItsSplitWhereThePairIsFasterSo) {
  // hexagon-vtcm, autoencoder: on its own encoder1.fc loads its weights faster split over both channels, but then
  // the next layer's weights, which it loads on the input channel during its last tile, queue behind the split's
  // second parts; the weight prefetch pass tries the pair both ways and keeps the faster one. (Without weights loaded
  // once: with them, the search's last phase finds a faster model in which encoder1.fc keeps its split.)
  const Graph g = testing::foldedZooGraph("autoencoder");
  const Board board = testing::exampleBoard("hexagon-vtcm");
  CompileOptions own = testing::quickPlannerOptions();
  own.prefetchWeights = false;
  auto alone = compileGraphOnBoard(g, board, own);
  ASSERT_TRUE(alone.ok()) << alone.error().render();
  CompileOptions pairs = testing::quickPlannerOptions();
  pairs.weightsOnce = false;
  auto r = compileGraphOnBoard(g, board, pairs);
  ASSERT_TRUE(r.ok()) << r.error().render();
  auto find = [](const CompileResult& c, const std::string& name) -> const OffloadedLayer* {
    for (const OffloadedLayer& l : c.plan.offloaded)
      if (c.graph.nodes[static_cast<size_t>(l.step)].name == name) return &l;
    return nullptr;
  };
  const OffloadedLayer* before = find(*alone, "encoder1.fc");
  const OffloadedLayer* issuer = find(*r, "encoder1.fc");
  ASSERT_TRUE(before && issuer);
  EXPECT_TRUE(before->weightsSplit) << "chosen on its own";
  // encoder1.fc issues a later layer's first weights (the search picks which: encoder3.fc now, across encoder2.fc).
  ASSERT_FALSE(issuer->prefetches.empty());
  const OffloadedLayer* next = r->plan.offloadedAt(issuer->prefetches.front().step);
  ASSERT_NE(next, nullptr);
  const std::string nextName = r->graph.nodes[static_cast<size_t>(next->step)].name;
  EXPECT_FALSE(issuer->weightsSplit) << "the pair is faster with the issuer's weights on one channel";
  EXPECT_LT(issuer->totalCycles + next->totalCycles, before->totalCycles + find(*alone, nextName)->totalCycles) << nextName;

  testing::expectLayersRunAsEstimated(*r, testing::patternInputs(g));
}

}  // namespace
}  // namespace stowage
