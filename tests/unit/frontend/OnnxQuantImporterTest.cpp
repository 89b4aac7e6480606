// ONNX importer for the integer ops (QuantizeLinear, DequantizeLinear, ConvInteger, QLinearConv, MatMulInteger,
// QLinearMatMul): canonical input order and attributes, output dtypes, per-axis / per-channel checks and the
// diagnostics for bad or unsupported quantization inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "ImportTestUtil.h"
#include "OnnxTestModels.h"
#include "stowage/driver/Compiler.h"
#include "stowage/frontend/OnnxImporter.h"
#include "stowage/ir/Printer.h"
#include "stowage/ir/Verifier.h"

namespace stowage {
namespace {

using test::ModelBuilder;
using test::findNode;
using test::importFails;
using test::importOk;
constexpr int kU8 = onnx::TensorProto_DataType_UINT8;
constexpr int kI8 = onnx::TensorProto_DataType_INT8;
constexpr int kI32 = onnx::TensorProto_DataType_INT32;
constexpr int kF32 = onnx::TensorProto_DataType_FLOAT;

/// An initializer of ONNX element type `type` (FLOAT, INT8, UINT8, INT32) with raw little-endian data.
void init(ModelBuilder& m, const std::string& name, int type, const std::vector<int64_t>& dims, const std::vector<double>& values) {
  auto* t = m.proto().mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  for (int64_t d : dims) t->add_dims(d);
  std::string raw;
  for (double v : values) {
    if (type == kF32) {
      const float f = static_cast<float>(v);
      raw.append(reinterpret_cast<const char*>(&f), 4);
    } else if (type == kI32) {
      const int32_t i = static_cast<int32_t>(v);
      raw.append(reinterpret_cast<const char*>(&i), 4);
    } else {
      raw.push_back(static_cast<char>(static_cast<int>(v)));
    }
  }
  t->set_raw_data(raw);
}

std::vector<std::string> inputNames(const Graph& g, const Node& n) {
  std::vector<std::string> v;
  for (TensorId id : n.inputs) v.push_back(id == kNoTensor ? "" : g.tensor(id).name);
  return v;
}

/// QLinearConv: x u8 [1,2,5,5], depthwise-by-2 (group 2, 4 outputs), per-channel int8 weights, int8 output.
ModelBuilder qlinearConvModel(std::vector<int64_t> wScaleDims = {4}) {
  ModelBuilder m(13);
  m.input("x", {1, 2, 5, 5}, kU8).output("y", kI8);
  init(m, "x_scale", kF32, {}, {0.02});
  init(m, "x_zero_point", kU8, {}, {128});
  init(m, "w", kI8, {4, 1, 3, 3}, std::vector<double>(36, 3));
  init(m, "w_scale", kF32, wScaleDims, std::vector<double>(static_cast<size_t>(wScaleDims.empty() ? 1 : wScaleDims[0]), 0.01));
  init(m, "w_zero_point", kI8, wScaleDims, std::vector<double>(static_cast<size_t>(wScaleDims.empty() ? 1 : wScaleDims[0]), 0));
  init(m, "y_scale", kF32, {}, {0.05});
  init(m, "y_zero_point", kI8, {}, {-5});
  init(m, "B", kI32, {4}, {1, 2, 3, 4});
  auto& n = m.node("QLinearConv", {"x", "x_scale", "x_zero_point", "w", "w_scale", "w_zero_point", "y_scale", "y_zero_point", "B"},
                   {"y"}, "qconv");
  ModelBuilder::attr(n, "group", int64_t{2});
  ModelBuilder::attr(n, "strides", std::vector<int64_t>{2, 2});
  ModelBuilder::attr(n, "auto_pad", std::string("SAME_UPPER"));
  return m;
}

TEST(OnnxQuantImporter, QLinearConvPutsOperandsFirstAndTakesItsOutputTypeFromTheZeroPoint) {
  Graph g = importOk(qlinearConvModel());
  const Node* n = findNode(g, OpKind::QLinearConv);
  ASSERT_NE(n, nullptr) << printGraph(g);
  EXPECT_EQ(inputNames(g, *n), (std::vector<std::string>{"x", "w", "x_scale", "x_zero_point", "w_scale", "w_zero_point", "y_scale",
                                                         "y_zero_point", "B"}));
  EXPECT_EQ(n->attrs.getInts("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(n->attrs.getInt("group", 0), 2);
  const Tensor& y = g.tensor(n->outputs[0]);
  EXPECT_EQ(y.dtype, DType::Int8);
  EXPECT_EQ(y.shape, (Shape{1, 4, 3, 3}));
  EXPECT_GT(macCount(g, *n), 0);
}

TEST(OnnxQuantImporter, QLinearConvPerChannelScaleOfTheWrongLengthIsAnErrorNamingTheNode) {
  Diagnostic d = importFails(qlinearConvModel({3}));
  EXPECT_FALSE(d.unsupported);
  EXPECT_NE(d.location.find("'qconv'"), std::string::npos) << d.render();
  EXPECT_NE(d.message.find("w_scale"), std::string::npos) << d.render();
  EXPECT_NE(d.message.find("4 entries"), std::string::npos) << d.render();
}

TEST(OnnxQuantImporter, QuantizeLinearWithoutZeroPointIsUint8AndANegativeAxisIsResolved) {
  ModelBuilder m(13);
  m.input("x", {2, 3, 4}).output("q", kU8);
  init(m, "s", kF32, {3}, {0.1, 0.2, 0.3});
  auto& n = m.node("QuantizeLinear", {"x", "s"}, {"q"}, "quant");
  ModelBuilder::attr(n, "axis", int64_t{-2});
  Graph g = importOk(m);
  const Node* q = findNode(g, OpKind::QuantizeLinear);
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->attrs.getInt("axis", -1), 1);
  EXPECT_EQ(g.tensor(q->outputs[0]).dtype, DType::UInt8);
}

TEST(OnnxQuantImporter, QuantizeLinearPerAxisScaleMustMatchTheAxis) {
  ModelBuilder m(13);
  m.input("x", {2, 3, 4}).output("q", kI8);
  init(m, "s", kF32, {4}, {0.1, 0.2, 0.3, 0.4});
  init(m, "z", kI8, {4}, {0, 0, 0, 0});
  m.node("QuantizeLinear", {"x", "s", "z"}, {"q"}, "quant");  // default axis 1 has 3 entries
  Diagnostic d = importFails(m);
  EXPECT_NE(d.location.find("'quant'"), std::string::npos) << d.render();
  EXPECT_NE(d.message.find("3 entries"), std::string::npos) << d.render();
}

TEST(OnnxQuantImporter, DequantizeLinearOfInt32RejectsANonZeroZeroPoint) {
  ModelBuilder m(13);
  m.input("x", {4}, kI32).output("y");
  init(m, "s", kF32, {}, {0.5});
  init(m, "z", kI32, {}, {5});
  m.node("DequantizeLinear", {"x", "s", "z"}, {"y"}, "dq");
  Diagnostic d = importFails(m);
  EXPECT_NE(d.message.find("int32"), std::string::npos) << d.render();
}

TEST(OnnxQuantImporter, ConvIntegerWithOnlyAWeightZeroPointGetsAnExplicitZeroInputZeroPoint) {
  ModelBuilder m(10, 5);
  m.input("x", {1, 1, 4, 4}, kU8).output("y", kI32);
  init(m, "w", kU8, {2, 1, 2, 2}, std::vector<double>(8, 7));
  init(m, "wz", kU8, {2}, {1, 2});
  m.node("ConvInteger", {"x", "w", "", "wz"}, {"y"}, "ci");
  Graph g = importOk(m);
  const Node* n = findNode(g, OpKind::ConvInteger);
  ASSERT_NE(n, nullptr);
  ASSERT_EQ(n->inputs.size(), 4u);
  const Tensor& xz = g.tensor(n->inputs[2]);
  EXPECT_TRUE(xz.isConstant());
  EXPECT_EQ(xz.dtype, DType::UInt8);
  EXPECT_EQ(xz.data, (std::vector<uint8_t>{0}));
  EXPECT_EQ(g.tensor(n->outputs[0]).dtype, DType::Int32);
  EXPECT_EQ(g.tensor(n->outputs[0]).shape, (Shape{1, 2, 3, 3}));
}

TEST(OnnxQuantImporter, MatMulIntegerOfInt32OperandsIsUnsupportedNamingTheType) {
  ModelBuilder m(10, 5);
  m.input("a", {2, 3}, kI32).input("b", {3, 4}, kI32).output("y", kI32);
  m.node("MatMulInteger", {"a", "b"}, {"y"}, "mmi");
  Diagnostic d = importFails(m);
  EXPECT_TRUE(d.unsupported);
  EXPECT_NE(d.message.find("i32"), std::string::npos) << d.render();
  EXPECT_NE(d.location.find("'mmi'"), std::string::npos) << d.render();
}

TEST(OnnxQuantImporter, QLinearMatMulBatchedPerColumnWeights) {
  ModelBuilder m(10, 5);
  m.input("a", {3, 2, 5}, kI8).output("y", kU8);
  init(m, "as", kF32, {}, {0.1});
  init(m, "az", kI8, {}, {1});
  init(m, "b", kI8, {5, 4}, std::vector<double>(20, -2));
  init(m, "bs", kF32, {4}, {0.1, 0.2, 0.3, 0.4});
  init(m, "bz", kI8, {4}, {0, 1, 2, 3});
  init(m, "ys", kF32, {}, {0.5});
  init(m, "yz", kU8, {}, {100});
  m.node("QLinearMatMul", {"a", "as", "az", "b", "bs", "bz", "ys", "yz"}, {"y"}, "qmm");
  Graph g = importOk(m);
  const Node* n = findNode(g, OpKind::QLinearMatMul);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(inputNames(g, *n), (std::vector<std::string>{"a", "b", "as", "az", "bs", "bz", "ys", "yz"}));
  EXPECT_EQ(g.tensor(n->outputs[0]).dtype, DType::UInt8);
  EXPECT_EQ(g.tensor(n->outputs[0]).shape, (Shape{3, 2, 4}));
}

TEST(OnnxQuantImporter, QdqWeightsFoldToFloatConstantsAtCompileTime) {
  // The QDQ form: int8 weights -> DequantizeLinear (per output channel) -> float Conv. The dequantization runs
  // once, at compile time, with the same kernel the generated code would use.
  ModelBuilder m(13);
  m.input("x", {1, 2, 3, 3}).output("y");
  init(m, "wq", kI8, {2, 2, 1, 1}, {10, -20, 30, -128});
  init(m, "ws", kF32, {2}, {0.5, 0.25});
  init(m, "wz", kI8, {2}, {0, -8});
  auto& dq = m.node("DequantizeLinear", {"wq", "ws", "wz"}, {"w"}, "dq");
  ModelBuilder::attr(dq, "axis", int64_t{0});
  m.node("Conv", {"x", "w"}, {"y"}, "conv");
  auto compiled = compileGraph(importOk(m), CompileOptions{});
  ASSERT_TRUE(compiled.ok()) << compiled.error().render();
  EXPECT_EQ(findNode(compiled->graph, OpKind::DequantizeLinear), nullptr);
  const Node* conv = findNode(compiled->graph, OpKind::Conv);
  ASSERT_NE(conv, nullptr);
  const Tensor& w = compiled->graph.tensor(conv->inputs[1]);
  ASSERT_TRUE(w.isConstant());
  ASSERT_EQ(w.dtype, DType::Float32);
  std::vector<float> got(4);
  std::memcpy(got.data(), w.data.data(), 16);
  EXPECT_EQ(got, (std::vector<float>{5.0f, -10.0f, 9.5f, -30.0f}));
}

TEST(OnnxQuantImporter, TheIntegerOpsAreListedAsSupported) {
  const auto& ops = supportedOnnxOps();
  for (const char* op : {"QuantizeLinear", "DequantizeLinear", "ConvInteger", "QLinearConv", "MatMulInteger", "QLinearMatMul"})
    EXPECT_NE(std::find(ops.begin(), ops.end(), op), ops.end()) << op;
}

}  // namespace
}  // namespace stowage
