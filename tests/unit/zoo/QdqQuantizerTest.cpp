// QDQ quantization of the zoo models (QdqQuantizer.h) and the QDQ pattern models (tests/e2e/QdqPatternModels.h):
// structure as ONNX Runtime's quantize_static writes it, the ONNX checker and strict shape inference, weight sizes.
// With STOWAGE_QDQ_DUMP_DIR set, the pattern models are also written there (one .onnx each, plus inputs.json)
// for running them by hand in another runtime.
#include <gtest/gtest.h>
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "../../e2e/QdqPatternModels.h"
#include "stowage/zoo/QdqQuantizer.h"
#include "stowage/zoo/ZooModels.h"

namespace stowage::zoo {
namespace {

std::vector<float> qdqTestFloats(const onnx::TensorProto& t) {
  std::vector<float> v(t.raw_data().size() / 4);
  std::memcpy(v.data(), t.raw_data().data(), v.size() * 4);
  return v;
}

void qdqTestCheck(const onnx::ModelProto& m, const std::string& what) {
  EXPECT_NO_THROW(onnx::checker::check_model(m)) << what;
  onnx::ModelProto inferred = m;
  EXPECT_NO_THROW(onnx::shape_inference::InferShapes(inferred, onnx::OpSchemaRegistry::Instance(),
                                                     onnx::ShapeInferenceOptions(true, 1, false)))
      << what;
}

TEST(QdqActivationParams, AsOrtComputesThem) {
  QdqParams p = qdqActivationParams({-1.0f, 1.0f}, QdqActivationType::Int8, false);
  EXPECT_FLOAT_EQ(p.scale, 2.0f / 255.0f);
  EXPECT_EQ(p.zeroPoint, 0);  // round(-128 + 127.5) = round(-0.5) = 0 (half to even)
  p = qdqActivationParams({-1.0f, 1.0f}, QdqActivationType::UInt8, false);
  EXPECT_EQ(p.zeroPoint, 128);  // round(127.5) = 128
  p = qdqActivationParams({0.5f, 6.0f}, QdqActivationType::Int8, false);  // widened to include 0
  EXPECT_FLOAT_EQ(p.scale, 6.0f / 255.0f);
  EXPECT_EQ(p.zeroPoint, -128);
  p = qdqActivationParams({-1.0f, 0.5f}, QdqActivationType::Int8, true);
  EXPECT_FLOAT_EQ(p.scale, 1.0f / 127.0f);
  EXPECT_EQ(p.zeroPoint, 0);
  p = qdqActivationParams({-1.0f, 0.5f}, QdqActivationType::UInt8, true);
  EXPECT_EQ(p.zeroPoint, 128);
  p = qdqActivationParams({-3.0f, 1.0f}, QdqActivationType::UInt8, false);
  EXPECT_FLOAT_EQ(p.scale, 4.0f / 255.0f);
  EXPECT_EQ(p.zeroPoint, 191);  // round(0 + 3 / (4 / 255)) = round(191.25)
  p = qdqActivationParams({0.0f, 0.0f}, QdqActivationType::Int8, false);
  EXPECT_EQ(p.scale, 1.0f);
  EXPECT_EQ(p.zeroPoint, 0);
}

struct QdqZooCase {
  const char* model;
  QdqActivationType type;
  bool perChannel;
};

class QdqZooModel : public ::testing::TestWithParam<QdqZooCase> {};

TEST_P(QdqZooModel, StructureAsOrtWritesIt) {
  const QdqZooCase c = GetParam();
  QdqOptions o;
  o.activations = c.type;
  o.perChannel = c.perChannel;
  auto q = buildZooQdqModel(c.model, 3, o);
  ASSERT_TRUE(q.ok()) << q.error().render();
  const onnx::ModelProto& m = q->model;
  qdqTestCheck(m, c.model);

  // About a quarter of the float bytes (int8 weights; the float model also holds BatchNorm statistics).
  const double ratio = static_cast<double>(q->qdqWeightBytes) / static_cast<double>(q->floatWeightBytes);
  EXPECT_GT(ratio, 0.2) << c.model;
  EXPECT_LT(ratio, 0.34) << c.model;

  auto fm = buildZooModel(c.model, 3);
  ASSERT_TRUE(fm.ok());
  onnx::ModelProto folded = fm->model;
  ASSERT_TRUE(foldBatchNormalization(folded).ok());
  std::map<std::string, const onnx::TensorProto*> floatInits;
  for (const auto& t : folded.graph().initializer()) floatInits[t.name()] = &t;

  const auto& g = m.graph();
  EXPECT_EQ(g.input(0).name(), fm->model.graph().input(0).name());
  EXPECT_EQ(g.input(0).type().tensor_type().elem_type(), onnx::TensorProto::FLOAT);
  EXPECT_EQ(g.output(0).name(), fm->model.graph().output(0).name());
  std::map<std::string, const onnx::TensorProto*> inits;
  for (const auto& t : g.initializer()) {
    inits[t.name()] = &t;
    if (t.data_type() == onnx::TensorProto::FLOAT) {
      EXPECT_LE(t.dims_size(), 1) << t.name() << ": float weights left";
    }
  }
  std::map<std::string, const onnx::NodeProto*> producer;
  std::set<std::string> names;
  for (const auto& n : g.node()) {
    for (const auto& out : n.output()) producer[out] = &n;
    EXPECT_FALSE(n.name().empty());
    EXPECT_TRUE(names.insert(n.name()).second) << "duplicate node name " << n.name();
    EXPECT_NE(n.op_type(), "BatchNormalization");
    EXPECT_NE(n.op_type(), "Relu") << "Relu is removed by default";
    EXPECT_NE(n.op_type(), "Clip") << "Clip is removed by default";
  }
  int layers = 0;
  for (const auto& n : g.node()) {
    if (n.op_type() != "Conv" && n.op_type() != "Gemm") continue;
    ++layers;
    ASSERT_EQ(n.input_size(), 3) << n.name() << ": BatchNorm folding gives every layer a bias";
    const onnx::NodeProto* dq[3];
    for (int k = 0; k < 3; ++k) {
      ASSERT_TRUE(producer.count(n.input(k))) << n.name();
      dq[k] = producer.at(n.input(k));
      ASSERT_EQ(dq[k]->op_type(), "DequantizeLinear") << n.name() << " input " << k;
    }
    // The activation's Q/DQ, the int8 weight and the int32 bias with scale x_scale * w_scale.
    const onnx::TensorProto& xScale = *inits.at(dq[0]->input(1));
    const onnx::TensorProto& w = *inits.at(dq[1]->input(0));
    const onnx::TensorProto& wScale = *inits.at(dq[1]->input(1));
    const onnx::TensorProto& wZp = *inits.at(dq[1]->input(2));
    const onnx::TensorProto& b = *inits.at(dq[2]->input(0));
    const onnx::TensorProto& bScale = *inits.at(dq[2]->input(1));
    const onnx::TensorProto& bZp = *inits.at(dq[2]->input(2));
    EXPECT_EQ(inits.at(dq[0]->input(2))->data_type(),
              c.type == QdqActivationType::Int8 ? onnx::TensorProto::INT8 : onnx::TensorProto::UINT8);
    EXPECT_EQ(w.data_type(), onnx::TensorProto::INT8) << n.name();
    EXPECT_EQ(wZp.data_type(), onnx::TensorProto::INT8);
    EXPECT_EQ(b.data_type(), onnx::TensorProto::INT32) << n.name();
    EXPECT_EQ(bZp.data_type(), onnx::TensorProto::INT32);
    for (char ch : wZp.raw_data() + bZp.raw_data()) EXPECT_EQ(ch, 0) << n.name() << ": zero points are 0";
    const int64_t outC = b.dims(0);
    EXPECT_EQ(wScale.dims_size(), c.perChannel ? 1 : 0);
    EXPECT_EQ(bScale.dims_size(), c.perChannel ? 1 : 0);
    const auto xs = qdqTestFloats(xScale), ws = qdqTestFloats(wScale), bs = qdqTestFloats(bScale);
    ASSERT_EQ(ws.size(), c.perChannel ? static_cast<size_t>(outC) : 1u);
    ASSERT_EQ(bs.size(), ws.size());
    for (size_t k = 0; k < ws.size(); ++k) EXPECT_EQ(bs[k], xs[0] * ws[k]) << n.name();
    if (c.perChannel) {
      const int64_t axis = dq[1]->attribute_size() ? dq[1]->attribute(0).i() : -1;
      const bool transB = n.op_type() == "Gemm" && n.attribute_size() && n.attribute(n.attribute_size() - 1).i() == 1;
      EXPECT_EQ(axis, n.op_type() == "Conv" || transB ? 0 : 1) << n.name();
    }
    // Dequantized weights and biases are within half a step of the folded float ones.
    const std::string wName = dq[1]->input(0).substr(0, dq[1]->input(0).size() - std::string("_quantized").size());
    const std::string bName = dq[2]->input(0).substr(0, dq[2]->input(0).size() - std::string("_quantized").size());
    ASSERT_TRUE(floatInits.count(wName) && floatInits.count(bName)) << wName << " " << bName;
    const auto wf = qdqTestFloats(*floatInits.at(wName)), bf = qdqTestFloats(*floatInits.at(bName));
    ASSERT_EQ(wf.size(), w.raw_data().size());
    const size_t inner = wf.size() / static_cast<size_t>(outC);
    for (size_t k = 0; k < wf.size(); ++k) {
      const size_t ch = c.perChannel ? k / inner : 0;  // Gemm weights are transB = 1 in the zoo
      const float s = ws[ch];
      EXPECT_LE(std::fabs(static_cast<float>(static_cast<int8_t>(w.raw_data()[k])) * s - wf[k]), 0.5001f * s)
          << n.name() << " weight " << k;
    }
    for (size_t k = 0; k < bf.size(); ++k) {
      int32_t v;
      std::memcpy(&v, b.raw_data().data() + 4 * k, 4);
      const float s = bs[c.perChannel ? k : 0];
      EXPECT_LE(std::fabs(static_cast<float>(v) * s - bf[k]), 0.5001f * s) << n.name() << " bias " << k;
    }
  }
  EXPECT_GE(layers, 5);
}

INSTANTIATE_TEST_SUITE_P(All, QdqZooModel,
                         ::testing::Values(QdqZooCase{"resnet8", QdqActivationType::Int8, true},
                                           QdqZooCase{"resnet8", QdqActivationType::UInt8, false},
                                           QdqZooCase{"ds-cnn", QdqActivationType::Int8, true},
                                           QdqZooCase{"ds-cnn", QdqActivationType::UInt8, false},
                                           QdqZooCase{"mobilenet-v1-0.25", QdqActivationType::Int8, true},
                                           QdqZooCase{"mobilenet-v1-0.25", QdqActivationType::UInt8, false},
                                           QdqZooCase{"autoencoder", QdqActivationType::Int8, true}),
                         [](const auto& info) {
                           std::string n = std::string(info.param.model) +
                                           (info.param.type == QdqActivationType::Int8 ? "_s8" : "_u8") +
                                           (info.param.perChannel ? "_pc" : "_pt");
                           for (char& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

TEST(QdqZooModel, KeepActivationsAndQuantizeSoftmax) {
  QdqOptions o;
  o.keepActivations = true;
  o.quantizeSoftmax = true;
  auto q = buildZooQdqModel("mobilenet-v1-0.25", 1, o);
  ASSERT_TRUE(q.ok()) << q.error().render();
  qdqTestCheck(q->model, "mobilenet kept");
  std::map<std::string, const onnx::NodeProto*> producer;
  std::map<std::string, const onnx::TensorProto*> inits;
  for (const auto& t : q->model.graph().initializer()) inits[t.name()] = &t;
  int clips = 0;
  for (const auto& n : q->model.graph().node()) {
    for (const auto& out : n.output()) producer[out] = &n;
    if (n.op_type() == "Clip") {
      ++clips;
      EXPECT_EQ(producer.at(n.input(0))->op_type(), "DequantizeLinear") << n.name();
    }
    if (n.op_type() == "Softmax") {
      EXPECT_EQ(producer.at(n.input(0))->op_type(), "DequantizeLinear");
    }
  }
  EXPECT_EQ(clips, 27);
  // The Softmax output range [0, 1]: scale 1/255, zero point -128; the graph output is DQ'd back to float.
  const onnx::NodeProto* outDq = producer.at("output");
  ASSERT_EQ(outDq->op_type(), "DequantizeLinear");
  EXPECT_FLOAT_EQ(qdqTestFloats(*inits.at(outDq->input(1)))[0], 1.0f / 255.0f);
  EXPECT_EQ(static_cast<int8_t>(inits.at(outDq->input(2))->raw_data()[0]), -128);
}

TEST(QdqZooModel, ReduceRangeGives7BitWeights) {
  QdqOptions o;
  o.reduceRange = true;
  auto q = buildZooQdqModel("ds-cnn", 2, o);
  ASSERT_TRUE(q.ok()) << q.error().render();
  int weights = 0;
  for (const auto& t : q->model.graph().initializer()) {
    if (t.data_type() != onnx::TensorProto::INT8 || t.dims_size() < 2) continue;
    ++weights;
    int lo = 0, hi = 0;
    for (char ch : t.raw_data()) {
      lo = std::min(lo, static_cast<int>(static_cast<int8_t>(ch)));
      hi = std::max(hi, static_cast<int>(static_cast<int8_t>(ch)));
    }
    EXPECT_GE(lo, -64) << t.name();
    EXPECT_LE(hi, 64) << t.name();
    EXPECT_EQ(std::max(-lo, hi), 64) << t.name() << ": the largest weight maps to +-64";
  }
  EXPECT_EQ(weights, 10);
}

TEST(QdqZooModel, SameSeedSameBytes) {
  auto a = buildZooQdqModel("ds-cnn", 5, {}), b = buildZooQdqModel("ds-cnn", 5, {});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(serializeModel(a->model), serializeModel(b->model));
}

TEST(QdqQuantizer, MissingRangeIsAnError) {
  auto z = buildZooModel("ds-cnn", 1);
  ASSERT_TRUE(z.ok());
  auto q = quantizeToQdq(z->model, {}, {});
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.error().message.find("no calibrated range"), std::string::npos) << q.error().render();
}

TEST(QdqPatternModels, PassTheCheckerWithUniqueNamesAndFloatIo) {
  const auto models = e2e::qdqPatternModels();
  EXPECT_GE(models.size(), 100u);
  std::set<std::string> names;
  const char* dump = std::getenv("STOWAGE_QDQ_DUMP_DIR");
  std::string json = "[";
  for (const auto& p : models) {
    EXPECT_TRUE(names.insert(p.name).second) << p.name;
    qdqTestCheck(p.model, p.name);
    qdqTestCheck(p.floatModel, p.name + " (float)");
    const auto& g = p.model.graph();
    ASSERT_EQ(static_cast<size_t>(g.input_size()), p.inputs.size()) << p.name;
    for (int k = 0; k < g.input_size(); ++k) {
      EXPECT_EQ(g.input(k).name(), p.inputs[static_cast<size_t>(k)].name);
      EXPECT_EQ(g.input(k).type().tensor_type().elem_type(), onnx::TensorProto::FLOAT);
    }
    EXPECT_EQ(g.output(0).type().tensor_type().elem_type(), onnx::TensorProto::FLOAT);
    int q = 0, dq = 0;
    for (const auto& n : g.node()) {
      EXPECT_FALSE(n.name().empty()) << p.name;
      q += n.op_type() == "QuantizeLinear";
      dq += n.op_type() == "DequantizeLinear";
    }
    EXPECT_GE(q, 1) << p.name;
    EXPECT_GE(dq, q) << p.name;
    if (dump) {
      std::ofstream(std::filesystem::path(dump) / (p.name + ".onnx"), std::ios::binary) << serializeModel(p.model);
      std::ofstream(std::filesystem::path(dump) / (p.name + ".float.onnx"), std::ios::binary)
          << serializeModel(p.floatModel);
      json += std::string(json.size() > 1 ? "," : "") + "\n{\"name\": \"" + p.name + "\", \"inputs\": [";
      for (size_t k = 0; k < p.inputs.size(); ++k) {
        json += std::string(k ? ", " : "") + "[\"" + p.inputs[k].name + "\", [";
        for (size_t d = 0; d < p.inputs[k].shape.size(); ++d)
          json += (d ? ", " : "") + std::to_string(p.inputs[k].shape[d]);
        json += "]]";
      }
      json += "]}";
    }
  }
  if (dump) std::ofstream(std::filesystem::path(dump) / "inputs.json") << json << "\n]\n";
}

TEST(QdqPatternModels, Deterministic) {
  const auto a = e2e::qdqPatternModels(), b = e2e::qdqPatternModels();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(serializeModel(a[i].model), serializeModel(b[i].model)) << a[i].name;
}

}  // namespace
}  // namespace stowage::zoo
