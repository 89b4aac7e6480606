// report.json names the kernel and the kernel variant of each layer (docs/report.md): `stowage compile` of a one-layer
// int8 model (TfliteTestModels.h) for a Cortex-M4, a Cortex-M55, the host and a board with its own kernels, and with
// `--kernels portable`, whose firmware project then builds the kernels with STOWAGE_NO_SIMD.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include <sys/wait.h>

#include "../frontend/TfliteTestModels.h"
#include "stowage/lower/KernelVariant.h"
#include "stowage/lower/LowerProgram.h"

namespace stowage {
namespace {

namespace fs = std::filesystem;

class ReportKernelVariant : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("stowage-report-variant-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    const std::vector<uint8_t> model = tflitetest::buildTinyFcModel();
    std::ofstream(dir_ / "fc.tflite", std::ios::binary).write(reinterpret_cast<const char*>(model.data()), static_cast<std::streamsize>(model.size()));
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// Runs `stowage compile fc.tflite -o out <flags>` and returns the first layer of its report.json.
  nlohmann::json compileLayer(const std::string& flags) {
    const std::string cmd = std::string(STOWAGE_CLI) + " compile " + (dir_ / "fc.tflite").string() + " -o " + (dir_ / "out").string() +
                            " " + flags + " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    std::string output;
    char buf[4096];
    size_t n;
    while (p != nullptr && (n = fread(buf, 1, sizeof buf, p)) > 0) output.append(buf, n);
    const int status = p != nullptr ? pclose(p) : -1;
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << cmd << "\n" << output;
    std::ifstream in(dir_ / "out" / "report.json");
    const nlohmann::json report = nlohmann::json::parse(std::string(std::istreambuf_iterator<char>(in), {}), nullptr, false);
    if (report.is_discarded() || report["layers"].empty()) return nlohmann::json::object();
    return report["layers"][0];
  }

  static std::string board(const char* file) { return std::string(" --board ") + STOWAGE_SOURCE_DIR + "/examples/boards/" + file; }

  fs::path dir_;
};

TEST_F(ReportKernelVariant, CortexM4LayerRunsTheDspPath) {
  const nlohmann::json layer = compileLayer(board("mps2-an386.toml"));
  EXPECT_EQ(layer.value("kernel", ""), "stowage_qfully_connected_s8");
  EXPECT_EQ(layer.value("kernel_variant", ""), "cortex-m-dsp");
}

TEST_F(ReportKernelVariant, CortexM55LayerRunsTheHeliumPath) {
  EXPECT_EQ(compileLayer(board("mps3-an547.toml")).value("kernel_variant", ""), "helium-mve");
}

TEST_F(ReportKernelVariant, HostLayerIsPortable) {
  const nlohmann::json layer = compileLayer("");
  EXPECT_EQ(layer.value("kernel", ""), "stowage_qfully_connected_s8");
  EXPECT_EQ(layer.value("kernel_variant", ""), "portable");
}

TEST_F(ReportKernelVariant, BoardKernelIsNamedWithItsFunction) {
  // examples/boards/cortex-m7-kernels.toml replaces stowage_qfully_connected_s8 on its cpu (docs/kernels.md).
  const nlohmann::json layer = compileLayer(board("cortex-m7-kernels.toml"));
  EXPECT_EQ(layer.value("kernel", ""), "board_qfully_connected_s8");
  EXPECT_EQ(layer.value("kernel_variant", ""), "board");
  // --kernels portable leaves the board's kernels out and turns off the Cortex-M7's DSP path too.
  EXPECT_EQ(compileLayer(board("cortex-m7-kernels.toml") + " --kernels portable").value("kernel_variant", ""), "portable");
}

TEST_F(ReportKernelVariant, KernelsPortableOnCortexM4IsPortableInTheReportAndTheBuild) {
  const fs::path project = dir_ / "fw";
  EXPECT_EQ(compileLayer(board("mps2-an386.toml") + " --kernels portable --project " + project.string()).value("kernel_variant", ""), "portable");
  std::ifstream in(project / "stowage.cmake");
  const std::string cmake(std::istreambuf_iterator<char>(in), {});
  EXPECT_NE(cmake.find("STOWAGE_NO_SIMD"), std::string::npos) << cmake;
}

TEST_F(ReportKernelVariant, CortexM4ProjectKeepsTheDspPath) {
  // Without --kernels portable the project leaves the choice to the C compiler (__ARM_FEATURE_DSP).
  const fs::path project = dir_ / "fw";
  compileLayer(board("mps2-an386.toml") + " --project " + project.string());
  std::ifstream in(project / "stowage.cmake");
  const std::string cmake(std::istreambuf_iterator<char>(in), {});
  EXPECT_NE(cmake.find("add_library"), std::string::npos);
  EXPECT_EQ(cmake.find("STOWAGE_NO_SIMD"), std::string::npos) << cmake;
  // Its one layer takes the fast path: the kernels are built without their reference loops.
  EXPECT_NE(cmake.find("STOWAGE_INT8_FAST_PATHS_ONLY"), std::string::npos) << cmake;
}

/// A QuantCall of `kernel` with the params of a 3x3 convolution over `c` channels of which each group reads `kc`.
KernelCall convCall(QuantKernel kernel, int32_t c, int32_t kc) {
  stowage_qconv_params p{};
  p.n = 1;
  p.h = p.w = p.oh = p.ow = 8;
  p.c = c;
  p.m = c;
  p.kh = p.kw = 3;
  p.kc = kc;
  p.stride_h = p.stride_w = p.dil_h = p.dil_w = 1;
  p.pad_top = p.pad_left = 1;
  p.depth_multiplier = 1;
  p.act_min = -128;
  p.act_max = 127;
  KernelCall call;
  call.params = QuantCall{kernel, p};
  return call;
}

TEST(Int8ReferenceLoops, OnlyCallsOffTheFastPathNeedThem) {
  EXPECT_FALSE(runsInt8ReferenceLoops(convCall(QuantKernel::Conv2d, 8, 8)));
  EXPECT_TRUE(runsInt8ReferenceLoops(convCall(QuantKernel::Conv2d, 8, 4))) << "a grouped convolution";
  EXPECT_FALSE(runsInt8ReferenceLoops(convCall(QuantKernel::DepthwiseConv2d, 8, 1)));
  KernelCall dilated = convCall(QuantKernel::Conv2d, 8, 8);
  std::get<stowage_qconv_params>(std::get<QuantCall>(dilated.params).params).dil_w = 2;
  EXPECT_TRUE(runsInt8ReferenceLoops(dilated)) << "dilated window rows";
  EXPECT_FALSE(runsInt8ReferenceLoops(KernelCall{})) << "not an int8 call";

  ProgramPlan plan;
  LoweredProgram program;
  program.layers.resize(2);
  program.layers[0].calls = {convCall(QuantKernel::Conv2d, 8, 8)};
  program.layers[1].calls = {convCall(QuantKernel::DepthwiseConv2d, 8, 1)};
  EXPECT_FALSE(int8KernelCodeNeeded(plan, program).referenceLoops);
  program.layers[1].calls.push_back(convCall(QuantKernel::Conv2d, 8, 2));
  EXPECT_TRUE(int8KernelCodeNeeded(plan, program).referenceLoops);
}

TEST(Int8ConvPaths, EachCallNeedsOnlyThePathItsShapeTakes) {
  EXPECT_EQ(int8ConvPaths(convCall(QuantKernel::Conv2d, 32, 32)), STOWAGE_QCONV_PATH_BORDER_PAIRS)
      << "3x3x32 = 288 elements: widened whole, padded rows";
  EXPECT_EQ(int8ConvPaths(convCall(QuantKernel::Conv2d, 64, 64)), STOWAGE_QCONV_PATH_BY_FILTER_ROWS) << "3x3x64: rows of 192";
  EXPECT_EQ(int8ConvPaths(convCall(QuantKernel::Conv2d, 66, 66)), 0) << "rows not whole four-channel groups";
  KernelCall unpadded = convCall(QuantKernel::Conv2d, 32, 32);
  std::get<stowage_qconv_params>(std::get<QuantCall>(unpadded.params).params).pad_top = 0;
  std::get<stowage_qconv_params>(std::get<QuantCall>(unpadded.params).params).oh = 6;
  EXPECT_EQ(int8ConvPaths(unpadded), 0) << "no border row";
  EXPECT_EQ(int8ConvPaths(convCall(QuantKernel::Conv2d, 132, 132)), 0) << "rows of 396: byte-wise loops";
  EXPECT_EQ(int8ConvPaths(convCall(QuantKernel::Conv2d, 3, 3)), STOWAGE_QCONV_PATH_IM2COL) << "rows of 9 bytes";
  EXPECT_EQ(int8ConvPaths(convCall(QuantKernel::DepthwiseConv2d, 64, 1)), 0);
  KernelCall pointwise = convCall(QuantKernel::Conv2d, 16, 16);
  stowage_qconv_params& pw = std::get<stowage_qconv_params>(std::get<QuantCall>(pointwise.params).params);
  pw.kh = pw.kw = 1;
  pw.pad_top = pw.pad_left = 0;
  EXPECT_EQ(int8ConvPaths(pointwise), STOWAGE_QCONV_PATH_POINTWISE);

  ProgramPlan plan;
  LoweredProgram program;
  program.layers.resize(2);
  program.layers[0].calls = {convCall(QuantKernel::Conv2d, 32, 32)};
  program.layers[1].calls = {convCall(QuantKernel::DepthwiseConv2d, 64, 1)};
  Int8KernelCode need = int8KernelCodeNeeded(plan, program);
  EXPECT_FALSE(need.convPointwise || need.convIm2col || need.convByFilterRows || need.referenceLoops);
  EXPECT_TRUE(need.convBorderPairs);
  program.layers[1].calls.push_back(convCall(QuantKernel::Conv2d, 64, 64));
  program.layers[1].calls.push_back(pointwise);
  need = int8KernelCodeNeeded(plan, program);
  EXPECT_TRUE(need.convByFilterRows);
  EXPECT_TRUE(need.convPointwise);
  EXPECT_FALSE(need.convIm2col);
  EXPECT_TRUE(need.depthwisePixels);
  EXPECT_FALSE(need.depthwiseStrip);
}

TEST(Int8DepthwisePaths, TheFloatRequantizationAloneNeedsTheStrip) {
  EXPECT_EQ(int8DepthwisePaths(convCall(QuantKernel::DepthwiseConv2d, 64, 1)), STOWAGE_QDW_PATH_PIXELS);
  EXPECT_EQ(int8DepthwisePaths(convCall(QuantKernel::Conv2d, 64, 64)), 0) << "not a depthwise call";
  KernelCall rqf32 = convCall(QuantKernel::DepthwiseConv2d, 8, 1);
  std::get<stowage_qconv_params>(std::get<QuantCall>(rqf32.params).params).requant_f32 = 1;
  EXPECT_EQ(int8DepthwisePaths(rqf32), STOWAGE_QDW_PATH_STRIP) << "ONNX Runtime's requantization has only the strip";
  KernelCall large = convCall(QuantKernel::DepthwiseConv2d, 8, 1);
  std::get<stowage_qconv_params>(std::get<QuantCall>(large.params).params).kh = 9;
  EXPECT_EQ(int8DepthwisePaths(large), 0) << "a 9x3 window: the reference loops";

  ProgramPlan plan;
  LoweredProgram program;
  program.layers.resize(1);
  program.layers[0].calls = {convCall(QuantKernel::Conv2d, 32, 32)};
  Int8KernelCode need = int8KernelCodeNeeded(plan, program);
  EXPECT_FALSE(need.depthwisePixels || need.depthwiseStrip) << "no depthwise layer";
  program.layers[0].calls.push_back(rqf32);
  need = int8KernelCodeNeeded(plan, program);
  EXPECT_TRUE(need.depthwiseStrip);
  EXPECT_FALSE(need.depthwisePixels);
}

}  // namespace
}  // namespace stowage
