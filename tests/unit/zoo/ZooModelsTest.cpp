// The bundled zoo models: each passes onnx::checker and strict ONNX shape inference, has the documented
// input/output shapes, and the same seed gives byte-identical files while another seed changes the weights.
#include <gtest/gtest.h>
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include <map>

#include "stowage/zoo/OnnxGraphBuilder.h"
#include "stowage/zoo/ZooModels.h"

namespace stowage::zoo {
namespace {

Shape dimsOf(const onnx::ValueInfoProto& vi) {
  Shape s;
  for (const auto& d : vi.type().tensor_type().shape().dim()) s.push_back(d.has_dim_value() ? d.dim_value() : -1);
  return s;
}

class ZooModelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ZooModelTest, PassesCheckerAndStrictShapeInference) {
  auto z = buildZooModel(GetParam(), 7);
  ASSERT_TRUE(z.ok()) << z.error().render();
  EXPECT_NO_THROW(onnx::checker::check_model(z->model));
  onnx::ModelProto inferred = z->model;
  // check_type + error_mode 1: any node-level inference error or mismatch with declared shapes throws.
  EXPECT_NO_THROW(onnx::shape_inference::InferShapes(inferred, onnx::OpSchemaRegistry::Instance(),
                                                     onnx::ShapeInferenceOptions(true, 1, false)));
  // Every node output got a fully static float shape.
  std::map<std::string, Shape> shapes;
  for (const auto& vi : inferred.graph().value_info()) shapes[vi.name()] = dimsOf(vi);
  for (const auto& vi : inferred.graph().output()) shapes[vi.name()] = dimsOf(vi);
  for (const auto& node : inferred.graph().node()) {
    ASSERT_TRUE(shapes.count(node.output(0))) << node.name();
    for (int64_t d : shapes[node.output(0)]) EXPECT_GT(d, 0) << node.name();
  }
  EXPECT_EQ(inferred.ir_version(), 7);
  ASSERT_EQ(inferred.opset_import_size(), 1);
  EXPECT_EQ(inferred.opset_import(0).version(), 13);
}

TEST_P(ZooModelTest, SameSeedSameBytesOtherSeedOtherWeights) {
  auto a = buildZooModel(GetParam(), 3), b = buildZooModel(GetParam(), 3), c = buildZooModel(GetParam(), 4);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(serializeModel(a->model), serializeModel(b->model));
  EXPECT_NE(serializeModel(a->model), serializeModel(c->model));
  EXPECT_EQ(a->params, c->params);
  EXPECT_EQ(a->macs, c->macs);
}

TEST_P(ZooModelTest, InputAndOutputAsListed) {
  const ZooModelInfo* info = nullptr;
  for (const auto& m : zooModels())
    if (m.name == GetParam()) info = &m;
  ASSERT_NE(info, nullptr);
  auto z = buildZooModel(GetParam(), 1);
  ASSERT_TRUE(z.ok());
  const auto& g = z->model.graph();
  ASSERT_EQ(g.input_size(), 1);
  EXPECT_EQ(g.input(0).name(), "input");
  EXPECT_EQ(dimsOf(g.input(0)), info->inputShape);
  ASSERT_EQ(g.output_size(), 1);
  EXPECT_EQ(g.output(0).name(), "output");
  Tensor x = sampleInput(*info, 1);
  EXPECT_EQ(x.shape, info->inputShape);
  EXPECT_EQ(x.data.size(), x.byteSize());
}

INSTANTIATE_TEST_SUITE_P(All, ZooModelTest,
                         ::testing::Values("resnet8", "ds-cnn", "mobilenet-v1-0.25", "autoencoder"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

struct Facts {
  const char* name;
  Shape output;
  int64_t params;
  int64_t macs;
  int convs;
};

// Layer facts computed by hand from the MLPerf Tiny layouts (a wrong stride, channel count or missing layer
// changes one of them).
TEST(ZooModels, ArchitectureFacts) {
  // resnet8: conv weights 3*16*9 + [16*16*9 x2] + [16*32*9 + 32*32*9 + 16*32] + [32*64*9 + 64*64*9 + 32*64]
  // = 76,720, + 336 conv biases + 4 x 240 BN + 650 fc = 78,666 (the Keras reference's count). MACs:
  // 32x32x(16x27 + 2x16x144) + 16x16x(32x144 + 32x288 + 32x16) + 8x8x(64x288 + 64x576 + 64x32) + 640.
  // ds-cnn: 2,624 stem + 4 x (576+64 + 4,096+64) + 9 x 256 BN + 780 fc = 24,908 params; MACs
  // 25x5x64x40 + 4 x 25x5x(64x9 + 64x64) + 768.
  // mobilenet-v1-0.25: 216 stem + 9 x 1,240 depthwise + 196,224 pointwise weights + 4 x 2,736 BN + 514 fc
  // = 219,058; MACs 7,489,664 (stem at 48x48, then 48, 24, 24, 12, 12, 6 x6, 3, 3 per block).
  // autoencoder: Gemm 640-128, 3 x 128-128, 128-8, 8-128, 3 x 128-128, 128-640 with biases + 4 x 1,032 BN
  // = 269,992; MACs 2 x 81,920 + 6 x 16,384 + 2 x 1,024 = 264,192.
  const Facts facts[] = {
      {"resnet8", {1, 10}, 78666, 12501632, 9},
      {"ds-cnn", {1, 12}, 24908, 2656768, 9},
      {"mobilenet-v1-0.25", {1, 2}, 219058, 7489664, 27},
      {"autoencoder", {1, 640}, 269992, 264192, 0},
  };
  for (const Facts& f : facts) {
    auto z = buildZooModel(f.name, 1);
    ASSERT_TRUE(z.ok());
    EXPECT_EQ(dimsOf(z->model.graph().output(0)), f.output) << f.name;
    int convs = 0;
    for (const auto& n : z->model.graph().node()) convs += n.op_type() == "Conv";
    EXPECT_EQ(convs, f.convs) << f.name;
    EXPECT_EQ(z->params, f.params) << f.name;
    EXPECT_EQ(z->macs, f.macs) << f.name;
  }
}

// The builder's readable names: node "stack1.block0.conv1" with weight initializer "stack1.block0.conv1.weight".
TEST(ZooModels, ReadableNames) {
  auto z = buildZooModel("resnet8", 1);
  ASSERT_TRUE(z.ok());
  bool found = false;
  for (const auto& n : z->model.graph().node())
    if (n.name() == "stack1.block0.conv1") {
      found = true;
      EXPECT_EQ(n.input(1), "stack1.block0.conv1.weight");
      EXPECT_EQ(n.output(0), "stack1.block0.conv1");
    }
  EXPECT_TRUE(found);
}

// An unknown model name is a diagnostic listing the known names.
TEST(ZooModels, UnknownNameIsAnError) {
  auto z = buildZooModel("resnet50", 1);
  ASSERT_FALSE(z.ok());
  EXPECT_NE(z.error().message.find("resnet50"), std::string::npos);
  EXPECT_NE(z.error().hint.find("ds-cnn"), std::string::npos);
}

TEST(SplitMix64, UniformInRangeAndDeterministic) {
  SplitMix64 a(42), b(42);
  double sum = 0;
  for (int i = 0; i < 10000; ++i) {
    float x = a.uniform();
    ASSERT_EQ(x, b.uniform());
    ASSERT_GE(x, -1.0f);
    ASSERT_LT(x, 1.0f);
    sum += x;
  }
  EXPECT_NEAR(sum / 10000, 0.0, 0.05);
}

}  // namespace
}  // namespace stowage::zoo
