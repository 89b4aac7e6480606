// The host simulator's Chrome trace and statistics: trace.json parses as JSON with one process per target and
// named tracks per core, DMA channel and engine queue; the same program gives the same trace byte for byte
// (whatever the thread scheduling); the printed statistics carry the totals.
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "SimTestUtil.h"
#include "stowage_hal.h"

namespace stowage {
namespace {

namespace fs = std::filesystem;
using simtest::SimTest;
using simtest::uniqueBase;

class SimTrace : public SimTest {};

struct ClusterWork {
  std::vector<uint8_t> src = std::vector<uint8_t>(4096, 5);
  std::vector<uint8_t> dst = std::vector<uint8_t>(4096, 0);
  uint8_t* l1 = nullptr;
};

void clusterKernel(void* arg) {
  auto* w = static_cast<ClusterWork*>(arg);
  const int c = stowage_core_id();
  uint8_t* mine = w->l1 + c * 2048;
  for (int t = 0; t < 4; ++t) {
    const size_t off = size_t(c) * 1024 + size_t(t) * 256;
    stowage_dma_ticket a = stowage_dma_start(t % 2, mine + (t % 2) * 256, w->src.data() + off, 256, 1, 0, 0);
    stowage_dma_wait(a);
    STOWAGE_SIM_COMPUTE("conv tile", 50 + 10 * c);
    stowage_dma_wait(stowage_dma_start(0, w->dst.data() + off, mine + (t % 2) * 256, 256, 1, 0, 0));
  }
  stowage_barrier();
}

/// A program with a host, a 4-core cluster and an engine; returns the trace file's text.
std::string runProgram(const fs::path& path) {
  stowage_sim_reset();
  stowage_sim_target(0, "host", 1, 0);
  stowage_sim_target(1, "cluster", 4, 0);
  stowage_sim_dma(1, 2, 8.0, 4.0);
  stowage_sim_target(2, "gemmini", 1, 8);
  stowage_sim_dma(2, 1, 16.0, 2.0);
  static const uintptr_t l1Base = uniqueBase(), spadBase = uniqueBase();
  stowage_sim_pool("l1", l1Base, 1024, 2048, 4);
  stowage_sim_pool("spad", spadBase, 2048, 0, 1);
  ClusterWork w;
  w.l1 = static_cast<uint8_t*>(STOWAGE_FIXED_ADDRESS(l1Base, 3 * 2048 + 1024));
  stowage_sim_cpu_layer_begin("prologue");
  STOWAGE_SIM_COMPUTE("host prologue", 25);
  stowage_sim_layer_end("prologue");
  stowage_sim_layer_begin("cluster layer");
  stowage_run_on_cores(1, 4, clusterKernel, &w);
  stowage_sim_layer_end("cluster layer");
  EXPECT_EQ(w.dst, w.src);
  stowage_sim_layer_begin("engine layer");
  auto* spad = static_cast<float*>(STOWAGE_FIXED_ADDRESS(spadBase, 2048));
  std::vector<float> a(16 * 8, 1.0f), b(8 * 8, 0.5f), y(16 * 8);
  stowage_accel_mvin(a.data(), spad, 16, 32, 32);
  stowage_accel_mvin(b.data(), spad + 128, 8, 32, 32);
  stowage_gemm_params p{};
  p.m = 16;
  p.n = 8;
  p.k = 8;
  p.alpha = 1.0f;
  stowage_accel_gemm_f32(spad, spad + 128, nullptr, spad + 192, &p);
  stowage_accel_mvout(y.data(), spad + 192, 16, 32, 32);
  stowage_accel_fence();
  stowage_sim_layer_end("engine layer");
  EXPECT_EQ(y, std::vector<float>(16 * 8, 4.0f));
  EXPECT_EQ(stowage_sim_write_trace(path.c_str()), 1);
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST_F(SimTrace, ValidJsonWithNamedTracks) {
  const fs::path path = fs::temp_directory_path() / ("stowage_sim_trace_" + std::to_string(::getpid()) + ".json");
  const std::string text = runProgram(path);
  fs::remove(path);
  const nlohmann::json trace = nlohmann::json::parse(text);
  ASSERT_TRUE(trace.contains("traceEvents"));
  std::map<int, std::string> processes;
  std::map<std::pair<int, int>, std::string> threads;
  std::set<std::pair<int, int>> tracksWithEvents;
  int complete = 0;
  for (const auto& e : trace["traceEvents"]) {
    const std::string ph = e.at("ph").get<std::string>();
    const int pid = e.at("pid").get<int>();
    if (ph == "M" && e.at("name") == "process_name") processes[pid] = e.at("args").at("name").get<std::string>();
    if (ph == "M" && e.at("name") == "thread_name")
      threads[{pid, e.at("tid").get<int>()}] = e.at("args").at("name").get<std::string>();
    if (ph == "X") {
      ++complete;
      ASSERT_TRUE(e.contains("ts") && e.contains("dur") && e.contains("name") && e.contains("cat"));
      tracksWithEvents.insert({pid, e.at("tid").get<int>()});
    }
  }
  EXPECT_EQ(processes, (std::map<int, std::string>{{1, "host"}, {2, "cluster"}, {3, "gemmini"}}));
  std::set<std::string> names;
  for (const auto& [key, name] : threads) names.insert(processes[key.first] + "/" + name);
  for (const char* want : {"host/core 0", "cluster/core 0", "cluster/core 3", "cluster/core 3 DMA channel 0",
                           "cluster/core 3 DMA channel 1", "gemmini/engine load (mvin)", "gemmini/engine execute",
                           "gemmini/engine store (mvout)"})
    EXPECT_TRUE(names.count(want)) << "no track named " << want;
  for (const auto& track : tracksWithEvents) EXPECT_TRUE(threads.count(track)) << "unnamed track " << track.second;
  // Host prologue, 4 cores x (8 transfers + 4 computes + 8 DMA waits at most + barrier), 4 engine operations.
  EXPECT_GE(complete, 1 + 4 * 12 + 4);
}

TEST_F(SimTrace, LayersOnTracksOfTheirOwn) {
  // CPU layers and offloaded layers each get a track of target 0's process, apart from the cores' compute and the DMA
  // channels' transfers; each span runs from its begin to its end on the host clock.
  const fs::path path = fs::temp_directory_path() / ("stowage_sim_trace_l_" + std::to_string(::getpid()) + ".json");
  const nlohmann::json trace = nlohmann::json::parse(runProgram(path));
  fs::remove(path);
  std::map<int, std::string> hostThreads;
  for (const auto& e : trace["traceEvents"])
    if (e.at("ph") == "M" && e.at("name") == "thread_name" && e.at("pid") == 1) hostThreads[e.at("tid").get<int>()] = e.at("args").at("name").get<std::string>();
  std::map<std::string, std::vector<std::string>> byTrack;  // track name -> event names
  std::map<std::string, uint64_t> duration;
  for (const auto& e : trace["traceEvents"]) {
    if (e.at("ph") != "X" || e.at("pid") != 1) continue;
    const std::string track = hostThreads[e.at("tid").get<int>()];
    byTrack[track].push_back(e.at("name").get<std::string>());
    if (e.at("cat") == "layer") duration[e.at("name").get<std::string>()] = e.at("dur").get<uint64_t>();
  }
  EXPECT_EQ(byTrack["CPU layers"], (std::vector<std::string>{"prologue"}));
  EXPECT_EQ(byTrack["offloaded layers"], (std::vector<std::string>{"cluster layer", "engine layer"}));
  EXPECT_EQ(duration["prologue"], 25u);
  ASSERT_EQ(stowage_sim_layer_count(), 3u);
  EXPECT_EQ(stowage_sim_layer_on_cpu(0), 1);
  EXPECT_EQ(stowage_sim_layer_on_cpu(1), 0);
  EXPECT_EQ(duration["cluster layer"], stowage_sim_layer_cycles(1));
  EXPECT_EQ(duration["engine layer"], stowage_sim_layer_cycles(2));
  EXPECT_GT(stowage_sim_layer_cycles(2), 0u);
  // The host core's own track keeps the compute and waits, not the spans.
  for (const std::string& name : byTrack["core 0"]) EXPECT_NE(name, "prologue");
}

TEST_F(SimTrace, SameProgramSameTraceAndCycles) {
  const fs::path a = fs::temp_directory_path() / ("stowage_sim_trace_a_" + std::to_string(::getpid()) + ".json");
  const fs::path b = fs::temp_directory_path() / ("stowage_sim_trace_b_" + std::to_string(::getpid()) + ".json");
  const std::string first = runProgram(a);
  const uint64_t cycles = stowage_sim_total_cycles();
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(runProgram(b), first) << "run " << i;
    EXPECT_EQ(stowage_sim_total_cycles(), cycles);
  }
  fs::remove(a);
  fs::remove(b);
}

TEST_F(SimTrace, PrintedStatisticsCarryTheTotals) {
  const fs::path path = fs::temp_directory_path() / ("stowage_sim_trace_s_" + std::to_string(::getpid()) + ".json");
  runProgram(path);
  fs::remove(path);
  stowage_sim_totals t;
  stowage_sim_get_totals(&t);
  char* buffer = nullptr;
  size_t size = 0;
  FILE* f = open_memstream(&buffer, &size);
  stowage_sim_print_stats(f);
  std::fclose(f);
  const std::string text(buffer, size);
  std::free(buffer);
  EXPECT_NE(text.find("simulated: " + std::to_string(t.total_cycles) + " cycles"), std::string::npos) << text;
  EXPECT_NE(text.find("cluster core 3: compute 320 cycles"), std::string::npos) << text;  // 4 tiles x 80
  EXPECT_NE(text.find("gemmini engine (dim 8)"), std::string::npos) << text;
  EXPECT_GT(t.dma_bytes, 2u * 4096u);
}

TEST_F(SimTrace, UnwritableTraceFails) {
  EXPECT_EQ(stowage_sim_write_trace("/nonexistent-dir/trace.json"), 0);
}

}  // namespace
}  // namespace stowage
