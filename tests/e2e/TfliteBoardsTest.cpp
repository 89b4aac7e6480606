// End-to-end TFLite models on real microcontroller boards (skipped with a message when ../shared is absent):
// every int8 MLPerf Tiny model on examples/boards/cortex-m7.toml (DTCM 128 KiB, SRAM 512 KiB, flash 2 MiB) gives
// TFLM's reference outputs byte for byte and a report with per-pool peaks (VWW, which has no reference outputs,
// compiles and runs), and TFLM's MobileNetV2 (224x224, about 2.5 MB of activations) runs on
// examples/boards/cortex-m7-sdram.toml with an 8 MiB external SDRAM pool, giving the same logits as with one
// unlimited pool and in guard mode.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <iterator>
#include <nlohmann/json.hpp>

#include "E2eSupport.h"

namespace stowage::e2e {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string board(const std::string& file) { return std::string(STOWAGE_SOURCE_DIR) + "/examples/boards/" + file; }

class CortexM7Model : public ::testing::TestWithParam<std::string> {};

TEST_P(CortexM7Model, ByteIdenticalToTflmWithPerPoolPeaksInTheReport) {
  fs::path dir = sharedPath("models/mlperf-tiny");
  if (dir.empty()) GTEST_SKIP() << "../shared/models/mlperf-tiny not found; skipping";
  const std::string name = GetParam();
  const fs::path model = dir / (name + ".tflite"), ref = dir / "reference" / name;
  const fs::path work = scratchDir("tflite_m7_" + name);
  const std::string flags = " --board " + shellQuote(board("cortex-m7.toml"));
  auto c = runCommand(cli() + " compile " + shellQuote(model.string()) + flags + " -o " + shellQuote((work / "gen").string()));
  ASSERT_EQ(c.exitCode, 0) << c.err;
  const json report = json::parse(readFileBytes(work / "gen" / "report.json"));
  size_t workspacePeak = 0;
  for (const json& p : report["pools"]) {
    ASSERT_TRUE(p.contains("peak_live")) << p.dump();
    ASSERT_TRUE(p.contains("used")) << p.dump();
    if (p["kind"] == "workspace") workspacePeak += p["peak_live"].get<size_t>();
  }
  EXPECT_GT(workspacePeak, 0u);
  for (const json& b : report["buffers"])
    EXPECT_TRUE(b["role"] == "activation" ? (b["pool"] == "dtcm" || b["pool"] == "sram") : (b["pool"] == "flash" || b["pool"] == "itcm"))
        << b.dump();
  int checked = 0;
  for (const std::string k : {"0", "1", "2", "3", "sample"}) {
    if (!fs::exists(ref / ("input_" + k + ".bin"))) continue;
    auto r = runCommand(cli() + " run " + shellQuote(model.string()) + flags + " --input " + shellQuote((ref / ("input_" + k + ".bin")).string()) +
                        " --output-dir " + shellQuote((work / ("out" + k)).string()) + " --format bin");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_TRUE(readFileBytes(work / ("out" + k) / "output_0.bin") == readFileBytes(ref / ("output_" + k + ".bin"))) << name << " input_" << k;
    ++checked;
  }
  EXPECT_GE(checked, 4);
  fs::remove_all(work);
}

INSTANTIATE_TEST_SUITE_P(TfliteCortexM7, CortexM7Model,
                         ::testing::Values("pretrainedResnet_quant", "kws_ref_model", "model_ToyCar_quant_fullint_micro",
                                           "model_ToyCar_quant_fullint_micro_intio"));

// VWW has no TFLM reference outputs in ../shared (reference/README.md covers the other four): it must compile on
// the same board and run, and its plan must stay on chip.
TEST(TfliteBoards, VwwCompilesAndRunsOnCortexM7) {
  fs::path dir = sharedPath("models/mlperf-tiny");
  if (dir.empty() || !fs::exists(dir / "vww_96_int8.tflite")) GTEST_SKIP() << "vww_96_int8.tflite not found; skipping";
  const fs::path model = dir / "vww_96_int8.tflite", work = scratchDir("tflite_m7_vww");
  {
    std::ofstream in(work / "input.bin", std::ios::binary);  // a deterministic int8 image, 96x96x3
    for (int i = 0; i < 96 * 96 * 3; ++i) in.put(static_cast<char>((i * 29) % 256 - 128));
  }
  const std::string flags = " --board " + shellQuote(board("cortex-m7.toml"));
  auto c = runCommand(cli() + " compile " + shellQuote(model.string()) + flags + " -o " + shellQuote((work / "gen").string()));
  ASSERT_EQ(c.exitCode, 0) << c.err;
  const json report = json::parse(readFileBytes(work / "gen" / "report.json"));
  for (const json& p : report["pools"]) EXPECT_TRUE(p.contains("peak_live")) << p.dump();
  auto r = runCommand(cli() + " run " + shellQuote(model.string()) + flags + " --input " + shellQuote((work / "input.bin").string()) +
                      " --output-dir " + shellQuote((work / "out").string()) + " --format bin");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(readFileBytes(work / "out" / "output_0.bin").size(), 2u) << "[no person, person], int8";
  fs::remove_all(work);
}

TEST(TfliteBoards, MobileNetV2RunsWithExternalSdram) {
  fs::path dir = sharedPath("models/tflm");
  if (dir.empty()) GTEST_SKIP() << "../shared/models/tflm not found; skipping";
  const fs::path model = dir / "mobilenet_v2_quantized_1x3x224x224.tflite";
  if (!fs::exists(model)) GTEST_SKIP() << model << " not found; skipping";
  const fs::path work = scratchDir("tflite_m7_mobilenet_v2");
  {
    std::ofstream in(work / "input.bin", std::ios::binary);  // a deterministic int8 image, 1x3x224x224
    for (int i = 0; i < 3 * 224 * 224; ++i) in.put(static_cast<char>((i * 37 + i / 224) % 251 - 125));
  }
  const std::string flags = " --board " + shellQuote(board("cortex-m7-sdram.toml"));
  auto c = runCommand(cli() + " compile " + shellQuote(model.string()) + flags + " -o " + shellQuote((work / "gen").string()));
  ASSERT_EQ(c.exitCode, 0) << c.err;
  const json report = json::parse(readFileBytes(work / "gen" / "report.json"));
  bool sdramUsed = false;
  for (const json& p : report["pools"])
    if (p["name"] == "sdram") sdramUsed = p["used"].get<size_t>() > 0;
  EXPECT_TRUE(sdramUsed) << "2.5 MB of activations cannot all fit on chip";
  auto run = [&](const std::string& runFlags, const std::string& input, const std::string& out) {
    auto r = runCommand(cli() + " run " + shellQuote(model.string()) + runFlags + " --input " + shellQuote((work / input).string()) +
                        " --output-dir " + shellQuote((work / out).string()) + " --format bin");
    EXPECT_EQ(r.exitCode, 0) << r.err;
    return readFileBytes(work / out / "output_0.bin");
  };
  const std::string onBoard = run(flags, "input.bin", "out");
  // The runs below compare placements: their constants come as binary images (--weights bin; the C arrays of this
  // model's 3.4 MB of weights take cc 7 s each) and must give the same bytes as the C arrays of the run above.
  const std::string image = " --weights bin";
  ASSERT_EQ(onBoard.size(), 1000u) << "1000 ImageNet classes, int8";
  // Sane output (no expected label exists upstream): the same bytes with one unlimited pool and in guard mode
  // (canaries and checksums over every pool), logits spread over many values rather than saturated, and a
  // different image (the person_detect sample, grey to RGB, nearest-neighbour upscaled) giving other logits.
  EXPECT_EQ(run(image, "input.bin", "out_default"), onBoard) << "multi-pool placement changed the result";
  EXPECT_EQ(run(flags + image + " --guard", "input.bin", "out_guard"), onBoard) << "guard mode changed the result";
  std::set<char> distinct(onBoard.begin(), onBoard.end());
  EXPECT_GT(distinct.size(), 20u) << "logits collapsed to a few values";
  EXPECT_LT(std::count(onBoard.begin(), onBoard.end(), static_cast<char>(-128)) + std::count(onBoard.begin(), onBoard.end(), static_cast<char>(127)),
            100) << "logits saturated";
  const std::string px = readFileBytes(dir / "samples/person_96x96x1_int8.bin");
  ASSERT_EQ(px.size(), 96u * 96u);
  {
    std::ofstream in(work / "person.bin", std::ios::binary);
    for (int c = 0; c < 3; ++c)
      for (int y = 0; y < 224; ++y)
        for (int x = 0; x < 224; ++x) in.put(static_cast<char>(static_cast<unsigned char>(px[static_cast<size_t>(y * 96 / 224 * 96 + x * 96 / 224)]) - 128));
  }
  const std::string person = run(flags + image, "person.bin", "out_person");
  ASSERT_EQ(person.size(), 1000u);
  EXPECT_NE(person, onBoard);
  fs::remove_all(work);
}

}  // namespace
}  // namespace stowage::e2e
