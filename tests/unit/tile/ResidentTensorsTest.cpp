// Unit tests of resident activations (tile/ResidentTensors.h): which tile copies can be used in place, the cost
// model without their DMA, the zoo ResNet-8 on hexagon-vtcm keeping its block activations in VTCM (pinned, only
// between layers the HVX cores run, used in place, bit-exact on the simulator, faster than through DDR), a small
// VTCM admitting only what fits, and rules, guard mode and --no-resident keeping activations in main memory; a view
// (Reshape) between two HVX layers keeps the tensor resident, and a view that copies keeps its target's access; a
// tensor over the first tiling's budget is admitted when the layers tiled again around it are faster (gap8 autoencoder).
#include "ReleaseOnly.h"
#include <gtest/gtest.h>

#include <cstring>

#include "../codegen/TestGraphs.h"
#include "ZooTestGraphs.h"
#include "stowage/plan/CpuLayerCost.h"
#include "stowage/driver/Compiler.h"
#include "stowage/driver/HostRunner.h"
#include "stowage/target/Board.h"
#include "stowage/tile/CostModel.h"
#include "stowage/tile/TileChoice.h"

namespace stowage {
namespace {

TEST(ResidentTensors, OnlyContiguousTileCopiesCanBeUsedInPlace) {
  const LayerShape s = testing::smallConvLayer();
  // Row blocks of an NCHW tensor are strided (one run per channel); whole images in channel blocks are contiguous.
  const TileSchedule rowBlocks = scheduleTiles(s, 2, 4, 1, true);
  EXPECT_FALSE(copiesContiguous(rowBlocks, 0));
  EXPECT_FALSE(copiesContiguous(rowBlocks, 2));
  const TileSchedule channelBlocks = scheduleTiles(s, 5, 2, 2, true);
  EXPECT_TRUE(copiesContiguous(channelBlocks, 0));
  EXPECT_TRUE(copiesContiguous(channelBlocks, 1));
  EXPECT_TRUE(copiesContiguous(channelBlocks, 2));

  Target t = testing::smallCoresTarget();
  TileSchedule inPlace = channelBlocks;
  DirectOperands d;
  d.direct[0] = d.direct[2] = true;
  applyDirectOperands(inPlace, d);
  for (const TileDesc& tile : inPlace.tiles) {
    EXPECT_FALSE(tile.loadX);
    EXPECT_FALSE(tile.storeY);
    EXPECT_TRUE(tile.loadW);
    // The copies keep their offsets: the kernel addresses the tensor with them.
    EXPECT_EQ(tile.y.offset, static_cast<size_t>(tile.channelOffset) * 25 * 4);
  }
  // Only the weights move: per core one load of its 2 channels' weights, then the compute.
  const LayerBounds b = layerBounds(t, s, inPlace);
  const uint64_t wLoad = 100 + (2 * 18 * 4) / 4;
  EXPECT_EQ(b.dma, wLoad);
  const LayerCost c = estimateLayer(t, s, inPlace, OperandBuffers::uniform(true));
  EXPECT_EQ(c.total, wLoad + b.compute);
  EXPECT_LT(c.total, estimateLayer(t, s, channelBlocks, OperandBuffers::uniform(true)).total);
  EXPECT_EQ(directOperandsText(d), "x/y");
}

TEST(ResidentTensors, StridedPointwiseConvOverEveryRowReadsWholePlanes) {
  // A 1x1 stride-2 conv on a 6-row NCHW image: its windows end at row 4, row 5 is never read. A tile over every
  // output row still copies whole planes (rows 0..5), one contiguous run, so a resident input serves it in place.
  const LayerShape s = testing::floatConvLayer(2, 6, 4, 1, 2, 0);
  const TileSchedule channelBlocks = scheduleTiles(s, 3, 2, 2, true);
  EXPECT_TRUE(copiesContiguous(channelBlocks, 0));
  for (const TileDesc& t : channelBlocks.tiles) {
    EXPECT_EQ(t.x.rows * t.x.rowBytes, 2u * 6 * 6 * 4) << "both channels' whole planes";
    EXPECT_EQ(t.convParams().h, 6);
  }
  // A block of the first rows reads rows 0..2 only: strided, as before.
  const TileSchedule rowBlocks = scheduleTiles(s, 2, 4, 1, true);
  EXPECT_FALSE(copiesContiguous(rowBlocks, 0));
  EXPECT_EQ(rowBlocks.tiles[0].convParams().h, 3);
}

uint64_t estimatedCycles(const ProgramPlan& plan) {
  uint64_t sum = 0;
  for (const OffloadedLayer& l : plan.offloaded) sum += l.totalCycles;
  return sum;
}

/// Activation buffers (not tile buffers) placed in `pool`.
std::vector<const PlacedBuffer*> activationsIn(const ProgramPlan& plan, int pool) {
  std::vector<const PlacedBuffer*> out;
  for (const PlacedBuffer& b : plan.buffers)
    if (b.role == BufferRole::Activation && b.slot.pool == pool) out.push_back(&b);
  return out;
}

TEST(ResidentTensors, ResNet8OnHexagonKeepsBlockActivationsInVtcm) {
  STOWAGE_RELEASE_BUILD_ONLY("whole models through the tile simulator, 10-50 s under ASan");
  const Graph g = testing::foldedZooGraph("resnet8");
  const Board board = testing::exampleBoard("hexagon-vtcm");
  const int vtcm = testing::poolIndex(board, "vtcm");
  ASSERT_GE(vtcm, 0);
  const CompileOptions o = testing::quickPlannerOptions();
  auto resident = compileGraphOnBoard(g, board, o);
  ASSERT_TRUE(resident.ok()) << resident.error().render();
  const ProgramPlan& plan = resident->plan;
  const auto inVtcm = activationsIn(plan, vtcm);
  ASSERT_GE(inVtcm.size(), 8u) << "the block activations between HVX layers stay in VTCM";
  for (const PlacedBuffer* b : inVtcm) {
    EXPECT_NE(b->pinOrigin.find("resident in 'vtcm'"), std::string::npos) << b->pinOrigin;
    // Every node making or reading it runs on the HVX cores (the CPU cannot reach VTCM).
    for (size_t step = 0; step < resident->graph.nodes.size(); ++step) {
      const Node& n = resident->graph.nodes[step];
      bool touches = std::find(n.outputs.begin(), n.outputs.end(), b->tensor) != n.outputs.end();
      for (const PlacedBuffer& m : plan.buffers)  // members of its alias group too
        if (m.aliasOf == b->tensor && std::find(n.inputs.begin(), n.inputs.end(), m.tensor) != n.inputs.end()) touches = true;
      if (std::find(n.inputs.begin(), n.inputs.end(), b->tensor) != n.inputs.end()) touches = true;
      // (A view planned on its input's bytes, 'flatten' before the FC, runs no code.)
      const bool view = n.op == OpKind::Reshape && plan.buffers[static_cast<size_t>(plan.bufferOf(n.outputs[0]))].aliasOf != kNoTensor;
      if (touches && !view) {
        EXPECT_NE(plan.offloadedAt(static_cast<int>(step)), nullptr) << n.name << " touches " << resident->graph.tensor(b->tensor).name;
      }
    }
  }
  int inPlaceX = 0, inPlaceY = 0;
  for (const OffloadedLayer& l : plan.offloaded) {
    inPlaceX += l.direct[0];
    inPlaceY += l.direct[2];
    for (int op = 0; op < 3; ++op)
      if (l.direct[op]) {
        EXPECT_TRUE(l.buffers[op][0].empty()) << "an operand used in place has no tile buffer";
      }
  }
  EXPECT_GE(inPlaceX, 5);
  EXPECT_GE(inPlaceY, 5);
  // The strided 1x1 shortcuts read their resident input in place too (their tiles take the plane's unread last row).
  for (const char* name : {"stack2.block0.shortcut", "stack3.block0.shortcut"}) {
    const OffloadedLayer& l = testing::offloadedLayerNamed(*resident, name);
    EXPECT_TRUE(l.direct[0] && l.direct[2]) << name << " reads and writes in place";
  }
  EXPECT_NE(resident->code.source.text.find("(a->x + d->x_off)"), std::string::npos);
  bool remark = false;
  for (const std::string& r : plan.remarks) remark = remark || r.find("resident: ") == 0;
  EXPECT_TRUE(remark);

  CompileOptions through = o;
  through.resident = false;
  auto viaDdr = compileGraphOnBoard(g, board, through);
  ASSERT_TRUE(viaDdr.ok()) << viaDdr.error().render();
  EXPECT_TRUE(activationsIn(viaDdr->plan, vtcm).empty());
  EXPECT_LT(estimatedCycles(plan) * 10, estimatedCycles(viaDdr->plan) * 8) << "at least 20% fewer estimated cycles";
  auto onCpu = compileGraph(g, o);
  ASSERT_TRUE(onCpu.ok()) << onCpu.error().render();
  testing::expectSameHostOutputs(*resident, *onCpu, testing::patternInputs(g));
}

TEST(ResidentTensors, SmallLocalPoolAdmitsWhatFitsAndRulesAndGuardKeepMainMemory) {
  STOWAGE_RELEASE_BUILD_ONLY("whole models through the tile simulator, 10-50 s under ASan");
  const Graph g = testing::foldedZooGraph("resnet8");
  // Two 128 KiB blocks: the residents may take at most half of the pool at any step, so only some of the 14
  // activations the 8 MiB board keeps stay (ResNet-8's 64 KiB block activations overlap).
  const Board small = testing::hexagonWithVtcmOf(256 * 1024);
  const int vtcm = testing::poolIndex(small, "vtcm");
  ASSERT_GE(vtcm, 0);
  const MemoryPool& pool = small.pools[static_cast<size_t>(vtcm)];
  const CompileOptions o = testing::quickPlannerOptions();
  auto r = compileGraphOnBoard(g, small, o);
  ASSERT_TRUE(r.ok()) << r.error().render();
  const auto inVtcm = activationsIn(r->plan, vtcm);
  EXPECT_FALSE(inVtcm.empty());
  auto full = compileGraphOnBoard(g, testing::exampleBoard("hexagon-vtcm"), o);
  ASSERT_TRUE(full.ok());
  EXPECT_LT(inVtcm.size(), activationsIn(full->plan, vtcm).size());
  for (int step = 0; step < r->plan.steps; ++step) {
    size_t live = 0;
    for (const PlacedBuffer* b : inVtcm)
      if (b->firstStep <= step && step < b->endStep) live += b->sizeBytes;
    EXPECT_LE(live, *pool.sizeBytes / 2) << "step " << step;
  }
  auto onCpu = compileGraph(g, o);
  ASSERT_TRUE(onCpu.ok());
  testing::expectSameHostOutputs(*r, *onCpu, testing::patternInputs(g));

  // A rule that keeps conv outputs in DDR: none of them is resident.
  Board ruled = testing::exampleBoard("hexagon-vtcm");
  PlacementRule rule;
  rule.op = "Conv";
  rule.outputs = std::vector<std::string>{"ddr"};
  rule.origin = "test rule";
  ruled.rules.push_back(rule);
  auto withRule = compileGraphOnBoard(g, ruled, o);
  ASSERT_TRUE(withRule.ok()) << withRule.error().render();
  for (const PlacedBuffer* b : activationsIn(withRule->plan, vtcm)) {
    for (const Node& n : withRule->graph.nodes)
      if (n.op == OpKind::Conv) {
        EXPECT_EQ(std::find(n.outputs.begin(), n.outputs.end(), b->tensor), n.outputs.end()) << n.name;
      }
  }
  // Guard mode writes canaries from the CPU around every activation: nothing stays in VTCM.
  CompileOptions guarded = o;
  guarded.guard = true;
  auto withGuard = compileGraphOnBoard(g, testing::exampleBoard("hexagon-vtcm"), guarded);
  ASSERT_TRUE(withGuard.ok()) << withGuard.error().render();
  EXPECT_TRUE(activationsIn(withGuard->plan, vtcm).empty());
}

const PlacedBuffer& bufferOfTensor(const CompileResult& r, const std::string& name) {
  for (const PlacedBuffer& b : r.plan.buffers)
    if (b.tensor != kNoTensor && r.graph.tensor(b.tensor).name == name) return b;
  throw std::runtime_error("no buffer " + name);
}

TEST(ResidentTensors, ViewBetweenHvxLayersKeepsTheTensorInVtcm) {
  STOWAGE_RELEASE_BUILD_ONLY("whole models through the tile simulator, 10-50 s under ASan");
  // ResNet-8: pool (HVX) -> flatten (a Reshape, on the CPU) -> fc (HVX). The view shares the pool's buffer and runs
  // no code, so the pool's output stays in VTCM and the FC reads it in place: no store to DDR, no load back.
  const Graph g = testing::foldedZooGraph("resnet8");
  const Board board = testing::exampleBoard("hexagon-vtcm");
  const int vtcm = testing::poolIndex(board, "vtcm");
  const CompileOptions o = testing::quickPlannerOptions();
  auto r = compileGraphOnBoard(g, board, o);
  ASSERT_TRUE(r.ok()) << r.error().render();
  const PlacedBuffer& pooled = bufferOfTensor(*r, "pool");
  const PlacedBuffer& flat = bufferOfTensor(*r, "flatten");
  EXPECT_EQ(pooled.slot.pool, vtcm);
  EXPECT_NE(pooled.pinOrigin.find("resident in 'vtcm'"), std::string::npos) << pooled.pinOrigin;
  EXPECT_EQ(flat.aliasOf, pooled.tensor);
  EXPECT_EQ(flat.offset, pooled.offset);
  EXPECT_TRUE(testing::offloadedLayerNamed(*r, "pool").direct[2]) << "the pool writes its output in place";
  EXPECT_TRUE(testing::offloadedLayerNamed(*r, "fc").direct[0]) << "the FC reads its input in place";
  // The view costs nothing and emits no copy.
  int flatten = -1;
  for (size_t i = 0; i < r->graph.nodes.size(); ++i)
    if (r->graph.nodes[i].name == "flatten") flatten = static_cast<int>(i);
  ASSERT_GE(flatten, 0);
  EXPECT_EQ(cpuLayerCycles(r->graph, r->graph.nodes[static_cast<size_t>(flatten)], r->plan, r->plan.nodeTargets[static_cast<size_t>(flatten)]), 0u);
  EXPECT_NE(r->code.source.text.find("a view: the output shares its input's buffer"), std::string::npos);
  bool remark = false;
  for (const std::string& s : r->plan.remarks) remark = remark || s.find("'flatten' (a view of 'pool')") != std::string::npos;
  EXPECT_TRUE(remark);
  const auto inputs = testing::patternInputs(g);
  const uint64_t resident = testing::expectLayersRunAsEstimated(*r, inputs);

  // Without aliasing the view is a copy on the CPU, which cannot reach VTCM: both tensors go through DDR.
  CompileOptions copies = o;
  copies.planner.aliasing = false;
  auto c = compileGraphOnBoard(g, board, copies);
  ASSERT_TRUE(c.ok()) << c.error().render();
  EXPECT_NE(bufferOfTensor(*c, "pool").slot.pool, vtcm);
  EXPECT_NE(bufferOfTensor(*c, "flatten").slot.pool, vtcm);
  EXPECT_FALSE(testing::offloadedLayerNamed(*c, "fc").direct[0]);
  EXPECT_GT(cpuLayerCycles(c->graph, c->graph.nodes[static_cast<size_t>(flatten)], c->plan, c->plan.nodeTargets[static_cast<size_t>(flatten)]), 0u);
  const uint64_t copied = testing::expectLayersRunAsEstimated(*c, inputs);
  EXPECT_LT(resident + 1000, copied) << "one DDR store and load of ~1,000 cycles each fewer";
  auto onCpu = compileGraph(g, o);
  ASSERT_TRUE(onCpu.ok()) << onCpu.error().render();
  testing::expectSameHostOutputs(*r, *onCpu, inputs);
  testing::expectSameHostOutputs(*c, *onCpu, inputs);
}

TEST(ResidentTensors, AdmitsWhatRetilingAroundItMakesFaster) {
  // The autoencoder on gap8-cluster: the first tiling's double-buffered FC tiles fill more than half of the 36 KiB
  // L1 at every step, so the budget alone admits one hidden activation. Tiled again with each reservation, the
  // FCs still tile and save their loads and stores, so all 9 hidden activations (4,128 bytes) stay in L1.
  const Graph g = testing::foldedZooGraph("autoencoder");
  const Board board = testing::exampleBoard("gap8-cluster");
  const int l1 = testing::poolIndex(board, "l1");
  ASSERT_GE(l1, 0);
  // Residents alone: the FCs' inputs shared whole over the cores (tile.SharedInput's) take loads off the L2 path too,
  // in both programs, and the weight prefetch pairs around them differ, so a layer's cycles compare apart from them.
  CompileOptions o = testing::quickPlannerOptions();
  o.sharedWholeInput = false;
  auto r = compileGraphOnBoard(g, board, o);
  ASSERT_TRUE(r.ok()) << r.error().render();
  const auto inL1 = activationsIn(r->plan, l1);
  EXPECT_EQ(inL1.size(), 9u);
  for (const PlacedBuffer* b : inL1) EXPECT_NE(b->pinOrigin.find("resident in 'l1'"), std::string::npos) << b->pinOrigin;
  for (const char* name : {"encoder2.fc", "bottleneck.fc", "decoder4.fc"}) {
    const OffloadedLayer& l = testing::offloadedLayerNamed(*r, name);
    EXPECT_TRUE(l.direct[0] && l.direct[2]) << name << " reads and writes its activations in place";
    EXPECT_TRUE(l.doubled[0] || l.doubled[1]) << name << " keeps double-buffered tiles";
  }
  EXPECT_TRUE(testing::offloadedLayerNamed(*r, "reconstruction.fc").direct[0]);
  const auto inputs = testing::patternInputs(g);
  const uint64_t resident = testing::expectLayersRunAsEstimated(*r, inputs);

  CompileOptions through = o;
  through.resident = false;
  auto viaL2 = compileGraphOnBoard(g, board, through);
  ASSERT_TRUE(viaL2.ok()) << viaL2.error().render();
  EXPECT_TRUE(activationsIn(viaL2->plan, l1).empty());
  // Every layer the reservations touch is at most as slow as through L2; together they are faster.
  for (const OffloadedLayer& l : r->plan.offloaded) {
    const std::string& name = r->graph.nodes[static_cast<size_t>(l.step)].name;
    EXPECT_LE(l.totalCycles, testing::offloadedLayerNamed(*viaL2, name).totalCycles) << name;
  }
  EXPECT_LT(resident + 1500, testing::expectLayersRunAsEstimated(*viaL2, inputs));
  auto onCpu = compileGraph(g, o);
  ASSERT_TRUE(onCpu.ok()) << onCpu.error().render();
  testing::expectSameHostOutputs(*r, *onCpu, inputs);
}

/// x[1,4,4,4] (graph input) -> flatten (Reshape) -> flat[1,64] -> fc (Gemm) -> y[1,8].
Graph viewOfInputNet() {
  Graph g;
  g.name = "view_of_input";
  const TensorId x = testing::addInput(g, "x", {1, 4, 4, 4});
  std::vector<float> w(8 * 64);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.01f * static_cast<float>(static_cast<int>(i % 11) - 5);
  const TensorId fw = testing::addConstant(g, "fc.w", {8, 64}, w);
  const TensorId flat = testing::addTensor(g, "flat", {1, 64});
  const TensorId y = testing::addTensor(g, "y", {1, 8});
  Attributes ra;
  ra.set("shape", std::vector<int64_t>{1, 64});
  testing::addNode(g, "flatten", OpKind::Reshape, {x}, flat, ra);
  Attributes ga;
  ga.set("transB", int64_t{1});
  testing::addNode(g, "fc", OpKind::Gemm, {flat, fw}, y, ga);
  g.outputs = {y};
  return g;
}

TEST(ResidentTensors, AViewThatCopiesKeepsItsTargetsAccess) {
  // The graph input has no buffer (the application passes it), so the view copies it on the CPU: its output may
  // not go to VTCM even though the HVX layer reading it could reach it there.
  const Graph g = viewOfInputNet();
  Board board = testing::exampleBoard("hexagon-vtcm");
  const int vtcm = testing::poolIndex(board, "vtcm");
  auto r = compileGraphOnBoard(g, board, testing::quickPlannerOptions());
  ASSERT_TRUE(r.ok()) << r.error().render();
  EXPECT_NE(bufferOfTensor(*r, "flat").slot.pool, vtcm);
  EXPECT_NE(r->code.source.text.find("memcpy("), std::string::npos);
  auto onCpu = compileGraph(g, testing::quickPlannerOptions());
  ASSERT_TRUE(onCpu.ok()) << onCpu.error().render();
  testing::expectSameHostOutputs(*r, *onCpu, testing::patternInputs(g));

  // Pinned there anyway: a clear error naming the view, the tensor and the pool.
  board.pins.push_back(PoolPin{"flat", "vtcm", "--pin flat=vtcm"});
  auto pinned = compileGraphOnBoard(g, board, testing::quickPlannerOptions());
  ASSERT_FALSE(pinned.ok());
  const std::string text = pinned.error().render();
  EXPECT_NE(text.find("node 'flatten'"), std::string::npos) << text;
  EXPECT_NE(text.find("tensor 'flat'"), std::string::npos) << text;
  EXPECT_NE(text.find("pinned pool 'vtcm'"), std::string::npos) << text;
}

}  // namespace
}  // namespace stowage
