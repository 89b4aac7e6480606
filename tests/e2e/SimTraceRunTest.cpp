// `stowage run --trace` through the CLI: the host simulator's statistics are printed after the outputs and its
// Chrome trace lands in the output folder (or --trace-file); outputs are the same as without --trace, and a run
// without --trace prints and writes nothing more than before. On the Gemmini-like board, the overlap fraction
// computed here from trace.json matches the printed one and is above 50% for ResNet-8 (issue 5's acceptance).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <regex>
#include <utility>
#include <vector>

#include "E2eSupport.h"

namespace stowage::e2e {
namespace {

namespace fs = std::filesystem;

struct Resnet8 {
  fs::path work;
  std::string run(const std::string& dir, const std::string& flags, CommandResult* result) const {
    *result = runCommand(cli() + " run " + shellQuote((work / "r8.onnx").string()) + " --input " +
                         shellQuote((work / "in.npy").string()) + " --format bin --output-dir " +
                         shellQuote((work / dir).string()) + " " + flags);
    return (work / dir).string();
  }
};

Resnet8 writeResnet8(const std::string& name) {
  Resnet8 r{scratchDir(name)};
  auto w = runCommand(zoo() + " write resnet8 -o " + shellQuote((r.work / "r8.onnx").string()) + " --seed 5 --sample-input " +
                      shellQuote((r.work / "in.npy").string()));
  EXPECT_EQ(w.exitCode, 0) << w.err;
  return r;
}

TEST(SimTraceRun, TracePrintsStatisticsAndWritesTraceJson) {
  const Resnet8 r = writeResnet8("sim_trace_run");
  CommandResult plain, traced;
  const fs::path plainDir = r.run("plain", "", &plain);
  ASSERT_EQ(plain.exitCode, 0) << plain.err;
  EXPECT_EQ(plain.out.find("simulated:"), std::string::npos) << plain.out;
  EXPECT_FALSE(fs::exists(plainDir / "trace.json"));

  const fs::path tracedDir = r.run("traced", "--trace", &traced);
  ASSERT_EQ(traced.exitCode, 0) << traced.err;
  EXPECT_NE(traced.out.find("simulated: "), std::string::npos) << traced.out;
  EXPECT_NE(traced.out.find("trace: " + (tracedDir / "trace.json").string()), std::string::npos) << traced.out;
  EXPECT_EQ(readFileBytes(tracedDir / "output_0.bin"), readFileBytes(plainDir / "output_0.bin"));
  const auto trace = nlohmann::json::parse(readFileBytes(tracedDir / "trace.json"));
  EXPECT_TRUE(trace.contains("traceEvents") && trace["traceEvents"].is_array());
}

TEST(SimTraceRun, TraceFileGoesWhereAsked) {
  const Resnet8 r = writeResnet8("sim_trace_file");
  CommandResult result;
  const fs::path file = r.work / "elsewhere" / "t.json";
  const fs::path dir = r.run("out", "--trace --trace-file " + shellQuote(file.string()), &result);
  ASSERT_EQ(result.exitCode, 0) << result.err;
  EXPECT_TRUE(fs::exists(file));
  EXPECT_FALSE(fs::exists(dir / "trace.json"));
  EXPECT_TRUE(nlohmann::json::parse(readFileBytes(file)).contains("traceEvents"));
}

TEST(SimTraceRun, TraceFileWithoutTraceIsAnError) {
  const Resnet8 r = writeResnet8("sim_trace_file_alone");
  CommandResult result;
  const fs::path dir = r.run("out", "--trace-file " + shellQuote((r.work / "t.json").string()), &result);
  EXPECT_EQ(result.exitCode, 2);
  EXPECT_NE(result.err.find("--trace-file"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("add --trace"), std::string::npos) << result.err;
  EXPECT_FALSE(fs::exists(dir));
}

using Intervals = std::vector<std::pair<uint64_t, uint64_t>>;

Intervals merged(Intervals v) {
  std::sort(v.begin(), v.end());
  Intervals out;
  for (const auto& iv : v) {
    if (!out.empty() && iv.first <= out.back().second) out.back().second = std::max(out.back().second, iv.second);
    else out.push_back(iv);
  }
  return out;
}

uint64_t length(const Intervals& v) {
  uint64_t n = 0;
  for (const auto& iv : v) n += iv.second - iv.first;
  return n;
}

uint64_t overlap(const Intervals& a, const Intervals& b) {
  uint64_t n = 0;
  for (const auto& x : a)
    for (const auto& y : b) {
      const uint64_t lo = std::max(x.first, y.first), hi = std::min(x.second, y.second);
      if (hi > lo) n += hi - lo;
    }
  return n;
}

/// The share of DMA time overlapping compute, from the trace's complete events alone.
double overlapFromTrace(const nlohmann::json& trace) {
  Intervals dma, compute;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    const uint64_t ts = e.at("ts").get<uint64_t>(), dur = e.at("dur").get<uint64_t>();
    if (dur == 0) continue;
    if (e.at("cat") == "dma") dma.push_back({ts, ts + dur});
    if (e.at("cat") == "compute") compute.push_back({ts, ts + dur});
  }
  const Intervals d = merged(dma), c = merged(compute);
  return length(d) > 0 ? double(overlap(d, c)) / double(length(d)) : 0.0;
}

/// "overlap N cycles (P% of DMA busy time)" from the printed statistics, as a fraction.
double printedOverlap(const std::string& out) {
  std::smatch m;
  EXPECT_TRUE(std::regex_search(out, m, std::regex(R"(\(([0-9.]+)% of DMA busy time\))"))) << out;
  return m.empty() ? -1.0 : std::stod(m[1].str()) / 100.0;
}

uint64_t printedCycles(const std::string& out) {
  std::smatch m;
  EXPECT_TRUE(std::regex_search(out, m, std::regex(R"(simulated: ([0-9]+) cycles)"))) << out;
  return m.empty() ? 0 : std::stoull(m[1].str());
}

TEST(SimTraceRun, GemminiResnet8OverlapsDmaWithCompute) {
  const Resnet8 r = writeResnet8("sim_trace_gemmini");
  const std::string board = "--board " + shellQuote(std::string(STOWAGE_SOURCE_DIR) + "/examples/boards/gemmini-like.toml");
  CommandResult cpu, db, again, single;
  const fs::path cpuDir = r.run("cpu", "", &cpu);
  const fs::path dbDir = r.run("db", board + " --trace", &db);
  const fs::path againDir = r.run("again", board + " --trace", &again);
  // (Weight prefetch across layers overlaps a layer's last tiles with the next layer's first weights: off too, so
  // that nothing at all overlaps.)
  const fs::path singleDir = r.run("single", board + " --trace --no-double-buffer --no-weight-prefetch", &single);
  for (const CommandResult* c : {&cpu, &db, &again, &single}) ASSERT_EQ(c->exitCode, 0) << c->err;
  // Offloaded results are bit-exact with the CPU path, with and without double buffering.
  EXPECT_EQ(readFileBytes(dbDir / "output_0.bin"), readFileBytes(cpuDir / "output_0.bin"));
  EXPECT_EQ(readFileBytes(singleDir / "output_0.bin"), readFileBytes(cpuDir / "output_0.bin"));
  // The engine's three queues appear in the trace, and the trace is the same on every run.
  const std::string text = readFileBytes(dbDir / "trace.json");
  EXPECT_EQ(text, readFileBytes(againDir / "trace.json"));
  for (const char* track : {"engine load (mvin)", "engine execute", "engine store (mvout)"})
    EXPECT_NE(text.find(track), std::string::npos) << track;
  const double fromTrace = overlapFromTrace(nlohmann::json::parse(text));
  EXPECT_NEAR(fromTrace, printedOverlap(db.out), 0.0005);
  EXPECT_GT(fromTrace, 0.5) << db.out;
  // Without double buffering (and weight prefetch) nothing overlaps and the run takes longer.
  EXPECT_EQ(overlapFromTrace(nlohmann::json::parse(readFileBytes(singleDir / "trace.json"))), 0.0) << single.out;
  EXPECT_GT(printedCycles(single.out), printedCycles(db.out));
  std::printf("ResNet-8 on gemmini-like: %llu cycles double-buffered (overlap %.1f%%), %llu without\n",
              static_cast<unsigned long long>(printedCycles(db.out)), 100.0 * fromTrace,
              static_cast<unsigned long long>(printedCycles(single.out)));
}

}  // namespace
}  // namespace stowage::e2e
