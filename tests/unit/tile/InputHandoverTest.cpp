// Unit tests of the input handover between consecutive matrix-engine layers (tile/InputHandover.h): the cost model
// with a layer fencing after its last compute and loading the next layer's first input tile beside its last store,
// and the next layer skipping that load; the zoo DS-CNN on gemmini-like handing inputs over (buffers live from the
// layer before's step, the generated code fences and loads, the simulator's per-layer cycles equal the estimate,
// bit-exact with the CPU and faster than --no-input-handover).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ZooTestGraphs.h"
#include "stowage/driver/Compiler.h"
#include "stowage/driver/HostRunner.h"
#include "stowage/tile/CostModel.h"
#include "stowage/tile/InputHandover.h"
#include "stowage/tile/TileChoice.h"

namespace stowage {
namespace {

TEST(InputHandover, CostModelFencesThenStoresBesideTheNextLayersFirstInput) {
  const LayerShape s = testing::smallConvLayer();
  Target e = testing::smallCoresTarget();
  e.cores = 1;
  e.engineDim = 4;
  const OperandBuffers both = OperandBuffers::uniform(true);
  const TileSchedule sched = scheduleTiles(s, 5, 2, 1, true);
  ASSERT_GT(sched.tiles.size(), 1u);
  const LayerCost plain = estimateLayer(e, s, sched, both);
  const LayerBounds plainBounds = layerBounds(e, s, sched);

  // The issuer: a long handed-over load ends the layer (its fence waits for it); it starts only when everything
  // before the last store has ended, so after the whole compute.
  CrossLayerWeights issuer;
  issuer.issueInput = 100000;
  const LayerCost handing = estimateLayer(e, s, sched, both, issuer);
  EXPECT_GE(handing.total, plainBounds.compute + 100000);
  EXPECT_LE(handing.total, plain.total + 100000);
  EXPECT_EQ(handing.dma, plain.dma + 100000);
  EXPECT_EQ(layerBounds(e, s, sched, issuer).loads, plainBounds.loads + 100000);
  // A short one runs beside the last store: the layer ends no later than the store after the fence would.
  issuer.issueInput = 1;
  EXPECT_LE(estimateLayer(e, s, sched, both, issuer).total, plain.total + dmaCycles(e, sched.tiles.back().y));

  // The receiver: its first input tile is there when it starts, so its first compute waits only for its weights.
  CrossLayerWeights receiver;
  receiver.inputHandedOver = true;
  const LayerCost received = estimateLayer(e, s, sched, both, receiver);
  EXPECT_LT(received.total, plain.total);
  EXPECT_EQ(received.dma + dmaCycles(e, handedInputCopy(sched)), plain.dma);
  EXPECT_EQ(layerBounds(e, s, sched, receiver).loads + dmaCycles(e, handedInputCopy(sched)), plainBounds.loads);
  // Cores mode has no handover: the flag changes nothing there.
  const Target cores = testing::smallCoresTarget();
  const TileSchedule coreSched = scheduleTiles(s, 5, 2, 2, true);
  EXPECT_EQ(estimateLayer(cores, s, coreSched, both, receiver).total, estimateLayer(cores, s, coreSched, both).total);
}

TEST(InputHandover, DsCnnOnGemminiHandsInputsOverBetweenEngineLayers) {
  const Graph g = testing::foldedZooGraph("ds-cnn");
  const CompileOptions o = testing::quickPlannerOptions();
  auto r = compileGraphOnBoard(g, testing::exampleBoard("gemmini-like"), o);
  ASSERT_TRUE(r.ok()) << r.error().render();
  const ProgramPlan& plan = r->plan;
  int pairs = 0;
  for (const OffloadedLayer& l : plan.offloaded) {
    if (l.handsInputTo < 0) continue;
    ++pairs;
    // The very next step, on the same engine, expecting it; its first input buffer lives from this layer's step.
    const OffloadedLayer* next = plan.offloadedAt(l.handsInputTo);
    ASSERT_NE(next, nullptr);
    EXPECT_EQ(next->step, l.step + 1);
    EXPECT_EQ(next->target, l.target);
    EXPECT_EQ(next->mode, "engine");
    EXPECT_TRUE(next->inputHandedOver);
    const int buffer = plan.scratchOf(next->buffers[0][0]);
    ASSERT_GE(buffer, 0);
    EXPECT_EQ(plan.buffers[static_cast<size_t>(buffer)].firstStep, l.step);
    EXPECT_EQ(plan.buffers[static_cast<size_t>(buffer)].endStep, next->step + 1);
  }
  for (const OffloadedLayer& l : plan.offloaded) {
    if (!l.inputHandedOver) continue;
    const OffloadedLayer* before = plan.offloadedAt(l.step - 1);
    EXPECT_TRUE(before != nullptr && before->handsInputTo == l.step) << l.step;
  }
  EXPECT_GE(pairs, 1);
  const std::string& c = r->code.source.text;
  EXPECT_NE(c.find("/* the first input tile of step "), std::string::npos);
  EXPECT_NE(c.find("if (d->load_x && t != 0u) stowage_accel_mvin("), std::string::npos);
  bool remark = false;
  for (const std::string& s : plan.remarks) remark = remark || s.find("input handover: ") == 0;
  EXPECT_TRUE(remark);

  // On the simulator every layer takes the cycles the compiler estimated, the outputs are the CPU's, and the model is
  // faster than with each layer loading its own first input tile.
  CompileOptions own = o;
  own.handInputs = false;
  auto without = compileGraphOnBoard(g, testing::exampleBoard("gemmini-like"), own);
  ASSERT_TRUE(without.ok()) << without.error().render();
  for (const OffloadedLayer& l : without->plan.offloaded) {
    EXPECT_EQ(l.handsInputTo, -1);
    EXPECT_FALSE(l.inputHandedOver);
  }
  testing::expectFasterThanWithoutAndAsTheCpu(g, o, *r, *without);
}

}  // namespace
}  // namespace stowage
