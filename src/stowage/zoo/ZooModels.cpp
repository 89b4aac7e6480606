// The four MLPerf Tiny architectures built with OnnxGraphBuilder (see ZooModels.h). Layer layouts follow
// the MLPerf Tiny reference Keras models; weights are seeded random numbers, not trained values.
#include "stowage/zoo/ZooModels.h"

#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "stowage/zoo/OnnxGraphBuilder.h"

namespace stowage::zoo {
namespace {

/// Conv + BatchNorm + ReLU (or ReLU6), named "<prefix>.conv", "<prefix>.bn", "<prefix>.relu"/"<prefix>.relu6".
Value convBnAct(OnnxGraphBuilder& b, const Value& x, const std::string& prefix, const ConvSpec& spec, bool relu6) {
  Value y = b.conv(x, prefix + ".conv", spec);
  y = b.batchNorm(y, prefix + ".bn");
  return relu6 ? b.relu6(y, prefix + ".relu6") : b.relu(y, prefix + ".relu");
}

/// MLPerf Tiny image classification (tiny/benchmark/training/image_classification/keras_model.py).
void buildResnet8(OnnxGraphBuilder& b) {
  Value x = b.input("input", {1, 3, 32, 32});
  x = convBnAct(b, x, "stem", {.outChannels = 16}, false);
  const int64_t filters[3] = {16, 32, 64};
  for (int s = 0; s < 3; ++s) {
    const std::string p = fmt::format("stack{}.block0.", s + 1);
    const int64_t stride = s == 0 ? 1 : 2;
    Value y = b.conv(x, p + "conv1", {.outChannels = filters[s], .strideH = stride, .strideW = stride});
    y = b.batchNorm(y, p + "bn1");
    y = b.relu(y, p + "relu1");
    y = b.conv(y, p + "conv2", {.outChannels = filters[s]});
    y = b.batchNorm(y, p + "bn2");
    Value shortcut = x;
    if (stride != 1)
      shortcut = b.conv(x, p + "shortcut", {.outChannels = filters[s], .kernelH = 1, .kernelW = 1,
                                            .strideH = stride, .strideW = stride});
    x = b.add(shortcut, y, p + "add");
    x = b.relu(x, p + "relu2");
  }
  x = b.averagePool(x, "pool", x.shape[2], x.shape[3]);  // 8x8
  x = b.flatten(x, "flatten");
  x = b.gemm(x, "fc", 10, false);
  b.output(b.softmax(x, "softmax", "output"));
}

/// MLPerf Tiny keyword spotting DS-CNN small (tiny/benchmark/training/keyword_spotting/keras_model.py).
void buildDsCnn(OnnxGraphBuilder& b) {
  Value x = b.input("input", {1, 1, 49, 10});
  x = convBnAct(b, x, "stem", {.outChannels = 64, .kernelH = 10, .kernelW = 4, .strideH = 2, .strideW = 2}, false);
  for (int i = 1; i <= 4; ++i) {
    const std::string p = fmt::format("block{}.", i);
    x = convBnAct(b, x, p + "depthwise", {.outChannels = 64, .group = 64}, false);
    x = convBnAct(b, x, p + "pointwise", {.outChannels = 64, .kernelH = 1, .kernelW = 1}, false);
  }
  x = b.averagePool(x, "pool", x.shape[2], x.shape[3]);  // 25x5
  x = b.flatten(x, "flatten");
  x = b.gemm(x, "fc", 12, false);
  b.output(b.softmax(x, "softmax", "output"));
}

/// MobileNetV1 alpha 0.25 at 96x96 (MLPerf Tiny visual wake words; Keras applications MobileNet layout,
/// convolutions without bias, BatchNorm + ReLU6 after each).
void buildMobilenetV1(OnnxGraphBuilder& b) {
  Value x = b.input("input", {1, 3, 96, 96});
  x = convBnAct(b, x, "stem", {.outChannels = 8, .strideH = 2, .strideW = 2, .bias = false}, true);
  struct Block {
    int64_t filters, stride;
  };
  const Block blocks[13] = {{16, 1},  {32, 2},  {32, 1},  {64, 2},  {64, 1},  {128, 2}, {128, 1},
                            {128, 1}, {128, 1}, {128, 1}, {128, 1}, {256, 2}, {256, 1}};
  for (int i = 0; i < 13; ++i) {
    const std::string p = fmt::format("block{}.", i + 1);
    const int64_t c = x.shape[1], s = blocks[i].stride;
    x = convBnAct(b, x, p + "depthwise",
                  {.outChannels = c, .strideH = s, .strideW = s, .group = c, .bias = false}, true);
    x = convBnAct(b, x, p + "pointwise", {.outChannels = blocks[i].filters, .kernelH = 1, .kernelW = 1, .bias = false},
                  true);
  }
  x = b.globalAveragePool(x, "pool");
  x = b.flatten(x, "flatten");
  x = b.gemm(x, "fc", 2, false);
  b.output(b.softmax(x, "softmax", "output"));
}

/// MLPerf Tiny anomaly detection FC autoencoder (tiny/benchmark/training/anomaly_detection/keras_model.py).
void buildAutoencoder(OnnxGraphBuilder& b) {
  Value x = b.input("input", {1, 640});
  auto dense = [&](const std::string& p, int64_t features) {
    x = b.gemm(x, p + ".fc", features, true);
    x = b.batchNorm(x, p + ".bn");
    x = b.relu(x, p + ".relu");
  };
  for (int i = 1; i <= 4; ++i) dense(fmt::format("encoder{}", i), 128);
  dense("bottleneck", 8);
  for (int i = 1; i <= 4; ++i) dense(fmt::format("decoder{}", i), 128);
  b.output(b.gemm(x, "reconstruction.fc", 640, false, "output"));
}

}  // namespace

const std::vector<ZooModelInfo>& zooModels() {
  static const std::vector<ZooModelInfo> models = {
      {"resnet8", {1, 3, 32, 32},
       "MLPerf Tiny image classification: ResNet-8 for CIFAR-10 (3 residual stacks of 16/32/64 filters), 10 classes"},
      {"ds-cnn", {1, 1, 49, 10},
       "MLPerf Tiny keyword spotting: DS-CNN small on 49x10 MFCC features (10x4 conv + 4 depthwise-separable blocks), "
       "12 classes"},
      {"mobilenet-v1-0.25", {1, 3, 96, 96},
       "MLPerf Tiny visual wake words: MobileNetV1 alpha 0.25 at 96x96 (13 depthwise-separable blocks, ReLU6), "
       "2 classes"},
      {"autoencoder", {1, 640},
       "MLPerf Tiny anomaly detection: fully connected autoencoder for ToyCar (640-128x4-8-128x4-640)"},
  };
  return models;
}

Result<ZooModel> buildZooModel(const std::string& name, uint64_t seed) {
  const ZooModelInfo* info = nullptr;
  std::string known;
  for (const ZooModelInfo& m : zooModels()) {
    if (m.name == name) info = &m;
    known += (known.empty() ? "" : ", ") + m.name;
  }
  if (!info) return makeError("stowage-zoo", fmt::format("unknown model '{}'", name), "known models: " + known);

  OnnxGraphBuilder b(name, seed);
  if (name == "resnet8") buildResnet8(b);
  else if (name == "ds-cnn") buildDsCnn(b);
  else if (name == "mobilenet-v1-0.25") buildMobilenetV1(b);
  else buildAutoencoder(b);

  ZooModel z;
  z.model = b.finish(fmt::format("{}. Generated by stowage-zoo with seeded random weights (seed {}), not trained.",
                                 info->description, seed));
  z.params = countParameters(z.model);
  z.macs = b.macs();
  return z;
}

std::string serializeModel(const onnx::ModelProto& model) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    model.SerializeToCodedStream(&coded);
  }
  return bytes;
}

Tensor sampleInput(const ZooModelInfo& info, uint64_t seed) {
  Tensor t;
  t.name = "input";
  t.dtype = DType::Float32;
  t.shape = info.inputShape;
  t.kind = TensorKind::Input;
  t.data.resize(t.byteSize());
  SplitMix64 rng(seed ^ 0x5EED1A7A5EED1A7Aull);
  float* v = reinterpret_cast<float*>(t.data.data());
  for (int64_t i = 0; i < t.numElements(); ++i) v[i] = rng.uniform();
  return t;
}

}  // namespace stowage::zoo
