// End-to-end streaming on a CPU-only board (the DORY case; skipped with a message when ../shared is absent):
// the MLPerf Tiny int8 ResNet-8 on examples/boards/cortex-m7-sdram.toml with its DTCM cut to 16 KiB streams
// its large layers through the DTCM by the CPU's DMA, gives TFLM's reference outputs and the same bytes as the
// default board, keeps the DTCM within its capacity, and `stowage run --trace` reports the DMA traffic. TFLM's
// MobileNetV2 compiles on the unmodified board with streamed layers and the DTCM within its 128 KiB.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "E2eSupport.h"

namespace stowage::e2e {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

const fs::path kBoard = fs::path(STOWAGE_SOURCE_DIR) / "examples/boards/cortex-m7-sdram.toml";

/// Streamed layers of a report and the DTCM's capacity and use.
struct StreamReport {
  int streamed = 0;
  size_t dtcmCapacity = 0, dtcmUsed = 0;
};
StreamReport readReport(const fs::path& reportJson) {
  const json r = json::parse(readFileBytes(reportJson));
  StreamReport s;
  for (const json& l : r["layers"])
    if (l.contains("offload")) {
      EXPECT_EQ(l["target"], "cpu");
      EXPECT_EQ(l["offload"]["mode"], "cores");
      ++s.streamed;
    }
  for (const json& p : r["pools"])
    if (p["name"] == "dtcm") {
      s.dtcmCapacity = p["capacity"].get<size_t>();
      s.dtcmUsed = p["used"].get<size_t>();
    }
  return s;
}

TEST(CpuStreaming, ResNet8StreamsThroughASmallDtcmBitExact) {
  const fs::path dir = sharedPath("models/mlperf-tiny");
  if (dir.empty()) GTEST_SKIP() << "../shared/models/mlperf-tiny not found; skipping";
  const fs::path model = dir / "pretrainedResnet_quant.tflite", ref = dir / "reference/pretrainedResnet_quant";
  if (!fs::exists(model)) GTEST_SKIP() << model << " not found; skipping";
  const fs::path work = scratchDir("cpu_streaming_resnet8");
  // The example board with a 16 KiB DTCM: ResNet-8's 32x32x16 layers (16 KiB in, 16 KiB out) no longer fit.
  std::string board = readFileBytes(kBoard);
  const std::string dtcmSize = "name = \"dtcm\"\nsize = \"128KiB\"";
  const size_t at = board.find(dtcmSize);
  ASSERT_NE(at, std::string::npos) << "the DTCM of " << kBoard << " moved; update this test";
  board.replace(at, dtcmSize.size(), "name = \"dtcm\"\nsize = \"16KiB\"");
  std::ofstream(work / "m7-small-dtcm.toml") << board;
  const std::string flags = " --board " + shellQuote((work / "m7-small-dtcm.toml").string());

  auto c = runCommand(cli() + " compile " + shellQuote(model.string()) + flags + " -o " + shellQuote((work / "gen").string()));
  ASSERT_EQ(c.exitCode, 0) << c.err;
  EXPECT_NE(c.out.find("streams node '"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("through 'dtcm'"), std::string::npos) << c.out;
  const StreamReport s = readReport(work / "gen/report.json");
  EXPECT_GE(s.streamed, 1);
  EXPECT_EQ(s.dtcmCapacity, 16u * 1024u);
  EXPECT_GT(s.dtcmUsed, 0u);
  EXPECT_LE(s.dtcmUsed, s.dtcmCapacity);

  auto run = [&](const std::string& runFlags, const std::string& out, CommandResult* result) {
    *result = runCommand(cli() + " run " + shellQuote(model.string()) + runFlags + " --input " + shellQuote((ref / "input_0.bin").string()) +
                         " --output-dir " + shellQuote((work / out).string()) + " --format bin");
    EXPECT_EQ(result->exitCode, 0) << result->err;
    return readFileBytes(work / out / "output_0.bin");
  };
  CommandResult streamed, plain;
  const std::string onBoard = run(flags + " --trace", "out", &streamed);
  ASSERT_EQ(onBoard.size(), 10u);
  EXPECT_EQ(onBoard, readFileBytes(ref / "output_0.bin")) << "TFLM's reference output";
  EXPECT_EQ(run("", "out_default", &plain), onBoard) << "streaming changed the result";
  // The simulator saw the CPU's DMA: "cpu core 0: compute N cycles (...), DMA B bytes in T transfers, ...".
  const size_t line = streamed.out.find("cpu core 0: compute ");
  ASSERT_NE(line, std::string::npos) << streamed.out;
  const size_t dma = streamed.out.find("DMA ", line + 20);
  ASSERT_NE(dma, std::string::npos) << streamed.out;
  EXPECT_GT(std::stoull(streamed.out.substr(dma + 4)), 0u) << streamed.out;
  EXPECT_NE(streamed.out.find("DMA busy "), std::string::npos) << streamed.out;
  EXPECT_TRUE(fs::exists(work / "out/trace.json"));
  fs::remove_all(work);
}

TEST(CpuStreaming, MobileNetV2StreamsOnTheSdramBoardWithinTheDtcm) {
  const fs::path model = sharedPath("models/tflm/mobilenet_v2_quantized_1x3x224x224.tflite");
  if (model.empty() || !fs::exists(model)) GTEST_SKIP() << "../shared/models/tflm/mobilenet_v2_quantized_1x3x224x224.tflite not found; skipping";
  const fs::path work = scratchDir("cpu_streaming_mobilenet_v2");
  auto c = runCommand(cli() + " compile " + shellQuote(model.string()) + " --board " + shellQuote(kBoard.string()) + " -o " +
                      shellQuote((work / "gen").string()));
  ASSERT_EQ(c.exitCode, 0) << c.err;
  const StreamReport s = readReport(work / "gen/report.json");
  EXPECT_GE(s.streamed, 10) << "MobileNetV2's early layers work on 400 KB and more";
  EXPECT_EQ(s.dtcmCapacity, 128u * 1024u);
  EXPECT_LE(s.dtcmUsed, s.dtcmCapacity);
  fs::remove_all(work);
}

}  // namespace
}  // namespace stowage::e2e
