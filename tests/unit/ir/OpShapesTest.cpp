// Shape rules (ir/OpShapes.cpp), MAC counts (ir/OpCost.cpp), the printer and the verifier on hand-built graphs.
#include <gtest/gtest.h>

#include "stowage/ir/Graph.h"
#include "stowage/ir/Op.h"
#include "stowage/ir/Printer.h"
#include "stowage/ir/Verifier.h"

namespace stowage {
namespace {

TensorId addInput(Graph& g, const std::string& name, Shape s) {
  Tensor t;
  t.name = name;
  t.shape = std::move(s);
  t.kind = TensorKind::Input;
  TensorId id = g.addTensor(t);
  g.inputs.push_back(id);
  return id;
}

TensorId addConst(Graph& g, const std::string& name, Shape s) {
  Tensor t;
  t.name = name;
  t.shape = std::move(s);
  t.kind = TensorKind::Constant;
  t.data.assign(t.byteSize(), 0);
  return g.addTensor(t);
}

Node makeNode(OpKind op, std::vector<TensorId> ins, Attributes a = {}) {
  Node n;
  n.name = "n1";
  n.op = op;
  n.inputs = std::move(ins);
  n.attrs = std::move(a);
  return n;
}

Shape shapeOf(const Graph& g, const Node& n) {
  auto r = inferOutputShapes(g, n);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().render());
  return r.ok() ? r->front() : Shape{};
}

TEST(OpShapes, ConvWithPadsStridesDilationsAndGroups) {
  Graph g;
  auto x = addInput(g, "x", {1, 4, 10, 12});
  auto w = addConst(g, "w", {8, 2, 3, 3});
  Attributes a;
  a.set("strides", std::vector<int64_t>{2, 1});
  a.set("pads", std::vector<int64_t>{1, 0, 1, 0});
  a.set("dilations", std::vector<int64_t>{1, 2});
  a.set("group", int64_t{2});
  Node n = makeNode(OpKind::Conv, {x, w}, a);
  // H: (10 + 2 - 3) / 2 + 1 = 5; W: (12 - 5) / 1 + 1 = 8
  EXPECT_EQ(shapeOf(g, n), (Shape{1, 8, 5, 8}));
}

TEST(OpShapes, ConvChannelMismatchNamesTheNode) {
  // Negative case: 3 input channels but the weight expects 2 x group 1.
  Graph g;
  auto x = addInput(g, "x", {1, 3, 8, 8});
  auto w = addConst(g, "w", {4, 2, 3, 3});
  Node n = makeNode(OpKind::Conv, {x, w});
  n.name = "conv1";
  auto r = inferOutputShapes(g, n);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().location.find("node 'conv1' (Conv)"), std::string::npos);
  EXPECT_NE(r.error().message.find("3 channels"), std::string::npos);
}

TEST(OpShapes, ConvTransposeOutputPaddingAndGroups) {
  Graph g;
  auto x = addInput(g, "x", {1, 4, 3, 3});
  auto w = addConst(g, "w", {4, 3, 3, 3});
  Attributes a;
  a.set("strides", std::vector<int64_t>{2, 2});
  a.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  a.set("output_padding", std::vector<int64_t>{1, 0});
  a.set("group", int64_t{2});
  // (3-1)*2 + 3 - 2 + outpad = 5 + {1, 0}
  EXPECT_EQ(shapeOf(g, makeNode(OpKind::ConvTranspose, {x, w}, a)), (Shape{1, 6, 6, 5}));
}

TEST(OpShapes, PoolCeilModeDropsWindowStartingInEndPadding) {
  Graph g;
  auto x = addInput(g, "x", {1, 1, 5, 6});
  Attributes a;
  a.set("kernel_shape", std::vector<int64_t>{2, 2});
  a.set("strides", std::vector<int64_t>{2, 2});
  a.set("ceil_mode", int64_t{1});
  // H: ceil((5-2)/2)+1 = 3 (last window starts at 4 < 5: kept); W: ceil(4/2)+1 = 3.
  EXPECT_EQ(shapeOf(g, makeNode(OpKind::MaxPool, {x}, a)), (Shape{1, 1, 3, 3}));
  // With pads [0,1] on W and stride 3 over 4 columns: ceil((4+1-2)/3)+1 = 2, and the second window starts at 3 < 4.
  Graph g2;
  auto x2 = addInput(g2, "x", {1, 1, 4, 4});
  Attributes b;
  b.set("kernel_shape", std::vector<int64_t>{2, 2});
  b.set("strides", std::vector<int64_t>{2, 2});
  b.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  b.set("ceil_mode", int64_t{1});
  // ceil((4+2-2)/2)+1 = 3; last window starts at 2*2 = 4 < 4+1: kept.
  EXPECT_EQ(shapeOf(g2, makeNode(OpKind::AveragePool, {x2}, b)), (Shape{1, 1, 3, 3}));
  // in 3, k 2, s 2, pads 1/1: ceil((3+2-2)/2)+1 = 3; the last window would start at 4 >= 3+1: dropped -> 2.
  Graph g3;
  auto x3 = addInput(g3, "x", {1, 1, 3, 3});
  EXPECT_EQ(shapeOf(g3, makeNode(OpKind::MaxPool, {x3}, b)), (Shape{1, 1, 2, 2}));
  b.set("ceil_mode", int64_t{0});
  EXPECT_EQ(shapeOf(g3, makeNode(OpKind::MaxPool, {x3}, b)), (Shape{1, 1, 2, 2}));
}

TEST(OpShapes, BroadcastAndItsError) {
  Graph g;
  auto a = addInput(g, "a", {2, 1, 4});
  auto b = addInput(g, "b", {3, 1});
  EXPECT_EQ(shapeOf(g, makeNode(OpKind::Add, {a, b})), (Shape{2, 3, 4}));
  auto c = addInput(g, "c", {5});
  // Negative case: 4 vs 5 in the last dim.
  auto r = inferOutputShapes(g, makeNode(OpKind::Mul, {a, c}));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("do not broadcast"), std::string::npos);
}

TEST(OpShapes, GemmMatMulAndTheirMacs) {
  Graph g;
  auto a = addInput(g, "a", {5, 3});
  auto b = addConst(g, "b", {4, 3});
  Attributes t;
  t.set("transB", int64_t{1});
  Node gemm = makeNode(OpKind::Gemm, {a, b}, t);
  EXPECT_EQ(shapeOf(g, gemm), (Shape{5, 4}));
  auto m1 = addInput(g, "m1", {2, 1, 5, 3});
  auto m2 = addInput(g, "m2", {4, 3, 7});
  Node mm = makeNode(OpKind::MatMul, {m1, m2});
  EXPECT_EQ(shapeOf(g, mm), (Shape{2, 4, 5, 7}));
  // MACs need the output tensor in the graph.
  Tensor out;
  out.name = "mmout";
  out.shape = {2, 4, 5, 7};
  mm.outputs.push_back(g.addTensor(out));
  EXPECT_EQ(macCount(g, mm), 2 * 4 * 5 * 7 * 3);
  // Negative case: inner dims 3 vs 4.
  auto bad = addInput(g, "bad", {4, 2});
  EXPECT_FALSE(inferOutputShapes(g, makeNode(OpKind::MatMul, {a, bad})).ok());
}

TEST(OpShapes, ConvMacs) {
  Graph g;
  auto x = addInput(g, "x", {1, 4, 8, 8});
  auto w = addConst(g, "w", {6, 2, 3, 3});
  Attributes a;
  a.set("group", int64_t{2});
  a.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  Node n = makeNode(OpKind::Conv, {x, w}, a);
  Tensor out;
  out.name = "y";
  out.shape = shapeOf(g, n);
  n.outputs.push_back(g.addTensor(out));
  EXPECT_EQ(macCount(g, n), 1 * 6 * 8 * 8 * 2 * 9);
}

TEST(OpShapes, LayoutOps) {
  Graph g;
  auto x = addInput(g, "x", {2, 3, 4});
  Attributes r;
  r.set("shape", std::vector<int64_t>{6, 4});
  EXPECT_EQ(shapeOf(g, makeNode(OpKind::Reshape, {x}, r)), (Shape{6, 4}));
  r.set("shape", std::vector<int64_t>{5, 5});
  EXPECT_FALSE(inferOutputShapes(g, makeNode(OpKind::Reshape, {x}, r)).ok()) << "element count differs";
  Attributes t;
  t.set("perm", std::vector<int64_t>{2, 0, 1});
  EXPECT_EQ(shapeOf(g, makeNode(OpKind::Transpose, {x}, t)), (Shape{4, 2, 3}));
  t.set("perm", std::vector<int64_t>{0, 0, 1});
  EXPECT_FALSE(inferOutputShapes(g, makeNode(OpKind::Transpose, {x}, t)).ok()) << "not a permutation";
  Attributes s;
  s.set("starts", std::vector<int64_t>{0, 2, 3});
  s.set("ends", std::vector<int64_t>{2, 0, -1});
  s.set("steps", std::vector<int64_t>{1, -1, -2});
  EXPECT_EQ(shapeOf(g, makeNode(OpKind::Slice, {x}, s)), (Shape{2, 2, 2}));
  Attributes p;
  p.set("pads", std::vector<int64_t>{0, 1, 2, 0, 1, 2});
  EXPECT_EQ(shapeOf(g, makeNode(OpKind::Pad, {x}, p)), (Shape{2, 5, 8}));
  Attributes red;
  red.set("axes", std::vector<int64_t>{0, 2});
  red.set("keepdims", int64_t{0});
  EXPECT_EQ(shapeOf(g, makeNode(OpKind::ReduceMean, {x}, red)), (Shape{3}));
  red.set("axes", std::vector<int64_t>{2, 0});
  EXPECT_FALSE(inferOutputShapes(g, makeNode(OpKind::ReduceMean, {x}, red)).ok()) << "axes must be sorted";
  auto y = addInput(g, "y", {2, 5, 4});
  Attributes c;
  c.set("axis", int64_t{1});
  EXPECT_EQ(shapeOf(g, makeNode(OpKind::Concat, {x, y}, c)), (Shape{2, 8, 4}));
  c.set("axis", int64_t{2});
  EXPECT_FALSE(inferOutputShapes(g, makeNode(OpKind::Concat, {x, y}, c)).ok()) << "dim 1 differs";
  Attributes e;
  e.set("shape", std::vector<int64_t>{5, 2, 3, 4});
  EXPECT_EQ(shapeOf(g, makeNode(OpKind::Expand, {x}, e)), (Shape{5, 2, 3, 4}));
  auto img = addInput(g, "img", {1, 3, 7, 5});
  EXPECT_EQ(shapeOf(g, makeNode(OpKind::GlobalAveragePool, {img})), (Shape{1, 3, 1, 1}));
}

TEST(OpShapes, WrongArityIsAnError) {
  Graph g;
  auto x = addInput(g, "x", {2});
  EXPECT_FALSE(inferOutputShapes(g, makeNode(OpKind::Add, {x})).ok());
}

Graph smallGraph() {
  Graph g;
  g.name = "small";
  auto x = addInput(g, "x", {1, 4});
  auto w = addConst(g, "w", {4, 2});
  Tensor h;
  h.name = "h";
  h.shape = {1, 2};
  Node mm = makeNode(OpKind::MatMul, {x, w});
  mm.name = "mm";
  mm.outputs.push_back(g.addTensor(h));
  g.addNode(mm);
  Tensor y;
  y.name = "y";
  y.shape = {1, 2};
  Node relu = makeNode(OpKind::Relu, {mm.outputs[0]});
  relu.name = "relu";
  relu.outputs.push_back(g.addTensor(y));
  g.addNode(relu);
  g.outputs.push_back(relu.outputs[0]);
  return g;
}

TEST(Printer, PrintsInputsConstantsNodesAndOutputs) {
  Graph g = smallGraph();
  std::string text = printGraph(g);
  EXPECT_NE(text.find("graph \"small\" (2 nodes, 4 tensors)"), std::string::npos) << text;
  EXPECT_NE(text.find("  input  %x: f32[1x4]"), std::string::npos) << text;
  EXPECT_NE(text.find("  const  %w: f32[4x2] (32 B)"), std::string::npos) << text;
  EXPECT_NE(text.find("  %h: f32[1x2] = MatMul(%x, %w)  # mm"), std::string::npos) << text;
  EXPECT_NE(text.find("  output %y"), std::string::npos) << text;
  EXPECT_EQ(text, printGraph(smallGraph())) << "printing is deterministic";
}

TEST(Verifier, AcceptsAValidGraph) { EXPECT_TRUE(verifyGraph(smallGraph()).ok()); }

TEST(Verifier, CatchesScheduleOrder) {
  // Negative case: relu runs before the matmul that produces its input.
  Graph g = smallGraph();
  std::swap(g.nodes[0], g.nodes[1]);
  auto s = verifyGraph(g);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("schedule order"), std::string::npos);
}

TEST(Verifier, CatchesWrongOutputShape) {
  // Negative case: the stored shape of h disagrees with MatMul's rule.
  Graph g = smallGraph();
  g.tensor(g.nodes[0].outputs[0]).shape = {1, 3};
  EXPECT_FALSE(verifyGraph(g).ok());
}

TEST(Verifier, CatchesConstantSizeMismatch) {
  // Negative case: the weight lost its bytes.
  Graph g = smallGraph();
  g.tensor(*g.findTensor("w")).data.clear();
  EXPECT_FALSE(verifyGraph(g).ok());
}

TEST(Verifier, CatchesUnproducedOutput) {
  // Negative case: the graph output has no producer.
  Graph g = smallGraph();
  g.nodes.pop_back();
  EXPECT_FALSE(verifyGraph(g).ok());
}

}  // namespace
}  // namespace stowage
