// pass/FoldBatchNorm: Conv + BatchNormalization folding, numerically and in its bail-out cases.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "stowage/ir/Verifier.h"
#include "stowage/pass/FoldBatchNorm.h"

namespace stowage {
namespace {

TensorId constant(Graph& g, const std::string& name, Shape s, std::vector<float> v) {
  Tensor t;
  t.name = name;
  t.shape = std::move(s);
  t.kind = TensorKind::Constant;
  t.data.resize(v.size() * 4);
  std::memcpy(t.data.data(), v.data(), t.data.size());
  return g.addTensor(t);
}

TensorId activation(Graph& g, const std::string& name, Shape s) {
  Tensor t;
  t.name = name;
  t.shape = std::move(s);
  return g.addTensor(t);
}

/// x[1,1,2,2] -> Conv(w [2,1,1,1] = {2, 3}, no bias) -> BN(scale {1, 2}, B {0.5, 0}, mean {1, 0}, var {3, 0}) -> y
Graph convBn(bool convOutputAlsoGraphOutput) {
  Graph g;
  Tensor x;
  x.name = "x";
  x.shape = {1, 1, 2, 2};
  x.kind = TensorKind::Input;
  g.inputs.push_back(g.addTensor(x));
  auto w = constant(g, "w", {2, 1, 1, 1}, {2, 3});
  auto c = activation(g, "c", {1, 2, 2, 2});
  Node conv;
  conv.name = "conv";
  conv.op = OpKind::Conv;
  conv.inputs = {g.inputs[0], w};
  conv.outputs = {c};
  conv.attrs.set("strides", std::vector<int64_t>{1, 1});
  conv.attrs.set("pads", std::vector<int64_t>{0, 0, 0, 0});
  conv.attrs.set("dilations", std::vector<int64_t>{1, 1});
  conv.attrs.set("group", int64_t{1});
  g.addNode(conv);
  Node bn;
  bn.name = "bn";
  bn.op = OpKind::BatchNormalization;
  bn.inputs = {c, constant(g, "scale", {2}, {1, 2}), constant(g, "bias", {2}, {0.5f, 0}), constant(g, "mean", {2}, {1, 0}),
               constant(g, "var", {2}, {3, 0})};
  bn.attrs.set("epsilon", 1.0f);
  bn.outputs = {activation(g, "y", {1, 2, 2, 2})};
  g.addNode(bn);
  g.outputs.push_back(bn.outputs[0]);
  if (convOutputAlsoGraphOutput) g.outputs.push_back(c);
  return g;
}

TEST(FoldBatchNorm, FoldsIntoWeightsAndCreatesABias) {
  Graph g = convBn(false);
  ASSERT_TRUE(verifyGraph(g).ok());
  ASSERT_TRUE(foldBatchNorm(g).ok());
  ASSERT_EQ(g.nodes.size(), 1u);
  ASSERT_TRUE(verifyGraph(g).ok()) << verifyGraph(g).error().render();
  const Node& conv = g.nodes[0];
  EXPECT_EQ(g.tensor(conv.outputs[0]).name, "y");
  // s = scale / sqrt(var + eps) = {1/2, 2/1}; W' = {2*0.5, 3*2}; B' = (0 - mean) * s + bias = {-0.5+0.5, 0}.
  const float* w = g.tensor(conv.inputs[1]).dataAs<float>();
  EXPECT_FLOAT_EQ(w[0], 1.0f);
  EXPECT_FLOAT_EQ(w[1], 6.0f);
  ASSERT_NE(conv.input(2), kNoTensor);
  const float* b = g.tensor(conv.inputs[2]).dataAs<float>();
  EXPECT_FLOAT_EQ(b[0], 0.0f);
  EXPECT_FLOAT_EQ(b[1], 0.0f);
}

TEST(FoldBatchNorm, BailsOutWhenTheConvOutputHasAnotherReader) {
  // Negative case: the conv output is also a graph output, so it must keep its value.
  Graph g = convBn(true);
  ASSERT_TRUE(foldBatchNorm(g).ok());
  EXPECT_EQ(g.nodes.size(), 2u);
  EXPECT_TRUE(verifyGraph(g).ok());
}

TEST(FoldBatchNorm, BailsOutOnNonConstantParameters) {
  // Negative case: the BN scale is a graph input.
  Graph g = convBn(false);
  g.tensor(g.nodes[1].inputs[1]).kind = TensorKind::Input;
  g.inputs.push_back(g.nodes[1].inputs[1]);
  g.tensor(g.nodes[1].inputs[1]).data.clear();
  ASSERT_TRUE(foldBatchNorm(g).ok());
  EXPECT_EQ(g.nodes.size(), 2u);
}

}  // namespace
}  // namespace stowage
