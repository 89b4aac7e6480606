// Board kernels in generated C ([[kernels]], docs/kernels.md): the calls go to the board's function with the
// portable kernel's arguments, <name>.c includes its header and checks its type, the files travel with the code,
// remarks name the calling layers, `--kernels portable` restores the portable calls, an accelerator's cores call it
// on their tiles, and the host build runs it (a wrong signature fails to compile).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "TestGraphs.h"
#include "stowage/driver/Compiler.h"
#include "stowage/driver/HostRunner.h"

namespace stowage {
namespace {

namespace fs = std::filesystem;
using namespace stowage::testing;

/// conv(3x3, pad 1, 2 -> 4 channels) -> relu: one stowage_conv2d_f32 call with a fused clamp.
Graph convGraph() {
  Graph g;
  g.name = "conv";
  TensorId x = addInput(g, "x", {1, 2, 8, 8});
  std::vector<float> wv(4 * 2 * 9);
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = static_cast<float>(static_cast<int>(i % 5) - 2) * 0.25f;
  TensorId w = addConstant(g, "w", {4, 2, 3, 3}, wv);
  TensorId b = addConstant(g, "b", {4}, {0.5f, -0.5f, 0.25f, 0.0f});
  TensorId c = addTensor(g, "c", {1, 4, 8, 8});
  TensorId y = addTensor(g, "y", {1, 4, 8, 8});
  Attributes a;
  a.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  a.set("kernel_shape", std::vector<int64_t>{3, 3});
  addNode(g, "conv1", OpKind::Conv, {x, w, b}, c, a);
  addNode(g, "relu1", OpKind::Relu, {c}, y);
  g.outputs = {y};
  return g;
}

constexpr const char* kSignature =
    "const float* x, const float* w, const float* bias, float* y, const stowage_conv2d_params* p";

/// A folder holding my_kernels.h / .c: my_conv2d_f32 calls the portable kernel (so it is right by construction)
/// and counts its calls; `body` replaces its body when given.
class BoardKernelCode : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("stowage-board-kernel-code-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    writeKernel(std::string("void my_conv2d_f32(") + kSignature + ");\n", "stowage_conv2d_f32(x, w, bias, y, p);");
  }
  void TearDown() override { fs::remove_all(dir_); }

  void writeKernel(const std::string& declaration, const std::string& body, const std::string& signature = kSignature) {
    std::ofstream(dir_ / "my_kernels.h") << "#include \"stowage_kernels.h\"\n" << declaration;
    std::ofstream(dir_ / "my_kernels.c") << "#include \"my_kernels.h\"\nvoid my_conv2d_f32(" << signature << ") {\n  " << body << "\n}\n";
  }

  /// The board `text` as if written at dir_/board.toml.
  Board board(const std::string& text) {
    auto b = parseBoardToml(text, (dir_ / "board.toml").string());
    EXPECT_TRUE(b.ok()) << b.error().render();
    return b.ok() ? *b : Board{};
  }

  fs::path dir_;
};

const char* kCpuBoard =
    "[[pools]]\nname = \"sram\"\nsize = \"64KiB\"\n"
    "[[kernels]]\nkernel = \"stowage_conv2d_f32\"\nfunction = \"my_conv2d_f32\"\nheader = \"my_kernels.h\"\nsource = \"my_kernels.c\"\n";

TEST_F(BoardKernelCode, CallsTheBoardFunctionWithThePortableArguments) {
  CompileOptions o;
  auto r = compileGraphOnBoard(convGraph(), board(kCpuBoard), o);
  ASSERT_TRUE(r.ok()) << r.error().render();
  const std::string& c = r->code.source.text;
  EXPECT_NE(c.find("#include \"my_kernels.h\""), std::string::npos) << c;
  EXPECT_NE(c.find("typedef char net_kernel_type_check_0[sizeof(1 ? &my_conv2d_f32 : &stowage_conv2d_f32)];"), std::string::npos) << c;
  EXPECT_NE(c.find("my_conv2d_f32(in->x, net_w_w, net_w_b, out->y, &net_p0);"), std::string::npos) << c;
  EXPECT_EQ(c.find("stowage_conv2d_f32("), std::string::npos) << "the portable kernel is still called:\n" << c;
  ASSERT_EQ(r->code.boardKernelCalls.size(), 1u);
  EXPECT_EQ(r->code.boardKernelCalls[0].node, "conv1");
  EXPECT_EQ(r->code.boardKernelCalls[0].target, "cpu");
  ASSERT_EQ(r->code.kernelFiles.size(), 2u);
  EXPECT_EQ(r->code.kernelFiles[0].fileName, "my_kernels.h");
  EXPECT_EQ(r->code.kernelFiles[1].fileName, "my_kernels.c");
  bool remark = false;
  for (const std::string& s : r->plan.remarks)
    remark = remark || s == "kernel: node 'conv1' (Conv) calls 'my_conv2d_f32' of the board instead of stowage_conv2d_f32 on 'cpu'";
  EXPECT_TRUE(remark);
}

TEST_F(BoardKernelCode, PortableKernelsOptionIgnoresTheTables) {
  CompileOptions o;
  o.portableKernels = true;
  auto r = compileGraphOnBoard(convGraph(), board(kCpuBoard), o);
  ASSERT_TRUE(r.ok()) << r.error().render();
  EXPECT_NE(r->code.source.text.find("stowage_conv2d_f32(in->x"), std::string::npos);
  EXPECT_EQ(r->code.source.text.find("my_conv2d_f32"), std::string::npos);
  EXPECT_TRUE(r->code.boardKernelCalls.empty());
  EXPECT_TRUE(r->code.kernelFiles.empty());
}

TEST_F(BoardKernelCode, ATableNoLayerCallsIsARemark) {
  // The graph has no Gemm: the table stays unused, and the remark says so.
  const std::string text = std::string("[[pools]]\nname = \"sram\"\nsize = \"64KiB\"\n") +
                           "[[kernels]]\nkernel = \"stowage_gemm_f32\"\nfunction = \"my_conv2d_f32\"\nheader = \"my_kernels.h\"\n"
                           "source = \"my_kernels.c\"\n";
  auto r = compileGraphOnBoard(convGraph(), board(text), CompileOptions{});
  ASSERT_TRUE(r.ok()) << r.error().render();
  EXPECT_TRUE(r->code.kernelFiles.empty());
  bool remark = false;
  for (const std::string& s : r->plan.remarks) remark = remark || s.find("'my_conv2d_f32' of the board (stowage_gemm_f32 at") == 0 ||
                                                   s.find("is called by no layer of this model") != std::string::npos;
  EXPECT_TRUE(remark);
}

TEST_F(BoardKernelCode, HostRunCallsTheBoardKernelAndMatchesThePortableRun) {
  // The board kernel adds 1 to every output after the portable computation, so its effect is visible.
  writeKernel(std::string("void my_conv2d_f32(") + kSignature + ");\n",
              "int32_t i; stowage_conv2d_f32(x, w, bias, y, p); for (i = 0; i < p->n * p->m * p->oh * p->ow; ++i) y[i] += 1.0f;");
  std::vector<float> xv(2 * 64);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>(static_cast<int>(i % 9) - 4) * 0.5f;
  const std::vector<Tensor> in = {floatTensor("x", {1, 2, 8, 8}, xv)};
  CompileOptions o;
  o.fuse = false;  // the Relu apart, so the added 1 survives it everywhere
  auto mine = compileGraphOnBoard(convGraph(), board(kCpuBoard), o);
  ASSERT_TRUE(mine.ok()) << mine.error().render();
  o.portableKernels = true;
  auto portable = compileGraphOnBoard(convGraph(), board(kCpuBoard), o);
  ASSERT_TRUE(portable.ok()) << portable.error().render();
  auto a = runOnHost(*mine, in);
  ASSERT_TRUE(a.ok()) << a.error().render();
  auto b = runOnHost(*portable, in);
  ASSERT_TRUE(b.ok()) << b.error().render();
  const std::vector<float> got = floats((*a)[0]), want = floats((*b)[0]);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    // Where the portable run's relu(conv) is positive, ours is relu(conv + 1) = conv + 1.
    if (want[i] > 0) {
      EXPECT_EQ(got[i], want[i] + 1.0f) << i;
    }
  }
}

TEST_F(BoardKernelCode, AWrongSignatureFailsToCompile) {
  // bias as int32_t*: a different function type, which the type check in net.c rejects.
  const std::string wrong = "const float* x, const float* w, const int32_t* bias, float* y, const stowage_conv2d_params* p";
  writeKernel("void my_conv2d_f32(" + wrong + ");\n", "(void)x; (void)w; (void)bias; (void)y; (void)p;", wrong);
  auto r = compileGraphOnBoard(convGraph(), board(kCpuBoard), CompileOptions{});
  ASSERT_TRUE(r.ok()) << r.error().render();
  auto ran = runOnHost(*r, {floatTensor("x", {1, 2, 8, 8}, std::vector<float>(128, 1.0f))});
  ASSERT_FALSE(ran.ok());
  const std::string msg = ran.error().render();
  EXPECT_NE(msg.find("net_kernel_type_check_0"), std::string::npos) << msg;
}

TEST_F(BoardKernelCode, AcceleratorCoresCallTheBoardKernelOnTheirTiles) {
  const std::string text = "extends = \"" + std::string(STOWAGE_SOURCE_DIR) + "/examples/boards/dsp-cluster4.toml\"\n" +
                           "[[kernels]]\nkernel = \"stowage_conv2d_f32\"\nfunction = \"my_conv2d_f32\"\ntarget = \"dsp\"\n"
                           "header = \"my_kernels.h\"\nsource = \"my_kernels.c\"\n";
  auto r = compileGraphOnBoard(convGraph(), board(text), CompileOptions{});
  ASSERT_TRUE(r.ok()) << r.error().render();
  ASSERT_FALSE(r->plan.offloaded.empty()) << "the conv was not offloaded to the dsp cores";
  EXPECT_EQ(r->plan.offloaded[0].mode, "cores");
  ASSERT_EQ(r->code.boardKernelCalls.size(), 1u);
  EXPECT_EQ(r->code.boardKernelCalls[0].target, "dsp");
  const std::string& c = r->code.source.text;
  EXPECT_NE(c.find("    my_conv2d_f32("), std::string::npos) << c;
  EXPECT_EQ(c.find("stowage_conv2d_f32("), std::string::npos) << c;
  // The tiles computed by the board kernel give the portable result.
  std::vector<float> xv(128);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>(static_cast<int>(i % 7) - 3) * 0.5f;
  const std::vector<Tensor> in = {floatTensor("x", {1, 2, 8, 8}, xv)};
  auto a = runOnHost(*r, in);
  ASSERT_TRUE(a.ok()) << a.error().render();
  CompileOptions o;
  o.portableKernels = true;
  auto portable = compileGraphOnBoard(convGraph(), board(text), o);
  ASSERT_TRUE(portable.ok()) << portable.error().render();
  auto b = runOnHost(*portable, in);
  ASSERT_TRUE(b.ok()) << b.error().render();
  EXPECT_EQ((*a)[0].data, (*b)[0].data);
}

}  // namespace
}  // namespace stowage
