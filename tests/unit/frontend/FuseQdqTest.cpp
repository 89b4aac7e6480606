// pass/FuseQdq: QDQ Conv / Gemm / Add / pools become integer operators with int8 weights; what stays float and why;
// the integer graph computes the bytes of the float graph it replaces (compiled and run on the host both ways).
#include <gtest/gtest.h>

#include <cstring>

#include "ImportTestUtil.h"
#include "stowage/driver/Compiler.h"
#include "stowage/driver/HostRunner.h"
#include "stowage/pass/FuseQdq.h"

namespace stowage {
namespace {

using test::ModelBuilder;

/// Adds an initializer of ONNX element type `type` (INT8, UINT8, INT32) or FLOAT with `values`; dims {} is a scalar.
void qdqInit(ModelBuilder& m, const std::string& name, int type, const std::vector<int64_t>& dims, const std::vector<double>& values) {
  auto* t = m.proto().mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  for (int64_t d : dims) t->add_dims(d);
  for (double v : values) {
    if (type == onnx::TensorProto_DataType_FLOAT) t->add_float_data(static_cast<float>(v));
    else t->add_int32_data(static_cast<int32_t>(v));
  }
}

/// Options of the test model.
struct QdqNet {
  int act = onnx::TensorProto_DataType_INT8;  ///< activation type
  bool perChannel = true;
  int reluZeroPointOffset = 0;  ///< the Relu output's zero point above the type's minimum (0: ORT's quantizer)
  float biasScaleFactor = 1.0f; ///< 1: the bias scale is x_scale * w_scale as it must be
};

/// x [1,3,5,5] -> Q/DQ -> Conv(3->4, 3x3, pad 1, int8 w, int32 b) -> Relu -> Q/DQ -> Add(residual with the conv's
/// own input through a 1x1 Conv) -> Q/DQ -> GlobalAveragePool -> Q/DQ -> Flatten -> Q/DQ -> Gemm(4->2) -> Q/DQ -> y.
ModelBuilder qdqNet(const QdqNet& o) {
  ModelBuilder m;
  const bool s8 = o.act == onnx::TensorProto_DataType_INT8;
  const int lo = s8 ? -128 : 0;
  m.input("x", {1, 3, 5, 5});
  int count = 0;
  auto qdq = [&](const std::string& t, double scale, int zp) {
    const std::string q = t + "_q" + std::to_string(count++);
    qdqInit(m, q + "_scale", onnx::TensorProto_DataType_FLOAT, {}, {scale});
    qdqInit(m, q + "_zp", o.act, {}, {static_cast<double>(zp)});
    m.node("QuantizeLinear", {t, q + "_scale", q + "_zp"}, {q}, q + "_quantize");
    m.node("DequantizeLinear", {q, q + "_scale", q + "_zp"}, {q + "_dq"}, q + "_dequantize");
    return q + "_dq";
  };
  auto weights = [&](const std::string& name, std::vector<int64_t> dims, double xScale, bool bias) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    std::vector<double> w(static_cast<size_t>(n));
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<double>(static_cast<int>((i * 37 + 11) % 255) - 127);
    qdqInit(m, name, onnx::TensorProto_DataType_INT8, dims, w);
    const int64_t out = dims[0];
    std::vector<double> ws(o.perChannel ? static_cast<size_t>(out) : 1);
    for (size_t i = 0; i < ws.size(); ++i) ws[i] = 0.004 + 0.001 * static_cast<double>(i);
    qdqInit(m, name + "_scale", onnx::TensorProto_DataType_FLOAT, o.perChannel ? std::vector<int64_t>{out} : std::vector<int64_t>{}, ws);
    auto& dq = m.node("DequantizeLinear", {name, name + "_scale"}, {name + "_dq"}, name + "_dequantize");
    ModelBuilder::attr(dq, "axis", int64_t{0});
    if (!bias) return std::vector<std::string>{name + "_dq"};
    std::vector<double> b(static_cast<size_t>(out)), bs(ws.size());
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<double>(static_cast<int>(i * 301 % 1001) - 500);
    for (size_t i = 0; i < bs.size(); ++i) bs[i] = static_cast<double>(static_cast<float>(xScale) * static_cast<float>(ws[i])) * o.biasScaleFactor;
    qdqInit(m, name + "_bias", onnx::TensorProto_DataType_INT32, {out}, b);
    qdqInit(m, name + "_bias_scale", onnx::TensorProto_DataType_FLOAT, o.perChannel ? std::vector<int64_t>{out} : std::vector<int64_t>{}, bs);
    auto& bdq = m.node("DequantizeLinear", {name + "_bias", name + "_bias_scale"}, {name + "_bias_dq"}, name + "_bias_dequantize");
    ModelBuilder::attr(bdq, "axis", int64_t{0});
    return std::vector<std::string>{name + "_dq", name + "_bias_dq"};
  };
  const std::string x = qdq("x", 0.02, lo + 9);
  auto w1 = weights("w1", {4, 3, 3, 3}, 0.02, true);
  auto& conv = m.node("Conv", {x, w1[0], w1[1]}, {"c1"}, "conv1");
  ModelBuilder::attr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  m.node("Relu", {"c1"}, {"r1"}, "relu1");
  const std::string r1 = qdq("r1", 0.03, lo + o.reluZeroPointOffset);
  auto w2 = weights("w2", {4, 3, 1, 1}, 0.02, true);
  m.node("Conv", {x, w2[0], w2[1]}, {"skip"}, "skip_conv");
  const std::string skip = qdq("skip", 0.025, lo + 70);
  m.node("Add", {r1, skip}, {"a1"}, "add1");
  const std::string a1 = qdq("a1", 0.04, lo + 40);
  m.node("GlobalAveragePool", {a1}, {"g1"}, "gap");
  const std::string g1 = qdq("g1", 0.02, lo + 40);
  m.node("Flatten", {g1}, {"f1"}, "flatten");
  const std::string f1 = qdq("f1", 0.02, lo + 40);
  auto w3 = weights("w3", {2, 4}, 0.02, true);
  auto& gemm = m.node("Gemm", {f1, w3[0], w3[1]}, {"gm"}, "fc");
  ModelBuilder::attr(gemm, "transB", int64_t{1});
  const std::string y = qdq("gm", 0.05, lo + 64);
  m.node("Identity", {y}, {"y"}, "out");
  m.output("y");
  return m;
}

std::vector<float> qdqSampleInput() {
  std::vector<float> v(75);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(static_cast<int>(i * 29 % 41) - 20) * 0.06f;
  return v;
}

int countOps(const Graph& g, OpKind op) {
  int n = 0;
  for (const Node& node : g.nodes) n += node.op == op;
  return n;
}

Tensor qdqInputTensor() {
  Tensor t;
  t.name = "x";
  t.shape = {1, 3, 5, 5};
  const std::vector<float> v = qdqSampleInput();
  t.data.resize(v.size() * 4);
  std::memcpy(t.data.data(), v.data(), t.data.size());
  return t;
}

std::vector<float> compileAndRun(const ModelBuilder& m, bool fuseQdq, std::vector<std::string>* remarks = nullptr) {
  Graph g = test::importOk(m);
  CompileOptions o;
  o.fuseQdq = fuseQdq;
  auto r = compileGraph(std::move(g), o);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().render());
  if (!r.ok()) return {};
  if (remarks) *remarks = r->plan.remarks;
  auto out = runOnHost(*r, {qdqInputTensor()});
  EXPECT_TRUE(out.ok()) << (out.ok() ? "" : out.error().render());
  if (!out.ok()) return {};
  const Tensor& t = out->at(0);
  std::vector<float> v(static_cast<size_t>(t.numElements()));
  std::memcpy(v.data(), t.data.data(), v.size() * 4);
  return v;
}

TEST(FuseQdq, ConvGemmAddAndPoolsBecomeIntegerWithInt8Weights) {
  for (int act : {onnx::TensorProto_DataType_INT8, onnx::TensorProto_DataType_UINT8}) {
    for (bool perChannel : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "act " << act << " per-channel " << perChannel);
      Graph g = test::importOk(qdqNet({act, perChannel, 0, 1.0f}));
      auto remarks = fuseQdq(g);
      ASSERT_TRUE(remarks.ok());
      EXPECT_TRUE(verifyGraph(g).ok());
      EXPECT_EQ(countOps(g, OpKind::QLinearConv), 3);  // two convs and the Gemm (a 1-D convolution)
      EXPECT_EQ(countOps(g, OpKind::QLinearAdd), 1);
      EXPECT_EQ(countOps(g, OpKind::QLinearAveragePool), 1);
      for (OpKind op : {OpKind::Conv, OpKind::Gemm, OpKind::Add, OpKind::Relu, OpKind::GlobalAveragePool}) {
        EXPECT_EQ(countOps(g, op), 0) << opName(op);
      }
      // Only the graph's input is quantized and its output dequantized.
      EXPECT_EQ(countOps(g, OpKind::QuantizeLinear), 1);
      EXPECT_EQ(countOps(g, OpKind::DequantizeLinear), 1);
      for (const Tensor& t : g.tensors) {
        if (t.isConstant() && t.numElements() > 8) {
          EXPECT_NE(t.dtype, DType::Float32) << t.name;
        }
      }
      ASSERT_FALSE(remarks->empty());
      EXPECT_NE(remarks->front().find("run on integer kernels"), std::string::npos) << remarks->front();
    }
  }
}

TEST(FuseQdq, IntegerGraphGivesTheFloatGraphsBytes) {
  // The QDQ graph computed as written (float Conv on dequantized weights, then QuantizeLinear) and on the integer
  // kernels: the same bytes (the outputs are dequantized, so equal floats), with a Relu whose zero point is not
  // the type's minimum (then the Relu is a clamp in output units, not a no-op).
  for (int act : {onnx::TensorProto_DataType_INT8, onnx::TensorProto_DataType_UINT8}) {
    for (int reluZero : {0, 17}) {
      SCOPED_TRACE(::testing::Message() << "act " << act << " relu zero point +" << reluZero);
      const ModelBuilder m = qdqNet({act, true, reluZero, 1.0f});
      std::vector<std::string> remarks;
      const std::vector<float> fused = compileAndRun(m, true, &remarks);
      const std::vector<float> asWritten = compileAndRun(m, false);
      ASSERT_EQ(fused.size(), 2u);
      EXPECT_EQ(fused, asWritten);
      if (reluZero != 0) {
        Graph g = test::importOk(m);
        ASSERT_TRUE(fuseQdq(g).ok());
        const Node* conv = test::findNode(g, OpKind::QLinearConv);
        ASSERT_NE(conv, nullptr);
        EXPECT_EQ(conv->attrs.getInt(kQdqOutputMinAttr, -999), (act == onnx::TensorProto_DataType_INT8 ? -128 : 0) + reluZero);
      }
    }
  }
}

TEST(FuseQdq, ABiasWithAnotherScaleKeepsTheConvFloatAndSaysWhy) {
  Graph g = test::importOk(qdqNet({onnx::TensorProto_DataType_INT8, true, 0, 1.5f}));
  auto remarks = fuseQdq(g);
  ASSERT_TRUE(remarks.ok());
  // Every bias has the wrong scale: both convs and the Gemm stay float; the Add and the pool around them do not.
  EXPECT_EQ(countOps(g, OpKind::Conv), 2);
  EXPECT_EQ(countOps(g, OpKind::Gemm), 1);
  EXPECT_EQ(countOps(g, OpKind::QLinearAdd), 1);
  bool named = false;
  for (const std::string& r : *remarks)
    named = named || (r.find("Conv 'conv1' stays float") != std::string::npos && r.find("is not input scale x weight scale") != std::string::npos);
  EXPECT_TRUE(named) << ::testing::PrintToString(*remarks);
}

TEST(FuseQdq, EquallyQuantizedConcatAndMaxPoolStayInt8) {
  // x -> Q/DQ -> Concat(x, x) -> Q/DQ (same scale and zero point) -> MaxPool 2x2 -> Q/DQ (another scale) -> y.
  ModelBuilder m;
  m.input("x", {1, 3, 5, 5});
  qdqInit(m, "s", onnx::TensorProto_DataType_FLOAT, {}, {0.02});
  qdqInit(m, "z", onnx::TensorProto_DataType_INT8, {}, {-5});
  qdqInit(m, "s2", onnx::TensorProto_DataType_FLOAT, {}, {0.03});
  qdqInit(m, "z2", onnx::TensorProto_DataType_INT8, {}, {7});
  m.node("QuantizeLinear", {"x", "s", "z"}, {"xq"}, "quantize_x");
  m.node("DequantizeLinear", {"xq", "s", "z"}, {"xd"}, "dequantize_x");
  ModelBuilder::attr(m.node("Concat", {"xd", "xd"}, {"cat"}, "concat"), "axis", int64_t{1});
  m.node("QuantizeLinear", {"cat", "s", "z"}, {"catq"}, "quantize_cat");
  m.node("DequantizeLinear", {"catq", "s", "z"}, {"catd"}, "dequantize_cat");
  ModelBuilder::attr(m.node("MaxPool", {"catd"}, {"pool"}, "pool"), "kernel_shape", std::vector<int64_t>{2, 2});
  m.node("QuantizeLinear", {"pool", "s2", "z2"}, {"poolq"}, "quantize_pool");
  m.node("DequantizeLinear", {"poolq", "s2", "z2"}, {"y"}, "dequantize_pool");
  m.output("y");
  Graph g = test::importOk(m);
  ASSERT_TRUE(fuseQdq(g).ok());
  const Node* concat = test::findNode(g, OpKind::Concat);
  ASSERT_NE(concat, nullptr);
  EXPECT_EQ(g.tensor(concat->outputs[0]).dtype, DType::Int8);
  EXPECT_EQ(countOps(g, OpKind::QLinearMaxPool), 1);
  EXPECT_EQ(countOps(g, OpKind::MaxPool), 0);
  // And the same bytes as the float graph (compiled both ways, run on the host).
  Tensor x;
  x.name = "x";
  x.shape = {1, 3, 5, 5};
  std::vector<float> v(75);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(static_cast<int>(i * 17 % 31) - 15) * 0.09f;
  x.data.resize(v.size() * 4);
  std::memcpy(x.data.data(), v.data(), x.data.size());
  std::vector<std::vector<uint8_t>> outputs;
  for (bool fuse : {true, false}) {
    CompileOptions o;
    o.fuseQdq = fuse;
    auto r = compileGraph(test::importOk(m), o);
    ASSERT_TRUE(r.ok()) << r.error().render();
    auto out = runOnHost(*r, {x});
    ASSERT_TRUE(out.ok()) << out.error().render();
    outputs.push_back(out->at(0).data);
  }
  EXPECT_EQ(outputs[0], outputs[1]);
}

}  // namespace
}  // namespace stowage

namespace stowage {
namespace {

/// x -> Q/DQ (type `xType`) -> `op` -> Q (type `yType`) / DQ -> y; Softmax along the last axis.
ModelBuilder qdqTableNet(const std::string& op, int xType, int yType) {
  ModelBuilder m;
  m.input("x", {2, 6});
  qdqInit(m, "xs", onnx::TensorProto_DataType_FLOAT, {}, {0.05});
  qdqInit(m, "xz", xType, {}, {3});
  qdqInit(m, "ys", onnx::TensorProto_DataType_FLOAT, {}, {1.0 / 256.0});
  qdqInit(m, "yz", yType, {}, {yType == onnx::TensorProto_DataType_INT8 ? -128.0 : 0.0});
  m.node("QuantizeLinear", {"x", "xs", "xz"}, {"xq"}, "quantize_x");
  m.node("DequantizeLinear", {"xq", "xs", "xz"}, {"xd"}, "dequantize_x");
  auto& n = m.node(op, {"xd"}, {"f"}, "op");
  if (op == "Softmax") ModelBuilder::attr(n, "axis", int64_t{-1});
  m.node("QuantizeLinear", {"f", "ys", "yz"}, {"fq"}, "quantize_f");
  m.node("DequantizeLinear", {"fq", "ys", "yz"}, {"y"}, "dequantize_f");
  m.output("y");
  return m;
}

TEST(FuseQdq, SigmoidBecomesATableOfEveryInputByte) {
  for (int yType : {onnx::TensorProto_DataType_INT8, onnx::TensorProto_DataType_UINT8}) {
    Graph g = test::importOk(qdqTableNet("Sigmoid", onnx::TensorProto_DataType_INT8, yType));
    auto remarks = fuseQdq(g);
    ASSERT_TRUE(remarks.ok());
    const Node* lookup = test::findNode(g, OpKind::QLinearLookup);
    ASSERT_NE(lookup, nullptr) << ::testing::PrintToString(*remarks);
    EXPECT_EQ(countOps(g, OpKind::Sigmoid), 0);
    const Tensor& table = g.tensor(lookup->inputs[1]);
    ASSERT_EQ(table.data.size(), 256u);
    // Entry 128 is x = -128: sigmoid(0.05 * -131) = 0.00142, 0.36 steps of 1/256: 0 above the zero point. Entry 127 is
    // x = 127: sigmoid(6.2) = 0.99798, 255.48 steps: 255 above it.
    const int lo = yType == onnx::TensorProto_DataType_INT8 ? -128 : 0;
    auto entry = [&](size_t i) { return yType == onnx::TensorProto_DataType_INT8 ? static_cast<int>(static_cast<int8_t>(table.data[i])) : table.data[i]; };
    EXPECT_EQ(entry(128), lo);
    EXPECT_EQ(entry(127), lo + 255);
    EXPECT_EQ(entry(3), lo + 128);  // x = x_zero_point: sigmoid(0) = 0.5
  }
}

TEST(FuseQdq, SoftmaxBecomesOnnxRuntimesQLinearSoftmaxWhenBothSidesShareTheType) {
  Graph g = test::importOk(qdqTableNet("Softmax", onnx::TensorProto_DataType_UINT8, onnx::TensorProto_DataType_UINT8));
  ASSERT_TRUE(fuseQdq(g).ok());
  const Node* softmax = test::findNode(g, OpKind::QLinearSoftmax);
  ASSERT_NE(softmax, nullptr);
  EXPECT_EQ(softmax->attrs.getFloat("y_factor", 0.0f), 256.0f);  // floor(1 / (1/256))
  EXPECT_EQ(softmax->attrs.getInt("axis", -1), 1);
  EXPECT_EQ(g.tensor(softmax->inputs[1]).dtype, DType::Float32);

  // int8 in, uint8 out: ONNX Runtime keeps that Softmax float (its QLinearSoftmax has one type), and so does the pass.
  Graph mixed = test::importOk(qdqTableNet("Softmax", onnx::TensorProto_DataType_INT8, onnx::TensorProto_DataType_UINT8));
  auto remarks = fuseQdq(mixed);
  ASSERT_TRUE(remarks.ok());
  EXPECT_EQ(countOps(mixed, OpKind::Softmax), 1);
  bool named = false;
  for (const std::string& r : *remarks) named = named || r.find("Softmax 'op' stays float: its input is i8 and its output u8") != std::string::npos;
  EXPECT_TRUE(named) << ::testing::PrintToString(*remarks);
}

TEST(FuseQdq, TableOperatorsGiveTheFloatGraphsBytesOnTheHost) {
  // Sigmoid: the table is the float graph's own arithmetic (MLAS's logistic), so both compilations agree byte for
  // byte. Softmax: ONNX Runtime's integer softmax, within one step of the float graph.
  for (const char* op : {"Sigmoid", "Softmax"})
    for (int type : {onnx::TensorProto_DataType_INT8, onnx::TensorProto_DataType_UINT8}) {
      SCOPED_TRACE(::testing::Message() << op << " type " << type);
      const ModelBuilder m = qdqTableNet(op, type, type);
      Tensor x;
      x.name = "x";
      x.shape = {2, 6};
      std::vector<float> v(12);
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(static_cast<int>(i * 7 % 13) - 6) * 0.8f;
      x.data.resize(v.size() * 4);
      std::memcpy(x.data.data(), v.data(), x.data.size());
      std::vector<std::vector<float>> outputs;
      for (bool fuse : {true, false}) {
        CompileOptions o;
        o.fuseQdq = fuse;
        auto r = compileGraph(test::importOk(m), o);
        ASSERT_TRUE(r.ok()) << r.error().render();
        auto run = runOnHost(*r, {x});
        ASSERT_TRUE(run.ok()) << run.error().render();
        ASSERT_EQ(run->size(), 1u);
        const Tensor& y = (*run)[0];
        outputs.emplace_back(reinterpret_cast<const float*>(y.data.data()), reinterpret_cast<const float*>(y.data.data()) + y.numElements());
      }
      ASSERT_EQ(outputs[0].size(), outputs[1].size());
      for (size_t i = 0; i < outputs[0].size(); ++i) {
        if (std::string(op) == "Sigmoid") EXPECT_EQ(outputs[0][i], outputs[1][i]) << i;
        else EXPECT_NEAR(outputs[0][i], outputs[1][i], 1.01 / 256.0) << i;
      }
    }
}

}  // namespace
}  // namespace stowage
