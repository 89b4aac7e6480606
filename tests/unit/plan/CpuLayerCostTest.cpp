// Unit tests of plan/CpuLayerCost: a CPU layer costs max(ops / macs_per_cycle, memory traffic through the pools its
// tensors are planned in), and generated code run on the host simulator charges exactly those cycles, one span
// per layer, so `stowage run --trace` gives every layer's cycles, not only the offloaded ones.
#include <gtest/gtest.h>

#include <map>

#include "stowage/driver/Compiler.h"
#include "stowage/driver/HostRunner.h"
#include "stowage/ir/Op.h"
#include "stowage/plan/CpuLayerCost.h"
#include "stowage/report/ReportJson.h"
#include "stowage/target/Board.h"
#include "stowage/zoo/ZooGraph.h"
#include "stowage/zoo/ZooModels.h"

namespace stowage {
namespace {

/// A CPU doing `macs` MACs per cycle, a fast pool and a slow one (the rule sends Conv outputs to the slow one).
Board board(double macs, double slowBytesPerCycle) {
  const std::string text = "[[targets]]\nname = \"cpu\"\nkind = \"cpu\"\nmacs_per_cycle = " + std::to_string(macs) +
                           "\n[[pools]]\nname = \"fast\"\nsize = \"4MiB\"\nread_bytes_per_cycle = 8\nwrite_bytes_per_cycle = 8\n"
                           "[[pools]]\nname = \"slow\"\nsize = \"4MiB\"\nread_bytes_per_cycle = " +
                           std::to_string(slowBytesPerCycle) + "\nwrite_bytes_per_cycle = " + std::to_string(slowBytesPerCycle) +
                           "\n[[rules]]\nop = \"Conv\"\noutputs = [\"slow\"]\n";
  auto b = parseBoardToml(text, "cpu-cost.toml");
  EXPECT_TRUE(b.ok()) << (b.ok() ? "" : b.error().render());
  return *b;
}

Result<CompileResult> compileDsCnn(const Board& b) {
  STOWAGE_ASSIGN_OR_RETURN(Graph g, zoo::zooGraph("ds-cnn", 3));
  CompileOptions o;
  o.planner.timeLimitSeconds = 2;
  return compileGraphOnBoard(std::move(g), b, o);
}

TEST(CpuLayerCost, ComputeBoundByMacsMemoryBoundBySlowPools) {
  auto fast = compileDsCnn(board(4, 8));
  ASSERT_TRUE(fast.ok()) << fast.error().render();
  const Graph& g = fast->graph;
  int convs = 0;
  for (size_t step = 0; step < g.nodes.size(); ++step) {
    const Node& n = g.nodes[step];
    const uint64_t cycles = cpuLayerCycles(g, n, fast->plan, 0);
    if (n.op != OpKind::Conv) continue;
    ++convs;
    // Convolutions do far more MACs than they move bytes: compute-bound, ceil(MACs / 4).
    EXPECT_EQ(cycles, static_cast<uint64_t>((macCount(g, n) + 3) / 4)) << n.name;
  }
  ASSERT_GT(convs, 0);
  // A pool of 1/64 byte per cycle makes the same convolutions memory-bound: their output's bytes * 64 at least.
  auto slow = compileDsCnn(board(4, 1.0 / 64));
  ASSERT_TRUE(slow.ok()) << slow.error().render();
  for (const Node& n : slow->graph.nodes) {
    if (n.op != OpKind::Conv) continue;
    const uint64_t outBytes = slow->graph.tensor(n.outputs[0]).byteSize();
    EXPECT_GE(cpuLayerCycles(slow->graph, n, slow->plan, 0), outBytes * 64) << n.name;
    EXPECT_GT(cpuLayerCycles(slow->graph, n, slow->plan, 0), static_cast<uint64_t>((macCount(slow->graph, n) + 3) / 4)) << n.name;
  }
}

TEST(CpuLayerCost, TheSimulatorChargesEveryCpuLayerItsEstimate) {
  auto r = compileDsCnn(board(2, 8));
  ASSERT_TRUE(r.ok()) << r.error().render();
  const auto info = zoo::zooModels()[1];
  ASSERT_EQ(info.name, "ds-cnn");
  HostSimReport sim;
  HostRunOptions run;
  run.compiler.clear();
  run.simReport = &sim;
  auto outputs = runOnHost(*r, {zoo::sampleInput(info, 5)}, run);
  ASSERT_TRUE(outputs.ok()) << outputs.error().render();
  const auto spanList = sim.layerSpans();
  const std::map<std::string, uint64_t> spans(spanList.begin(), spanList.end());
  uint64_t total = 0;
  size_t charged = 0;
  for (const Node& n : r->graph.nodes) {
    const uint64_t want = cpuLayerCycles(r->graph, n, r->plan, 0);
    if (want == 0) continue;
    ++charged;
    total += want;
    auto it = spans.find(n.name);
    ASSERT_NE(it, spans.end()) << "no span for layer '" << n.name << "' in\n" << sim.stats;
    EXPECT_EQ(it->second, want) << n.name;
  }
  EXPECT_EQ(spans.size(), charged);
  // report.json gives every layer the same estimate.
  const nlohmann::ordered_json report = buildReportJson(r->graph, r->plan, ReportContext{});
  for (const auto& layer : report.at("layers")) {
    const std::string name = layer.at("name").get<std::string>();
    auto it = spans.find(name);
    EXPECT_EQ(layer.at("estimated_cycles").get<uint64_t>(), it == spans.end() ? 0u : it->second) << name;
  }
  EXPECT_NE(sim.stats.find("simulated: " + std::to_string(total) + " cycles"), std::string::npos) << sim.stats;
}

}  // namespace
}  // namespace stowage
