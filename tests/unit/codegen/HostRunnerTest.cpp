// End to end on the host: hand-built graphs go through the whole pipeline (fold, plan, validate, emit), are
// built with the system cc and the runtime, run, and must match values computed here in C++.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>

#include "TestGraphs.h"
#include "stowage/driver/Compiler.h"
#include "stowage/driver/HostRunner.h"
#include "stowage/target/Board.h"

namespace stowage {
namespace {

using namespace stowage::testing;

TEST(HostRunner, ConvReluGemmMatchesReference) {
  // x[1,1,4,4] -> conv 2x1x3x3 pad 1 -> relu -> reshape [1,32] -> gemm (transB) -> y[1,3]
  Graph g;
  g.name = "conv_relu_gemm";
  TensorId x = addInput(g, "x", {1, 1, 4, 4});
  std::vector<float> wv(18), fcw(3 * 32);
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = 0.1f * static_cast<float>(static_cast<int>(i) - 9);
  for (size_t i = 0; i < fcw.size(); ++i) fcw[i] = 0.01f * static_cast<float>(static_cast<int>(i % 11) - 5);
  const std::vector<float> bv = {0.5f, -0.25f}, fcb = {1.0f, -2.0f, 0.0f};
  TensorId w = addConstant(g, "w", {2, 1, 3, 3}, wv);
  TensorId b = addConstant(g, "b", {2}, bv);
  TensorId c = addTensor(g, "c", {1, 2, 4, 4});
  TensorId r = addTensor(g, "r", {1, 2, 4, 4});
  TensorId f = addTensor(g, "f", {1, 32});
  TensorId gw = addConstant(g, "gw", {3, 32}, fcw);
  TensorId gb = addConstant(g, "gb", {3}, fcb);
  TensorId y = addTensor(g, "y", {1, 3});
  Attributes ca;
  ca.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  addNode(g, "conv", OpKind::Conv, {x, w, b}, c, ca);
  addNode(g, "relu", OpKind::Relu, {c}, r);
  Attributes ra;
  ra.set("shape", std::vector<int64_t>{1, 32});
  addNode(g, "flatten", OpKind::Reshape, {r}, f, ra);
  Attributes ga;
  ga.set("transB", int64_t{1});
  addNode(g, "fc", OpKind::Gemm, {f, gw, gb}, y, ga);
  g.outputs = {y};

  std::vector<float> xv(16);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = std::sin(0.7f * static_cast<float>(i));

  // Reference in plain C++.
  std::vector<float> feat(32);
  for (int m = 0; m < 2; ++m)
    for (int oy = 0; oy < 4; ++oy)
      for (int ox = 0; ox < 4; ++ox) {
        float s = bv[static_cast<size_t>(m)];
        for (int ky = 0; ky < 3; ++ky)
          for (int kx = 0; kx < 3; ++kx) {
            int iy = oy + ky - 1, ix = ox + kx - 1;
            if (iy < 0 || iy >= 4 || ix < 0 || ix >= 4) continue;
            s += xv[static_cast<size_t>(iy * 4 + ix)] * wv[static_cast<size_t>(m * 9 + ky * 3 + kx)];
          }
        feat[static_cast<size_t>(m * 16 + oy * 4 + ox)] = std::max(0.0f, s);
      }
  std::vector<float> want(3);
  for (size_t n = 0; n < 3; ++n) {
    float s = fcb[n];
    for (size_t k = 0; k < 32; ++k) s += feat[k] * fcw[n * 32 + k];
    want[n] = s;
  }

  CompileOptions o;
  o.name = "net";
  auto compiled = compileGraph(std::move(g), o);
  ASSERT_TRUE(compiled.ok()) << compiled.error().render();
  // The Relu is fused into the conv, which writes r (128 bytes) itself; the reshape is a view of r.
  EXPECT_GE(compiled->plan.pools[0].usedBytes, compiled->plan.pools[0].lowerBoundBytes);
  EXPECT_EQ(compiled->plan.pools[0].lowerBoundBytes, 128u);
  EXPECT_EQ(compiled->graph.nodes.size(), 3u) << "conv (with its Relu), reshape, gemm";
  auto out = runOnHost(*compiled, {floatTensor("x", {1, 1, 4, 4}, xv)});
  ASSERT_TRUE(out.ok()) << out.error().render();
  ASSERT_EQ(out->size(), 1u);
  EXPECT_EQ(out->at(0).name, "y");
  EXPECT_EQ(out->at(0).shape, (Shape{1, 3}));
  std::vector<float> got = floats(out->at(0));
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(got[i], want[i], 1e-5f) << i;
}

TEST(HostRunner, DataMovementAndSoftmaxWithTwoOutputs) {
  // a[2,3] -> transpose -> t[3,2]; concat(t, c[3,1]) -> [3,3] -> softmax(axis 1) -> y0; maxpool-free
  // second output: slice of a (row 1) -> y1.
  Graph g;
  TensorId a = addInput(g, "a", {2, 3});
  TensorId t = addTensor(g, "t", {3, 2});
  TensorId c = addConstant(g, "c", {3, 1}, {0.0f, 1.0f, -1.0f});
  TensorId cat = addTensor(g, "cat", {3, 3});
  TensorId y0 = addTensor(g, "y0", {3, 3});
  TensorId y1 = addTensor(g, "y1", {1, 3});
  Attributes pa;
  pa.set("perm", std::vector<int64_t>{1, 0});
  addNode(g, "transpose", OpKind::Transpose, {a}, t, pa);
  Attributes ca;
  ca.set("axis", int64_t{1});
  addNode(g, "concat", OpKind::Concat, {t, c}, cat, ca);
  Attributes sa;
  sa.set("axis", int64_t{1});
  sa.set("coerce2d", int64_t{0});
  addNode(g, "softmax", OpKind::Softmax, {cat}, y0, sa);
  Attributes sl;
  sl.set("starts", std::vector<int64_t>{1, 0});
  sl.set("ends", std::vector<int64_t>{2, 3});
  sl.set("steps", std::vector<int64_t>{1, 1});
  addNode(g, "slice", OpKind::Slice, {a}, y1, sl);
  g.outputs = {y0, y1};

  const std::vector<float> av = {1, 2, 3, 4, 5, 6};
  CompileOptions o;
  auto compiled = compileGraph(std::move(g), o);
  ASSERT_TRUE(compiled.ok()) << compiled.error().render();
  auto out = runOnHost(*compiled, {floatTensor("a", {2, 3}, av)});
  ASSERT_TRUE(out.ok()) << out.error().render();
  ASSERT_EQ(out->size(), 2u);
  const float rows[3][3] = {{1, 4, 0}, {2, 5, 1}, {3, 6, -1}};
  std::vector<float> y0v = floats(out->at(0));
  for (int i = 0; i < 3; ++i) {
    float sum = 0;
    for (int j = 0; j < 3; ++j) sum += std::exp(rows[i][j]);
    for (int j = 0; j < 3; ++j) EXPECT_NEAR(y0v[static_cast<size_t>(i * 3 + j)], std::exp(rows[i][j]) / sum, 1e-6f);
  }
  EXPECT_EQ(floats(out->at(1)), (std::vector<float>{4, 5, 6}));
}

TEST(HostRunner, RejectsInputOfWrongShape) {
  // Negative case: the input tensor's shape differs from the model's; the error states the expected shape.
  Graph g;
  TensorId x = addInput(g, "x", {1, 4});
  TensorId y = addTensor(g, "y", {1, 4});
  addNode(g, "relu", OpKind::Relu, {x}, y);
  g.outputs = {y};
  auto compiled = compileGraph(std::move(g), CompileOptions{});
  ASSERT_TRUE(compiled.ok());
  auto out = runOnHost(*compiled, {floatTensor("x", {1, 5}, std::vector<float>(5, 1.0f))});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message.find("1x4"), std::string::npos) << out.error().render();
}

TEST(HostRunner, BoardsBeyondTheSimulatorGetAClearErrorBeforeBuilding) {
  // Valid boards for the device (cores up to 4096, DMA channels up to 64) that the host simulator cannot run: the
  // error names the target, the count and the limit, instead of an abort of the built program.
  auto board = [](const std::string& target) {
    auto b = parseBoardToml("[[targets]]\nname = \"cpu\"\n" + target + "[[pools]]\nname = \"ram\"\n", "b.toml");
    EXPECT_TRUE(b.ok()) << b.error().render();
    return *b;
  };
  const Board manyCores = board("[[targets]]\nname = \"cluster\"\nkind = \"accelerator\"\ncores = 65\n");
  Status s = checkSimulatorLimits(manyCores);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().render().find("target 'cluster' has 65 cores; the host simulator handles at most 64"), std::string::npos)
      << s.error().render();
  EXPECT_NE(s.error().render().find("b.toml:3"), std::string::npos) << s.error().render();
  const Board manyChannels = board("[[targets]]\nname = \"dsp\"\nkind = \"accelerator\"\ndma_bytes_per_cycle = 8\ndma_channels = 64\n");
  EXPECT_TRUE(checkSimulatorLimits(manyChannels).ok()) << "64 channels, the board format's limit, run";
  EXPECT_TRUE(checkSimulatorLimits(board("[[targets]]\nname = \"dsp\"\nkind = \"accelerator\"\ncores = 64\n")).ok());

  Graph g;
  TensorId x = addInput(g, "x", {1, 4});
  TensorId y = addTensor(g, "y", {1, 4});
  addNode(g, "relu", OpKind::Relu, {x}, y);
  g.outputs = {y};
  auto compiled = compileGraphOnBoard(std::move(g), manyCores, CompileOptions{});
  ASSERT_TRUE(compiled.ok()) << compiled.error().render();
  auto out = runOnHost(*compiled, {floatTensor("x", {1, 4}, std::vector<float>(4, 1.0f))});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().render().find("65 cores"), std::string::npos) << out.error().render();
}

TEST(HostRunner, ModelWithoutInputsRuns) {
  // Regression: the harness of a model with no inputs (all bound or constant) must still build warning-free.
  Graph g;
  TensorId c = addConstant(g, "c", {3}, {-1.0f, 0.5f, 2.0f});
  TensorId y = addTensor(g, "y", {3});
  addNode(g, "relu", OpKind::Relu, {c}, y);
  g.outputs = {y};
  auto compiled = compileGraph(std::move(g), CompileOptions{});
  ASSERT_TRUE(compiled.ok()) << compiled.error().render();
  auto out = runOnHost(*compiled, {});
  ASSERT_TRUE(out.ok()) << out.error().render();
  EXPECT_EQ(floats(out->at(0)), (std::vector<float>{0.0f, 0.5f, 2.0f}));
}

TEST(HostRunner, Int64DataMovement) {
  // Transpose and Concat move any element type: an int64 tensor goes through the strided gather.
  Graph g;
  TensorId x = addTensor(g, "x", {2, 3}, TensorKind::Input, DType::Int64);
  g.inputs.push_back(x);
  TensorId y = addTensor(g, "y", {3, 2}, TensorKind::Activation, DType::Int64);
  Attributes a;
  a.set("perm", std::vector<int64_t>{1, 0});
  addNode(g, "transpose", OpKind::Transpose, {x}, y, a);
  g.outputs = {y};
  auto compiled = compileGraph(std::move(g), CompileOptions{});
  ASSERT_TRUE(compiled.ok()) << compiled.error().render();
  Tensor in;
  in.name = "x";
  in.dtype = DType::Int64;
  in.shape = {2, 3};
  const int64_t xv[6] = {1, 2, 3, 4, -5, int64_t{1} << 40};
  in.data.resize(sizeof xv);
  std::memcpy(in.data.data(), xv, sizeof xv);
  auto out = runOnHost(*compiled, {in});
  ASSERT_TRUE(out.ok()) << out.error().render();
  ASSERT_EQ(out->at(0).dtype, DType::Int64);
  const int64_t* yv = out->at(0).dataAs<int64_t>();
  EXPECT_EQ(std::vector<int64_t>(yv, yv + 6), (std::vector<int64_t>{1, 4, 2, -5, 3, int64_t{1} << 40}));
}

TEST(HostRunner, EmptyIntermediateTensors) {
  // Regression guard: a zero-element intermediate gets a buffer but no kernel call; the generated C must
  // still build warning-free and the non-empty path must compute.
  Graph g;
  TensorId x = addInput(g, "x", {2, 3});
  TensorId e = addTensor(g, "empty", {0, 3});
  TensorId e2 = addTensor(g, "empty_relu", {0, 3});
  TensorId y = addTensor(g, "y", {2, 3});
  Attributes sl;
  sl.set("starts", std::vector<int64_t>{0, 0});
  sl.set("ends", std::vector<int64_t>{0, 3});
  sl.set("steps", std::vector<int64_t>{1, 1});
  addNode(g, "slice", OpKind::Slice, {x}, e, sl);
  addNode(g, "relu_empty", OpKind::Relu, {e}, e2);
  Attributes ca;
  ca.set("axis", int64_t{0});
  addNode(g, "concat", OpKind::Concat, {e2, x}, y, ca);
  g.outputs = {y};
  auto compiled = compileGraph(std::move(g), CompileOptions{});
  ASSERT_TRUE(compiled.ok()) << compiled.error().render();
  EXPECT_EQ(compiled->plan.pools[0].usedBytes, 0u);
  auto out = runOnHost(*compiled, {floatTensor("x", {2, 3}, {1, 2, 3, 4, 5, 6})});
  ASSERT_TRUE(out.ok()) << out.error().render();
  EXPECT_EQ(floats(out->at(0)), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST(HostRunner, KeepDirKeepsTheBuild) {
  Graph g;
  TensorId x = addInput(g, "x", {2});
  TensorId y = addTensor(g, "y", {2});
  addNode(g, "neg", OpKind::Neg, {x}, y);
  g.outputs = {y};
  auto compiled = compileGraph(std::move(g), CompileOptions{});
  ASSERT_TRUE(compiled.ok());
  std::filesystem::path keep = std::filesystem::path(STOWAGE_BINARY_DIR) / "test_keep_dir";
  std::filesystem::remove_all(keep);
  HostRunOptions ro;
  ro.keepDir = keep.string();
  auto out = runOnHost(*compiled, {floatTensor("x", {2}, {1.0f, -2.0f})}, ro);
  ASSERT_TRUE(out.ok()) << out.error().render();
  EXPECT_EQ(floats(out->at(0)), (std::vector<float>{-1.0f, 2.0f}));
  EXPECT_TRUE(std::filesystem::exists(keep / "net.c"));
  EXPECT_TRUE(std::filesystem::exists(keep / "main.c"));
  std::filesystem::remove_all(keep);
}

}  // namespace
}  // namespace stowage
