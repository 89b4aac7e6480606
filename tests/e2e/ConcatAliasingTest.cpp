// End-to-end check of Concat slice aliasing (plan/analysis/Aliasing.h) on real ONNX topologies with Concat
// (SqueezeNet's fire modules, GoogLeNet's inception blocks; ../shared/models/onnx/onnx-light, skipped with a
// message when absent): the inputs written straight into their slices give byte-identical outputs to the plan
// that copies them, also in guard mode, and fewer live bytes at every Concat (never a larger peak; these
// models peak at their first 224x224 convolutions, so the overall peak itself does not move).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "E2eSupport.h"
#include "stowage/driver/Compiler.h"
#include "stowage/driver/HostRunner.h"
#include "stowage/frontend/OnnxImporter.h"
#include "stowage/report/ReportJson.h"

namespace stowage::e2e {
namespace {

namespace fs = std::filesystem;

// light_inception_v1 (9 concats) passes too but takes two minutes on the host; SqueezeNet's 8 concats suffice.

/// The light models hold one repeated value per weight tensor, so every class scores the same; a fixed
/// ripple on every float constant makes the output depend on every channel, hence on every concat slice.
void rippleWeights(Graph& g) {
  for (Tensor& t : g.tensors) {
    if (!t.isConstant() || t.dtype != DType::Float32) continue;
    float* v = reinterpret_cast<float*>(t.data.data());
    const size_t n = t.data.size() / sizeof(float);
    for (size_t i = 0; i < n; ++i) v[i] *= 1.0f + 0.5f * std::sin(0.37f * static_cast<float>(i % 1009));
  }
}

Tensor rampInput(const Graph& g) {
  Tensor input;
  input.name = g.tensor(g.inputs[0]).name;
  input.dtype = DType::Float32;
  input.shape = g.tensor(g.inputs[0]).shape;
  input.kind = TensorKind::Input;
  const int64_t n = input.numElements();
  input.data.resize(static_cast<size_t>(n) * sizeof(float));
  float* x = reinterpret_cast<float*>(input.data.data());
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(static_cast<double>(i) / static_cast<double>(n));
  return input;
}

size_t activationPeak(const CompileResult& r) {
  size_t total = 0;
  for (const PoolUse& u : r.plan.pools)
    if (r.plan.board.pools[static_cast<size_t>(u.pool)].kind == PoolKind::Workspace) total += u.usedBytes;
  return total;
}

class ConcatModel : public ::testing::TestWithParam<std::string> {};

TEST_P(ConcatModel, SlicesWrittenInPlaceGiveIdenticalOutputsInLessRam) {
  fs::path dir = sharedPath("models/onnx/onnx-light");
  if (dir.empty()) GTEST_SKIP() << "../shared/models/onnx/onnx-light not found; skipping";
  auto graph = importOnnxFile((dir / (GetParam() + ".onnx")).string());
  ASSERT_TRUE(graph.ok()) << graph.error().render();
  rippleWeights(*graph);
  const Tensor input = rampInput(*graph);
  auto compile = [&](bool slices, bool guard) {
    CompileOptions o;
    o.planner.concatSlices = slices;
    o.planner.algorithm = "greedy-size";
    o.guard = guard;
    return compileGraph(*graph, o);
  };
  auto on = compile(true, false), off = compile(false, false), guarded = compile(true, true);
  ASSERT_TRUE(on.ok()) << on.error().render();
  ASSERT_TRUE(off.ok()) << off.error().render();
  ASSERT_TRUE(guarded.ok()) << guarded.error().render();
  int slices = 0;
  for (const PlacedBuffer& b : on->plan.buffers)
    if (b.aliasOf != kNoTensor && b.aliasOffset > 0) ++slices;
  EXPECT_GT(slices, 0) << "no concat input was written into its slice";
  std::printf("%s: activation RAM %zu bytes with concat slices in place, %zu without\n", GetParam().c_str(), activationPeak(*on),
              activationPeak(*off));
  EXPECT_LE(activationPeak(*on), activationPeak(*off));
  const auto jon = buildReportJson(on->graph, on->plan, {}), joff = buildReportJson(off->graph, off->plan, {});
  auto liveAt = [&](const nlohmann::ordered_json& layer) {  // activations only: workspace pools
    size_t total = 0;
    for (const MemoryPool& pool : on->plan.board.pools)
      if (pool.kind == PoolKind::Workspace && layer["live_bytes"].contains(pool.name)) total += layer["live_bytes"][pool.name].get<size_t>();
    return total;
  };
  int concats = 0;
  size_t worstOn = 0, worstOff = 0;
  for (size_t step = 0; step < on->graph.nodes.size(); ++step) {
    if (on->graph.nodes[step].op != OpKind::Concat) continue;
    ++concats;
    worstOn = std::max(worstOn, liveAt(jon["layers"][step]));
    worstOff = std::max(worstOff, liveAt(joff["layers"][step]));
    EXPECT_LT(liveAt(jon["layers"][step]), liveAt(joff["layers"][step])) << "step " << step << " (" << on->graph.nodes[step].name << ")";
  }
  EXPECT_GT(concats, 0);
  std::printf("%s: largest live bytes at a Concat step: %zu with slices in place, %zu without\n", GetParam().c_str(), worstOn, worstOff);

  auto a = runOnHost(*on, {input});
  auto b = runOnHost(*off, {input});
  auto c = runOnHost(*guarded, {input});
  ASSERT_TRUE(a.ok()) << a.error().render();
  ASSERT_TRUE(b.ok()) << b.error().render();
  ASSERT_TRUE(c.ok()) << c.error().render();
  ASSERT_EQ(a->size(), 1u);
  const Tensor &x = (*a)[0], &y = (*b)[0], &z = (*c)[0];
  ASSERT_EQ(x.data.size(), y.data.size());
  EXPECT_TRUE(x.data == y.data) << "outputs differ with and without concat slice aliasing";
  EXPECT_TRUE(x.data == z.data) << "guard mode output differs";
  // The ripple must make the scores differ, or this comparison would prove little.
  const float* v = x.dataAs<float>();
  const size_t n = x.data.size() / sizeof(float);
  float lo = v[0], hi = v[0];
  for (size_t i = 1; i < n; ++i) lo = std::min(lo, v[i]), hi = std::max(hi, v[i]);
  EXPECT_GT(hi - lo, 1e-4f) << "uniform output: the weights ripple did not reach the classifier";
}

INSTANTIATE_TEST_SUITE_P(OnnxLight, ConcatModel, ::testing::Values("light_squeezenet"));

}  // namespace
}  // namespace stowage::e2e
