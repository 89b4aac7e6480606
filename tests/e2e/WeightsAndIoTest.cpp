// End-to-end tests of the two API options of `stowage compile` / `stowage run`, through the CLI as a user would:
// --weights (constants as binary images per constant pool, the only way for `user` and `fixed` constant pools)
// and --io-in-pools (graph inputs and outputs planned into the pools, reached through net_map_inputs /
// net_map_outputs). Every mode must give outputs byte-identical to the default build, on the zoo's DS-CNN over
// the Cortex-M7 board (several pools) and on an ONNX conformance model; a small C application (io_pools_app.c)
// uses the generated API; bad combinations exit 2 with a clear message; guard mode stays clean.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <regex>

#include "E2eSupport.h"

namespace stowage::e2e {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string source(const std::string& rel) { return std::string(STOWAGE_SOURCE_DIR) + "/" + rel; }
std::string m7() { return "--board " + shellQuote(source("examples/boards/cortex-m7.toml")); }

/// `#define NAME 123u` from a generated header, or -1.
long long headerValue(const std::string& header, const std::string& name) {
  std::smatch m;
  if (!std::regex_search(header, m, std::regex("#define " + name + " (\\d+)u"))) return -1;
  return std::stoll(m[1].str());
}

/// A test folder holding the zoo's DS-CNN (kws.onnx) and its sample input (in.npy).
class WeightsAndIo : public ::testing::Test {
 protected:
  void SetUp() override {
    work_ = scratchDir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    auto w = runCommand(zoo() + " write ds-cnn -o " + q("kws.onnx") + " --seed 5 --sample-input " + q("in.npy"));
    ASSERT_EQ(w.exitCode, 0) << w.err;
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(work_);
  }
  std::string q(const std::string& rel) const { return shellQuote((work_ / rel).string()); }
  CommandResult compile(const std::string& dir, const std::string& flags) const {
    return runCommand(cli() + " compile " + q("kws.onnx") + " -o " + q(dir) + " " + flags);
  }
  /// `stowage run` on the sample input; returns output_0.bin's bytes (empty on failure, with the error reported).
  std::string run(const std::string& dir, const std::string& flags) const {
    auto r = runCommand(cli() + " run " + q("kws.onnx") + " --input " + q("in.npy") + " --format bin --output-dir " + q(dir) + " " + flags);
    EXPECT_EQ(r.exitCode, 0) << flags << "\n" << r.err;
    return r.exitCode == 0 ? readFileBytes(work_ / dir / "output_0.bin") : std::string();
  }
  fs::path work_;
};

// The constant pools of a board with a user-placed RAM pool for weights and a fixed-address ROM (tvmc-style flags).
const char* kUserAndFixedConstantPools =
    "--pool 'name=ram;size=256KiB' --pool 'name=wram;size=256KiB;kind=constant;placement=user;alignment=32;latency_cycles=5' "
    "--pool 'name=wrom;size=32KiB;kind=constant;placement=fixed;base=0x60000000;latency_cycles=1'";

TEST_F(WeightsAndIo, WeightsBinWritesOneImagePerConstantPoolAndRunsIdentically) {
  auto r = compile("c", m7() + " --weights bin");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("net_weights_itcm.bin"), std::string::npos) << r.out;
  const std::string h = readFileBytes(work_ / "c" / "net.h");
  // One image per constant pool, exactly the pool's planned size; no C arrays left.
  size_t imageBytes = 0;
  for (const char* pool : {"itcm", "flash"}) {
    const fs::path image = work_ / "c" / (std::string("net_weights_") + pool + ".bin");
    ASSERT_TRUE(fs::exists(image)) << image;
    const std::string P = "NET_POOL_" + std::string(pool == std::string("itcm") ? "ITCM" : "FLASH");
    EXPECT_EQ(static_cast<long long>(fs::file_size(image)), headerValue(h, P + "_SIZE")) << pool;
    imageBytes += fs::file_size(image);
    EXPECT_NE(h.find("const uint8_t* " + std::string(pool) + ";"), std::string::npos) << "a net_workspaces field per image";
    EXPECT_NE(h.find("#define " + P + "_IMAGE \"net_weights_" + pool + ".bin\""), std::string::npos);
    EXPECT_NE(h.find("#define NET_ERR_" + P.substr(4) + "_NULL"), std::string::npos);
  }
  EXPECT_GE(imageBytes, 90000u) << "the model's 90,416 bytes of weights are in the images";
  const std::string weightsC = readFileBytes(work_ / "c" / "net_weights.c");
  EXPECT_EQ(weightsC.find("const float"), std::string::npos) << weightsC.substr(0, 2000);
  EXPECT_NE(weightsC.find("binary weights image"), std::string::npos);
  // Every constant's offset in its image is in net.h.
  EXPECT_NE(h.find("#define NET_OFFSET_STEM_CONV_WEIGHT_BNFOLD"), std::string::npos);

  const std::string ref = run("ref", "");
  ASSERT_FALSE(ref.empty());
  EXPECT_EQ(run("bin_default_board", "--weights bin"), ref);
  EXPECT_EQ(run("bin_m7", m7() + " --weights bin"), ref);
}

TEST_F(WeightsAndIo, UserAndFixedConstantPoolsAreImagesLoadedByTheApplicationOrAtTheFixedAddress) {
  auto r = compile("c", kUserAndFixedConstantPools);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_TRUE(fs::exists(work_ / "c" / "net_weights_wram.bin"));
  EXPECT_TRUE(fs::exists(work_ / "c" / "net_weights_wrom.bin"));
  const std::string h = readFileBytes(work_ / "c" / "net.h"), c = readFileBytes(work_ / "c" / "net.c");
  EXPECT_NE(h.find("const uint8_t* wram;"), std::string::npos);
  EXPECT_EQ(h.find("uint8_t* wrom;"), std::string::npos) << "a fixed pool is reached at its address, not through ws";
  EXPECT_NE(h.find("#define NET_POOL_WROM_BASE ((uintptr_t)0x60000000u)"), std::string::npos);
  EXPECT_NE(c.find("STOWAGE_FIXED_ADDRESS(NET_POOL_WROM_BASE, NET_POOL_WROM_SIZE)"), std::string::npos);
  // The host simulator maps the fixed ROM; the harness copies its image there before net_run.
  const std::string ref = run("ref", "");
  ASSERT_FALSE(ref.empty());
  EXPECT_EQ(run("auto", kUserAndFixedConstantPools), ref);
  EXPECT_EQ(run("bin_io_guard", std::string(kUserAndFixedConstantPools) + " --weights bin --io-in-pools --guard"), ref);
}

TEST_F(WeightsAndIo, BadCombinationsExitTwoWithAClearMessage) {
  // C arrays cannot live at memory the application picks or at a device address.
  auto c = compile("c", std::string(kUserAndFixedConstantPools) + " --weights c");
  EXPECT_EQ(c.exitCode, 2);
  EXPECT_NE(c.err.find("pool 'wram'"), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("cannot be C arrays"), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("--weights bin"), std::string::npos) << c.err;
  EXPECT_FALSE(fs::exists(work_ / "c")) << "no output folder on error";
  // An image must be one contiguous range: a fixed constant pool with per-bank bases cannot take one.
  auto banked = compile("b", "--pool 'name=ram;size=256KiB' --pool 'name=wrom;size=256KiB;kind=constant;placement=fixed;"
                             "base=0x60000000;banks=2;bank_bases=0x60000000,0x70000000'");
  EXPECT_EQ(banked.exitCode, 2);
  EXPECT_NE(banked.err.find("per-bank base addresses"), std::string::npos) << banked.err;
  EXPECT_FALSE(fs::exists(work_ / "b"));
  auto unknown = compile("u", "--weights hex");
  EXPECT_NE(unknown.exitCode, 0);
  EXPECT_NE((unknown.err + unknown.out).find("--weights"), std::string::npos) << unknown.err;
}

TEST_F(WeightsAndIo, IoInPoolsPlansInputsAndOutputsAsBuffersAndRunsIdentically) {
  auto r = compile("c", m7() + " --io-in-pools");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const std::string h = readFileBytes(work_ / "c" / "net.h");
  for (const char* s : {"int net_map_inputs(const net_workspaces* ws, net_inputs* in);",
                        "int net_map_outputs(const net_workspaces* ws, net_outputs* out);", "int net_run(const net_workspaces* ws);",
                        "#define NET_OFFSET_INPUT ", "#define NET_OFFSET_OUTPUT ", "  float* input;", "  const float* output;"})
    EXPECT_NE(h.find(s), std::string::npos) << s;
  const std::string c = readFileBytes(work_ / "c" / "net.c");
  ASSERT_NE(c.find("int net_run(const net_workspaces* ws) {"), std::string::npos);
  EXPECT_EQ(c.substr(c.find("int net_run(")).find("in->"), std::string::npos) << "kernels read the input in its pool";
  // report.json lists them as buffers: the input live from step 0, the output until the last step.
  const json report = json::parse(readFileBytes(work_ / "c" / "report.json"));
  int found = 0;
  for (const json& b : report["buffers"]) {
    if (b["name"] == "input") {
      ++found;
      EXPECT_EQ(b["first"], 0);
      EXPECT_EQ(b["pool"], "dtcm");
    }
    if (b["name"] == "output") {
      ++found;
      EXPECT_EQ(b["last"].get<int>() + 1, static_cast<int>(report["layers"].size()));
    }
  }
  EXPECT_EQ(found, 2);
  const std::string ref = run("ref", "");
  ASSERT_FALSE(ref.empty());
  EXPECT_EQ(run("io", "--io-in-pools"), ref);
  EXPECT_EQ(run("io_m7_guard", m7() + " --io-in-pools --guard"), ref);
  // Pins apply to inputs too once they are planned.
  EXPECT_EQ(run("io_pinned", m7() + " --io-in-pools --pin input=sram --pin output=sram"), ref);
}

TEST_F(WeightsAndIo, AnApplicationUsesTheMappedInputsAndTheLoadedImages) {
  auto r = compile("gen", m7() + " --io-in-pools --weights bin");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  // The app reads raw input bytes: take them from a default run's build folder (the harness's input file).
  const std::string ref = run("ref", "--keep " + (work_ / "keep").string());
  ASSERT_FALSE(ref.empty());
  const std::string flags = " -std=c99 -O2 -Wall -Wextra -Werror -pedantic -I " + shellQuote(source("runtime/include")) + " -I " + q("gen") + " ";
  auto build = runCommand("cc" + flags + shellQuote(source("tests/e2e/io_pools_app.c")) + " " + q("gen/net.c") + " " + q("gen/net_weights.c") +
                          " " + shellQuote(source("runtime/kernels")) + "/*.c -lm -o " + q("app"));
  ASSERT_EQ(build.exitCode, 0) << build.err;
  auto app = runCommand(q("app") + " " + q("gen") + " " + q("keep/input_0.bin") + " " + q("app_out.bin"));
  ASSERT_EQ(app.exitCode, 0) << "exit 2: an error-code check failed; 3: a call failed\n" << app.err << app.out;
  EXPECT_EQ(readFileBytes(work_ / "app_out.bin"), ref) << "the app's output equals `stowage run` on the default board";
}

TEST(WeightsAndIoConformance, ConvWithBoundWeightsSplitAndAddGiveTheSameOutputsInEveryMode) {
  const fs::path data = "/usr/share/libonnx-testdata/data/node";
  if (!fs::exists(data / "test_conv_with_strides_padding")) GTEST_SKIP() << "libonnx-testdata is not installed";
  const fs::path work = scratchDir("weights_io_conformance");
  struct Case {
    std::string test, extra;
    int inputs;  ///< input_0.pb .. input_<inputs-1>.pb are passed with --input
  };
  // Conv: W bound to a constant so it has weights to put in an image; Split: three outputs in the pools; Add:
  // written in place over one of its inputs (which dies there), so no step arms a guard record.
  const fs::path conv = data / "test_conv_with_strides_padding";
  const std::vector<Case> cases = {
      {"test_conv_with_strides_padding", "--bind W=" + shellQuote((conv / "test_data_set_0" / "input_1.pb").string()), 1},
      {"test_split_equal_parts_1d", "", 1},
      {"test_add", "", 2}};
  for (const Case& c : cases) {
    const fs::path dir = data / c.test;
    auto runMode = [&](const std::string& out, const std::string& flags) {
      std::string inputs;
      for (int i = 0; i < c.inputs; ++i)
        inputs += " --input " + shellQuote((dir / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb")).string());
      auto r = runCommand(cli() + " run " + shellQuote((dir / "model.onnx").string()) + " " + c.extra + inputs +
                          " --format bin --output-dir " + shellQuote((work / (c.test + out)).string()) + " " + flags);
      EXPECT_EQ(r.exitCode, 0) << c.test << " " << flags << "\n" << r.err;
      std::string all;
      for (int i = 0; fs::exists(work / (c.test + out) / ("output_" + std::to_string(i) + ".bin")); ++i)
        all += readFileBytes(work / (c.test + out) / ("output_" + std::to_string(i) + ".bin")) + "|";
      return all;
    };
    const std::string ref = runMode("_ref", "");
    ASSERT_FALSE(ref.empty()) << c.test;
    EXPECT_EQ(runMode("_bin", "--weights bin"), ref) << c.test;
    EXPECT_EQ(runMode("_io", "--io-in-pools"), ref) << c.test;
    EXPECT_EQ(runMode("_both_guard", "--weights bin --io-in-pools --guard"), ref) << c.test;
    // The conformance suite's tight board: a 1 KiB static TCM, a fixed scratchpad (host-simulated) and user RAM.
    EXPECT_EQ(runMode("_guard_board", "--weights bin --io-in-pools --guard --board " + shellQuote(source("tests/conformance/guard-board.toml"))),
              ref)
        << c.test;
  }
  fs::remove_all(work);
}

}  // namespace
}  // namespace stowage::e2e
