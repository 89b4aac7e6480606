// `stowage run --trace` through the CLI: the host simulator's statistics are printed after the outputs and its
// Chrome trace lands in the output folder (or --trace-file); outputs are the same as without --trace, and a run
// without --trace prints and writes nothing more than before.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "E2eSupport.h"

namespace stowage::e2e {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

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
  EXPECT_EQ(slurp(tracedDir / "output_0.bin"), slurp(plainDir / "output_0.bin"));
  const auto trace = nlohmann::json::parse(slurp(tracedDir / "trace.json"));
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
  EXPECT_TRUE(nlohmann::json::parse(slurp(file)).contains("traceEvents"));
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

}  // namespace
}  // namespace stowage::e2e
