// ONNX importer on small models built in code: op mapping with canonical attributes, auto_pad, opset
// variants, ONNX-level constant folding, graph-output fix-ups and the diagnostics for bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "ImportTestUtil.h"
#include "OnnxTestModels.h"
#include "stowage/frontend/OnnxImporter.h"
#include "stowage/frontend/OnnxTensor.h"
#include "stowage/ir/Printer.h"
#include "stowage/ir/Verifier.h"

namespace stowage {
namespace {

using test::ModelBuilder;
using test::findNode;
using test::importFails;
using test::importOk;

Shape outputShape(const Graph& g, size_t i = 0) { return g.outputs.size() > i ? g.tensor(g.outputs[i]).shape : Shape{}; }

TEST(OnnxImporter, ConvSameUpperTakesKernelFromWeightAndMakesPadsExplicit) {
  ModelBuilder m(13);
  m.input("x", {1, 2, 7, 7}).floatInit("w", {4, 2, 3, 3}).output("y");
  auto& n = m.node("Conv", {"x", "w"}, {"y"}, "conv1");
  ModelBuilder::attr(n, "auto_pad", std::string("SAME_UPPER"));
  ModelBuilder::attr(n, "strides", std::vector<int64_t>{2, 2});
  Graph g = importOk(m);
  const Node* conv = findNode(g, OpKind::Conv);
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->name, "conv1");
  // out = ceil(7/2) = 4; total pad = (4-1)*2 + 3 - 7 = 2 -> 1 begin, 1 end.
  EXPECT_EQ(conv->attrs.getInts("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(conv->attrs.getInts("dilations"), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(conv->attrs.getInt("group", -1), 1);
  EXPECT_EQ(outputShape(g), (Shape{1, 4, 4, 4}));
}

TEST(OnnxImporter, ConvSameLowerPutsTheOddPixelFirst) {
  ModelBuilder m(11);
  m.input("x", {1, 1, 5, 5}).floatInit("w", {1, 1, 4, 4}).output("y");
  auto& n = m.node("Conv", {"x", "w"}, {"y"});
  ModelBuilder::attr(n, "auto_pad", std::string("SAME_LOWER"));
  ModelBuilder::attr(n, "strides", std::vector<int64_t>{2, 2});
  Graph g = importOk(m);
  // out 3, total = 2*2 + 4 - 5 = 3: begin 2, end 1.
  EXPECT_EQ(findNode(g, OpKind::Conv)->attrs.getInts("pads"), (std::vector<int64_t>{2, 2, 1, 1}));
  EXPECT_EQ(findNode(g, OpKind::Conv)->name, "Conv_0") << "unnamed nodes get <op>_<index>";
}

TEST(OnnxImporter, SoftmaxDefaultsDependOnOpset) {
  for (int64_t opset : {11, 13}) {
    ModelBuilder m(opset);
    m.input("x", {2, 3, 4}).output("y");
    m.node("Softmax", {"x"}, {"y"});
    Graph g = importOk(m);
    const Node* s = findNode(g, OpKind::Softmax);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->attrs.getInt("axis", -1), opset < 13 ? 1 : 2) << "opset " << opset;
    EXPECT_EQ(s->attrs.getInt("coerce2d", -1), opset < 13 ? 1 : 0) << "opset " << opset;
  }
}

TEST(OnnxImporter, ClipBoundsFromAttributesBeforeOpset11AndInputsAfter) {
  ModelBuilder old(6);
  old.input("x", {4}).output("y");
  auto& n = old.node("Clip", {"x"}, {"y"});
  ModelBuilder::attr(n, "min", 0.0f);
  Graph g = importOk(old);
  EXPECT_EQ(findNode(g, OpKind::Clip)->attrs.getFloat("min", -1), 0.0f);
  EXPECT_TRUE(std::isinf(findNode(g, OpKind::Clip)->attrs.getFloat("max", 0))) << "absent max is +inf";

  ModelBuilder m(13);
  m.input("x", {4}).output("y");
  auto* t = m.proto().mutable_graph()->add_initializer();
  t->set_name("hi");
  t->set_data_type(onnx::TensorProto_DataType_FLOAT);
  t->add_float_data(6.0f);
  m.node("Clip", {"x", "", "hi"}, {"y"});
  Graph g2 = importOk(m);
  EXPECT_EQ(findNode(g2, OpKind::Clip)->attrs.getFloat("max", 0), 6.0f);
  EXPECT_TRUE(std::isinf(findNode(g2, OpKind::Clip)->attrs.getFloat("min", 0)));
}

TEST(OnnxImporter, FoldsShapeGatherUnsqueezeConcatIntoReshape) {
  ModelBuilder m(13);
  m.input("x", {2, 3, 4}).output("y");
  m.intInit("zero", {0}, /*scalar=*/true).intInit("axes0", {0}).intInit("minus1", {-1});
  m.node("Shape", {"x"}, {"s"});
  m.node("Gather", {"s", "zero"}, {"batch"});
  m.node("Unsqueeze", {"batch", "axes0"}, {"batch1"});
  m.node("Concat", {"batch1", "minus1"}, {"target"}).add_attribute()->CopyFrom([] {
    onnx::AttributeProto a;
    a.set_name("axis");
    a.set_type(onnx::AttributeProto_AttributeType_INT);
    a.set_i(0);
    return a;
  }());
  m.node("Reshape", {"x", "target"}, {"y"});
  Graph g = importOk(m);
  ASSERT_EQ(g.nodes.size(), 1u) << printGraph(g);
  EXPECT_EQ(g.nodes[0].op, OpKind::Reshape);
  EXPECT_EQ(g.nodes[0].attrs.getInts("shape"), (std::vector<int64_t>{2, 12}));
  for (const Tensor& t : g.tensors) EXPECT_NE(t.dtype, DType::Int64) << "no int64 tensor survives: " << t.name;
}

TEST(OnnxImporter, FoldsConstantOfShapeWeights) {
  ModelBuilder m(13);
  m.input("x", {1, 4}).intInit("wshape", {4, 3}).output("y");
  auto& c = m.node("ConstantOfShape", {"wshape"}, {"w"});
  auto* a = c.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto_AttributeType_TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto_DataType_FLOAT);
  a->mutable_t()->add_dims(1);
  a->mutable_t()->add_float_data(0.25f);
  m.node("MatMul", {"x", "w"}, {"y"});
  Graph g = importOk(m);
  ASSERT_EQ(g.nodes.size(), 1u);
  const Tensor& w = g.tensor(g.nodes[0].inputs[1]);
  ASSERT_TRUE(w.isConstant());
  EXPECT_EQ(w.shape, (Shape{4, 3}));
  EXPECT_EQ(w.dataAs<float>()[11], 0.25f);
  EXPECT_EQ(outputShape(g), (Shape{1, 3}));
}

TEST(OnnxImporter, ConstantsLargerThanTheFoldLimitAreAnError) {
  // ConstantOfShape of 64 x 64 = 4,096 elements: folded by default, refused under a limit of 1,024 (the fuzz target
  // lowers the limit so that no input spends seconds filling one constant).
  ModelBuilder m(13);
  m.input("x", {1, 64}).intInit("wshape", {64, 64}).output("y");
  m.node("ConstantOfShape", {"wshape"}, {"w"});
  m.node("MatMul", {"x", "w"}, {"y"});
  EXPECT_EQ(importOk(m).nodes.size(), 1u);
  OnnxImportOptions small;
  small.maxFoldElements = 1024;
  const Diagnostic d = importFails(m, small);
  EXPECT_NE(d.message.find("too large"), std::string::npos) << d.message;
}

TEST(OnnxImporter, VariadicSumAndMeanBecomeBinaryChains) {
  ModelBuilder m(13);
  m.input("a", {2, 2}).input("b", {2, 2}).input("c", {2}).output("s").output("mean");
  m.node("Sum", {"a", "b", "c"}, {"s"});
  m.node("Mean", {"a", "b"}, {"mean"});
  Graph g = importOk(m);
  int adds = 0, muls = 0;
  for (const Node& n : g.nodes) {
    adds += n.op == OpKind::Add;
    muls += n.op == OpKind::Mul;
  }
  EXPECT_EQ(adds, 3);
  EXPECT_EQ(muls, 1);
  const Node* mul = findNode(g, OpKind::Mul);
  EXPECT_EQ(g.tensor(mul->inputs[1]).dataAs<float>()[0], 0.5f);
}

TEST(OnnxImporter, SplitBecomesSlicesAndSliceIsClamped) {
  ModelBuilder m(13);
  m.input("x", {6, 4}).intInit("parts", {2, 4}).output("p0").output("p1").output("r");
  auto& s = m.node("Split", {"x", "parts"}, {"p0", "p1"});
  ModelBuilder::attr(s, "axis", int64_t{0});
  m.intInit("st", {-1}).intInit("en", {-100}).intInit("ax", {1}).intInit("step", {-2});
  m.node("Slice", {"x", "st", "en", "ax", "step"}, {"r"});
  Graph g = importOk(m);
  EXPECT_EQ(outputShape(g, 0), (Shape{2, 4}));
  EXPECT_EQ(outputShape(g, 1), (Shape{4, 4}));
  EXPECT_EQ(outputShape(g, 2), (Shape{6, 2}));
  const Node& slice = g.nodes.back();
  EXPECT_EQ(slice.attrs.getInts("starts"), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(slice.attrs.getInts("ends"), (std::vector<int64_t>{6, -1}));
  EXPECT_EQ(slice.attrs.getInts("steps"), (std::vector<int64_t>{1, -2}));
}

TEST(OnnxImporter, OldSliceAndSqueezeUseAttributes) {
  ModelBuilder m(9);
  m.input("x", {1, 5, 1}).output("y");
  auto& s = m.node("Slice", {"x"}, {"t"});
  ModelBuilder::attr(s, "starts", std::vector<int64_t>{1});
  ModelBuilder::attr(s, "ends", std::vector<int64_t>{1000});
  ModelBuilder::attr(s, "axes", std::vector<int64_t>{1});
  auto& q = m.node("Squeeze", {"t"}, {"y"});
  ModelBuilder::attr(q, "axes", std::vector<int64_t>{0, 2});
  Graph g = importOk(m);
  EXPECT_EQ(outputShape(g), (Shape{4}));
}

TEST(OnnxImporter, OutputThatIsAnInputOrRepeatedGetsACopyNode) {
  ModelBuilder m(13);
  m.input("x", {3}).output("x").output("y").output("y");
  m.node("Relu", {"x"}, {"y"});
  Graph g = importOk(m);
  ASSERT_EQ(g.outputs.size(), 3u);
  EXPECT_NE(g.outputs[0], g.inputs[0]);
  EXPECT_NE(g.outputs[1], g.outputs[2]);
  for (TensorId o : g.outputs) EXPECT_EQ(g.tensor(o).kind, TensorKind::Activation);
}

TEST(OnnxImporter, ConstantOutputGetsACopyNodeKeepingTheOutputName) {
  ModelBuilder m(13);
  m.input("x", {3}).floatInit("c", {2}).output("c").output("y");
  m.node("Relu", {"x"}, {"y"});
  Graph g = importOk(m);
  EXPECT_EQ(g.tensor(g.outputs[0]).name, "c");
  EXPECT_EQ(g.tensor(g.outputs[0]).kind, TensorKind::Activation);
}

TEST(OnnxImporter, OldModelsListInitializersAmongInputs) {
  ModelBuilder m(8, 3);
  m.input("x", {1, 4}).input("w", {4, 2}).floatInit("w", {4, 2}).output("y");
  m.node("MatMul", {"x", "w"}, {"y"});
  Graph g = importOk(m);
  ASSERT_EQ(g.inputs.size(), 1u) << "the initializer 'w' is a constant, not an input";
  EXPECT_EQ(g.tensor(g.inputs[0]).name, "x");
}

TEST(OnnxImporter, DeadNodesAreDropped) {
  ModelBuilder m(13);
  m.input("x", {3}).output("y");
  m.node("Relu", {"x"}, {"y"});
  m.node("Sigmoid", {"x"}, {"unused"});
  Graph g = importOk(m);
  EXPECT_EQ(g.nodes.size(), 1u);
}

// ---- diagnostics ----

TEST(OnnxImporter, GarbageBytesGiveAnErrorNamingTheFile) {
  // Negative case: not a protobuf at all.
  auto g = importOnnxBytes(std::string("\xff\xff\xff\xff garbage \x01\x02", 16), "junk.onnx");
  ASSERT_FALSE(g.ok());
  EXPECT_FALSE(g.error().unsupported);
  EXPECT_EQ(g.error().location, "junk.onnx");
  EXPECT_FALSE(g.error().hint.empty());
}

TEST(OnnxImporter, TruncatedModelGivesAnError) {
  // Negative case: a valid model cut in half.
  ModelBuilder m(13);
  m.input("x", {1, 2, 7, 7}).floatInit("w", {4, 2, 3, 3}).output("y");
  m.node("Conv", {"x", "w"}, {"y"});
  std::string bytes = m.serialize();
  auto g = importOnnxBytes(bytes.substr(0, bytes.size() / 2), "cut.onnx");
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.error().location.find("cut.onnx"), std::string::npos);
}

TEST(OnnxImporter, MissingFileIsAnError) {
  // Negative case: no such path.
  auto g = importOnnxFile("/nonexistent/model.onnx");
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.error().message.find("no such file"), std::string::npos);
}

TEST(OnnxImporter, CheckerFailureIsAnError) {
  // Negative case: Relu reads a value nobody defines, which onnx::checker rejects.
  ModelBuilder m(13);
  m.input("x", {3}).output("y");
  m.node("Relu", {"nowhere"}, {"y"});
  Diagnostic d = importFails(m);
  EXPECT_FALSE(d.unsupported);
  EXPECT_NE(d.message.find("checker"), std::string::npos) << d.render();
  EXPECT_EQ(d.render().find('\n'), d.render().rfind('\n', d.render().find("hint") - 1)) << "one paragraph";
}

TEST(OnnxImporter, UnsupportedOpNamesOpNodeAndSupportedList) {
  // Negative case: Hardmax is valid ONNX that Stowage does not implement.
  ModelBuilder m(13);
  m.input("x", {2, 3}).output("y");
  m.node("Hardmax", {"x"}, {"y"}, "hm");
  Diagnostic d = importFails(m);
  EXPECT_TRUE(d.unsupported);
  EXPECT_NE(d.message.find("Hardmax"), std::string::npos);
  EXPECT_NE(d.location.find("'hm'"), std::string::npos);
  ASSERT_FALSE(d.notes.empty());
  EXPECT_NE(d.notes[0].find("Conv"), std::string::npos);
}

TEST(OnnxImporter, DynamicDimSuggestsShapeFlagAndShapeOverrideWorks) {
  // Negative case: batch dim is symbolic.
  ModelBuilder m(13);
  m.input("x", {-1, 3, 8, 8}).output("y");
  m.node("Relu", {"x"}, {"y"});
  Diagnostic d = importFails(m);
  EXPECT_FALSE(d.unsupported);
  EXPECT_NE(d.location.find("'x'"), std::string::npos);
  EXPECT_NE(d.hint.find("--shape x=Nx3x8x8"), std::string::npos) << d.render();
  OnnxImportOptions o;
  o.inputShapes["x"] = {2, 3, 8, 8};
  Graph g = importOk(m, o);
  EXPECT_EQ(outputShape(g), (Shape{2, 3, 8, 8}));
}

TEST(OnnxImporter, RuntimeShapeInputIsUnsupportedUnlessBound) {
  // Negative case: Reshape's shape is a graph input.
  ModelBuilder m(13);
  m.input("x", {2, 6}).input("shape", {2}, onnx::TensorProto_DataType_INT64).output("y");
  m.node("Reshape", {"x", "shape"}, {"y"}, "r");
  Diagnostic d = importFails(m);
  EXPECT_TRUE(d.unsupported);
  EXPECT_NE(d.hint.find("--bind shape=file.pb"), std::string::npos) << d.render();
  OnnxImportOptions o;
  Tensor bound;
  bound.dtype = DType::Int64;
  bound.shape = {2};
  std::vector<int64_t> v{3, -1};
  bound.data.resize(16);
  std::memcpy(bound.data.data(), v.data(), 16);
  o.boundInputs["shape"] = bound;
  Graph g = importOk(m, o);
  EXPECT_EQ(outputShape(g), (Shape{3, 4}));
  EXPECT_EQ(g.inputs.size(), 1u);
}

TEST(OnnxImporter, NonFloatComputeIsUnsupported) {
  // Negative case: int32 Relu.
  ModelBuilder m(13);
  m.input("x", {3}, onnx::TensorProto_DataType_INT32).output("y");
  m.node("Relu", {"x"}, {"y"});
  Diagnostic d = importFails(m);
  EXPECT_TRUE(d.unsupported);
  EXPECT_NE(d.message.find("i32"), std::string::npos);
}

TEST(OnnxImporter, MaxPoolIndicesOutputIsUnsupported) {
  // Negative case: the Indices output feeds the graph output.
  ModelBuilder m(12);
  m.input("x", {1, 1, 4, 4}).output("y").output("idx");
  auto& n = m.node("MaxPool", {"x"}, {"y", "idx"});
  ModelBuilder::attr(n, "kernel_shape", std::vector<int64_t>{2, 2});
  EXPECT_TRUE(importFails(m).unsupported);
}

TEST(OnnxImporter, CustomDomainIsUnsupported) {
  ModelBuilder m(13);
  auto* o = m.proto().add_opset_import();
  o->set_domain("com.example");
  o->set_version(1);
  m.input("x", {3}).output("y");
  m.node("Fancy", {"x"}, {"y"}).set_domain("com.example");
  Diagnostic d = importFails(m);
  EXPECT_TRUE(d.unsupported) << d.render();
}

TEST(OnnxImporter, LegacyBroadcastWithInnerAxisIsUnsupported) {
  // Negative case: opset 6 Add aligns B [3] at axis 1 of A [2,3,4], which numpy would not.
  ModelBuilder m(6, 3);
  m.input("a", {2, 3, 4}).floatInit("b", {3}).input("b", {3}).output("y");
  auto& n = m.node("Add", {"a", "b"}, {"y"});
  ModelBuilder::attr(n, "broadcast", int64_t{1});
  ModelBuilder::attr(n, "axis", int64_t{1});
  EXPECT_TRUE(importFails(m).unsupported);
}

TEST(OnnxImporter, ConvTransposeOutputShapeBecomesPadsAndOutputPadding) {
  ModelBuilder m(13);
  m.input("x", {1, 1, 3, 3}).floatInit("w", {1, 2, 3, 3}).output("y");
  auto& n = m.node("ConvTranspose", {"x", "w"}, {"y"});
  ModelBuilder::attr(n, "strides", std::vector<int64_t>{3, 2});
  ModelBuilder::attr(n, "output_shape", std::vector<int64_t>{10, 8});
  Graph g = importOk(m);
  EXPECT_EQ(outputShape(g), (Shape{1, 2, 10, 8}));
}

// ---- tensors ----

TEST(OnnxTensor, RoundTripAndTypedFields) {
  Tensor t;
  t.name = "t";
  t.dtype = DType::Int32;
  t.shape = {2};
  t.data = {1, 0, 0, 0, 2, 0, 0, 0};
  auto back = tensorFromOnnx(tensorToOnnx(t), "here");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->data, t.data);
  EXPECT_EQ(back->shape, t.shape);

  onnx::TensorProto p;
  p.set_data_type(onnx::TensorProto_DataType_INT64);
  p.add_dims(3);
  for (int64_t v : {5, -1, 7}) p.add_int64_data(v);
  auto typed = tensorFromOnnx(p, "here");
  ASSERT_TRUE(typed.ok());
  EXPECT_EQ(typed->dataAs<int64_t>()[1], -1);
}

TEST(OnnxTensor, BadTensorsAreDiagnosed) {
  onnx::TensorProto p;
  p.set_name("d");
  p.set_data_type(onnx::TensorProto_DataType_DOUBLE);
  auto r = tensorFromOnnx(p, "here");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.error().unsupported);
  EXPECT_NE(r.error().message.find("DOUBLE"), std::string::npos);

  // Negative case: 3 floats declared, 2 stored.
  onnx::TensorProto q;
  q.set_data_type(onnx::TensorProto_DataType_FLOAT);
  q.add_dims(3);
  q.add_float_data(1);
  q.add_float_data(2);
  auto s = tensorFromOnnx(q, "here");
  ASSERT_FALSE(s.ok());
  EXPECT_FALSE(s.error().unsupported);

  onnx::TensorProto e;
  e.set_data_type(onnx::TensorProto_DataType_FLOAT);
  e.set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
  EXPECT_TRUE(tensorFromOnnx(e, "here").error().unsupported);
}

}  // namespace
}  // namespace stowage
