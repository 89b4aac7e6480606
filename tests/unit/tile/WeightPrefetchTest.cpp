// Unit tests of the weight prefetch across layers (tile/WeightPrefetch.h): the cost model with a layer's first
// weight tiles loaded by the layer before and the next layer's loaded during its last tile; the zoo ResNet-8 on
// hexagon-vtcm (cores) and gemmini-like (engine) handing weights over between its layers (buffers live from the previous layer's step, the
// generated code waits for the previous layer's ticket, the simulator's per-layer cycles equal the estimate,
// bit-exact and faster than --no-weight-prefetch); transfers issued further back queuing the input loads of the
// layers they pass over (DS-CNN on hexagon-vtcm); MobileNet on hexagon-vtcm alternating its pointwise layers'
// transfers over both channels; a layer loading two later layers' first weights, one on each channel (DS-CNN on
// hexagon-vtcm); the first weight tiles of all cores loaded once by one core (MobileNet on hexagon-vtcm); issuers more
// than 4 layers back (the autoencoder on hexagon-vtcm); weights loaded once by any issuing core (MobileNet on
// hexagon-vtcm); a small VTCM taking only the pairs that fit.
#include "ReleaseOnly.h"
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "../codegen/TestGraphs.h"
#include "ZooTestGraphs.h"
#include "stowage/driver/Compiler.h"
#include "stowage/driver/HostRunner.h"
#include "stowage/report/OffloadSummary.h"
#include "stowage/target/Board.h"
#include "stowage/tile/CostModel.h"
#include "stowage/tile/TileChoice.h"
#include "stowage/tile/WeightPrefetch.h"

namespace stowage {
namespace {

TEST(WeightPrefetch, CostModelMovesTheFirstWeightLoadToTheLayerBefore) {
  const LayerShape s = testing::smallConvLayer();
  Target t = testing::smallCoresTarget();
  // Input and output used in place, 2 channels per core: each core loads one weight tile, then computes.
  TileSchedule sched = scheduleTiles(s, 5, 2, 2, true);
  DirectOperands d;
  d.direct[0] = d.direct[2] = true;
  applyDirectOperands(sched, d);
  const OperandBuffers both = OperandBuffers::uniform(true);
  const uint64_t wLoad = 100 + (2 * 18 * 4) / 4;
  const LayerCost alone = estimateLayer(t, s, sched, both);
  const uint64_t compute = layerBounds(t, s, sched).compute;
  ASSERT_EQ(alone.total, wLoad + compute);

  // Loaded by the layer before and already there: the layer only computes, and no transfer is its own.
  CrossLayerWeights loaded;
  loaded.prefetchedCores = 2;
  loaded.firstReady = {0, 0};
  EXPECT_EQ(estimateLayer(t, s, sched, both, loaded).total, compute);
  EXPECT_EQ(layerBounds(t, s, sched, loaded).dma, 0u);
  // Core 0's arrives 50 cycles after the layer starts (on its input channel): it waits for the rest.
  loaded.firstReady = {50, 0};
  loaded.inputBusy = {50, 0};
  EXPECT_EQ(estimateLayer(t, s, sched, both, loaded).total, 50 + compute);
  EXPECT_EQ(layerBounds(t, s, sched, loaded).dma, 50u) << "the rest in flight is the layer's to wait for";
  // Only core 0's was loaded before: core 1 loads its own.
  loaded.prefetchedCores = 1;
  loaded.firstReady = {0};
  loaded.inputBusy.clear();
  EXPECT_EQ(estimateLayer(t, s, sched, both, loaded).total, wLoad + compute);
  EXPECT_EQ(layerBounds(t, s, sched, loaded).dma, wLoad);

  // Loading the next layer's during its last tile: the layer does not wait for it; it ends 300 cycles after that
  // core's last tile starts (its own weights: wLoad), on the input channel.
  CrossLayerWeights issuing;
  issuing.issueLater = {{{300, 0}, 0, {}}};
  const LayerCost with = estimateLayer(t, s, sched, both, issuing);
  EXPECT_EQ(with.total, alone.total);
  ASSERT_EQ(with.laterReady.size(), 1u);
  ASSERT_EQ(with.laterReady[0].size(), 2u);
  EXPECT_EQ(with.laterReady[0][0], 300u);
  EXPECT_EQ(with.laterReady[0][1], 0u);
  // Its bounds count the part of that transfer done within its span: all of it, or only 100 cycles when 200 are
  // still in flight as it ends (the channel 1 weight load, wLoad, is then the busier queue).
  EXPECT_EQ(layerBounds(t, s, sched, issuing).dma, 300u);
  issuing.issueLater[0].inFlight = {200, 0};
  EXPECT_EQ(layerBounds(t, s, sched, issuing).dma, wLoad);
  // One channel: it queues behind the core's own weight load.
  t.dmaChannels = 1;
  EXPECT_EQ(estimateLayer(t, s, sched, both, issuing).laterReady[0][0], wLoad + 300);
  // Still, the core does not wait for it: with its output in place no store queues behind it, however long it is.
  CrossLayerWeights longOne;
  longOne.issueLater = {{{100000, 0}, 0, {}}};
  EXPECT_EQ(estimateLayer(t, s, sched, both, longOne).total, estimateLayer(t, s, sched, both).total);

  // A matrix engine: the load queue takes the next layer's block after every load of the layer, and the layer's
  // fence waits for it, so a long one makes the layer longer; a prefetched first block lets the first tile start
  // as soon as its input is in.
  Target e = testing::smallCoresTarget();
  e.cores = 1;
  e.engineDim = 4;
  const TileSchedule one = scheduleTiles(s, 5, 2, 1, true);
  const LayerCost plain = estimateLayer(e, s, one, both);
  CrossLayerWeights next;
  next.issueLater = {{{100000}, 0, {}}};
  const LayerCost fenced = estimateLayer(e, s, one, both, next);
  ASSERT_EQ(fenced.laterReady.size(), 1u);
  EXPECT_EQ(fenced.total, fenced.laterReady[0][0]);
  EXPECT_GT(fenced.total, 100000u);
  EXPECT_EQ(layerBounds(e, s, one, next).loads, layerBounds(e, s, one).loads + 100000);
  CrossLayerWeights got;
  got.prefetchedCores = 1;
  got.firstReady = {0};
  const LayerCost early = estimateLayer(e, s, one, both, got);
  EXPECT_LT(early.total, plain.total);
  EXPECT_EQ(layerBounds(e, s, one, got).loads + dmaCycles(e, one.tiles.front().w), layerBounds(e, s, one).loads);
}

const OffloadedLayer* layerAt(const ProgramPlan& plan, int step) { return plan.offloadedAt(step); }

/// The estimated cycles of offloaded layer `i` of `r` over max(its compute bound, its DMA bound), as bench/accel
/// measures it.
double ratioToBounds(const CompileResult& r, size_t i) {
  const LayerBounds b = offloadedLayerBounds(r.graph, r.plan.board, r.plan.offloaded, i);
  return static_cast<double>(r.plan.offloaded[i].totalCycles) / static_cast<double>(std::max<uint64_t>(1, std::max(b.compute, b.dma)));
}

// The zoo ResNet-8 on `boardName`: at least `minPrefetched` layers find their first weights loaded by the layer
// before on their target; the generated code holds each of `codeMarkers`; the simulator agrees with the estimates,
// the outputs are the CPU's, and the model is faster than with --no-weight-prefetch.
/// A zoo graph (`g`) compiled for the example board `boardName`.
Result<CompileResult> compileOnExampleBoard(const Graph& g, const std::string& boardName, const CompileOptions& o) {
  return compileGraphOnBoard(g, testing::exampleBoard(boardName), o);
}

void expectResNet8HandsWeightsOver(const std::string& boardName, int minPrefetched, const std::vector<std::string>& codeMarkers) {
  const Graph g = testing::foldedZooGraph("resnet8");
  const CompileOptions o = testing::quickPlannerOptions();
  auto r = compileOnExampleBoard(g, boardName, o);
  ASSERT_TRUE(r.ok()) << r.error().render();
  const ProgramPlan& plan = r->plan;
  int prefetched = 0;
  for (const OffloadedLayer& l : plan.offloaded) {
    for (const WeightPrefetchTo& to : l.prefetches) {
      const OffloadedLayer* next = layerAt(plan, to.step);
      ASSERT_NE(next, nullptr);
      EXPECT_GT(next->step, l.step);
      EXPECT_EQ(next->target, l.target);
      EXPECT_EQ(next->weightsPrefetchedCores, std::min(l.cores, next->cores));
    }
    if (l.weightsPrefetchedCores == 0) continue;
    ++prefetched;
    // Constant weights only, into a buffer that lives from the step of the layer before that loads them.
    const Node& n = r->graph.nodes[static_cast<size_t>(l.step)];
    ASSERT_GE(n.inputs.size(), 2u);
    EXPECT_TRUE(r->graph.tensor(n.inputs[1]).isConstant()) << n.name;
    int before = -1;
    for (const OffloadedLayer& p : plan.offloaded)
      for (const WeightPrefetchTo& to : p.prefetches)
        if (to.step == l.step) before = p.step;  // (an issuer may serve several)
    ASSERT_GE(before, 0) << n.name;
    const int buffer = plan.scratchOf(l.buffers[1][0]);
    ASSERT_GE(buffer, 0);
    EXPECT_EQ(plan.buffers[static_cast<size_t>(buffer)].firstStep, before) << n.name;
    EXPECT_EQ(plan.buffers[static_cast<size_t>(buffer)].endStep, l.step + 1) << n.name;
  }
  EXPECT_GE(prefetched, minPrefetched) << "ResNet-8's convolutions follow one another on the accelerator";
  const std::string& c = r->code.source.text;
  for (const std::string& marker : codeMarkers) EXPECT_NE(c.find(marker), std::string::npos) << marker;
  bool remark = false;
  for (const std::string& s : plan.remarks) remark = remark || s.find("prefetch: ") == 0;
  EXPECT_TRUE(remark);

  // On the simulator: every offloaded layer takes the cycles the compiler estimated, the outputs are those of the
  // CPU, and the model is faster than with each layer loading its own first weights.
  const std::vector<Tensor> inputs = testing::patternInputs(g);
  const uint64_t with = testing::expectLayersRunAsEstimated(*r, inputs);
  CompileOptions own = o;
  own.prefetchWeights = false;
  auto without = compileOnExampleBoard(g, boardName, own);
  ASSERT_TRUE(without.ok()) << without.error().render();
  for (const OffloadedLayer& l : without->plan.offloaded) {
    EXPECT_TRUE(l.prefetches.empty());
    EXPECT_EQ(l.weightsPrefetchedCores, 0);
  }
  HostSimReport simWithout;
  HostRunOptions run;
  run.simReport = &simWithout;
  ASSERT_TRUE(runOnHost(*without, inputs, run).ok());
  EXPECT_LT(with, simWithout.totalCycles());
  auto onCpu = compileGraph(g, o);
  ASSERT_TRUE(onCpu.ok()) << onCpu.error().render();
  testing::expectSameHostOutputs(*r, *onCpu, inputs);
}

TEST(WeightPrefetch, ResNet8OnHexagonHandsWeightsOverBetweenHvxLayers) {
  STOWAGE_RELEASE_BUILD_ONLY("whole models through the tile simulator, 10-50 s under ASan");
  // Each core loads the next layer's during its last tile; the next layer waits for the ticket of the layer before.
  expectResNet8HandsWeightsOver("hexagon-vtcm", 6, {"_load_later0(a, ws, core)", "_wpre[core] : "});
}

TEST(WeightPrefetch, ResNet8OnGemminiHandsWeightsOverBetweenEngineLayers) {
  // The layer's last mvin before its fence is the next engine layer's first weight block, which that layer skips.
  // Every layer but the stem gets its block so: `stack3.block0.conv2`'s 36 KiB block fits no bank beside
  // `stack3.block0.conv1`'s buffers where its own layout put it, so its buffers turn round the spad's banks.
  expectResNet8HandsWeightsOver("gemmini-like", 9, {"/* the first weight block of step ", "if (d->load_w && t != 0u) stowage_accel_mvin("});
}

TEST(WeightPrefetch, CostModelQueuesInputLoadsBehindATransferPassingOver) {
  // A transfer an earlier layer issued for a later one is still on core 0's input channel for 500 cycles: core 0's
  // input loads start after it, core 1's do not wait; the bound counts it as that channel's.
  const LayerShape s = testing::smallConvLayer();
  const Target t = testing::smallCoresTarget();
  const TileSchedule sched = scheduleTiles(s, 5, 2, 2, true);
  const OperandBuffers both = OperandBuffers::uniform(true);
  const LayerCost alone = estimateLayer(t, s, sched, both);
  CrossLayerWeights over;
  over.inputBusy = {500, 0};
  const LayerCost behind = estimateLayer(t, s, sched, both, over);
  EXPECT_EQ(behind.total, alone.total + 500) << "core 0's first input load waits for the whole transfer";
  EXPECT_EQ(layerBounds(t, s, sched, over).loads, layerBounds(t, s, sched).loads + 500);
  // A layer with its input in place starts no input transfer: the one passing over delays nothing.
  TileSchedule inPlace = sched;
  DirectOperands d;
  d.direct[0] = d.direct[2] = true;
  applyDirectOperands(inPlace, d);
  EXPECT_EQ(estimateLayer(t, s, inPlace, both, over).total, estimateLayer(t, s, inPlace, both).total);
  EXPECT_EQ(layerBounds(t, s, inPlace, over).loads, 0u) << "nor bounds it: the transfer may outlast the layer";
  // The next layer's first weights it loads itself queue behind it too.
  CrossLayerWeights issuing = over;
  issuing.issueLater = {{{300, 300}, 0, {}}};
  const LayerCost issued = estimateLayer(t, s, inPlace, both, issuing);
  ASSERT_EQ(issued.laterReady.size(), 1u);
  EXPECT_EQ(issued.laterReady[0][0], 800u);
  EXPECT_EQ(issued.laterReady[0][1], 300u);
  // On channel 1 (weights and stores) instead: behind what that channel still carries, and the layer's own weight
  // loads and stores there queue behind it in turn.
  CrossLayerWeights onWeights;
  onWeights.issueLater = {{{300, 300}, 1, {}}};
  onWeights.weightBusy = {0, 200};
  const LayerCost second = estimateLayer(t, s, inPlace, both, onWeights);
  const uint64_t wLoad = 100 + (2 * 18 * 4) / 4;
  ASSERT_EQ(second.laterReady.size(), 1u);
  EXPECT_EQ(second.laterReady[0][0], wLoad + 300) << "after core 0's own weight load";
  EXPECT_EQ(second.laterReady[0][1], 200 + wLoad + 300);
  EXPECT_EQ(second.total, 200 + estimateLayer(t, s, inPlace, both).total) << "core 1's weights wait for the channel";
  EXPECT_EQ(layerBounds(t, s, inPlace, onWeights).stores, 200 + wLoad + 300);
}

TEST(WeightPrefetch, HexagonIssuesWeightsAcrossTheLayersInBetween) {
  STOWAGE_RELEASE_BUILD_ONLY("whole models through the tile simulator, 10-50 s under ASan");
  // On hexagon-vtcm a weight load from DDR takes 1,000+ cycles, more than a depthwise layer computes. DS-CNN's
  // pointwise layers get their first weights from a layer further back (the pointwise before): the transfer runs
  // across the depthwise layer in between, whose own loads queue behind it (inputChannelBusy), and the simulator
  // agrees with the estimates, layer by layer.
  const Graph g = testing::foldedZooGraph("ds-cnn");
  const CompileOptions o = testing::quickPlannerOptions();
  auto r = compileGraphOnBoard(g, testing::exampleBoard("hexagon-vtcm"), o);
  ASSERT_TRUE(r.ok()) << r.error().render();
  const ProgramPlan& plan = r->plan;
  int across = 0, queued = 0;
  for (size_t i = 0; i < plan.offloaded.size(); ++i) {
    const OffloadedLayer& issuer = plan.offloaded[i];
    queued += std::any_of(issuer.inputChannelBusy.begin(), issuer.inputChannelBusy.end(), [](uint64_t c) { return c > 0; });
    if (issuer.prefetches.empty()) continue;
    const int receiver = issuer.prefetches.front().step;
    bool movingBetween = false;
    for (size_t k = i + 1; k < plan.offloaded.size() && plan.offloaded[k].step < receiver; ++k) {
      const OffloadedLayer& mid = plan.offloaded[k];
      movingBetween = movingBetween || !(mid.direct[0] && mid.direct[1] && mid.direct[2]);
      // The weight buffer lives across the layers in between.
      for (const PlacedBuffer& b : plan.buffers)
        if (b.role == BufferRole::Scratch && b.name == plan.offloadedAt(receiver)->buffers[1][0]) {
          EXPECT_LE(b.firstStep, issuer.step) << b.name;
        }
    }
    across += movingBetween;
  }
  EXPECT_GE(across, 3) << "the pointwise layers of blocks 2-4 at least";
  EXPECT_GT(queued, 0);
  // Two channels: some transfers go on channel 1 (weights and stores), which the layers with their operands in
  // place leave idle, so two layers' weights travel at once.
  int onChannel1 = 0;
  for (const OffloadedLayer& l : plan.offloaded)
    for (const WeightPrefetchTo& to : l.prefetches) onChannel1 += to.channel == 1;
  EXPECT_GT(onChannel1, 0);
  EXPECT_NE(r->code.source.text.find("_wpre[core] = stowage_dma_start(1, "), std::string::npos);
  bool remark = false;
  for (const std::string& s : plan.remarks) remark = remark || s.find("over layers that move data of their own") != std::string::npos;
  EXPECT_TRUE(remark);
  const auto inputs = testing::patternInputs(g);
  const uint64_t with = testing::expectLayersRunAsEstimated(*r, inputs);
  CompileOptions own = o;
  own.prefetchWeights = false;
  auto without = compileGraphOnBoard(g, testing::exampleBoard("hexagon-vtcm"), own);
  ASSERT_TRUE(without.ok()) << without.error().render();
  EXPECT_LT(with * 10, testing::expectLayersRunAsEstimated(*without, inputs) * 8) << "at least 20% fewer cycles";
  auto onCpu = compileGraph(g, o);
  ASSERT_TRUE(onCpu.ok()) << onCpu.error().render();
  testing::expectSameHostOutputs(*r, *onCpu, inputs);
}

TEST(WeightPrefetch, MobileNetOnHexagonInterleavesTheTransfersOverBothChannels) {
  STOWAGE_RELEASE_BUILD_ONLY("whole models through the tile simulator, 10-50 s under ASan");
  // MobileNet's blocks 7-11 on hexagon-vtcm: each pointwise layer's weights take ~1,500 cycles to load (a 1,000-cycle
  // setup), longer than it computes, and every layer receives its weights from an earlier one. With each channel
  // carrying one kind (depthwise on one, pointwise on the other) the pointwise transfers queue one behind the other
  // and those layers wait (1,431 cycles for 1,152 of compute); the search's regular starts find pairs that
  // alternate the pointwise transfers over both channels, so each of those layers runs within 1.15x of its bounds.
  const Graph g = testing::foldedZooGraph("mobilenet-v1-0.25");
  const CompileOptions o = testing::quickPlannerOptions();
  auto r = compileOnExampleBoard(g, "hexagon-vtcm", o);
  ASSERT_TRUE(r.ok()) << r.error().render();
  const ProgramPlan& plan = r->plan;
  int channels[2] = {0, 0}, checked = 0;
  for (size_t i = 0; i < plan.offloaded.size(); ++i) {
    const OffloadedLayer& l = plan.offloaded[i];
    const Node& n = r->graph.nodes[static_cast<size_t>(l.step)];
    const bool pointwise = n.name.find("pointwise") != std::string::npos;
    for (const OffloadedLayer& issuer : plan.offloaded)
      for (const WeightPrefetchTo& to : issuer.prefetches)
        if (to.step == l.step && pointwise) ++channels[to.channel];
    bool late = false;
    for (int b = 7; b <= 11; ++b) late = late || n.name == "block" + std::to_string(b) + ".pointwise.conv";
    if (!late) continue;
    ++checked;
    EXPECT_GT(l.weightsPrefetchedCores, 0) << n.name;
    EXPECT_LE(ratioToBounds(*r, i), 1.15) << n.name;
  }
  EXPECT_EQ(checked, 5);
  EXPECT_GE(channels[0], 2) << "pointwise weights on the input channel";
  EXPECT_GE(channels[1], 2) << "pointwise weights on the weight and store channel";
  const auto inputs = testing::patternInputs(g);
  testing::expectLayersRunAsEstimated(*r, inputs);
  auto onCpu = compileGraph(g, o);
  ASSERT_TRUE(onCpu.ok()) << onCpu.error().render();
  testing::expectSameHostOutputs(*r, *onCpu, inputs);
}

TEST(WeightPrefetch, SearchKeepsTheBestOfSeveralStarts) {
  // The zoo autoencoder on hexagon-vtcm: the search from no pairs and from the best regular start both leave
  // `reconstruction.fc` waiting for its 1,000-cycle weight transfer (1,650 cycles, 1.62x its bounds); from the third
  // best start the pairs hand it over in time (1,180 cycles) and the model is faster (12,068 -> 11,566 simulated).
  // The second-receiver moves after the starts trade a little of that layer (1.18x -> 1.23x its bounds) for a
  // faster model (11,566 -> 11,484). (Without weights loaded once: that last phase of the search makes the model
  // faster still, 11,174, with this layer waiting again, 1.62x; HexagonLoadsFirstWeightsOnceForAllCores.)
  const Graph g = testing::foldedZooGraph("autoencoder");
  CompileOptions o = testing::quickPlannerOptions();
  o.weightsOnce = false;
  auto r = compileOnExampleBoard(g, "hexagon-vtcm", o);
  ASSERT_TRUE(r.ok()) << r.error().render();
  bool found = false;
  for (size_t i = 0; i < r->plan.offloaded.size(); ++i) {
    if (r->graph.nodes[static_cast<size_t>(r->plan.offloaded[i].step)].name != "reconstruction.fc") continue;
    found = true;
    EXPECT_GT(r->plan.offloaded[i].weightsPrefetchedCores, 0);
    EXPECT_LE(ratioToBounds(*r, i), 1.25);
  }
  EXPECT_TRUE(found);
  const auto inputs = testing::patternInputs(g);
  EXPECT_LE(testing::expectLayersRunAsEstimated(*r, inputs), 11566u);
}

TEST(WeightPrefetch, CostModelIssuesASecondLayersWeightsOnTheOtherChannel) {
  // Two channels per core, operands in place: the layer's own weight load is on channel 1. The next layer's first
  // weight tile goes on channel 0, a second later layer's on channel 1 (issueLater), after the own load there; neither
  // holds the layer up, and each counts on its own channel's bound.
  const LayerShape s = testing::smallConvLayer();
  const Target t = testing::smallCoresTarget();
  TileSchedule inPlace = scheduleTiles(s, 5, 2, 2, true);
  DirectOperands d;
  d.direct[0] = d.direct[2] = true;
  applyDirectOperands(inPlace, d);
  const OperandBuffers both = OperandBuffers::uniform(true);
  const uint64_t wLoad = 100 + (2 * 18 * 4) / 4;
  const LayerCost alone = estimateLayer(t, s, inPlace, both);
  CrossLayerWeights two;
  two.issueLater = {{{300, 300}, 0, {}}, {{400, 0}, 1, {}}};
  const LayerCost issued = estimateLayer(t, s, inPlace, both, two);
  ASSERT_EQ(issued.laterReady.size(), 2u);
  ASSERT_EQ(issued.laterReady[1].size(), 2u);
  EXPECT_EQ(issued.laterReady[0][0], 300u) << "on the idle input channel";
  EXPECT_EQ(issued.laterReady[1][0], wLoad + 400) << "behind core 0's own weight load on channel 1";
  EXPECT_EQ(issued.laterReady[1][1], 0u) << "core 1 has none to load";
  EXPECT_EQ(issued.total, alone.total) << "the cores do not wait for either";
  const LayerBounds bounds = layerBounds(t, s, inPlace, two);
  EXPECT_EQ(bounds.loads, 300u);
  EXPECT_EQ(bounds.stores, wLoad + 400);
  // Swapped channels: the next layer's on channel 1, the second's on channel 0.
  two.issueLater[0].channel = 1;
  two.issueLater[1].channel = 0;
  const LayerCost swapped = estimateLayer(t, s, inPlace, both, two);
  EXPECT_EQ(swapped.laterReady[0][0], wLoad + 300);
  EXPECT_EQ(swapped.laterReady[1][0], 400u);
  // With one channel per core both queue on it, in their order, behind the core's own weight load; the layer waits
  // for neither (its output is in place: no store queues behind them).
  Target one = t;
  one.dmaChannels = 1;
  const LayerCost single = estimateLayer(one, s, inPlace, both, two);
  EXPECT_EQ(single.laterReady[0][0], wLoad + 300);
  EXPECT_EQ(single.laterReady[1][0], wLoad + 300 + 400);
  EXPECT_EQ(single.total, estimateLayer(one, s, inPlace, both).total);
}

TEST(WeightPrefetch, HexagonLayersLoadTheWeightsOfTwoLaterLayers) {
  STOWAGE_RELEASE_BUILD_ONLY("whole models through the tile simulator, 10-50 s under ASan");
  // MLPerf-like DS-CNN (zoo) on hexagon-vtcm: a weight load from DDR takes 1,000+ cycles and every layer needs one
  // per core, so one receiver per issuer leaves layers waiting (the stem can serve only one of the two layers after
  // it). With a receiver per channel, some layers load two later layers' first weights, the generated code issues
  // both (channel 0 and 1), the simulator measures every layer's estimate, the outputs are the CPU's, and the model
  // is faster than the best pairs of one receiver per issuer (8,365 simulated cycles at fd85a78).
  const Graph g = testing::foldedZooGraph("ds-cnn");
  const CompileOptions o = testing::quickPlannerOptions();
  auto r = compileOnExampleBoard(g, "hexagon-vtcm", o);
  ASSERT_TRUE(r.ok()) << r.error().render();
  const ProgramPlan& plan = r->plan;
  int twice = 0;
  for (const OffloadedLayer& issuer : plan.offloaded) {
    if (issuer.prefetches.size() < 2) continue;
    ++twice;
    const OffloadedLayer* second = plan.offloadedAt(issuer.prefetches[1].step);
    ASSERT_NE(second, nullptr);
    EXPECT_GT(second->weightsPrefetchedCores, 0);
    EXPECT_GT(second->step, issuer.step);
    // Its weight buffer lives from the issuer's step.
    for (const PlacedBuffer& b : plan.buffers)
      if (b.role == BufferRole::Scratch && b.name == second->buffers[1][0]) {
        EXPECT_LE(b.firstStep, issuer.step) << b.name;
      }
  }
  EXPECT_GT(twice, 0);
  EXPECT_NE(r->code.source.text.find("_load_later1(a, ws, core)"), std::string::npos);
  bool remark = false;
  for (const std::string& s : plan.remarks) remark = remark || s.find("the first weight tiles of two later layers") != std::string::npos;
  EXPECT_TRUE(remark);
  const auto inputs = testing::patternInputs(g);
  EXPECT_LT(testing::expectLayersRunAsEstimated(*r, inputs), 8365u);
  auto onCpu = compileGraph(g, o);
  ASSERT_TRUE(onCpu.ok()) << onCpu.error().render();
  testing::expectSameHostOutputs(*r, *onCpu, inputs);
}

TEST(WeightPrefetch, OnceWeightCopyIsSharedOrSpread) {
  // Weights loaded once: the first weight tiles of all cores as one transfer. smallConvLayer's weights are 72 bytes per
  // output channel (2 x 3 x 3 floats).
  const LayerShape s = testing::smallConvLayer();
  const Target t = testing::smallCoresTarget();  // 4 bytes per cycle after 100 setup cycles
  // Channels split over the 2 cores: each core's first tile is its own block of 2 channels, 144 bytes apart: one 2-D
  // transfer of 2 rows of 144 bytes, row c into core c's region.
  const TileSchedule channels = scheduleTiles(s, 5, 2, 2, true);
  const auto spread = onceWeightCopy(channels, 2, 144);
  ASSERT_TRUE(spread.has_value());
  EXPECT_FALSE(onceWeightsShared(*spread));
  EXPECT_EQ(*spread, (TileCopy{0, 2, 144, 144}));
  EXPECT_FALSE(onceWeightCopy(channels, 2, 128).has_value()) << "a tile larger than a core's region";
  EXPECT_FALSE(onceWeightCopy(channels, 1, 144).has_value()) << "one core: nothing to share";
  // Rows split over the 2 cores: both need all 4 channels, one block that moves once and both cores read.
  const TileSchedule rows = scheduleTiles(s, 3, 4, 2, true);
  const auto shared = onceWeightCopy(rows, 2, 288);
  ASSERT_TRUE(shared.has_value());
  EXPECT_TRUE(onceWeightsShared(*shared));
  EXPECT_EQ(shared->bytes(), 288u);

  // The issuing cores' transfers: each core its own (100 + 144 / 4 cycles), or one by core 1 (100 + 288 / 4).
  OffloadedLayer receiver;
  receiver.mode = "cores";
  receiver.cores = 2;
  receiver.weightsPrefetchedCores = 2;
  receiver.coreStride[1] = 144;
  EXPECT_EQ(receiverTransferCycles(t, channels, receiver), (std::vector<uint64_t>{136, 136}));
  receiver.weightsOnceCore = 1;
  EXPECT_EQ(receiverTransferCycles(t, channels, receiver), (std::vector<uint64_t>{0, 172}));
  receiver.coreStride[1] = 288;
  EXPECT_EQ(receiverTransferCycles(t, rows, receiver), (std::vector<uint64_t>{0, 172})) << "one block of 288 bytes";
}

TEST(WeightPrefetch, HexagonLoadsFirstWeightsOnceForAllCores) {
  STOWAGE_RELEASE_BUILD_ONLY("whole models through the tile simulator, 10-50 s under ASan");
  // MobileNet on hexagon-vtcm: every layer needs a 1,000-cycle transfer per core for its first weight tiles, and with
  // 29 layers the cores' two channels carry about as much as they compute. One core of the issuing layer loads the
  // first weight tiles of all 4 cores of some receivers in one transfer (one setup instead of 4): fewer transfers,
  // the simulator measures every layer's estimate, the outputs are the CPU's, and the model is faster than with
  // --no-weights-once (22,585 simulated cycles at 725b356).
  const Graph g = testing::foldedZooGraph("mobilenet-v1-0.25");
  const CompileOptions o = testing::quickPlannerOptions();
  auto r = compileOnExampleBoard(g, "hexagon-vtcm", o);
  ASSERT_TRUE(r.ok()) << r.error().render();
  const ProgramPlan& plan = r->plan;
  int once = 0;
  for (const OffloadedLayer& l : plan.offloaded) {
    if (l.weightsOnceCore < 0) continue;
    ++once;
    EXPECT_EQ(l.weightsPrefetchedCores, l.cores);
    EXPECT_LT(l.weightsOnceCore, l.cores);
    const LayerShape s = *layerShapeOf(r->graph, r->graph.nodes[static_cast<size_t>(l.step)]).shape;
    EXPECT_TRUE(onceWeightCopy(offloadedSchedule(s, l), l.weightsPrefetchedCores, l.coreStride[1]).has_value());
  }
  EXPECT_GT(once, 0);
  const std::string& c = r->code.source.text;
  EXPECT_NE(c.find("weights loaded once"), std::string::npos);
  EXPECT_NE(c.find("stowage_barrier()"), std::string::npos);
  bool remark = false;
  for (const std::string& s : plan.remarks) remark = remark || s.find("in one transfer by one core") != std::string::npos;
  EXPECT_TRUE(remark);
  const auto inputs = testing::patternInputs(g);
  HostSimReport with;
  const uint64_t cycles = testing::expectLayersRunAsEstimated(*r, inputs, &with);
  EXPECT_LT(cycles, 22585u);

  CompileOptions own = o;
  own.weightsOnce = false;
  auto without = compileOnExampleBoard(g, "hexagon-vtcm", own);
  ASSERT_TRUE(without.ok()) << without.error().render();
  for (const OffloadedLayer& l : without->plan.offloaded) EXPECT_EQ(l.weightsOnceCore, -1);
  HostSimReport simWithout;
  EXPECT_LT(cycles, testing::expectLayersRunAsEstimated(*without, inputs, &simWithout));
  EXPECT_LT(with.dmaTransfers(), simWithout.dmaTransfers());
  EXPECT_GT(with.dmaTransfers(), 0u);
  EXPECT_EQ(with.dmaBytes(), simWithout.dmaBytes()) << "the same bytes (each core's own block), in fewer transfers";
  auto onCpu = compileGraph(g, o);
  ASSERT_TRUE(onCpu.ok()) << onCpu.error().render();
  testing::expectSameHostOutputs(*r, *onCpu, inputs);
}

TEST(WeightPrefetch, AutoencoderOnHexagonLoadsWeightsFromFarIssuers) {
  STOWAGE_RELEASE_BUILD_ONLY("whole models through the tile simulator, 10-50 s under ASan");
  // The zoo autoencoder on hexagon-vtcm: ten fully connected layers whose weights stream from main memory, each
  // computing for 2-160 cycles against 1,000-cycle transfers. With issuers up to 10 layers back, a later layer's
  // first weight tiles start during an early layer, on channels the layers just before it leave idle: some pair spans
  // more than 4 layers, the simulator measures every layer's estimate, the outputs are the CPU's, and the model is
  // faster than with --no-far-weight-prefetch (11,124 against 11,174 simulated cycles at ddcc979, where the far
  // issuers are the pair search's last phase; 10,972 when they were tried in every phase). Pairs only: the weight
  // stream, which goes further, has a test of its own below.
  const Graph g = testing::foldedZooGraph("autoencoder");
  CompileOptions o = testing::quickPlannerOptions();
  o.weightStream = false;
  auto r = compileOnExampleBoard(g, "hexagon-vtcm", o);
  ASSERT_TRUE(r.ok()) << r.error().render();
  int farthest = 0;
  for (const OffloadedLayer& l : r->plan.offloaded) {
    for (const WeightPrefetchTo& to : l.prefetches) farthest = std::max(farthest, to.step - l.step);
  }
  EXPECT_GT(farthest, 4) << "every layer of the autoencoder is offloaded: steps apart are layers apart";
  bool remark = false;
  for (const std::string& s : r->plan.remarks) remark = remark || s.find("far issuers") != std::string::npos;
  EXPECT_TRUE(remark);
  CompileOptions near = o;
  near.farWeightPrefetch = false;
  auto without = compileOnExampleBoard(g, "hexagon-vtcm", near);
  ASSERT_TRUE(without.ok()) << without.error().render();
  for (const OffloadedLayer& l : without->plan.offloaded)
    for (const WeightPrefetchTo& to : l.prefetches) EXPECT_LE(to.step - l.step, 4);
  testing::expectFasterThanWithoutAndAsTheCpu(g, o, *r, *without);
}

/// `o` with the weight stream off: pairs of layers only (the stream's tests compare against it).
CompileOptions pairsOnly(CompileOptions o) {
  o.weightStream = false;
  return o;
}

TEST(WeightPrefetch, AutoencoderOnHexagonStreamsTheRunsWeightsFromItsFirstLayer) {
  STOWAGE_RELEASE_BUILD_ONLY("whole models through the tile simulator, 10-50 s under ASan");
  // The zoo autoencoder on hexagon-vtcm waits for DMA almost all the time (516 cycles of compute in 11,124 with pairs
  // only). With the weight stream an issuer loads the first weight tiles (here: all the weights) of many later
  // layers, queued on its cores' channels, most of them as one transfer each (one 1,000-cycle setup instead of four):
  // some layer issues three or more, the generated code loads them one after the other, the simulator measures every
  // layer's estimate, the outputs are the CPU's, and the model is faster than with --no-weight-stream (8,808 against
  // 11,124 estimated cycles at the change that added it).
  const Graph g = testing::foldedZooGraph("autoencoder");
  const CompileOptions o = testing::quickPlannerOptions();
  auto r = compileOnExampleBoard(g, "hexagon-vtcm", o);
  ASSERT_TRUE(r.ok()) << r.error().render();
  size_t most = 0;
  int once = 0;
  for (const OffloadedLayer& l : r->plan.offloaded) {
    most = std::max(most, l.prefetches.size());
    once += l.weightsOnceCore >= 0;
  }
  EXPECT_GE(most, 3u);
  EXPECT_GE(once, 3);
  EXPECT_NE(r->code.source.text.find("_load_later2(a, ws, core)"), std::string::npos);
  // The summary names an issuer further back than the layer before.
  const std::string summary = offloadSummary(r->graph, r->plan);
  EXPECT_NE(summary.find("first weights loaded once for all cores by step 0 'encoder1.fc'"), std::string::npos) << summary;
  bool remark = false;
  for (const std::string& s : r->plan.remarks) remark = remark || s.find("weight stream: ") != std::string::npos;
  EXPECT_TRUE(remark);
  auto without = compileOnExampleBoard(g, "hexagon-vtcm", pairsOnly(o));
  ASSERT_TRUE(without.ok()) << without.error().render();
  for (const OffloadedLayer& l : without->plan.offloaded) EXPECT_LE(l.prefetches.size(), 2u);
  testing::expectFasterThanWithoutAndAsTheCpu(g, o, *r, *without);
}

/// Two runs on hexagon-vtcm that a CPU Relu separates: the zoo autoencoder (ten fully connected layers that wait for
/// DMA), then three Gemms of 2,048 rows by 64 x 64 weights on a second input (8 Mi MACs each against 16 KiB of weights:
/// compute-bound), which take most of the program's cycles.
Graph dmaRunThenComputeRun() {
  Graph g = testing::foldedZooGraph("autoencoder");
  std::vector<float> w(64 * 64);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.01f * static_cast<float>(static_cast<int>(i % 11) - 5);
  const TensorId out = g.outputs.front();
  const TensorId r = testing::addTensor(g, "r", g.tensor(out).shape);
  testing::addNode(g, "relu", OpKind::Relu, {out}, r);
  Attributes transB;
  transB.set("transB", int64_t{1});
  TensorId m = testing::addInput(g, "x2", {2048, 64});
  for (int l = 0; l < 3; ++l) {
    const TensorId wl = testing::addConstant(g, "g" + std::to_string(l) + ".w", {64, 64}, w);
    const TensorId y = testing::addTensor(g, "m" + std::to_string(l), {2048, 64});
    testing::addNode(g, "g" + std::to_string(l), OpKind::Gemm, {m, wl}, y, transB);
    m = y;
  }
  g.outputs = {r, m};
  return g;
}

TEST(WeightPrefetch, WeightStreamMovesTheRunsThatWaitForDma) {
  STOWAGE_RELEASE_BUILD_ONLY("whole models through the tile simulator, seconds under ASan");
  // The autoencoder's run waits for DMA, the Gemm run computes and holds most of the cycles: the stream reorders the
  // first run's weights (an issuer loads three or more later layers'), faster than --no-weight-stream, the
  // simulator measures every layer's estimate and the outputs are the CPU's. (Judged over the whole program, the
  // layers would not mostly wait, and the stream would not run.)
  const Graph g = dmaRunThenComputeRun();
  CompileOptions o = testing::quickPlannerOptions();
  o.fuse = false;  // the Relu stays a CPU step between the two runs
  auto r = compileOnExampleBoard(g, "hexagon-vtcm", o);
  ASSERT_TRUE(r.ok()) << r.error().render();
  uint64_t total = 0, compute = 0, gemmTotal = 0;
  size_t most = 0;
  for (const OffloadedLayer& l : r->plan.offloaded) {
    total += l.totalCycles;
    compute += l.computeCycles;
    const std::string& name = r->graph.nodes[static_cast<size_t>(l.step)].name;
    if (name[0] == 'g' && name[1] != '.') gemmTotal += l.totalCycles;
    if (name.find(".fc") != std::string::npos) most = std::max(most, l.prefetches.size());
  }
  EXPECT_LT((total - compute) * 2, total) << "over the whole program the layers do not mostly wait";
  EXPECT_GT(gemmTotal * 2, total) << "the compute-bound run holds most of the cycles";
  EXPECT_GE(most, 3u) << "the fully connected run is streamed";
  auto without = compileOnExampleBoard(g, "hexagon-vtcm", pairsOnly(o));
  ASSERT_TRUE(without.ok()) << without.error().render();
  testing::expectFasterThanWithoutAndAsTheCpu(g, o, *r, *without);
}

TEST(WeightPrefetch, WeightStreamLeavesComputeBoundProgramsAlone) {
  STOWAGE_RELEASE_BUILD_ONLY("whole models through the tiler, seconds under ASan");
  // ResNet-8 on hexagon-vtcm computes most of the time: the weight stream's search does not run (compile time), and
  // the program is the one the pairs give.
  const Graph g = testing::foldedZooGraph("resnet8");
  const CompileOptions o = testing::quickPlannerOptions();
  auto r = compileOnExampleBoard(g, "hexagon-vtcm", o);
  ASSERT_TRUE(r.ok()) << r.error().render();
  auto without = compileOnExampleBoard(g, "hexagon-vtcm", pairsOnly(o));
  ASSERT_TRUE(without.ok()) << without.error().render();
  ASSERT_EQ(r->plan.offloaded.size(), without->plan.offloaded.size());
  for (size_t i = 0; i < r->plan.offloaded.size(); ++i) {
    EXPECT_EQ(r->plan.offloaded[i].prefetches, without->plan.offloaded[i].prefetches);
    EXPECT_EQ(r->plan.offloaded[i].totalCycles, without->plan.offloaded[i].totalCycles);
  }
}

// (Weights loaded once by any issuing core: Accelerator.ToyCarOnHexagonLoadsWeightsOnceByAFreeIssuingCore, e2e: it pays
// on MLPerf ToyCar, a ../shared model.)

TEST(WeightPrefetch, SmallVtcmTakesOnlyThePairsThatFit) {
  STOWAGE_RELEASE_BUILD_ONLY("whole models through the tile simulator, 10-50 s under ASan");
  const Graph g = testing::foldedZooGraph("resnet8");
  const Board small = testing::hexagonWithVtcmOf(256 * 1024);
  const int vtcm = testing::poolIndex(small, "vtcm");
  ASSERT_GE(vtcm, 0);
  const MemoryPool& pool = small.pools[static_cast<size_t>(vtcm)];
  const CompileOptions o = testing::quickPlannerOptions();
  auto r = compileGraphOnBoard(g, small, o);
  ASSERT_TRUE(r.ok()) << r.error().render();
  // Some weight buffers fit a layer early, others do not (a remark names them and the step in the way).
  int prefetched = 0;
  for (const OffloadedLayer& l : r->plan.offloaded) prefetched += l.weightsPrefetchedCores > 0 ? 1 : 0;
  EXPECT_GT(prefetched, 0);
  bool leftOut = false;
  for (const std::string& s : r->plan.remarks)
    leftOut = leftOut || (s.find("load their first weight tiles themselves") != std::string::npos && s.find("do not fit 'vtcm'") != std::string::npos);
  EXPECT_TRUE(leftOut);
  // Every tile buffer fits its bank at every step it lives (the planner validated the plan; check the sums too).
  for (int step = 0; step < r->plan.steps; ++step) {
    size_t live[2] = {0, 0};
    for (const PlacedBuffer& b : r->plan.buffers)
      if (b.slot.pool == vtcm && b.role == BufferRole::Scratch && b.firstStep <= step && step < b.endStep && b.slot.bank >= 0 && b.slot.bank < 2)
        live[b.slot.bank] += b.sizeBytes;
    EXPECT_LE(live[0], pool.bankSizeBytes) << "step " << step;
    EXPECT_LE(live[1], pool.bankSizeBytes) << "step " << step;
  }
  auto onCpu = compileGraph(g, o);
  ASSERT_TRUE(onCpu.ok());
  testing::expectSameHostOutputs(*r, *onCpu, testing::patternInputs(g));
}

}  // namespace
}  // namespace stowage

