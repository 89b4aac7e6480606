// The whole-model estimate and bound (tile/WholeModelCycles.h): the bound's terms on small models worked out by hand
// (engine compute of each layer as one tile, one transfer per weight and per graph input and output, an activation
// between two engine layers moving out and in once, one that goes through the CPU moving out and in), the dependency
// bound's steps by hand (an engine chain whose second load outlasts its compute, a CPU layer between, a resident input
// on cores) and under the estimate on a zoo model, and the host simulator's whole-model cycles equal to the
// compiler's estimate on zoo models on every example accelerator board.
#include "ReleaseOnly.h"
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "../codegen/TestGraphs.h"
#include "ZooTestGraphs.h"
#include "stowage/driver/Compiler.h"
#include "stowage/driver/HostRunner.h"
#include "stowage/plan/CpuLayerCost.h"
#include "stowage/report/PoolSummary.h"
#include "stowage/report/ReportHtml.h"
#include "stowage/report/ReportJson.h"
#include "stowage/tile/CostModel.h"
#include "stowage/tile/WholeModelCycles.h"

namespace stowage {
namespace {

std::vector<float> weights(size_t n) {
  std::vector<float> w(n);
  for (size_t i = 0; i < n; ++i) w[i] = 0.01f * static_cast<float>(static_cast<int>(i % 13) - 6);
  return w;
}

/// x[1,64] -> fc1 (Gemm, w1 [32,64]) -> h[1,32] -> (with `reluBetween`: relu -> r[1,32]) -> fc2 (Gemm, w2 [16,32]) -> y[1,16].
Graph twoLayerNet(bool reluBetween) {
  Graph g;
  g.name = "two_fc";
  const TensorId x = testing::addInput(g, "x", {1, 64});
  const TensorId w1 = testing::addConstant(g, "fc1.w", {32, 64}, weights(32 * 64));
  const TensorId w2 = testing::addConstant(g, "fc2.w", {16, 32}, weights(16 * 32));
  const TensorId h = testing::addTensor(g, "h", {1, 32});
  const TensorId y = testing::addTensor(g, "y", {1, 16});
  Attributes ga;
  ga.set("transB", int64_t{1});
  testing::addNode(g, "fc1", OpKind::Gemm, {x, w1}, h, ga);
  TensorId into2 = h;
  if (reluBetween) {
    into2 = testing::addTensor(g, "r", {1, 32});
    testing::addNode(g, "relu", OpKind::Relu, {h}, into2);
  }
  testing::addNode(g, "fc2", OpKind::Gemm, {into2, w2}, y, ga);
  g.outputs = {y};
  return g;
}

const UnitBound* unitNamed(const WholeModelCycles& w, const std::string& unit) {
  for (const UnitBound& u : w.units)
    if (u.unit == unit) return &u;
  return nullptr;
}

/// One transfer of `bytes` on gemmini-like: 100 cycles of setup, 16 bytes per cycle.
uint64_t gemminiTransfer(uint64_t bytes) { return 100 + (bytes + 15) / 16; }

/// twoLayerNet with its Relu kept apart (--no-fuse), so that it runs on the CPU between the two layers, on gemmini-like.
Result<CompileResult> compileTwoLayersAroundACpuRelu() {
  CompileOptions o = testing::quickPlannerOptions();
  o.fuse = false;
  return compileGraphOnBoard(twoLayerNet(true), testing::exampleBoard("gemmini-like"), o);
}

TEST(WholeModelCycles, EngineBoundByHand) {
  // gemmini-like: a 16 x 16 engine, DMA 16 bytes per cycle after 100 cycles of setup, a 256 KiB scratchpad.
  const Board board = testing::exampleBoard("gemmini-like");
  auto r = compileGraphOnBoard(twoLayerNet(false), board, testing::quickPlannerOptions());
  ASSERT_TRUE(r.ok()) << r.error().render();
  ASSERT_EQ(r->plan.offloaded.size(), 2u);
  const WholeModelCycles w = wholeModelCycles(r->graph, r->plan);
  EXPECT_EQ(w.cpuCycles, 0u);
  EXPECT_EQ(w.estimate, r->plan.offloaded[0].totalCycles + r->plan.offloaded[1].totalCycles);
  ASSERT_EQ(w.units.size(), 3u);
  // Each layer as one call: ceil(N / 16) * ceil(K / 16) * (M + 16).
  const UnitBound* execute = unitNamed(w, "'gemmini' engine execute");
  ASSERT_NE(execute, nullptr);
  EXPECT_EQ(execute->offloadedCycles, 2u * 4u * 17u + 1u * 2u * 17u);
  // Loads: x, w1, w2 once each and h once; stores: h and y once each. The engine writes every output to main memory
  // (mvout) and keeps no activation resident, so h goes out once and comes back in once.
  const UnitBound* load = unitNamed(w, "'gemmini' engine load (mvin)");
  ASSERT_NE(load, nullptr);
  EXPECT_EQ(load->offloadedCycles,
            gemminiTransfer(64 * 4) + gemminiTransfer(32 * 64 * 4) + gemminiTransfer(16 * 32 * 4) + gemminiTransfer(32 * 4));
  const UnitBound* store = unitNamed(w, "'gemmini' engine store (mvout)");
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->offloadedCycles, gemminiTransfer(32 * 4) + gemminiTransfer(16 * 4));
  EXPECT_EQ(w.bound, load->cycles);
  EXPECT_EQ(w.boundUnit, "'gemmini' engine load (mvin)");
  EXPECT_EQ(w.dmaBytesMinimum.weights, (32u * 64u + 16u * 32u) * 4u);
  EXPECT_EQ(w.dmaBytesMinimum.graphInputs, 64u * 4u);
  EXPECT_EQ(w.dmaBytesMinimum.graphOutputs, 16u * 4u);
  EXPECT_EQ(w.dmaBytesMinimum.activations, 2u * 32u * 4u);
  EXPECT_GE(w.dmaBytesPlanned, w.dmaBytesMinimum.total());
  EXPECT_GE(w.estimate, w.bound);
  // One run of two engine layers: x arrives before the first computes, y leaves after the last (100-cycle setups).
  EXPECT_EQ(w.offloadedRuns, 1u);
  EXPECT_EQ(w.fillDrainFloor, 200u);
  EXPECT_DOUBLE_EQ(w.ratioToBoundAndFloor(), static_cast<double>(w.estimate) / static_cast<double>(w.bound + 200));
  // The load queue sets the bound and x's load, the fill, is one of its loads: the floor adds to the compute unit
  // only (the execute unit + 200 is less than the loads), so the bound with the floor is the loads'.
  EXPECT_EQ(w.boundWithFloor, w.bound);
  EXPECT_GE(w.estimate, w.boundWithFloor);
  // The dependency bound: fc1 waits for x (one setup), then computes 2 * 4 * 17; fc2 waits for h (fc1's last store and
  // its own load side by side: one setup), then computes 1 * 2 * 17; y's store drains. Each load is shorter than the
  // setup and compute after it. Here the weights' loads make the max-over-units bound the larger one.
  ASSERT_EQ(w.dependencySteps.size(), 2u);
  EXPECT_EQ(w.dependencySteps[0].inputBytes, 64u * 4u);
  EXPECT_EQ(w.dependencySteps[0].load, gemminiTransfer(64 * 4));
  EXPECT_EQ(w.dependencySteps[0].cycles, 100u + 2u * 4u * 17u);
  EXPECT_EQ(w.dependencySteps[1].inputBytes, 32u * 4u);
  EXPECT_EQ(w.dependencySteps[1].cycles, 100u + 1u * 2u * 17u);
  EXPECT_EQ(w.finalDrain, 100u);
  EXPECT_EQ(w.dependencyBound, 100u + 2u * 4u * 17u + 100u + 1u * 2u * 17u + 100u);
  EXPECT_GE(w.estimate, w.dependencyBound);
  // The transfer bound: the same four loads on the one load queue (each fits the window whole), then y's store, which
  // follows the last compute and so the last load: the load queue's bound + one setup.
  ASSERT_EQ(w.transferBounds.size(), 1u);
  EXPECT_EQ(w.transferBounds[0].tensors, 4u);  // x, w1, w2, h
  EXPECT_EQ(w.transferBounds[0].transfers, 4u);
  EXPECT_EQ(w.transferBounds[0].window, w.bound);
  EXPECT_EQ(w.transferBound, w.bound + 100u);
  EXPECT_EQ(w.bestBound(), w.transferBound);
  EXPECT_GE(w.estimate, w.transferBound);
}

/// x[rows,16] -> fc1 (Gemm, w1 [wide,16]) -> h[rows,wide] -> fc2 (Gemm, w2 [16,wide]) -> y[rows,16]: fc1 computes a
/// large h from a small x, fc2 computes little from that large h.
Graph wideThenNarrow(int64_t rows, int64_t wide) {
  Graph g;
  g.name = "wide_then_narrow";
  const TensorId x = testing::addInput(g, "x", {rows, 16});
  const TensorId w1 = testing::addConstant(g, "fc1.w", {wide, 16}, weights(static_cast<size_t>(wide * 16)));
  const TensorId w2 = testing::addConstant(g, "fc2.w", {16, wide}, weights(static_cast<size_t>(16 * wide)));
  const TensorId h = testing::addTensor(g, "h", {rows, wide});
  const TensorId y = testing::addTensor(g, "y", {rows, 16});
  Attributes ga;
  ga.set("transB", int64_t{1});
  testing::addNode(g, "fc1", OpKind::Gemm, {x, w1}, h, ga);
  testing::addNode(g, "fc2", OpKind::Gemm, {h, w2}, y, ga);
  g.outputs = {y};
  return g;
}

TEST(WholeModelCycles, DependencyBoundOfAnEngineChainByHand) {
  // gemmini-like, 256 x 16 -> 256 x 256 -> 256 x 16. The max-over-units bound lets h's 256 KiB load overlap fc1's
  // compute; but fc2 may load h only after fc1 has finished, and its compute is a quarter of that load.
  const Board board = testing::exampleBoard("gemmini-like");
  auto r = compileGraphOnBoard(wideThenNarrow(256, 256), board, testing::quickPlannerOptions());
  ASSERT_TRUE(r.ok()) << r.error().render();
  ASSERT_EQ(r->plan.offloaded.size(), 2u);
  const WholeModelCycles w = wholeModelCycles(r->graph, r->plan);
  // fc1: x (16 KiB) arrives in 100 + 1024 cycles; its compute, ceil(256 / 16) * ceil(16 / 16) * (256 + 16), is longer.
  ASSERT_EQ(w.dependencySteps.size(), 2u);
  const DependencyStep& fc1 = w.dependencySteps[0];
  EXPECT_EQ(fc1.step, 0);
  EXPECT_EQ(fc1.inputBytes, 256u * 16u * 4u);
  EXPECT_EQ(fc1.fill, 100u);
  EXPECT_EQ(fc1.compute, 16u * 1u * 272u);
  EXPECT_EQ(fc1.load, gemminiTransfer(256 * 16 * 4));
  EXPECT_EQ(fc1.cycles, 100u + 16u * 272u);
  // fc2: h (256 KiB) on the one load queue, 100 + 16384 cycles, longer than one setup + 1 * 16 * 272 of compute.
  const DependencyStep& fc2 = w.dependencySteps[1];
  EXPECT_EQ(fc2.inputBytes, 256u * 256u * 4u);
  EXPECT_EQ(fc2.fill, 100u);
  EXPECT_EQ(fc2.compute, 16u * 272u);
  EXPECT_EQ(fc2.load, gemminiTransfer(256 * 256 * 4));
  EXPECT_EQ(fc2.cycles, fc2.load);
  EXPECT_EQ(w.finalDrain, 100u);  // y's last store
  const uint64_t byHand = (100 + 16 * 272) + gemminiTransfer(256 * 256 * 4) + 100;
  EXPECT_EQ(w.dependencyBound, byHand);
  // The units: loads x, w1, h, w2 (19,856 cycles) set the bound; with the floor (200) still below the dependency bound.
  const uint64_t loads = gemminiTransfer(256 * 16 * 4) + gemminiTransfer(256 * 16 * 4) + gemminiTransfer(256 * 256 * 4) +
                         gemminiTransfer(16 * 256 * 4);
  EXPECT_EQ(w.bound, loads);
  EXPECT_EQ(w.fillDrainFloor, 200u);
  EXPECT_EQ(w.boundWithFloor, w.bound);  // a DMA unit: its own transfers are the fill and the drain
  EXPECT_GT(w.dependencyBound, w.bound + w.fillDrainFloor);
  EXPECT_EQ(w.bestBound(), byHand);
  EXPECT_DOUBLE_EQ(w.ratioToBestBound(), static_cast<double>(w.estimate) / static_cast<double>(byHand));
  EXPECT_GE(w.estimate, w.dependencyBound);
}

TEST(WholeModelCycles, DependencyBoundWithACpuLayerBetween) {
  // gemmini-like, --no-fuse: fc1 -> relu (CPU) -> fc2. The relu starts after fc1's last store (one setup) and fc2
  // loads the relu's output after the relu.
  auto r = compileTwoLayersAroundACpuRelu();
  ASSERT_TRUE(r.ok()) << r.error().render();
  ASSERT_EQ(r->plan.offloaded.size(), 2u);
  const WholeModelCycles w = wholeModelCycles(r->graph, r->plan);
  const uint64_t relu = cpuLayerCycles(r->graph, r->graph.nodes[1], r->plan, r->plan.nodeTargets[1]);
  ASSERT_EQ(w.dependencySteps.size(), 3u);
  EXPECT_EQ(w.dependencySteps[0].cycles, 100u + 2u * 4u * 17u);
  const DependencyStep& cpu = w.dependencySteps[1];
  EXPECT_FALSE(cpu.offloaded);
  EXPECT_EQ(cpu.step, 1);
  EXPECT_EQ(cpu.fill, 100u);  // fc1's drain
  EXPECT_EQ(cpu.compute, relu);
  EXPECT_EQ(cpu.cycles, 100u + relu);
  const DependencyStep& fc2 = w.dependencySteps[2];
  EXPECT_EQ(fc2.inputBytes, 32u * 4u);  // r, made by the relu
  EXPECT_EQ(fc2.fill, 100u);
  EXPECT_EQ(fc2.load, gemminiTransfer(32 * 4));
  EXPECT_EQ(fc2.cycles, 100u + 1u * 2u * 17u);
  EXPECT_EQ(w.dependencyBound, (100u + 2u * 4u * 17u) + (100u + relu) + (100u + 1u * 2u * 17u) + 100u);
  EXPECT_GE(w.estimate, w.dependencyBound);
}

TEST(WholeModelCycles, DependencyBoundOfAResidentInputHasNoFill) {
  // hexagon-vtcm: h stays in VTCM, written and read in place, so fc2 neither waits for a load nor for fc1's store:
  // its part is its compute over the 4 cores alone.
  const Board board = testing::exampleBoard("hexagon-vtcm");
  auto r = compileGraphOnBoard(twoLayerNet(false), board, testing::quickPlannerOptions());
  ASSERT_TRUE(r.ok()) << r.error().render();
  ASSERT_EQ(r->plan.offloaded.size(), 2u);
  ASSERT_TRUE(r->plan.offloaded[0].direct[2]) << "h written in place";
  ASSERT_TRUE(r->plan.offloaded[1].direct[0]) << "h read in place";
  const Target& hvx = r->plan.board.targets[static_cast<size_t>(r->plan.offloaded[0].target)];
  const WholeModelCycles w = wholeModelCycles(r->graph, r->plan);
  ASSERT_EQ(w.dependencySteps.size(), 2u);
  const uint64_t cores = static_cast<uint64_t>(hvx.cores), setup = static_cast<uint64_t>(std::ceil(hvx.dmaSetupCycles));
  const DependencyStep& fc1 = w.dependencySteps[0];
  EXPECT_EQ(fc1.inputBytes, 64u * 4u);
  EXPECT_EQ(fc1.fill, setup);
  EXPECT_EQ(fc1.compute, (coreComputeCycles(hvx.macsPerCycle, 32 * 64) + cores - 1) / cores);
  const DependencyStep& fc2 = w.dependencySteps[1];
  EXPECT_EQ(fc2.inputBytes, 0u);
  EXPECT_EQ(fc2.fill, 0u);
  EXPECT_EQ(fc2.load, 0u);
  EXPECT_EQ(fc2.cycles, (coreComputeCycles(hvx.macsPerCycle, 16 * 32) + cores - 1) / cores);
  EXPECT_EQ(w.finalDrain, r->plan.offloaded[1].direct[2] ? 0u : setup);
  EXPECT_EQ(w.dependencyBound, fc1.cycles + fc2.cycles + w.finalDrain);
  EXPECT_GE(w.estimate, w.dependencyBound);
}

TEST(WholeModelCycles, EstimateIsAtLeastTheDependencyBound) {
  // The zoo autoencoder on the four example accelerator boards: the compiler's estimate (the simulator's total) never
  // undercuts the dependency bound, which its steps make more than their compute alone.
  const Graph g = testing::foldedZooGraph("autoencoder");
  for (const char* boardName : {"gemmini-like", "hexagon-vtcm", "dsp-cluster4", "gap8-cluster"}) {
    auto r = compileGraphOnBoard(g, testing::exampleBoard(boardName), testing::quickPlannerOptions());
    ASSERT_TRUE(r.ok()) << r.error().render();
    const WholeModelCycles w = wholeModelCycles(r->graph, r->plan);
    ASSERT_FALSE(r->plan.offloaded.empty()) << boardName;
    uint64_t sum = w.finalDrain, fills = 0;
    for (const DependencyStep& d : w.dependencySteps) {
      sum += d.cycles;
      fills += d.fill;
      EXPECT_GE(d.cycles, d.fill + d.compute) << boardName << " step " << d.step;
      EXPECT_GE(d.cycles, d.load) << boardName << " step " << d.step;
    }
    EXPECT_EQ(w.dependencyBound, sum) << boardName;
    EXPECT_GT(fills, 0u) << boardName;
    EXPECT_GE(w.estimate, w.dependencyBound) << boardName;
    EXPECT_GE(w.estimate, w.boundWithFloor) << boardName;
    EXPECT_GE(w.estimate, w.transferBound) << boardName;
    EXPECT_EQ(w.bestBound(), std::max({w.boundWithFloor, w.dependencyBound, w.transferBound})) << boardName;
  }
}

TEST(WholeModelCycles, TransferWindowByHand) {
  size_t transfers = 0;
  // One tensor: setup + bytes / rate.
  EXPECT_EQ(transferWindow({3200}, 100, 32.0, 1, &transfers), 200u);
  EXPECT_EQ(transfers, 1u);
  // Two on two queues side by side; on one queue one after the other.
  EXPECT_EQ(transferWindow({3200, 3200}, 100, 32.0, 2, &transfers), 200u);
  EXPECT_EQ(transfers, 2u);
  EXPECT_EQ(transferWindow({3200, 3200}, 100, 32.0, 1, &transfers), 400u);
  // 327,680 bytes at 32 per cycle with 1,000 cycles of setup on 8 queues: one transfer takes 11,240 cycles; in p pieces
  // the largest takes 1,000 + 10,240 / p and the queues carry p x 1,000 + 10,240. p = 8: 2,280 and 18,240 / 8 = 2,280.
  // p = 7: 2,463; p = 9: 19,240 / 8 = 2,405.
  EXPECT_EQ(transferWindow({327680}, 1000, 32.0, 8, &transfers), 2280u);
  EXPECT_EQ(transfers, 8u);
  // With a second, small tensor (10 cycles of bytes) the queues are fuller: 8 pieces and the small one carry
  // 9 x 1,000 + 10,250 = 19,250 cycles, which 8 queues hold from 2,407 on (19,256); 7 pieces need 1,000 + 10,240 / 7,
  // more than 2,462. So 2,407 with 9 transfers.
  EXPECT_EQ(transferWindow({327680, 320}, 1000, 32.0, 8, &transfers), 2407u);
  EXPECT_EQ(transfers, 9u);
  EXPECT_EQ(transferWindow({}, 1000, 32.0, 8, &transfers), 0u);
  EXPECT_EQ(transfers, 0u);
}

TEST(WholeModelCycles, TransferBoundOfTheAutoencoderOnHexagon) {
  // hexagon-vtcm: 1,000 cycles of setup, 8 queues. The autoencoder's 10 weight tensors and its input move by DMA (the
  // activations stay in VTCM); the first and last weights (327,680 bytes each) would take 11,240 cycles as one
  // transfer, more than the whole window, so they go in pieces. The bound with one setup per tensor and no order is
  // lower than the transfer bound, which the estimate (the simulator's cycles) does not undercut.
  const Graph g = testing::foldedZooGraph("autoencoder");
  auto r = compileGraphOnBoard(g, testing::exampleBoard("hexagon-vtcm"), testing::quickPlannerOptions());
  ASSERT_TRUE(r.ok()) << r.error().render();
  const WholeModelCycles w = wholeModelCycles(r->graph, r->plan);
  ASSERT_EQ(w.transferBounds.size(), 1u);
  const TransferBound& t = w.transferBounds[0];
  EXPECT_EQ(t.targetName, "hvx");
  EXPECT_EQ(t.tensors, 11u);
  EXPECT_EQ(t.bytes, w.dmaBytesMinimum.weights + w.dmaBytesMinimum.graphInputs);
  EXPECT_EQ(t.queues, 8);
  EXPECT_EQ(t.setup, 1000u);
  std::vector<uint64_t> bytes;
  for (const Tensor& tensor : r->graph.tensors)
    if (tensor.isConstant() && tensor.shape.size() == 2) bytes.push_back(tensor.byteSize());
  bytes.push_back(640 * 4);  // the input
  ASSERT_EQ(bytes.size(), 11u);
  size_t transfers = 0;
  EXPECT_EQ(t.window, transferWindow(bytes, 1000, 32.0, 8, &transfers));
  EXPECT_EQ(t.transfers, transfers);
  EXPECT_GT(t.transfers, t.tensors) << "the large weights go in pieces";
  EXPECT_EQ(t.drain, 1000u) << "the output is stored after the last compute";
  EXPECT_EQ(t.cpuBefore + t.cpuAfter, 0u);
  EXPECT_EQ(w.transferBound, t.window + t.drain);
  EXPECT_GT(w.transferBound, w.boundWithFloor);
  EXPECT_EQ(w.bestBound(), w.transferBound);
  EXPECT_GE(w.estimate, w.transferBound);
}

TEST(WholeModelCycles, TransferBoundCountsTheCpuLayersBeforeAndAfter) {
  // x -> relu (CPU) -> fc (hvx) -> sigmoid (CPU) -> y: no transfer is issued before the fc starts, and the sigmoid
  // starts after its store; each CPU layer adds its cycles.
  Graph g;
  g.name = "cpu_fc_cpu";
  const TensorId x = testing::addInput(g, "x", {1, 64});
  const TensorId r = testing::addTensor(g, "r", {1, 64});
  const TensorId w1 = testing::addConstant(g, "fc.w", {32, 64}, weights(32 * 64));
  const TensorId h = testing::addTensor(g, "h", {1, 32});
  const TensorId y = testing::addTensor(g, "y", {1, 32});
  Attributes ga;
  ga.set("transB", int64_t{1});
  testing::addNode(g, "relu", OpKind::Relu, {x}, r);
  testing::addNode(g, "fc", OpKind::Gemm, {r, w1}, h, ga);
  testing::addNode(g, "sigmoid", OpKind::Sigmoid, {h}, y);
  g.outputs = {y};
  auto c = compileGraphOnBoard(g, testing::exampleBoard("hexagon-vtcm"), testing::quickPlannerOptions());
  ASSERT_TRUE(c.ok()) << c.error().render();
  ASSERT_EQ(c->plan.offloaded.size(), 1u);
  const WholeModelCycles w = wholeModelCycles(c->graph, c->plan);
  ASSERT_EQ(w.transferBounds.size(), 1u);
  const TransferBound& t = w.transferBounds[0];
  const uint64_t relu = cpuStepCycles(c->graph, c->plan, 0), sigmoid = cpuStepCycles(c->graph, c->plan, 2);
  ASSERT_GT(relu, 0u);
  ASSERT_GT(sigmoid, 0u);
  EXPECT_EQ(t.cpuBefore, relu);
  EXPECT_EQ(t.cpuAfter, sigmoid);
  EXPECT_EQ(t.tensors, c->plan.offloaded[0].direct[0] ? 1u : 2u);
  EXPECT_EQ(t.drain, c->plan.offloaded[0].direct[2] ? 0u : 1000u);
  EXPECT_EQ(t.cycles, relu + t.window + t.drain + sigmoid);
  EXPECT_GE(w.estimate, w.transferBound);
}

TEST(WholeModelCycles, InTheSummaryAndReportJson) {
  const Board board = testing::exampleBoard("gemmini-like");
  auto r = compileGraphOnBoard(twoLayerNet(false), board, testing::quickPlannerOptions());
  ASSERT_TRUE(r.ok()) << r.error().render();
  const WholeModelCycles w = wholeModelCycles(r->graph, r->plan);
  const std::string summary = poolSummary(r->graph, r->plan);
  EXPECT_NE(summary.find(fmt::format("whole model: estimated {} cycles (0 of them CPU layers), bound {} cycles set by 'gemmini' engine "
                                     "load (mvin), ratio {:.3f}\n",
                                     w.estimate, w.bound, w.ratio())),
            std::string::npos)
      << summary;
  const auto j = buildReportJson(r->graph, r->plan, ReportContext{"two_fc.onnx", "net", r->layerKernels});
  ASSERT_TRUE(j.contains("whole_model"));
  const auto& wm = j["whole_model"];
  EXPECT_EQ(wm["estimated_cycles"].get<uint64_t>(), w.estimate);
  EXPECT_EQ(wm["bound_cycles"].get<uint64_t>(), w.bound);
  EXPECT_EQ(wm["bound_unit"].get<std::string>(), "'gemmini' engine load (mvin)");
  ASSERT_EQ(wm["units"].size(), 3u);
  EXPECT_EQ(wm["units"][1]["target"].get<std::string>(), "gemmini");
  EXPECT_EQ(wm["units"][1]["cycles"].get<uint64_t>(), w.bound);
  EXPECT_EQ(wm["dma_bytes"].get<uint64_t>(), w.dmaBytesPlanned);
  EXPECT_EQ(wm["dma_bytes_minimum"]["total"].get<uint64_t>(), w.dmaBytesMinimum.total());
  EXPECT_EQ(wm["dma_bytes_minimum"]["activations"].get<uint64_t>(), 2u * 32u * 4u);  // h out and back in
  EXPECT_EQ(wm["offloaded_runs"].get<uint64_t>(), 1u);
  EXPECT_EQ(wm["fill_drain_floor_cycles"].get<uint64_t>(), w.fillDrainFloor);
  EXPECT_DOUBLE_EQ(wm["ratio_to_bound_and_floor"].get<double>(), w.ratioToBoundAndFloor());
  EXPECT_NE(summary.find(fmt::format("  fill and drain floor: {} cycles over 1 run(s) of offloaded layers", w.fillDrainFloor)), std::string::npos)
      << summary;
  EXPECT_NE(summary.find(fmt::format("  dependency bound: {} cycles (each step waits for the step before it", w.dependencyBound)), std::string::npos)
      << summary;
  EXPECT_NE(summary.find(fmt::format("; best bound {} cycles, ratio {:.3f}\n", w.bestBound(), w.ratioToBestBound())), std::string::npos)
      << summary;
  EXPECT_EQ(wm["dependency_bound_cycles"].get<uint64_t>(), w.dependencyBound);
  EXPECT_EQ(wm["bound_with_floor_cycles"].get<uint64_t>(), w.boundWithFloor);
  EXPECT_EQ(wm["best_bound_cycles"].get<uint64_t>(), w.bestBound());
  EXPECT_DOUBLE_EQ(wm["ratio_to_best_bound"].get<double>(), w.ratioToBestBound());
  ASSERT_EQ(wm["dependency_steps"].size(), w.dependencySteps.size());
  EXPECT_EQ(wm["dependency_steps"][1]["step"].get<int>(), w.dependencySteps[1].step);
  EXPECT_EQ(wm["dependency_steps"][1]["layer"].get<std::string>(), "fc2");
  EXPECT_EQ(wm["dependency_steps"][1]["cycles"].get<uint64_t>(), w.dependencySteps[1].cycles);
  EXPECT_EQ(wm["final_drain_cycles"].get<uint64_t>(), w.finalDrain);
  EXPECT_EQ(wm["transfer_bound_cycles"].get<uint64_t>(), w.transferBound);
  ASSERT_EQ(wm["transfer_bounds"].size(), 1u);
  EXPECT_EQ(wm["transfer_bounds"][0]["target"].get<std::string>(), "gemmini");
  EXPECT_EQ(wm["transfer_bounds"][0]["cycles"].get<uint64_t>(), w.transferBound);
  EXPECT_EQ(wm["transfer_bounds"][0]["transfers"].get<size_t>(), w.transferBounds[0].transfers);
  EXPECT_NE(summary.find(fmt::format("  transfer bound: {} cycles ('gemmini': its layers receive {} tensor(s)", w.transferBound,
                                     w.transferBounds[0].tensors)),
            std::string::npos)
      << summary;
  // report.html: the estimate against the bounds, a bar each on one scale, the best bound marked.
  const std::string html = buildReportHtml(r->graph, r->plan, ReportContext{"two_fc.onnx", "net", r->layerKernels});
  EXPECT_NE(html.find("<h2>Whole model: cycles against the bounds</h2>"), std::string::npos);
  EXPECT_NE(html.find(fmt::format("Estimated {} cycles per run", w.estimate)), std::string::npos);
  EXPECT_NE(html.find(fmt::format("best bound {} cycles, the transfer bound", w.bestBound())), std::string::npos);
  EXPECT_NE(html.find(fmt::format("<title>transfer bound of &#39;gemmini&#39; (best bound): {} cycles</title>", w.transferBound)),
            std::string::npos)
      << html;
  EXPECT_NE(html.find(fmt::format("<title>estimate: {} cycles</title>", w.estimate)), std::string::npos);
  EXPECT_NE(html.find("<title>&#39;gemmini&#39; engine execute busy at least: "), std::string::npos);
}

TEST(WholeModelCycles, CpuLayersAddToEveryUnitAndTheirActivationsMove) {
  // A Relu kept apart (--no-fuse) runs on the CPU between the two layers: h goes out to it and its output r comes
  // back in, and its cycles add to every unit's bound.
  auto r = compileTwoLayersAroundACpuRelu();
  ASSERT_TRUE(r.ok()) << r.error().render();
  ASSERT_EQ(r->plan.offloaded.size(), 2u);
  const WholeModelCycles w = wholeModelCycles(r->graph, r->plan);
  const size_t reluStep = 1;
  ASSERT_EQ(r->graph.nodes[reluStep].op, OpKind::Relu);
  const uint64_t relu = cpuLayerCycles(r->graph, r->graph.nodes[reluStep], r->plan, r->plan.nodeTargets[reluStep]);
  EXPECT_GT(relu, 0u);
  EXPECT_EQ(w.cpuCycles, relu);
  EXPECT_EQ(w.estimate, r->plan.offloaded[0].totalCycles + relu + r->plan.offloaded[1].totalCycles);
  for (const UnitBound& u : w.units) EXPECT_EQ(u.cycles, u.offloadedCycles + relu) << u.unit;
  EXPECT_EQ(w.dmaBytesMinimum.activations, 2u * 32u * 4u);
  const UnitBound* load = unitNamed(w, "'gemmini' engine load (mvin)");
  ASSERT_NE(load, nullptr);
  EXPECT_EQ(load->offloadedCycles,
            gemminiTransfer(64 * 4) + gemminiTransfer(32 * 64 * 4) + gemminiTransfer(16 * 32 * 4) + gemminiTransfer(32 * 4));
  const UnitBound* store = unitNamed(w, "'gemmini' engine store (mvout)");
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->offloadedCycles, gemminiTransfer(16 * 4) + gemminiTransfer(32 * 4));
  // The Relu splits the layers into two runs, each with its fill and its drain.
  EXPECT_EQ(w.offloadedRuns, 2u);
  EXPECT_EQ(w.fillDrainFloor, 400u);
}

TEST(WholeModelCycles, CoresShareTheWorkEvenly) {
  // hexagon-vtcm: 4 HVX cores with 2 DMA channels each. Compute is each layer's MACs / macs_per_cycle over 4 cores,
  // DMA every transfer's cycles over the 8 channels.
  const Board board = testing::exampleBoard("hexagon-vtcm");
  auto r = compileGraphOnBoard(twoLayerNet(false), board, testing::quickPlannerOptions());
  ASSERT_TRUE(r.ok()) << r.error().render();
  ASSERT_EQ(r->plan.offloaded.size(), 2u);
  const Target& hvx = r->plan.board.targets[static_cast<size_t>(r->plan.offloaded[0].target)];
  ASSERT_EQ(hvx.engineDim, 0);
  const WholeModelCycles w = wholeModelCycles(r->graph, r->plan);
  ASSERT_EQ(w.units.size(), 2u);
  const uint64_t compute = coreComputeCycles(hvx.macsPerCycle, 32 * 64) + coreComputeCycles(hvx.macsPerCycle, 16 * 32);
  const uint64_t cores = static_cast<uint64_t>(hvx.cores), queues = cores * static_cast<uint64_t>(hvx.dmaChannels);
  EXPECT_EQ(w.units[0].unit, fmt::format("'{}' each of {} cores", hvx.name, hvx.cores));
  EXPECT_EQ(w.units[0].offloadedCycles, (compute + cores - 1) / cores);
  auto transfer = [&](uint64_t bytes) {
    return static_cast<uint64_t>(std::ceil(hvx.dmaSetupCycles)) + static_cast<uint64_t>(std::ceil(static_cast<double>(bytes) / hvx.dmaBytesPerCycle));
  };
  const uint64_t dma = transfer(64 * 4) + transfer(32 * 64 * 4) + transfer(16 * 32 * 4) + transfer(16 * 4);
  EXPECT_EQ(w.units[1].unit, fmt::format("'{}' DMA (each of {} channels)", hvx.name, queues));
  EXPECT_EQ(w.units[1].offloadedCycles, (dma + queues - 1) / queues);
  EXPECT_EQ(w.bound, std::max(w.units[0].cycles, w.units[1].cycles));
}

TEST(WholeModelCycles, NothingOffloadedIsBoundByTheCpu) {
  // The default board has no accelerator: the estimate is the CPU layers and so is the bound.
  auto r = compileGraph(twoLayerNet(true), testing::quickPlannerOptions());
  ASSERT_TRUE(r.ok()) << r.error().render();
  const WholeModelCycles w = wholeModelCycles(r->graph, r->plan);
  ASSERT_EQ(w.units.size(), 1u);
  EXPECT_EQ(w.units[0].unit, "cpu");
  // Both Gemms on the CPU (the Relu fused into the first), each at least its MACs over macs_per_cycle (1 on the
  // default board).
  EXPECT_GE(w.cpuCycles, 32u * 64u + 16u * 32u);
  EXPECT_EQ(w.bound, w.cpuCycles);
  EXPECT_EQ(w.estimate, w.cpuCycles);
  EXPECT_EQ(w.dmaBytesMinimum.total(), 0u);
  EXPECT_EQ(w.offloadedRuns, 0u);
  EXPECT_EQ(w.fillDrainFloor, 0u);
}

TEST(WholeModelCycles, SimulatorMeasuresTheEstimate) {
  STOWAGE_RELEASE_BUILD_ONLY("whole models through the tile simulator, 10-50 s under ASan");
  // Every step as the simulator charges it, summed: the simulated total of the run, and the CPU layers' spans sum to
  // the CPU part (ResNet-8 and DS-CNN keep an Add or a pool on the CPU on some boards).
  for (const char* model : {"resnet8", "ds-cnn"}) {
    const Graph g = testing::foldedZooGraph(model);
    for (const char* boardName : {"gemmini-like", "hexagon-vtcm", "dsp-cluster4", "gap8-cluster"}) {
      auto r = compileGraphOnBoard(g, testing::exampleBoard(boardName), testing::quickPlannerOptions());
      ASSERT_TRUE(r.ok()) << r.error().render();
      const WholeModelCycles w = wholeModelCycles(r->graph, r->plan);
      HostSimReport sim;
      HostRunOptions run;
      run.simReport = &sim;
      auto outputs = runOnHost(*r, testing::patternInputs(g), run);
      ASSERT_TRUE(outputs.ok()) << outputs.error().render();
      EXPECT_EQ(sim.totalCycles(), w.estimate) << model << " on " << boardName;
      std::map<std::string, bool> offloaded;
      for (const OffloadedLayer& l : r->plan.offloaded) offloaded[r->graph.nodes[static_cast<size_t>(l.step)].name] = true;
      uint64_t cpu = 0;
      for (const auto& [name, cycles] : sim.layerSpans())
        if (!offloaded.count(name)) cpu += cycles;
      EXPECT_EQ(cpu, w.cpuCycles) << model << " on " << boardName;
      EXPECT_EQ(sim.dmaBytes(), w.dmaBytesPlanned) << model << " on " << boardName;
      EXPECT_GE(w.estimate, w.bound) << model << " on " << boardName;
      EXPECT_GE(w.dmaBytesPlanned, w.dmaBytesMinimum.total()) << model << " on " << boardName;
    }
  }
}

}  // namespace
}  // namespace stowage
