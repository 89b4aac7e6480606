// End-to-end checks of "bring your own kernel" (docs/kernels.md) through the CLI: a board's [[kernels]] reach the
// generated C, `stowage run` builds them, `stowage check-kernels` passes the example kernels and catches wrong ones
// (exit 1, naming the layer), and firmware projects carry the kernel source. The bundled zoo model always runs; the
// MLPerf Tiny int8 keyword-spotting model runs when ../shared/models is present (else skipped with a message), and
// the emulated firmware run when arm-none-eabi-gcc and qemu-system-arm are installed.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "E2eSupport.h"
#include "stowage/firmware/Toolchain.h"

namespace stowage::e2e {
namespace {

namespace fs = std::filesystem;

const fs::path kSource = STOWAGE_SOURCE_DIR;

std::string q(const fs::path& p) { return shellQuote(p.string()); }

/// Writes `text` as `dir`/`name` and returns its path.
fs::path writeBoard(const fs::path& dir, const std::string& name, const std::string& text) {
  writeFileBytes(dir / name, text);
  return dir / name;
}

/// One [[kernels]] table with files under tests/e2e/kernels (absolute paths, so the board may live anywhere).
std::string kernelTable(const std::string& kernel, const std::string& function, const std::string& stem, const std::string& extra = "") {
  const fs::path k = kSource / "tests/e2e/kernels";
  return "[[kernels]]\nkernel = \"" + kernel + "\"\nfunction = \"" + function + "\"\nheader = \"" + (k / (stem + ".h")).string() +
         "\"\nsource = \"" + (k / (stem + ".c")).string() + "\"\n" + extra;
}

/// The MLPerf Tiny int8 DS-CNN and its reference folder, or empty paths.
struct Kws {
  fs::path model, reference;
};
Kws kws() {
  const fs::path dir = sharedPath("models/mlperf-tiny");
  if (dir.empty() || !fs::exists(dir / "kws_ref_model.tflite")) return {};
  return {dir / "kws_ref_model.tflite", dir / "reference" / "kws_ref_model"};
}

TEST(BoardKernels, ZooModelCallsTheBoardKernelAndTheCheckCatchesAWrongOne) {
  const fs::path work = scratchDir("board_kernels_zoo");
  auto w = runCommand(zoo() + " write resnet8 -o " + q(work / "r8.onnx") + " --seed 3");
  ASSERT_EQ(w.exitCode, 0) << w.err;
  const std::string base = "extends = \"" + (kSource / "examples/boards/cortex-m7.toml").string() + "\"\n";
  const fs::path good = writeBoard(work, "good.toml", base + kernelTable("stowage_conv2d_f32", "test_conv2d_f32", "wrapped_f32"));
  // compile: the calls, the include, the files beside the C, one remark per layer.
  auto c = runCommand(cli() + " compile " + q(work / "r8.onnx") + " -o " + q(work / "out") + " --board " + q(good));
  ASSERT_EQ(c.exitCode, 0) << c.err;
  EXPECT_NE(c.out.find("calls 'test_conv2d_f32' of the board instead of stowage_conv2d_f32 on 'cpu'"), std::string::npos) << c.out;
  const std::string netC = readFileBytes(work / "out" / "net.c");
  EXPECT_NE(netC.find("#include \"wrapped_f32.h\""), std::string::npos);
  EXPECT_NE(netC.find("test_conv2d_f32("), std::string::npos);
  EXPECT_TRUE(fs::exists(work / "out" / "wrapped_f32.c"));
  EXPECT_TRUE(fs::exists(work / "out" / "wrapped_f32.h"));
  // check-kernels: identical.
  auto ok = runCommand(cli() + " check-kernels " + q(work / "r8.onnx") + " --board " + q(good));
  EXPECT_EQ(ok.exitCode, 0) << ok.out << ok.err;
  EXPECT_NE(ok.out.find("ok: the board's kernels give the same bytes as the portable ones"), std::string::npos) << ok.out;
  // A wrong Gemm: exit 1, the layer named, its inputs identical.
  const fs::path bad = writeBoard(work, "bad.toml", readFileBytes(good) + kernelTable("stowage_gemm_f32", "wrong_gemm_f32", "wrapped_f32"));
  auto wrong = runCommand(cli() + " check-kernels " + q(work / "r8.onnx") + " --board " + q(bad) + " --seed 7");
  EXPECT_EQ(wrong.exitCode, 1) << wrong.out << wrong.err;
  EXPECT_NE(wrong.out.find("DIFFERS"), std::string::npos) << wrong.out;
  EXPECT_NE(wrong.out.find("(wrong_gemm_f32 for stowage_gemm_f32)"), std::string::npos) << wrong.out;
  EXPECT_NE(wrong.out.find("its inputs are identical, so wrong_gemm_f32 computes differently from stowage_gemm_f32"), std::string::npos)
      << wrong.out;
  EXPECT_NE(wrong.out.find("FAILED"), std::string::npos) << wrong.out;
  // A board whose kernels no layer calls: nothing to check, exit 2 with the reason.
  const fs::path unused = writeBoard(work, "unused.toml", base + kernelTable("stowage_qconv2d_s8", "test_conv2d_f32", "wrapped_f32"));
  auto none = runCommand(cli() + " check-kernels " + q(work / "r8.onnx") + " --board " + q(unused));
  EXPECT_EQ(none.exitCode, 2) << none.out << none.err;
  EXPECT_NE(none.err.find("no layer of model"), std::string::npos) << none.err;
  fs::remove_all(work);
}

TEST(BoardKernels, ExampleInt8KernelsReproduceTflmOnKeywordSpotting) {
  const Kws m = kws();
  if (m.model.empty()) GTEST_SKIP() << "../shared/models/mlperf-tiny/kws_ref_model.tflite not found; skipping";
  const fs::path work = scratchDir("board_kernels_kws");
  const fs::path board = kSource / "examples/boards/cortex-m7-kernels.toml";
  // The example board's kernels give TFLite Micro's reference outputs, byte for byte, as the portable ones do.
  for (const std::string k : {"0", "1", "sample"}) {
    auto r = runCommand(cli() + " run " + q(m.model) + " --input " + q(m.reference / ("input_" + k + ".bin")) + " --output-dir " +
                        q(work / ("out_" + k)) + " --format bin --board " + q(board));
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("calls 'board_qdepthwise_conv2d_s8' of the board"), std::string::npos) << r.out;
    const std::string got = readFileBytes(work / ("out_" + k) / "output_0.bin");
    EXPECT_FALSE(got.empty());
    EXPECT_EQ(got, readFileBytes(m.reference / ("output_" + k + ".bin"))) << "input_" << k;
  }
  // check-kernels on the reference input and on random ones: every board-kernel layer identical.
  for (const std::string& extra : {" --input " + q(m.reference / "input_sample.bin"), std::string(" --seed 11")}) {
    auto r = runCommand(cli() + " check-kernels " + q(m.model) + " --board " + q(board) + extra);
    EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("(board_qconv2d_s8 for stowage_qconv2d_s8)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("(board_qfully_connected_s8 for stowage_qfully_connected_s8)"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("DIFFERS"), std::string::npos) << r.out;
  }
  fs::remove_all(work);
}

TEST(BoardKernels, CheckCatchesAWrongInt8Kernel) {
  const Kws m = kws();
  if (m.model.empty()) GTEST_SKIP() << "../shared/models/mlperf-tiny/kws_ref_model.tflite not found; skipping";
  const fs::path work = scratchDir("board_kernels_wrong");
  const fs::path board = writeBoard(work, "wrong.toml",
                                    "extends = \"" + (kSource / "examples/boards/cortex-m7.toml").string() + "\"\n" +
                                        kernelTable("stowage_qfully_connected_s8", "wrong_qfully_connected_s8", "wrong_qfc"));
  auto r = runCommand(cli() + " check-kernels " + q(m.model) + " --board " + q(board) + " --input " + q(m.reference / "input_sample.bin"));
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("its inputs are identical, so wrong_qfully_connected_s8 computes differently from stowage_qfully_connected_s8"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("[model output]"), std::string::npos) << r.out;
  // --kernels portable: the same board, every call portable, so the run reproduces TFLM again.
  auto p = runCommand(cli() + " run " + q(m.model) + " --input " + q(m.reference / "input_sample.bin") + " --output-dir " + q(work / "out") +
                      " --format bin --kernels portable --board " + q(board));
  ASSERT_EQ(p.exitCode, 0) << p.err;
  EXPECT_EQ(readFileBytes(work / "out" / "output_0.bin"), readFileBytes(m.reference / "output_sample.bin"));
  fs::remove_all(work);
}

TEST(BoardKernels, AcceleratorCoresCallTheExampleKernels) {
  const Kws m = kws();
  if (m.model.empty()) GTEST_SKIP() << "../shared/models/mlperf-tiny/kws_ref_model.tflite not found; skipping";
  const fs::path board = kSource / "examples/boards/dsp-cluster4-kernels.toml";
  auto r = runCommand(cli() + " check-kernels " + q(m.model) + " --board " + q(board) + " --input " + q(m.reference / "input_sample.bin"));
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("of the board instead of stowage_qconv2d_s8 on 'dsp'"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("DIFFERS"), std::string::npos) << r.out;
}

TEST(BoardKernels, FirmwareProjectBuildsTheKernelSource) {
  const Kws m = kws();
  if (m.model.empty()) GTEST_SKIP() << "../shared/models/mlperf-tiny/kws_ref_model.tflite not found; skipping";
  const fs::path work = scratchDir("board_kernels_fw");
  const fs::path board = kSource / "examples/boards/cortex-m7-kernels.toml";
  auto c = runCommand(cli() + " compile " + q(m.model) + " -o " + q(work / "out") + " --board " + q(board) + " --project " + q(work / "fw"));
  ASSERT_EQ(c.exitCode, 0) << c.err;
  EXPECT_TRUE(fs::exists(work / "fw" / "model" / "reordered_int8.c"));
  EXPECT_TRUE(fs::exists(work / "fw" / "model" / "reordered_int8.h"));
  EXPECT_NE(readFileBytes(work / "fw" / "stowage.cmake").find("/model/reordered_int8.c"), std::string::npos);
  if (!findProgram("arm-none-eabi-gcc", {}).ok() || !findProgram("qemu-system-arm", {}).ok())
    GTEST_SKIP() << "arm-none-eabi-gcc or qemu-system-arm not found on PATH; the project was checked, not built";
  // Built for the Cortex-M7 and run on QEMU: the board's kernels reproduce TFLite Micro on the device too.
  auto r = runCommand(cli() + " run " + q(m.model) + " --input " + q(m.reference / "input_sample.bin") + " --output-dir " + q(work / "emu") +
                      " --format bin --emulate mps2-an500 --board " + q(board));
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_EQ(readFileBytes(work / "emu" / "output_0.bin"), readFileBytes(m.reference / "output_sample.bin"));
  fs::remove_all(work);
}

}  // namespace
}  // namespace stowage::e2e
