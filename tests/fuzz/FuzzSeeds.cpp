// Seed inputs of the fuzz targets (see FuzzSeeds.h): small valid models, tensors, buffer tables and flags that each
// reach deep into their parser, so that mutations start from inputs that pass the syntax checks.
#include "FuzzSeeds.h"

#include <cstring>

#include "../unit/frontend/TfliteGraphBuilder.h"
#include "../unit/frontend/TfliteTestModels.h"
#include "stowage/frontend/OnnxTensor.h"
#include "stowage/io/NpyFormat.h"
#include "stowage/zoo/OnnxGraphBuilder.h"
#include "stowage/zoo/QdqQuantizer.h"
#include "stowage/zoo/ZooModels.h"
#include "stowage/zoo/ZooReferenceEval.h"

namespace stowage::fuzz {
namespace {

/// A small float CNN: Conv, BatchNormalization, Clip, a residual Add, depthwise Conv, pools, Gemm, Softmax.
onnx::ModelProto seedCnn() {
  zoo::OnnxGraphBuilder b("fuzz-cnn", 1);
  zoo::Value x = b.input("input", {1, 3, 8, 8});
  zoo::ConvSpec c;
  c.outChannels = 4;
  zoo::Value y = b.relu6(b.batchNorm(b.conv(x, "conv1", c), "bn1"), "relu1");
  zoo::ConvSpec dw;
  dw.outChannels = 4, dw.group = 4, dw.strideH = 2, dw.strideW = 2;
  zoo::Value z = b.relu(b.conv(y, "dw", dw), "relu2");
  zoo::ConvSpec pw;
  pw.outChannels = 4, pw.kernelH = 1, pw.kernelW = 1;
  z = b.add(z, b.conv(z, "pw", pw), "residual");
  z = b.flatten(b.globalAveragePool(b.averagePool(z, "pool", 2, 2), "gap"), "flat");
  b.output(b.softmax(b.gemm(z, "fc", 5, false), "softmax"));
  return b.finish("fuzz seed");
}

/// seedCnn quantised to ONNX Runtime's QDQ form (QuantizeLinear / DequantizeLinear around every layer).
std::string seedQdqCnn() {
  const onnx::ModelProto model = seedCnn();
  zoo::refeval::FloatTensor sample{{1, 3, 8, 8}, std::vector<float>(3 * 8 * 8)};
  zoo::SplitMix64 rng(2);
  for (float& v : sample.v) v = rng.uniform();
  auto ranges = zoo::calibrateRanges(model, {sample});
  if (!ranges.ok()) return {};
  auto qdq = zoo::quantizeToQdq(model, *ranges, zoo::QdqOptions{});
  return qdq.ok() ? zoo::serializeModel(*qdq) : std::string();
}

onnx::ModelProto seedMlp() {
  zoo::OnnxGraphBuilder b("fuzz-mlp", 3);
  zoo::Value x = b.input("input", {1, 16});
  b.output(b.gemm(b.relu(b.gemm(x, "fc1", 8, true), "relu"), "fc2", 3, false));
  return b.finish("fuzz seed");
}

std::string asString(const std::vector<uint8_t>& bytes) { return std::string(bytes.begin(), bytes.end()); }

/// int8 CONV_2D (SAME, RELU, per-channel weight scales) -> DEPTHWISE_CONV_2D (VALID, RELU6) -> FULLY_CONNECTED.
std::string seedTfliteInt8Cnn() {
  using namespace tflitetest;
  auto i8 = [](std::string name, std::vector<int32_t> shape, float scale, int64_t zp, std::vector<int8_t> data = {}) {
    return TensorSpec{std::move(name), std::move(shape), 9, {scale}, {zp}, bytesOf(data)};
  };
  auto weights = [](std::string name, std::vector<int32_t> shape, size_t n, std::vector<float> scales) {
    std::vector<int8_t> w(n);
    for (size_t i = 0; i < n; ++i) w[i] = static_cast<int8_t>(static_cast<int>(i * 37 % 255) - 127);
    std::vector<int64_t> zps(scales.size(), 0);
    return TensorSpec{std::move(name), std::move(shape), 9, std::move(scales), std::move(zps), bytesOf(w)};
  };
  auto bias = [](std::string name, int32_t n, std::vector<float> scales) {
    std::vector<int32_t> b(static_cast<size_t>(n));
    for (int32_t i = 0; i < n; ++i) b[static_cast<size_t>(i)] = 100 * i - 150;
    std::vector<int64_t> zps(scales.size(), 0);
    return TensorSpec{std::move(name), {n}, 2, std::move(scales), std::move(zps), bytesOf(b)};
  };
  const float sx = 0.05f, sy = 0.1f;
  const std::vector<float> sw = {0.01f, 0.02f, 0.015f, 0.012f};
  std::vector<float> sb;
  for (float s : sw) sb.push_back(sx * s);
  std::vector<TensorSpec> t = {i8("x", {1, 5, 5, 3}, sx, -1),
                               weights("conv_w", {4, 3, 3, 3}, 4 * 27, sw),
                               bias("conv_b", 4, sb),
                               i8("conv_y", {1, 5, 5, 4}, sy, -128),
                               weights("dw_w", {1, 3, 3, 4}, 36, {0.01f}),
                               bias("dw_b", 4, {sy * 0.01f}),
                               i8("dw_y", {1, 2, 2, 4}, sy, -128),
                               weights("fc_w", {6, 16}, 6 * 16, {0.01f}),
                               bias("fc_b", 6, {sy * 0.01f}),
                               i8("fc_y", {1, 6}, 0.2f, 3)};
  OpSpec conv;
  conv.code = 3, conv.inputs = {0, 1, 2}, conv.outputs = {3}, conv.optionsTag = 1;
  conv.byteFields = {{0, 0}, {3, 1}};  // SAME, RELU
  conv.intFields = {{1, 1}, {2, 1}, {4, 1}, {5, 1}};
  OpSpec dw;
  dw.code = 4, dw.inputs = {3, 4, 5}, dw.outputs = {6}, dw.optionsTag = 2;
  dw.byteFields = {{0, 1}, {4, 3}};  // VALID, RELU6
  dw.intFields = {{1, 2}, {2, 2}, {3, 1}, {5, 1}, {6, 1}};
  OpSpec fc;
  fc.code = 9, fc.inputs = {6, 7, 8}, fc.outputs = {9}, fc.optionsTag = 8;
  fc.byteFields = {{0, 0}, {1, 0}};
  return asString(buildTfliteModel(t, {conv, dw, fc}, {0}, {9}));
}

Tensor seedTensor(DType dtype, Shape shape) {
  Tensor t;
  t.name = "input_0";
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.kind = TensorKind::Input;
  t.data.resize(t.byteSize());
  for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = static_cast<uint8_t>(i * 29 + 3);
  return t;
}

std::vector<Tensor> seedTensors() {
  return {seedTensor(DType::Float32, {1, 2, 3}), seedTensor(DType::Int8, {4, 4}), seedTensor(DType::UInt8, {7}),
          seedTensor(DType::Int32, {2, 2}),      seedTensor(DType::Int64, {3}),   seedTensor(DType::Bool, {2, 3}),
          seedTensor(DType::Float32, {})};
}

}  // namespace

std::vector<FuzzSeed> builtinFuzzSeeds(std::string_view target, bool large) {
  std::vector<FuzzSeed> seeds;
  if (target == "onnx") {
    seeds.push_back({"cnn.onnx", zoo::serializeModel(seedCnn())});
    seeds.push_back({"mlp.onnx", zoo::serializeModel(seedMlp())});
    if (std::string qdq = seedQdqCnn(); !qdq.empty()) seeds.push_back({"qdq-cnn.onnx", qdq});
    if (large)
      for (const char* name : {"ds-cnn", "autoencoder"})
        if (auto m = zoo::buildZooModel(name, 1); m.ok()) seeds.push_back({std::string(name) + ".onnx", zoo::serializeModel(m->model)});
  } else if (target == "tflite") {
    seeds.push_back({"fc-int8.tflite", asString(tflitetest::buildTinyFcModel())});
    seeds.push_back({"cnn-int8.tflite", seedTfliteInt8Cnn()});
  } else if (target == "npy") {
    for (const Tensor& t : seedTensors())
      if (auto bytes = encodeNpy(t, "seed"); bytes.ok())
        seeds.push_back({"tensor-" + std::string(dtypeName(t.dtype)) + "-rank" + std::to_string(t.shape.size()) + ".npy", *bytes});
  } else if (target == "tensor_pb") {
    for (const Tensor& t : seedTensors()) {
      std::string bytes;
      tensorToOnnx(t).SerializeToString(&bytes);
      seeds.push_back({"tensor-" + std::string(dtypeName(t.dtype)) + "-rank" + std::to_string(t.shape.size()) + ".pb", bytes});
    }
    onnx::TensorProto typed;  // the typed-field spelling (float_data), as some exporters write it
    typed.set_name("typed");
    typed.set_data_type(onnx::TensorProto::FLOAT);
    typed.add_dims(2);
    typed.add_float_data(1.5f);
    typed.add_float_data(-2.0f);
    std::string bytes;
    typed.SerializeToString(&bytes);
    seeds.push_back({"typed-float-data.pb", bytes});
  } else if (target == "buffer_csv") {
    seeds.push_back({"plain.csv", "id,lower,upper,size\na,0,3,1024\nb,1,2,512\nc,2,5,2048\nd,4,6,100\n"});
    seeds.push_back({"aligned.csv", "id,lower,upper,size,alignment\nx,0,2,100,64\ny,1,3,33,16\nz,2,4,7,1\n"});
    seeds.push_back({"offsets.csv", "hint,id,upper,lower,size,offset\r\n0,p,4,0,16,0\r\n1,q,2,1,8,-1\r\n\r\n"});
  } else if (target == "cli_flags") {
    seeds.push_back({"pools.txt", "pool name=dtcm;size=64KiB;placement=static;section=.dtcm\npool name=sram;size=512KiB\n"
                                  "rule op=Conv;outputs=dtcm\npin logits=sram\nshape input=1x3x32x32\n"});
    seeds.push_back({"pins.txt", "pin conv*=workspace\nrule op=Gemm;inputs=workspace\nshape x=scalar\n"});
  }
  return seeds;
}

}  // namespace stowage::fuzz
