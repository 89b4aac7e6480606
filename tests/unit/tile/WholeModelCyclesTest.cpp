// The whole-model estimate and bound (tile/WholeModelCycles.h): the bound's terms on small models worked out by hand
// (engine compute of each layer as one tile, one transfer per weight and per graph input and output, an activation
// between two layers of one target staying local, one that goes through the CPU moving out and in) and the host
// simulator's whole-model cycles equal to the compiler's estimate on zoo models on every example accelerator board.
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
  // Loads: x, w1, w2 once each (h stays in the scratchpad); stores: y once.
  const UnitBound* load = unitNamed(w, "'gemmini' engine load (mvin)");
  ASSERT_NE(load, nullptr);
  EXPECT_EQ(load->offloadedCycles, gemminiTransfer(64 * 4) + gemminiTransfer(32 * 64 * 4) + gemminiTransfer(16 * 32 * 4));
  const UnitBound* store = unitNamed(w, "'gemmini' engine store (mvout)");
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->offloadedCycles, gemminiTransfer(16 * 4));
  EXPECT_EQ(w.bound, load->cycles);
  EXPECT_EQ(w.boundUnit, "'gemmini' engine load (mvin)");
  EXPECT_EQ(w.dmaBytesMinimum.weights, (32u * 64u + 16u * 32u) * 4u);
  EXPECT_EQ(w.dmaBytesMinimum.graphInputs, 64u * 4u);
  EXPECT_EQ(w.dmaBytesMinimum.graphOutputs, 16u * 4u);
  EXPECT_EQ(w.dmaBytesMinimum.activations, 0u);
  // The engine keeps no activation between layers: h goes out and comes back in.
  EXPECT_GE(w.dmaBytesPlanned, w.dmaBytesMinimum.total() + 2u * 32u * 4u);
  EXPECT_GE(w.estimate, w.bound);
  // One run of two engine layers: x arrives before the first computes, y leaves after the last (100-cycle setups).
  EXPECT_EQ(w.offloadedRuns, 1u);
  EXPECT_EQ(w.fillDrainFloor, 200u);
  EXPECT_GE(w.estimate, w.bound + w.fillDrainFloor);
  EXPECT_DOUBLE_EQ(w.ratioToBoundAndFloor(), static_cast<double>(w.estimate) / static_cast<double>(w.bound + 200));
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
  EXPECT_EQ(wm["dma_bytes_minimum"]["activations"].get<uint64_t>(), 0u);
  EXPECT_EQ(wm["offloaded_runs"].get<uint64_t>(), 1u);
  EXPECT_EQ(wm["fill_drain_floor_cycles"].get<uint64_t>(), w.fillDrainFloor);
  EXPECT_DOUBLE_EQ(wm["ratio_to_bound_and_floor"].get<double>(), w.ratioToBoundAndFloor());
  EXPECT_NE(summary.find(fmt::format("  fill and drain floor: {} cycles over 1 run(s) of offloaded layers", w.fillDrainFloor)), std::string::npos)
      << summary;
}

TEST(WholeModelCycles, CpuLayersAddToEveryUnitAndTheirActivationsMove) {
  // A Relu kept apart (--no-fuse) runs on the CPU between the two layers: h goes out to it and its output r comes
  // back in, and its cycles add to every unit's bound.
  const Board board = testing::exampleBoard("gemmini-like");
  CompileOptions o = testing::quickPlannerOptions();
  o.fuse = false;
  auto r = compileGraphOnBoard(twoLayerNet(true), board, o);
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
