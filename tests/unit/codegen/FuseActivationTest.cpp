// Conv + Relu / Clip fusion (pass/FuseActivation.h) and the rule and pin check before it (plan/analysis/MergeCheck.h):
// which pairs fuse and which stay apart, the remarks, and the same outputs fused and unfused on the host.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "TestGraphs.h"
#include "stowage/driver/Compiler.h"
#include "stowage/driver/HostRunner.h"
#include "stowage/pass/FuseActivation.h"

namespace stowage {
namespace {

using namespace stowage::testing;

/// x -> conv1 -> c1 -> relu1 -> r1 -> conv2 -> c2 -> relu2 -> y (graph output); weights with both signs so
/// every Relu clamps something.
Graph twoConvNet() {
  Graph g;
  TensorId x = addInput(g, "x", {1, 2, 4, 4});
  std::vector<float> w1(4 * 2 * 9), w2(4 * 4 * 9);
  for (size_t i = 0; i < w1.size(); ++i) w1[i] = static_cast<float>(static_cast<int>(i % 5) - 2) * 0.25f;
  for (size_t i = 0; i < w2.size(); ++i) w2[i] = static_cast<float>(static_cast<int>(i % 7) - 3) * 0.125f;
  TensorId cw1 = addConstant(g, "w1", {4, 2, 3, 3}, w1);
  TensorId cb1 = addConstant(g, "b1", {4}, {0.5f, -0.5f, 0.0f, -2.0f});
  TensorId cw2 = addConstant(g, "w2", {4, 4, 3, 3}, w2);
  TensorId c1 = addTensor(g, "c1", {1, 4, 4, 4});
  TensorId r1 = addTensor(g, "r1", {1, 4, 4, 4});
  TensorId c2 = addTensor(g, "c2", {1, 4, 4, 4});
  TensorId y = addTensor(g, "y", {1, 4, 4, 4});
  Attributes ca;
  ca.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  ca.set("kernel_shape", std::vector<int64_t>{3, 3});
  addNode(g, "conv1", OpKind::Conv, {x, cw1, cb1}, c1, ca);
  addNode(g, "relu1", OpKind::Relu, {c1}, r1);
  addNode(g, "conv2", OpKind::Conv, {r1, cw2}, c2, ca);
  addNode(g, "relu2", OpKind::Relu, {c2}, y);
  g.outputs = {y};
  return g;
}

std::vector<float> sampleInput() {
  std::vector<float> v(32);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(static_cast<int>(i * 7 % 11) - 5) * 0.3f;
  return v;
}

Result<CompileResult> compileIt(Graph g, bool fuse, const BoardFlags& board = {}) {
  CompileOptions o;
  o.fuse = fuse;
  o.board = board;
  return compileGraph(std::move(g), o);
}

std::vector<float> runIt(const CompileResult& r) {
  auto out = runOnHost(r, {floatTensor("x", {1, 2, 4, 4}, sampleInput())});
  EXPECT_TRUE(out.ok()) << (out.ok() ? "" : out.error().render());
  return out.ok() ? floats(out->at(0)) : std::vector<float>{};
}

bool hasRemark(const CompileResult& r, const std::string& text) {
  for (const std::string& s : r.plan.remarks)
    if (s.find(text) != std::string::npos) return true;
  return false;
}

TEST(FuseActivation, EachReluAfterAConvIsFusedWithTheSameOutputs) {
  auto fused = compileIt(twoConvNet(), true);
  auto apart = compileIt(twoConvNet(), false);
  ASSERT_TRUE(fused.ok()) << fused.error().render();
  ASSERT_TRUE(apart.ok()) << apart.error().render();
  ASSERT_EQ(fused->graph.nodes.size(), 2u);
  EXPECT_EQ(apart->graph.nodes.size(), 4u);
  for (const Node& n : fused->graph.nodes) {
    EXPECT_EQ(n.op, OpKind::Conv);
    EXPECT_EQ(n.attrs.getString(kFusedActivationAttr), "Relu") << n.name;
    EXPECT_EQ(n.attrs.getFloat(kFusedMinAttr, -1.0f), 0.0f);
  }
  // conv1 writes r1 (the Relu's tensor keeps its name); c1 and c2 are gone.
  EXPECT_EQ(fused->graph.tensor(fused->graph.nodes[0].outputs[0]).name, "r1");
  EXPECT_FALSE(fused->graph.findTensor("c1").has_value());
  EXPECT_TRUE(hasRemark(*fused, "2 Relu/Clip fused into the Conv, Gemm, Add, Sub or Mul before them")) << fused->plan.remarks.size();
  EXPECT_TRUE(hasRemark(*fused, "'relu1' into 'conv1', 'relu2' into 'conv2'"));
  EXPECT_FALSE(hasRemark(*apart, "fused"));
  // One activation buffer fewer at every conv: 256 bytes of r1 and y instead of c1, r1 (then r1, c2).
  EXPECT_LT(fused->plan.pools[0].lowerBoundBytes, apart->plan.pools[0].lowerBoundBytes);
  EXPECT_NE(fused->code.source.text.find(".clamp = 1, .clamp_min = 0.0f, .clamp_max = INFINITY"), std::string::npos);
  const std::vector<float> a = runIt(*fused), b = runIt(*apart);
  ASSERT_EQ(a.size(), 64u);
  EXPECT_EQ(a, b);
  size_t zeros = 0;
  for (float v : a) zeros += v == 0.0f ? 1 : 0;
  EXPECT_GT(zeros, 0u) << "the sample input should make the Relu clamp something";
}

TEST(FuseActivation, AClipIsFusedWithItsBoundsAndTheSameOutputs) {
  // relu2 becomes a Clip(-0.25, 0.5) (ReLU6-like, with bounds the sample input crosses on both sides).
  auto clipNet = [] {
    Graph g = twoConvNet();
    for (Node& n : g.nodes)
      if (n.name == "relu2") {
        n.op = OpKind::Clip;
        n.name = "clip2";
        n.attrs.set("min", -0.25f);
        n.attrs.set("max", 0.5f);
      }
    return g;
  };
  auto fused = compileIt(clipNet(), true);
  auto apart = compileIt(clipNet(), false);
  ASSERT_TRUE(fused.ok()) << fused.error().render();
  ASSERT_TRUE(apart.ok()) << apart.error().render();
  ASSERT_EQ(fused->graph.nodes.size(), 2u);
  EXPECT_EQ(fused->graph.nodes[1].attrs.getString(kFusedActivationAttr), "Clip");
  EXPECT_TRUE(hasRemark(*fused, "'relu1' into 'conv1', 'clip2' into 'conv2'"));
  EXPECT_NE(fused->code.source.text.find(".clamp = 1, .clamp_min = -0x1p-2f, .clamp_max = 0x1p-1f"), std::string::npos);
  const std::vector<float> a = runIt(*fused), b = runIt(*apart);
  ASSERT_EQ(a.size(), 64u);
  EXPECT_EQ(a, b);
  size_t low = 0, high = 0;
  for (float v : a) {
    low += v == -0.25f ? 1 : 0;
    high += v == 0.5f ? 1 : 0;
  }
  EXPECT_GT(low, 0u);
  EXPECT_GT(high, 0u);
}

TEST(FuseActivation, AResidualAddAndABroadcastMulFuseTheirRelu) {
  // x -> conv1 -> c1; s = c1 + x (in place), relu -> r; m = r * scale[1,4,1,1] (broadcast), relu -> y.
  auto net = [] {
    Graph g;
    TensorId x = addInput(g, "x", {1, 4, 4, 4});
    std::vector<float> w(4 * 4 * 9);
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i % 5) - 2) * 0.125f;
    TensorId cw = addConstant(g, "w", {4, 4, 3, 3}, w);
    TensorId scale = addConstant(g, "scale", {1, 4, 1, 1}, {1.0f, -1.0f, 0.5f, -2.0f});
    TensorId c1 = addTensor(g, "c1", {1, 4, 4, 4});
    TensorId s = addTensor(g, "s", {1, 4, 4, 4});
    TensorId r = addTensor(g, "r", {1, 4, 4, 4});
    TensorId m = addTensor(g, "m", {1, 4, 4, 4});
    TensorId y = addTensor(g, "y", {1, 4, 4, 4});
    Attributes ca;
    ca.set("pads", std::vector<int64_t>{1, 1, 1, 1});
    ca.set("kernel_shape", std::vector<int64_t>{3, 3});
    addNode(g, "conv1", OpKind::Conv, {x, cw}, c1, ca);
    addNode(g, "add", OpKind::Add, {c1, x}, s);
    addNode(g, "relu_add", OpKind::Relu, {s}, r);
    addNode(g, "mul", OpKind::Mul, {r, scale}, m);
    addNode(g, "relu_mul", OpKind::Relu, {m}, y);
    g.outputs = {y};
    return g;
  };
  auto fused = compileIt(net(), true);
  auto apart = compileIt(net(), false);
  ASSERT_TRUE(fused.ok()) << fused.error().render();
  ASSERT_TRUE(apart.ok()) << apart.error().render();
  EXPECT_EQ(fused->graph.nodes.size(), 3u);
  EXPECT_TRUE(hasRemark(*fused, "'relu_add' into 'add', 'relu_mul' into 'mul'"));
  EXPECT_TRUE(hasRemark(*fused, "add(s) write in place"));
  std::vector<float> xv(64);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>(static_cast<int>(i * 5 % 13) - 6) * 0.2f;
  auto a = runOnHost(*fused, {floatTensor("x", {1, 4, 4, 4}, xv)});
  auto b = runOnHost(*apart, {floatTensor("x", {1, 4, 4, 4}, xv)});
  ASSERT_TRUE(a.ok()) << a.error().render();
  ASSERT_TRUE(b.ok()) << b.error().render();
  EXPECT_EQ(floats(a->at(0)), floats(b->at(0)));
}

TEST(FuseActivation, LeavesPairsWhoseConvOutputIsReadElsewhereOrAGraphOutput) {
  // c1 also feeds an Add; c2 is a graph output next to relu2's y.
  Graph g = twoConvNet();
  TensorId c1 = *g.findTensor("c1");
  TensorId c2 = *g.findTensor("c2");
  TensorId s = addTensor(g, "s", {1, 4, 4, 4});
  addNode(g, "add", OpKind::Add, {c1, *g.findTensor("y")}, s);
  g.outputs = {s, c2};
  auto r = fuseActivation(g);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->empty());
  EXPECT_EQ(g.nodes.size(), 5u);
  for (const Node& n : g.nodes) EXPECT_FALSE(n.attrs.has(kFusedActivationAttr)) << n.name;
}

TEST(FuseActivation, ConvTransposeAndMatMulAreNotFused) {
  Graph g;
  TensorId x = addInput(g, "x", {1, 1, 2, 2});
  TensorId w = addConstant(g, "w", {1, 1, 2, 2}, {1, -1, 1, -1});
  TensorId t = addTensor(g, "t", {1, 1, 3, 3});
  TensorId y = addTensor(g, "y", {1, 1, 3, 3});
  addNode(g, "deconv", OpKind::ConvTranspose, {x, w}, t);
  addNode(g, "relu", OpKind::Relu, {t}, y);
  TensorId a = addInput(g, "a", {2, 2});
  TensorId m = addTensor(g, "m", {2, 2});
  TensorId z = addTensor(g, "z", {2, 2});
  addNode(g, "matmul", OpKind::MatMul, {a, a}, m);
  addNode(g, "relu_m", OpKind::Relu, {m}, z);
  g.outputs = {y, z};
  auto r = fuseActivation(g);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(g.nodes.size(), 4u);
}

TEST(FuseActivation, GemmBatchNormReluFoldsAndFusesIntoOneGemm) {
  // An autoencoder block: y = Relu(BN(Gemm(a, B, C))), alpha 2, beta 0.5, B stored [N, K] (transB).
  const std::vector<float> av = {0.5f, -1.0f, 2.0f, 1.5f, 0.25f, -0.75f};                 // [2, 3]
  const std::vector<float> bv = {1, 2, -1, 0.5f, -0.5f, 1, -2, 1, 0.25f, 1, 1, -1};      // [4, 3]
  const std::vector<float> cv = {0.1f, -0.2f, 0.3f, -0.4f};
  const std::vector<float> scale = {1.0f, 2.0f, 0.5f, -1.0f}, bias = {0.0f, 0.5f, -0.5f, 0.25f};
  const std::vector<float> mean = {0.5f, -0.5f, 1.0f, 0.0f}, var = {1.0f, 3.0f, 0.25f, 2.0f};
  const float eps = 1e-3f;
  Graph g;
  TensorId a = addInput(g, "a", {2, 3});
  TensorId b = addConstant(g, "B", {4, 3}, bv);
  TensorId c = addConstant(g, "C", {4}, cv);
  TensorId h = addTensor(g, "h", {2, 4});
  TensorId n = addTensor(g, "n", {2, 4});
  TensorId y = addTensor(g, "y", {2, 4});
  Attributes ga;
  ga.set("alpha", 2.0f);
  ga.set("beta", 0.5f);
  ga.set("transB", int64_t{1});
  addNode(g, "fc", OpKind::Gemm, {a, b, c}, h, ga);
  Attributes ba;
  ba.set("epsilon", eps);
  addNode(g, "bn", OpKind::BatchNormalization,
          {h, addConstant(g, "scale", {4}, scale), addConstant(g, "bias", {4}, bias), addConstant(g, "mean", {4}, mean),
           addConstant(g, "var", {4}, var)},
          n, ba);
  addNode(g, "relu", OpKind::Relu, {n}, y);
  g.outputs = {y};
  auto r = compileIt(std::move(g), true);
  ASSERT_TRUE(r.ok()) << r.error().render();
  ASSERT_EQ(r->graph.nodes.size(), 1u);
  EXPECT_EQ(r->graph.nodes[0].op, OpKind::Gemm);
  EXPECT_TRUE(hasRemark(*r, "'relu' into 'fc'"));
  auto out = runOnHost(*r, {floatTensor("a", {2, 3}, av)});
  ASSERT_TRUE(out.ok()) << out.error().render();
  const std::vector<float> got = floats(out->at(0));
  ASSERT_EQ(got.size(), 8u);
  size_t clamped = 0;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j) {
      double s = 0;
      for (int k = 0; k < 3; ++k) s += double(av[size_t(i * 3 + k)]) * bv[size_t(j * 3 + k)];
      const double lin = 2.0 * s + 0.5 * cv[size_t(j)];
      const double bn = (lin - mean[size_t(j)]) * scale[size_t(j)] / std::sqrt(double(var[size_t(j)]) + eps) + bias[size_t(j)];
      const double want = bn < 0 ? 0 : bn;
      clamped += bn < 0 ? 1 : 0;
      EXPECT_NEAR(got[size_t(i * 4 + j)], want, 1e-5) << i << "," << j;
    }
  EXPECT_GT(clamped, 0u);
  EXPECT_LT(clamped, 8u);
}

TEST(FuseActivation, ARuleThatMovesDataThroughTheReluKeepsItApart) {
  // conv1 writes act_mem, conv2 reads l2_mem: relu1 is the move between the pools, so it must stay; relu2
  // is free to fuse (y is written by conv2 into act_mem, nothing asks otherwise).
  BoardFlags b;
  b.pools = {"name=l2_mem;size=64KiB;placement=user", "name=act_mem;size=64KiB;placement=user"};
  b.rules = {"op=Conv;inputs=l2_mem;outputs=act_mem"};
  auto r = compileIt(twoConvNet(), true, b);
  ASSERT_TRUE(r.ok()) << r.error().render();
  EXPECT_EQ(r->graph.nodes.size(), 3u);
  EXPECT_TRUE(hasRemark(*r, "Relu 'relu1' not fused into Conv 'conv1': the rules put 'c1' in [act_mem]")) << r->plan.remarks.back();
  EXPECT_TRUE(hasRemark(*r, "'r1' in [l2_mem]"));
  EXPECT_TRUE(hasRemark(*r, "--rule #1"));
  EXPECT_TRUE(hasRemark(*r, "1 Relu/Clip fused into the Conv, Gemm, Add, Sub or Mul before them (which clamps its outputs; --no-fuse keeps them apart): 'relu2' into 'conv2'"));
  auto ref = compileIt(twoConvNet(), false);
  ASSERT_TRUE(ref.ok());
  EXPECT_EQ(runIt(*r), runIt(*ref));
}

TEST(FuseActivation, ARuleOnTheActivationAloneKeepsItsNode) {
  // A rule naming the Relu would match nothing once the Relu is gone, so that pair stays apart; a rule that
  // matches the conv too ("*") still holds after fusion, so it does not block.
  BoardFlags b;
  b.pools = {"name=fast;size=64KiB;placement=user", "name=slow;size=64KiB;placement=user"};
  b.rules = {"node=relu1;outputs=slow", "op=*;outputs=fast,slow"};
  auto r = compileIt(twoConvNet(), true, b);
  ASSERT_TRUE(r.ok()) << r.error().render();
  EXPECT_TRUE(hasRemark(*r, "Relu 'relu1' not fused into Conv 'conv1': the rule at --rule #1 places the tensors of 'relu1'"))
      << r->plan.remarks.back();
  EXPECT_TRUE(hasRemark(*r, "'relu2' into 'conv2'"));
  const PlacedBuffer* r1 = nullptr;
  for (const PlacedBuffer& x : r->plan.buffers)
    if (r->graph.tensor(x.tensor).name == "r1") r1 = &x;
  ASSERT_NE(r1, nullptr);
  EXPECT_EQ(r->plan.board.pools[static_cast<size_t>(r1->slot.pool)].name, "slow");
}

TEST(FuseActivation, ARuleOnABatchNormalizationKeepsItUnfolded) {
  // conv1 -> bn -> relu1 ...: with a rule placing the BatchNormalization's outputs it stays a node of its own.
  auto withBn = [] {
    Graph g = twoConvNet();
    TensorId c1 = *g.findTensor("c1");
    TensorId nb = addTensor(g, "nb", {1, 4, 4, 4});
    for (Node& n : g.nodes)
      if (n.name == "relu1") n.inputs[0] = nb;
    Node bn;
    bn.name = "bn1";
    bn.op = OpKind::BatchNormalization;
    bn.inputs = {c1, addConstant(g, "s", {4}, {1, 2, 1, 2}), addConstant(g, "o", {4}, {0, 0.5f, 0, -0.5f}),
                 addConstant(g, "m", {4}, {0, 0, 1, 1}), addConstant(g, "v", {4}, {1, 1, 1, 1})};
    bn.outputs = {nb};
    g.nodes.insert(g.nodes.begin() + 1, bn);
    return g;
  };
  auto folded = compileIt(withBn(), true);
  ASSERT_TRUE(folded.ok()) << folded.error().render();
  EXPECT_EQ(folded->graph.nodes.size(), 2u) << "bn1 folded, both Relus fused";
  BoardFlags b;
  b.pools = {"name=fast;size=64KiB;placement=user", "name=slow;size=64KiB;placement=user"};
  b.rules = {"op=BatchNormalization;outputs=slow"};
  auto kept = compileIt(withBn(), true, b);
  ASSERT_TRUE(kept.ok()) << kept.error().render();
  bool hasBn = false;
  for (const Node& n : kept->graph.nodes) hasBn = hasBn || n.op == OpKind::BatchNormalization;
  EXPECT_TRUE(hasBn);
  // Same values as the folded graph up to the rounding folding changes.
  const std::vector<float> a = runIt(*kept), f = runIt(*folded);
  ASSERT_EQ(a.size(), f.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], f[i], 1e-4f) << i;
}

TEST(FuseActivation, APinOnTheConvOutputKeepsThePairApart) {
  BoardFlags b;
  b.pools = {"name=fast;size=64KiB;placement=user", "name=slow;size=64KiB;placement=user"};
  b.pins = {"c1=slow"};
  auto r = compileIt(twoConvNet(), true, b);
  ASSERT_TRUE(r.ok()) << r.error().render();
  EXPECT_TRUE(hasRemark(*r, "Relu 'relu1' not fused into Conv 'conv1': pin --pin c1=slow names tensor 'c1'"));
  EXPECT_TRUE(hasRemark(*r, "'relu2' into 'conv2'"));
  EXPECT_EQ(r->graph.nodes.size(), 3u);
}

const PlacedBuffer* bufferNamed(const CompileResult& r, const std::string& name) {
  for (const PlacedBuffer& b : r.plan.buffers)
    if (r.graph.tensor(b.tensor).name == name) return &b;
  return nullptr;
}

TEST(FuseActivation, APinOnTheReluOutputFusesWhenTheConvsRulesAllowItsPool) {
  BoardFlags b;
  b.pools = {"name=fast;size=64KiB;placement=user", "name=slow;size=64KiB;placement=user"};
  b.rules = {"node=conv1;outputs=fast"};
  b.pins = {"r1=slow"};
  auto r = compileIt(twoConvNet(), true, b);
  ASSERT_TRUE(r.ok()) << r.error().render();
  EXPECT_TRUE(hasRemark(*r, "Relu 'relu1' not fused into Conv 'conv1': pin --pin r1=slow puts 'r1' in pool 'slow', which the rules over 'c1' do not allow"))
      << r->plan.remarks.back();
  EXPECT_TRUE(hasRemark(*r, "'relu2' into 'conv2'"));

  b.pins = {"r1=fast"};
  auto ok = compileIt(twoConvNet(), true, b);
  ASSERT_TRUE(ok.ok()) << ok.error().render();
  EXPECT_TRUE(hasRemark(*ok, "2 Relu/Clip fused"));
  const PlacedBuffer* r1 = bufferNamed(*ok, "r1");
  ASSERT_NE(r1, nullptr);
  EXPECT_EQ(ok->plan.board.pools[static_cast<size_t>(r1->slot.pool)].name, "fast");
}

}  // namespace
}  // namespace stowage
