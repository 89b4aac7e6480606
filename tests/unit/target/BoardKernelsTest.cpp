// [[kernels]] in board files ("bring your own kernel", docs/kernels.md): what a table reads (paths resolved
// against the board file, default targets), `extends` adding kernels to a shipped board, and each invalid table
// giving a diagnostic that names the file, line and key with a hint.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "stowage/target/Board.h"

namespace stowage {
namespace {

namespace fs = std::filesystem;

/// A folder with kernels/k.h and kernels/k.c; boards are parsed as if written at its top (dir/board.toml).
class BoardKernels : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("stowage-board-kernels-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
                                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "kernels");
    std::ofstream(dir_ / "kernels" / "k.h") << "void my_conv(void);\n";
    std::ofstream(dir_ / "kernels" / "k.c") << "void my_conv(void) {}\n";
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string boardPath() const { return (dir_ / "board.toml").string(); }
  Result<Board> parse(const std::string& text) const { return parseBoardToml(text, boardPath()); }
  /// Expects `text` to be rejected with a message containing each of `parts`.
  void expectError(const std::string& text, std::initializer_list<std::string> parts) const {
    auto r = parse(text);
    ASSERT_FALSE(r.ok()) << "accepted:\n" << text;
    const std::string msg = r.error().render();
    for (const auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "missing '" << p << "' in:\n" << msg;
  }

  fs::path dir_;
};

const char* kPool = "[[pools]]\nname = \"sram\"\nsize = \"64KiB\"\n";

std::string table(const std::string& kernel, const std::string& extra = "") {
  return "[[kernels]]\nkernel = \"" + kernel + "\"\nfunction = \"my_conv\"\nheader = \"kernels/k.h\"\nsource = \"kernels/k.c\"\n" + extra;
}

TEST_F(BoardKernels, ReadsATableWithPathsRelativeToTheBoardFile) {
  auto r = parse(std::string(kPool) + table("stowage_qconv2d_s8"));
  ASSERT_TRUE(r.ok()) << r.error().render();
  ASSERT_EQ(r->kernels.size(), 1u);
  const KernelOverride& k = r->kernels[0];
  EXPECT_EQ(k.kernel, "stowage_qconv2d_s8");
  EXPECT_EQ(k.function, "my_conv");
  EXPECT_EQ(fs::path(k.header), fs::absolute(dir_ / "kernels" / "k.h").lexically_normal());
  EXPECT_EQ(fs::path(k.source), fs::absolute(dir_ / "kernels" / "k.c").lexically_normal());
  EXPECT_FALSE(k.dtype.has_value());
  EXPECT_NE(k.origin.find("board.toml:"), std::string::npos);
  // No target: every cpu target, and the lookup by kernel, type and target finds it.
  const Target& cpu = r->targets.at(0);
  EXPECT_EQ(r->findKernel("stowage_qconv2d_s8", "int8", cpu), &k);
  EXPECT_EQ(r->findKernel("stowage_qdepthwise_conv2d_s8", "int8", cpu), nullptr);
}

TEST_F(BoardKernels, DtypeSelectsCallsOfOneType) {
  auto r = parse(std::string(kPool) + table("stowage_qlinear_conv", "dtype = \"uint8\"\n"));
  ASSERT_TRUE(r.ok()) << r.error().render();
  const Target& cpu = r->targets.at(0);
  EXPECT_NE(r->findKernel("stowage_qlinear_conv", "uint8", cpu), nullptr);
  EXPECT_EQ(r->findKernel("stowage_qlinear_conv", "int8", cpu), nullptr);
}

TEST_F(BoardKernels, BoardsWithoutTheKeyHaveNoKernels) {
  auto r = loadBoardFile(std::string(STOWAGE_SOURCE_DIR) + "/examples/boards/cortex-m7.toml");
  ASSERT_TRUE(r.ok()) << r.error().render();
  EXPECT_TRUE(r->kernels.empty());
}

TEST_F(BoardKernels, ShippedExampleExtendsTheCortexM7Board) {
  auto r = loadBoardFile(std::string(STOWAGE_SOURCE_DIR) + "/examples/boards/cortex-m7-kernels.toml");
  ASSERT_TRUE(r.ok()) << r.error().render();
  EXPECT_EQ(r->name, "cortex-m7-kernels");
  EXPECT_NE(r->findPool("dtcm"), nullptr);  // from cortex-m7.toml
  EXPECT_NE(r->findPool("dtcm")->origin.find("cortex-m7.toml:"), std::string::npos);
  ASSERT_TRUE(r->device.has_value());
  ASSERT_EQ(r->kernels.size(), 3u);
  EXPECT_EQ(r->kernels[0].function, "board_qconv2d_s8");
  EXPECT_TRUE(fs::exists(r->kernels[0].source));
  auto dsp = loadBoardFile(std::string(STOWAGE_SOURCE_DIR) + "/examples/boards/dsp-cluster4-kernels.toml");
  ASSERT_TRUE(dsp.ok()) << dsp.error().render();
  ASSERT_EQ(dsp->kernels.size(), 2u);
  EXPECT_TRUE(dsp->kernels[0].appliesTo(*dsp->findTarget("dsp")));
  EXPECT_TRUE(dsp->kernels[0].appliesTo(*dsp->findTarget("host")));
}

TEST_F(BoardKernels, ExtendsAppendsAndReportsMissingAndCyclicBases) {
  std::ofstream(dir_ / "base.toml") << kPool;
  auto r = parse("extends = \"base.toml\"\n" + table("stowage_qconv2d_s8"));
  ASSERT_TRUE(r.ok()) << r.error().render();
  EXPECT_EQ(r->name, "board");
  EXPECT_NE(r->findPool("sram"), nullptr);
  EXPECT_EQ(r->kernels.size(), 1u);
  // A pool of the base board declared again is a duplicate, located in both files.
  expectError("extends = \"base.toml\"\n" + std::string(kPool), {"pool 'sram' is defined twice", "base.toml:"});
  expectError("extends = \"nowhere.toml\"\n", {"board.toml:1", "'extends' names \"nowhere.toml\"", "not a readable file"});
  // A folder or a device is not a board file (reading /dev/zero never ended).
  expectError("extends = \".\"\n", {"board.toml:1", "not a readable file"});
  expectError("extends = \"/dev/zero\"\n", {"board.toml:1", "not a readable file"});
  std::ofstream(dir_ / "loop.toml") << "extends = \"loop.toml\"\n";
  expectError("extends = \"loop.toml\"\n", {"more than 8 boards deep"});
}

// ---- errors: each names the file, line and key ----

TEST_F(BoardKernels, UnknownKernelSuggestsTheClosest) {
  // A typo in the portable kernel's name.
  expectError(std::string(kPool) + table("stowage_qconv2d_s9"), {"board.toml:5", "not a kernel of the Stowage runtime",
                                                                  "did you mean 'stowage_qconv2d_s8'?"});
  // An op name instead of a kernel name.
  expectError(std::string(kPool) + table("Conv"), {"'kernel' names \"Conv\"", "runtime/include/stowage_kernels"});
}

TEST_F(BoardKernels, UnknownKeySuggestsTheClosest) {
  // 'fuction' for 'function'.
  expectError(std::string(kPool) + "[[kernels]]\nkernel = \"stowage_qconv2d_s8\"\nfuction = \"f\"\n",
              {"board.toml:6", "unknown key 'fuction'", "did you mean 'function'?"});
}

TEST_F(BoardKernels, MissingRequiredKeys) {
  expectError(std::string(kPool) + "[[kernels]]\nfunction = \"f\"\n", {"has no 'kernel'"});
  expectError(std::string(kPool) + "[[kernels]]\nkernel = \"stowage_qconv2d_s8\"\nheader = \"kernels/k.h\"\nsource = \"kernels/k.c\"\n",
              {"kernel 'stowage_qconv2d_s8': has no 'function'"});
  expectError(std::string(kPool) + "[[kernels]]\nkernel = \"stowage_qconv2d_s8\"\nfunction = \"f\"\nsource = \"kernels/k.c\"\n",
              {"has no 'header'"});
}

TEST_F(BoardKernels, FunctionMustBeAnIdentifierOfTheUsersOwn) {
  expectError(std::string(kPool) + "[[kernels]]\nkernel = \"stowage_qconv2d_s8\"\nfunction = \"my-conv\"\n",
              {"board.toml:6", "'function' is \"my-conv\", which is not a C identifier"});
  // The runtime's prefix would collide with its own functions.
  expectError(std::string(kPool) + "[[kernels]]\nkernel = \"stowage_qconv2d_s8\"\nfunction = \"stowage_fast_conv\"\n",
              {"belong to the Stowage runtime", "board_fast_conv"});
}

TEST_F(BoardKernels, MissingFilesNameThePathLookedFor) {
  expectError(std::string(kPool) + "[[kernels]]\nkernel = \"stowage_qconv2d_s8\"\nfunction = \"f\"\nheader = \"kernels/nope.h\"\n"
                                   "source = \"kernels/k.c\"\n",
              {"board.toml:7", "'header' names \"kernels/nope.h\", which does not exist", "relative to the board file"});
  expectError(std::string(kPool) + "[[kernels]]\nkernel = \"stowage_qconv2d_s8\"\nfunction = \"f\"\nheader = \"kernels/k.h\"\n"
                                   "source = \"kernels/k.h\"\n",
              {"'source' is \"kernels/k.h\"; it must be a .c file"});
}

TEST_F(BoardKernels, DtypeMustBeOneTheKernelReads) {
  expectError(std::string(kPool) + table("stowage_qconv2d_s8", "dtype = \"float32\"\n"),
              {"board.toml:9", "'dtype' is \"float32\" but stowage_qconv2d_s8 reads int8", "remove 'dtype'"});
  expectError(std::string(kPool) + table("stowage_qlinear_conv", "dtype = \"uint\"\n"), {"not an element type", "did you mean 'uint8'?"});
}

TEST_F(BoardKernels, TargetMustExistAndRunKernelsOnCores) {
  expectError(std::string(kPool) + table("stowage_qconv2d_s8", "target = \"cpo\"\n"),
              {"board.toml:9", "'target' names target 'cpo', which does not exist", "did you mean 'cpu'?"});
  // A matrix engine computes its layers with engine intrinsics: [[kernels]] cannot reach it.
  const std::string accel =
      "[[targets]]\nname = \"cpu\"\n[[targets]]\nname = \"npu\"\nkind = \"accelerator\"\nengine_dim = 16\n"
      "dma_bytes_per_cycle = 8\n[[pools]]\nname = \"sram\"\nsize = \"64KiB\"\naccess = [\"cpu\", \"npu\"]\n";
  expectError(accel + table("stowage_qconv2d_s8", "target = [\"cpu\", \"npu\"]\n"),
              {"target 'npu' computes its layers on its matrix engine", "[targets.intrinsics]"});
}

TEST_F(BoardKernels, TwoTablesForTheSameCallsAreAnError) {
  expectError(std::string(kPool) + table("stowage_qconv2d_s8") + table("stowage_qconv2d_s8"),
              {"board.toml:10", "kernel 'stowage_qconv2d_s8' is replaced twice", "first replaced at", "by 'my_conv'"});
  // Different types of a kernel that reads two are two different sets of calls.
  auto r = parse(std::string(kPool) + table("stowage_qlinear_conv", "dtype = \"int8\"\n") + table("stowage_qlinear_conv", "dtype = \"uint8\"\n"));
  EXPECT_TRUE(r.ok()) << r.error().render();
}

TEST_F(BoardKernels, TwoFilesOfOneNameAreAnError) {
  fs::create_directories(dir_ / "other");
  std::ofstream(dir_ / "other" / "k.c") << "void g(void) {}\n";
  expectError(std::string(kPool) + table("stowage_qconv2d_s8") +
                  "[[kernels]]\nkernel = \"stowage_qfully_connected_s8\"\nfunction = \"g\"\nheader = \"kernels/k.h\"\nsource = \"other/k.c\"\n",
              {"'source' is a second file named 'k.c'", "give them different names"});
}

TEST(PortableKernels, EveryListedKernelIsDeclaredInTheRuntimeHeaders) {
  std::string headers;
  for (const char* h : {"stowage_kernels.h", "stowage_kernels_int8.h", "stowage_kernels_nhwc.h", "stowage_kernels_qlinear.h"}) {
    std::ifstream in(std::string(STOWAGE_SOURCE_DIR) + "/runtime/include/" + h);
    headers += std::string(std::istreambuf_iterator<char>(in), {});
  }
  for (const PortableKernel& k : portableKernels()) {
    EXPECT_NE(headers.find("void " + k.name + "("), std::string::npos) << k.name;
    EXPECT_FALSE(k.dtypes.empty()) << k.name;
  }
}

}  // namespace
}  // namespace stowage
