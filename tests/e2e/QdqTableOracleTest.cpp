// The QDQ pass's table-driven operators against ONNX Runtime, every input byte (issue 28): DequantizeLinear -> Sigmoid ->
// QuantizeLinear becomes a 256-entry lookup (QLinearLookup) and DequantizeLinear -> Softmax -> QuantizeLinear ONNX
// Runtime's QLinearSoftmax (pass/QdqTables.h). One model per activation type holds many such chains, each with its own
// scales and zero points, fed every input value, so one ONNX Runtime process and one `stowage run` check them all.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "E2eSupport.h"
#include "OrtOracle.h"
#include "stowage/frontend/OnnxImporter.h"
#include "stowage/pass/FuseQdq.h"
#include "stowage/zoo/OnnxGraphBuilder.h"

namespace stowage::e2e {
namespace {

namespace fs = std::filesystem;

/// One DQ -> op -> Q chain of the sweep model: its quantization and its input's shape (Softmax: along `axis`).
struct QtabChain {
  std::string op;  ///< "Sigmoid" or "Softmax"
  float xScale = 0, yScale = 0;
  int xZero = 0, yZero = 0;
  Shape shape;
  int64_t axis = -1;
};

/// Builds the model of `chains` over activation type `type` (onnx::TensorProto::INT8 or UINT8) at `opset`; input i is
/// "x<i>", output i "y<i>", both of that type.
onnx::ModelProto qtabModel(const std::vector<QtabChain>& chains, int type, int opset = 13) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("stowage-qdq-tables");
  auto* domain = m.add_opset_import();
  domain->set_domain("");
  domain->set_version(opset);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("qdq_tables");
  auto scalar = [&](const std::string& name, int dtype, const void* bytes, size_t size) {
    onnx::TensorProto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(dtype);
    t->set_raw_data(std::string(static_cast<const char*>(bytes), size));
  };
  auto valueInfo = [&](onnx::ValueInfoProto* vi, const std::string& name, const Shape& shape) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    for (int64_t d : shape) tt->mutable_shape()->add_dim()->set_dim_value(d);
  };
  auto node = [&](const std::string& op, const std::vector<std::string>& in, const std::string& out) {
    onnx::NodeProto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(out + "_node");
    for (const std::string& i : in) n->add_input(i);
    n->add_output(out);
    return n;
  };
  for (size_t i = 0; i < chains.size(); ++i) {
    const QtabChain& c = chains[i];
    const std::string k = std::to_string(i);
    const int8_t xz8 = static_cast<int8_t>(c.xZero), yz8 = static_cast<int8_t>(c.yZero);
    scalar("xs" + k, onnx::TensorProto::FLOAT, &c.xScale, 4);
    scalar("xz" + k, type, &xz8, 1);
    scalar("ys" + k, onnx::TensorProto::FLOAT, &c.yScale, 4);
    scalar("yz" + k, type, &yz8, 1);
    valueInfo(g->add_input(), "x" + k, c.shape);
    valueInfo(g->add_output(), "y" + k, c.shape);
    node("DequantizeLinear", {"x" + k, "xs" + k, "xz" + k}, "f" + k);
    onnx::NodeProto* op = node(c.op, {"f" + k}, "g" + k);
    if (c.op == "Softmax") {
      auto* a = op->add_attribute();
      a->set_name("axis");
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(c.axis);
    }
    node("QuantizeLinear", {"g" + k, "ys" + k, "yz" + k}, "y" + k);
  }
  return m;
}

/// The inputs: Sigmoid chains read every byte value (cycled over the shape); Softmax chains rows of every value in a
/// scrambled order (so each row's largest is the type's maximum and every distance to it occurs) and seeded random rows.
std::vector<Tensor> qtabInputs(const std::vector<QtabChain>& chains, DType type, uint64_t seed) {
  zoo::SplitMix64 rng(seed);
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < chains.size(); ++i) {
    Tensor t;
    t.name = "x" + std::to_string(i);
    t.dtype = type;
    t.shape = chains[i].shape;
    t.data.resize(t.byteSize());
    const bool permuted = chains[i].op == "Sigmoid" || chains[i].shape.back() == 256;
    for (size_t e = 0; e < t.data.size(); ++e) {
      const size_t row = e / 256, col = e % 256;
      // 2 * row + 1 is odd, so each row of 256 is a permutation of the byte values.
      t.data[e] = permuted ? static_cast<uint8_t>(col * (2 * row + 1) + 17 * row) : static_cast<uint8_t>(rng.next() >> 56);
    }
    inputs.push_back(std::move(t));
  }
  return inputs;
}

/// Random scales (log-uniform) and zero points for `count` chains of each op, plus the fixed cases: the output
/// quantization ONNX Runtime's quantizer gives a Softmax ([0, 1]: scale 1/255), 1/256 (whose int8 form with zero point
/// -128 saturates a certain row at 127), and configurations where a rounding detail of the table changes an output
/// byte (found by searching: an unfused multiply-add in the logistic, the headroom's log in double).
std::vector<QtabChain> qtabChains(DType type, uint64_t seed) {
  zoo::SplitMix64 rng(seed);
  auto logUniform = [&](double lo, double hi) {
    const double u = (static_cast<double>(rng.uniform()) + 1.0) / 2.0;
    return static_cast<float>(std::exp(std::log(lo) + u * std::log(hi / lo)));
  };
  const int lo = type == DType::Int8 ? -128 : 0;
  auto zero = [&] { return lo + static_cast<int>(rng.next() >> 56); };
  std::vector<QtabChain> c;
  for (int k = 0; k < 8; ++k) {
    const float xs = logUniform(0.002, 0.2);
    const int xz = zero();
    const float ys = logUniform(0.001, 0.02);
    c.push_back({"Sigmoid", xs, ys, xz, zero(), {256}});
  }
  // Scales where an output byte changes when the logistic's multiply-adds round separately (found by searching).
  if (type == DType::Int8) {
    c.push_back({"Sigmoid", 0.0541744828f, 0.00131027016f, -5, -24, {256}});
    c.push_back({"Sigmoid", 0.0521257482f, 0.00369986705f, -32, -66, {256}});
  } else {
    c.push_back({"Sigmoid", 0.0383304469f, 0.00165032921f, 184, 146, {256}});
    c.push_back({"Sigmoid", 0.0348406248f, 0.00126134127f, 111, 76, {256}});
  }
  const Shape shapes[] = {{4, 256}, {12, 10}, {3, 1000}, {2, 5, 3}};
  for (int k = 0; k < 8; ++k) {
    const float xs = logUniform(0.002, 0.5);
    const int xz = zero();
    const float ys = k % 3 == 0 ? 1.0f / 255.0f : (k % 3 == 1 ? 1.0f / 256.0f : logUniform(0.002, 0.01));
    const int yz = k % 3 == 2 ? lo + static_cast<int>(rng.next() >> 59) : lo;
    const Shape& s = shapes[k % 4];
    c.push_back({"Softmax", xs, ys, xz, yz, s, s.size() == 3 ? 1 : -1});
  }
  // Scales where an output byte changes when the table's headroom takes its log in double (found by searching).
  c.push_back({"Softmax", 0.0750098303f, 1.0f / 256.0f, 0, lo, {4, 256}});
  c.push_back({"Softmax", 0.00426198775f, 1.0f / 255.0f, 0, lo, {4, 256}});
  // Rows whose largest value dominates: 256 * p rounds to 256, saturated to the type's largest value.
  c.push_back({"Softmax", 0.5f, 1.0f / 256.0f, 0, lo, {12, 10}});
  return c;
}

std::string qtabWrite(const onnx::ModelProto& m, const fs::path& file) {
  std::ofstream out(file, std::ios::binary);
  m.SerializeToOstream(&out);
  return file.string();
}

// ONNX Runtime at level "all" fuses each chain into its QLinearSigmoid / QLinearSoftmax (com.microsoft); Stowage must
// give its bytes for every chain. At level "disabled" the Sigmoid chains are the float graph, which gives the same
// bytes (the table is that graph's own arithmetic); the Softmax chains there are float and may differ by a step.
void qtabCheck(DType type) {
  std::string why;
  if (!ortOracleAvailable(&why)) GTEST_SKIP() << "ONNX Runtime oracle: " << why;
  const std::string tag = type == DType::Int8 ? "s8" : "u8";
  const fs::path dir = scratchDir("qdq_tables_" + tag);
  const std::vector<QtabChain> chains = qtabChains(type, type == DType::Int8 ? 0x7AB1E5 : 0x7AB1E6);
  const fs::path file = qtabWrite(qtabModel(chains, type == DType::Int8 ? onnx::TensorProto::INT8 : onnx::TensorProto::UINT8),
                                  dir / ("tables_" + tag + ".onnx"));
  const std::vector<Tensor> inputs = qtabInputs(chains, type, 28);

  // Every chain became an integer operator.
  auto g = importOnnxFile(file.string());
  ASSERT_TRUE(g.ok()) << g.error().render();
  ASSERT_TRUE(fuseQdq(*g).ok());
  int lookups = 0, softmaxes = 0;
  for (const Node& n : g->nodes) {
    EXPECT_NE(n.op, OpKind::Sigmoid) << n.name;
    EXPECT_NE(n.op, OpKind::Softmax) << n.name;
    lookups += n.op == OpKind::QLinearLookup;
    softmaxes += n.op == OpKind::QLinearSoftmax;
  }
  EXPECT_EQ(lookups + softmaxes, static_cast<int>(chains.size()));

  const std::vector<ModelRun> ort = runOrtOracleBatch({OrtJob{file, inputs, dir / "ort_all", "all"}, OrtJob{file, inputs, dir / "ort_disabled"}},
                                                      dir / "ort_batch.json");
  ASSERT_EQ(ort.size(), 2u);
  ASSERT_TRUE(ort[0].ok()) << ort[0].error;
  ASSERT_TRUE(ort[1].ok()) << ort[1].error;
  const ModelRun ours = runStowageCli(file, inputs, dir / "stowage");
  ASSERT_TRUE(ours.ok()) << ours.error;
  ASSERT_EQ(ours.outputs.size(), chains.size());
  int64_t bytes = 0;
  for (size_t i = 0; i < chains.size(); ++i) {
    const QtabChain& c = chains[i];
    SCOPED_TRACE(fmt::format("chain {}: {} x_scale {} x_zero {} y_scale {} y_zero {} shape [{}]", i, c.op, c.xScale, c.xZero, c.yScale,
                             c.yZero, shapeToString(c.shape)));
    const TensorDiff integer = diffTensors(ours.outputs[i], ort[0].outputs[i]);
    EXPECT_TRUE(integer.same()) << "against ONNX Runtime's integer operators (level all): " << integer.summary();
    if (c.op == "Sigmoid") {
      EXPECT_TRUE(diffTensors(ours.outputs[i], ort[1].outputs[i]).same()) << "against the float graph (level disabled): "
                                                                         << diffTensors(ours.outputs[i], ort[1].outputs[i]).summary();
    }
    bytes += ours.outputs[i].numElements();
  }
  std::printf("  %zu chains (%d Sigmoid, %d Softmax), %lld %s bytes equal to ONNX Runtime's\n", chains.size(), lookups, softmaxes,
              static_cast<long long>(bytes), tag.c_str());
}

TEST(QdqTables, Int8SigmoidAndSoftmaxGiveOnnxRuntimesBytesForEveryInputByte) { qtabCheck(DType::Int8); }
TEST(QdqTables, Uint8SigmoidAndSoftmaxGiveOnnxRuntimesBytesForEveryInputByte) { qtabCheck(DType::UInt8); }

// Opset 11: Softmax normalises over the flattened dims from `axis` on (the IR's coerce2d), and so does ONNX Runtime's
// QLinearSoftmax (its table's length is that of the flattened dims).
TEST(QdqTables, Opset11SoftmaxNormalisesTheFlattenedTrailingDims) {
  std::string why;
  if (!ortOracleAvailable(&why)) GTEST_SKIP() << "ONNX Runtime oracle: " << why;
  const fs::path dir = scratchDir("qdq_tables_opset11");
  std::vector<OrtJob> jobs;
  std::vector<std::vector<QtabChain>> models;
  for (DType type : {DType::Int8, DType::UInt8}) {
    const int lo = type == DType::Int8 ? -128 : 0;
    models.push_back({{"Softmax", 0.13f, 1.0f / 255.0f, lo + 7, lo, {3, 4, 5}, 1}, {"Softmax", 0.05f, 1.0f / 256.0f, lo + 100, lo, {2, 3, 4, 5}, 2}});
    const std::string tag = type == DType::Int8 ? "s8" : "u8";
    const fs::path file = qtabWrite(qtabModel(models.back(), type == DType::Int8 ? onnx::TensorProto::INT8 : onnx::TensorProto::UINT8, 11),
                                    dir / ("softmax11_" + tag + ".onnx"));
    jobs.push_back(OrtJob{file, qtabInputs(models.back(), type, 11), dir / ("ort_" + tag), "all"});
  }
  const std::vector<ModelRun> ort = runOrtOracleBatch(jobs, dir / "ort_batch.json");
  ASSERT_EQ(ort.size(), jobs.size());
  for (size_t m = 0; m < jobs.size(); ++m) {
    SCOPED_TRACE(jobs[m].model.filename().string());
    ASSERT_TRUE(ort[m].ok()) << ort[m].error;
    auto g = importOnnxFile(jobs[m].model.string());
    ASSERT_TRUE(g.ok()) << g.error().render();
    ASSERT_TRUE(fuseQdq(*g).ok());
    int softmaxes = 0;
    for (const Node& n : g->nodes) softmaxes += n.op == OpKind::QLinearSoftmax && n.attrs.getInt("coerce2d", 0) == 1;
    EXPECT_EQ(softmaxes, 2);
    const ModelRun ours = runStowageCli(jobs[m].model, jobs[m].inputs, dir / ("stowage" + std::to_string(m)));
    ASSERT_TRUE(ours.ok()) << ours.error;
    EXPECT_EQ(diffOutputs(ours.outputs, ort[m].outputs), "");
  }
}

}  // namespace
}  // namespace stowage::e2e
