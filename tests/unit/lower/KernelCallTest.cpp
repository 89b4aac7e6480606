// Kernel lowering: the parameters KernelCall derives from canonical IR attributes, op by op.
#include <gtest/gtest.h>

#include "../codegen/TestGraphs.h"
#include "stowage/lower/KernelCall.h"

namespace stowage {
namespace {

using namespace stowage::testing;

KernelCall lowerOne(const Graph& g, size_t node = 0) {
  auto calls = lowerNode(g, g.nodes[node]);
  EXPECT_TRUE(calls.ok()) << (calls.ok() ? "" : calls.error().render());
  EXPECT_EQ(calls->size(), 1u);
  return calls->at(0);
}

/// The single call's parameters, by value.
template <typename T>
T lowerAs(const Graph& g) {
  return std::get<T>(lowerOne(g).params);
}

TEST(KernelCall, Conv1dBecomes2dWithUnitHeight) {
  Graph g;
  TensorId x = addInput(g, "x", {1, 2, 10});
  TensorId w = addConstant(g, "w", {4, 2, 3}, std::vector<float>(24, 1.0f));
  TensorId y = addTensor(g, "y", {1, 4, 5});
  Attributes a;
  a.set("strides", std::vector<int64_t>{2});
  a.set("pads", std::vector<int64_t>{1, 0});
  a.set("dilations", std::vector<int64_t>{1});
  a.set("group", int64_t{1});
  addNode(g, "conv", OpKind::Conv, {x, w}, y, a);
  KernelCall c = lowerOne(g);
  EXPECT_EQ(kernelFunctionName(c), "stowage_conv2d_f32");
  const auto& p = std::get<ConvCall>(c.params).params;
  EXPECT_EQ(p.h, 1);
  EXPECT_EQ(p.kh, 1);
  EXPECT_EQ(p.oh, 1);
  EXPECT_EQ(p.w, 10);
  EXPECT_EQ(p.kw, 3);
  EXPECT_EQ(p.ow, 5);
  EXPECT_EQ(p.stride_w, 2);
  EXPECT_EQ(p.pad_left, 1);
  EXPECT_EQ(p.m, 4);
  ASSERT_EQ(c.inputs.size(), 3u);
  EXPECT_EQ(c.inputs[2], kNoTensor);  // no bias: NULL
}

TEST(KernelCall, TransposeIsAStridedGather) {
  Graph g;
  TensorId x = addInput(g, "x", {2, 3, 4});
  TensorId y = addTensor(g, "y", {4, 2, 3});
  Attributes a;
  a.set("perm", std::vector<int64_t>{2, 0, 1});
  addNode(g, "t", OpKind::Transpose, {x}, y, a);
  KernelCall c = lowerOne(g);
  const auto& p = std::get<GatherCall>(c.params).params;
  // Output dims 0 and 1,2 of the input: dims (2,3) stay contiguous and merge into one of 6 with stride 4.
  ASSERT_EQ(p.rank, 2);
  EXPECT_EQ(p.out_shape[0], 4);
  EXPECT_EQ(p.out_shape[1], 6);
  EXPECT_EQ(p.in_stride[0], 1);
  EXPECT_EQ(p.in_stride[1], 4);
  EXPECT_EQ(std::get<GatherCall>(c.params).elemSize, 4u);
}

TEST(KernelCall, SliceOffsetAndNegativeStep) {
  Graph g;
  TensorId x = addInput(g, "x", {4, 5});
  TensorId y = addTensor(g, "y", {2, 2});
  Attributes a;
  a.set("starts", std::vector<int64_t>{1, 4});
  a.set("ends", std::vector<int64_t>{3, 0});
  a.set("steps", std::vector<int64_t>{1, -2});
  addNode(g, "s", OpKind::Slice, {x}, y, a);
  const auto p = lowerAs<GatherCall>(g).params;
  EXPECT_EQ(p.in_offset, 1 * 5 + 4);
  EXPECT_EQ(p.in_stride[0], 5);
  EXPECT_EQ(p.in_stride[1], -2);
}

TEST(KernelCall, ConcatGivesOneCallPerInput) {
  Graph g;
  TensorId a = addInput(g, "a", {2, 3, 4});
  TensorId b = addInput(g, "b", {2, 1, 4});
  TensorId y = addTensor(g, "y", {2, 4, 4});
  Attributes at;
  at.set("axis", int64_t{1});
  addNode(g, "cat", OpKind::Concat, {a, b}, y, at);
  auto calls = lowerNode(g, g.nodes[0]);
  ASSERT_TRUE(calls.ok());
  ASSERT_EQ(calls->size(), 2u);
  const auto& c0 = std::get<ConcatPartCall>(calls->at(0).params);
  const auto& c1 = std::get<ConcatPartCall>(calls->at(1).params);
  EXPECT_EQ(c0.outer, 2);
  EXPECT_EQ(c0.inBlock, 12);
  EXPECT_EQ(c0.outBlock, 16);
  EXPECT_EQ(c0.outOffset, 0);
  EXPECT_EQ(c1.inBlock, 4);
  EXPECT_EQ(c1.outOffset, 12);
}

TEST(KernelCall, BinaryBroadcastStrides) {
  Graph g;
  TensorId a = addInput(g, "a", {2, 3, 4});
  TensorId b = addInput(g, "b", {3, 1});
  TensorId y = addTensor(g, "y", {2, 3, 4});
  addNode(g, "add", OpKind::Add, {a, b}, y);
  const auto c = lowerAs<BinaryCall>(g);
  EXPECT_EQ(c.op, STOWAGE_BINARY_ADD);
  ASSERT_EQ(c.params.rank, 3);
  EXPECT_EQ(c.params.a_stride[0], 12);
  EXPECT_EQ(c.params.b_stride[0], 0);  // b broadcasts over dim 0
  EXPECT_EQ(c.params.b_stride[1], 1);
  EXPECT_EQ(c.params.b_stride[2], 0);  // and over the last dim
}

TEST(KernelCall, MatMulBatchBroadcastAndVectorOperand) {
  Graph g;
  TensorId a = addInput(g, "a", {5, 2, 3});
  TensorId b = addInput(g, "b", {3});
  TensorId y = addTensor(g, "y", {5, 2});
  addNode(g, "mm", OpKind::MatMul, {a, b}, y);
  const auto p = lowerAs<MatMulCall>(g).params;
  EXPECT_EQ(p.m, 2);
  EXPECT_EQ(p.k, 3);
  EXPECT_EQ(p.n, 1);
  ASSERT_EQ(p.batch_rank, 1);
  EXPECT_EQ(p.batch_shape[0], 5);
  EXPECT_EQ(p.a_stride[0], 6);
  EXPECT_EQ(p.b_stride[0], 0);
}

TEST(KernelCall, SoftmaxAxisAndCoerce2d) {
  for (int coerce : {0, 1}) {
    Graph g;
    TensorId x = addInput(g, "x", {2, 3, 4});
    TensorId y = addTensor(g, "y", {2, 3, 4});
    Attributes a;
    a.set("axis", int64_t{1});
    a.set("coerce2d", int64_t{coerce});
    addNode(g, "sm", OpKind::Softmax, {x}, y, a);
    const auto c = lowerAs<SoftmaxCall>(g);
    EXPECT_EQ(c.outer, 2);
    EXPECT_EQ(c.len, coerce ? 12 : 3);
    EXPECT_EQ(c.inner, coerce ? 1 : 4);
  }
}

TEST(KernelCall, GemmBiasBroadcast) {
  Graph g;
  TensorId a = addInput(g, "a", {4, 3});
  TensorId b = addConstant(g, "b", {5, 3}, std::vector<float>(15, 0.5f));
  TensorId c = addConstant(g, "c", {5}, std::vector<float>(5, 1.0f));
  TensorId y = addTensor(g, "y", {4, 5});
  Attributes at;
  at.set("transB", int64_t{1});
  at.set("alpha", 2.0f);
  addNode(g, "fc", OpKind::Gemm, {a, b, c}, y, at);
  const auto p = lowerAs<GemmCall>(g).params;
  EXPECT_EQ(p.m, 4);
  EXPECT_EQ(p.n, 5);
  EXPECT_EQ(p.k, 3);
  EXPECT_EQ(p.trans_b, 1);
  EXPECT_EQ(p.c_rows, 1);
  EXPECT_EQ(p.c_cols, 5);
  EXPECT_EQ(p.alpha, 2.0f);
  EXPECT_EQ(p.beta, 1.0f);
}

TEST(KernelCall, MaxPoolPads) {
  Graph g;
  TensorId x = addInput(g, "x", {1, 1, 5, 5});
  TensorId y = addTensor(g, "y", {1, 1, 3, 3});
  Attributes a;
  a.set("kernel_shape", std::vector<int64_t>{3, 3});
  a.set("strides", std::vector<int64_t>{2, 2});
  a.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  addNode(g, "pool", OpKind::MaxPool, {x}, y, a);
  KernelCall c = lowerOne(g);
  EXPECT_EQ(kernelFunctionName(c), "stowage_maxpool2d_f32");
  const auto& p = std::get<PoolCall>(c.params).params;
  EXPECT_EQ(p.pad_top, 1);
  EXPECT_EQ(p.pad_bottom, 1);
  EXPECT_EQ(p.stride_h, 2);
  EXPECT_EQ(p.oh, 3);
}

TEST(KernelCall, NonFloatConvIsUnsupported) {
  // Negative case: the conv kernel is float32 only; an int8 conv is valid ONNX but unsupported.
  Graph g;
  TensorId x = addTensor(g, "x", {1, 1, 4, 4}, TensorKind::Input, DType::Int8);
  g.inputs.push_back(x);
  TensorId w = addTensor(g, "w", {1, 1, 1, 1}, TensorKind::Constant, DType::Int8);
  g.tensor(w).data = {1};
  TensorId y = addTensor(g, "y", {1, 1, 4, 4}, TensorKind::Activation, DType::Int8);
  addNode(g, "qconv", OpKind::Conv, {x, w}, y);
  auto calls = lowerNode(g, g.nodes[0]);
  ASSERT_FALSE(calls.ok());
  EXPECT_TRUE(calls.error().unsupported);
  EXPECT_NE(calls.error().location.find("qconv"), std::string::npos);
}

TEST(KernelCall, ReshapeIsACopyAndExecutes) {
  Graph g;
  TensorId x = addInput(g, "x", {2, 3});
  TensorId y = addTensor(g, "y", {3, 2});
  Attributes a;
  a.set("shape", std::vector<int64_t>{3, 2});
  addNode(g, "r", OpKind::Reshape, {x}, y, a);
  KernelCall c = lowerOne(g);
  EXPECT_EQ(kernelFunctionName(c), "memcpy");
  float in[6] = {1, 2, 3, 4, 5, 6}, out[6] = {};
  executeKernelCall(c, {in}, out);
  EXPECT_EQ(out[5], 6.0f);
}

}  // namespace
}  // namespace stowage
