// Test helpers of the tile tests: a zoo model's graph after constant and batch-norm folding (what the tiler sees
// in the compile pipeline before fusion), built with a fixed seed; float inputs and a host-run output comparison;
// a small float conv layer shape and the example boards.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "stowage/driver/Compiler.h"
#include "stowage/driver/HostRunner.h"

#include "stowage/pass/FoldBatchNorm.h"
#include "stowage/target/Board.h"
#include "stowage/tile/TileGeometry.h"
#include "stowage/pass/FoldConstants.h"
#include "stowage/zoo/ZooGraph.h"

namespace stowage::testing {

/// A float NCHW conv layer of one image: x [1,c,h,h], w [m,c,k,k], `stride`, `pad` on every side.
inline LayerShape floatConvLayer(int32_t c, int32_t h, int32_t m, int32_t k, int32_t stride, int32_t pad) {
  stowage_conv2d_params p;
  std::memset(&p, 0, sizeof p);
  p.n = 1, p.c = c, p.h = h, p.w = h, p.m = m, p.kh = k, p.kw = k, p.group = 1;
  p.oh = p.ow = (h + 2 * pad - k) / stride + 1;
  p.stride_h = p.stride_w = stride;
  p.dil_h = p.dil_w = 1;
  p.pad_top = p.pad_left = pad;
  LayerShape s;
  s.kernel = TileKernel::Conv2dF32;
  s.call = KernelCall{ConvCall{p, false}, {}, kNoTensor};
  s.rows = p.oh;
  s.rowPixels = p.ow;
  s.channels = m;
  s.reduction = c * k * k;
  s.elemBytes = s.outElemBytes = 4;
  return s;
}

/// A float conv layer: x [1,2,5,5], w [4,2,3,3], pad 1 (5 output rows x 4 channels), NCHW.
inline LayerShape smallConvLayer() { return floatConvLayer(2, 5, 4, 3, 1, 1); }

/// A cores-mode accelerator with 2 DMA channels: `cores` cores of `macs` MACs per cycle, each channel moving
/// `bytesPerCycle` bytes per cycle after `setup` cycles.
inline Target coresTarget(int cores, int macs, int bytesPerCycle, int setup) {
  Target t;
  t.kind = TargetKind::Accelerator;
  t.cores = cores;
  t.macsPerCycle = macs;
  t.dmaBytesPerCycle = bytesPerCycle;
  t.dmaSetupCycles = setup;
  t.dmaChannels = 2;
  return t;
}

/// A cores-mode accelerator: 2 cores of 4 MACs per cycle, 2 DMA channels of 4 bytes per cycle after 100 setup cycles.
inline Target smallCoresTarget() { return coresTarget(2, 4, 4, 100); }

/// Compile options with the planner held to 2 s (the tile tests' compiles of zoo models).
inline CompileOptions quickPlannerOptions() {
  CompileOptions o;
  o.planner.timeLimitSeconds = 2;
  return o;
}

/// The board examples/boards/<name>.toml.
inline Board exampleBoard(const std::string& name) {
  auto b = loadBoardFile(std::string(STOWAGE_SOURCE_DIR) + "/examples/boards/" + name + ".toml");
  EXPECT_TRUE(b.ok()) << (b.ok() ? "" : b.error().render());
  return b.ok() ? *b : Board{};
}

/// Index of the pool named `name` in `b`, or -1.
inline int poolIndex(const Board& b, const std::string& name) {
  for (size_t i = 0; i < b.pools.size(); ++i)
    if (b.pools[i].name == name) return static_cast<int>(i);
  return -1;
}

/// hexagon-vtcm with a VTCM of `bytes` in its two blocks of half that each.
inline Board hexagonWithVtcmOf(size_t bytes) {
  Board b = exampleBoard("hexagon-vtcm");
  const int vtcm = poolIndex(b, "vtcm");
  EXPECT_GE(vtcm, 0);
  if (vtcm < 0) return b;
  b.pools[static_cast<size_t>(vtcm)].sizeBytes = bytes;
  b.pools[static_cast<size_t>(vtcm)].bankSizeBytes = bytes / 2;
  return b;
}

inline Graph foldedZooGraph(const std::string& name) {
  auto g = zoo::zooGraph(name, 7);
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().render());
  if (!g.ok()) return Graph{};
  EXPECT_TRUE(foldConstants(*g).ok());
  EXPECT_TRUE(foldBatchNorm(*g).ok());
  return std::move(*g);
}

/// Float inputs for every input of `g`: a fixed pattern in [-1, 1].
inline std::vector<Tensor> patternInputs(const Graph& g) {
  std::vector<Tensor> inputs;
  for (TensorId id : g.inputs) {
    Tensor t = g.tensor(id);
    t.kind = TensorKind::Activation;
    std::vector<float> v(static_cast<size_t>(t.numElements()));
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(static_cast<int>((i * 37) % 201) - 100) / 100.0f;
    t.data.resize(v.size() * sizeof(float));
    std::memcpy(t.data.data(), v.data(), t.data.size());
    inputs.push_back(std::move(t));
  }
  return inputs;
}

/// Runs both compiled programs on the host (the simulator for accelerator boards) and expects byte-equal outputs.
inline void expectSameHostOutputs(const CompileResult& a, const CompileResult& reference, const std::vector<Tensor>& inputs) {
  auto ra = runOnHost(a, inputs);
  ASSERT_TRUE(ra.ok()) << ra.error().render();
  auto rb = runOnHost(reference, inputs);
  ASSERT_TRUE(rb.ok()) << rb.error().render();
  ASSERT_EQ(ra->size(), rb->size());
  for (size_t i = 0; i < ra->size(); ++i) {
    EXPECT_FALSE((*rb)[i].data.empty());
    EXPECT_EQ((*ra)[i].data, (*rb)[i].data) << "output " << (*rb)[i].name;
  }
}

/// Runs `r` on the host simulator with `inputs`, expects every offloaded layer's simulated span to be the compiler's
/// estimate, and returns the simulated total (0 when the run failed).
inline uint64_t expectLayersRunAsEstimated(const CompileResult& r, const std::vector<Tensor>& inputs, HostSimReport* report = nullptr) {
  HostSimReport sim;
  HostRunOptions run;
  run.simReport = &sim;
  auto outputs = runOnHost(r, inputs, run);
  EXPECT_TRUE(outputs.ok()) << (outputs.ok() ? "" : outputs.error().render());
  if (!outputs.ok()) return 0;
  std::map<std::string, uint64_t> spans;
  for (const auto& [name, cycles] : sim.layerSpans()) spans[name] = cycles;
  for (const OffloadedLayer& l : r.plan.offloaded) {
    const std::string& name = r.graph.nodes[static_cast<size_t>(l.step)].name;
    EXPECT_TRUE(spans.count(name)) << name;
    EXPECT_EQ(spans[name], l.totalCycles) << name;
  }
  if (report != nullptr) *report = sim;
  return sim.totalCycles();
}

/// The offloaded layer of `r` whose node is named `name` (throws when there is none).
inline const OffloadedLayer& offloadedLayerNamed(const CompileResult& r, const std::string& name) {
  for (const OffloadedLayer& l : r.plan.offloaded)
    if (r.graph.nodes[static_cast<size_t>(l.step)].name == name) return l;
  throw std::runtime_error("no offloaded layer " + name);
}

/// The whole-model check of a scheduling feature: `with` (compiled with it) runs every layer as estimated on the
/// simulator and in fewer cycles than `without` (the same model compiled with it off), and gives the outputs of `g`
/// compiled for the CPU alone with `o`.
inline void expectFasterThanWithoutAndAsTheCpu(const Graph& g, const CompileOptions& o, const CompileResult& with, const CompileResult& without) {
  const std::vector<Tensor> inputs = patternInputs(g);
  const uint64_t cycles = expectLayersRunAsEstimated(with, inputs);
  HostSimReport simWithout;
  HostRunOptions run;
  run.simReport = &simWithout;
  auto ran = runOnHost(without, inputs, run);
  ASSERT_TRUE(ran.ok()) << ran.error().render();
  EXPECT_LT(cycles, simWithout.totalCycles());
  auto onCpu = compileGraph(g, o);
  ASSERT_TRUE(onCpu.ok()) << onCpu.error().render();
  expectSameHostOutputs(with, *onCpu, inputs);
}

}  // namespace stowage::testing
