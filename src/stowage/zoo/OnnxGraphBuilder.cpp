// Layer-by-layer ONNX model construction with seeded weights (see OnnxGraphBuilder.h).
#include "stowage/zoo/OnnxGraphBuilder.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace stowage::zoo {
namespace {

void setInt(onnx::NodeProto& n, const std::string& name, int64_t v) {
  onnx::AttributeProto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void setInts(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  onnx::AttributeProto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

void setFloat(onnx::NodeProto& n, const std::string& name, float v) {
  onnx::AttributeProto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

void setFloatType(onnx::ValueInfoProto& vi, const std::string& name, const Shape& shape) {
  vi.set_name(name);
  onnx::TypeProto_Tensor* tt = vi.mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  onnx::TensorShapeProto* s = tt->mutable_shape();
  for (int64_t d : shape) s->add_dim()->set_dim_value(d);
}

/// Begin and end padding for TensorFlow "SAME" along one axis, and the output size.
void samePadding(int64_t in, int64_t kernel, int64_t stride, int64_t& begin, int64_t& end, int64_t& out) {
  out = (in + stride - 1) / stride;
  int64_t total = std::max<int64_t>((out - 1) * stride + kernel - in, 0);
  begin = total / 2;
  end = total - begin;
}

}  // namespace

uint64_t SplitMix64::next() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

float SplitMix64::uniform() {
  // 24 random bits -> [0, 2^24) -> [-1, 1) in steps of 2^-23: exact in float.
  const int32_t bits = static_cast<int32_t>(next() >> 40);
  return static_cast<float>(bits - (1 << 23)) / static_cast<float>(1 << 23);
}

OnnxGraphBuilder::OnnxGraphBuilder(std::string modelName, uint64_t seed)
    : modelName_(std::move(modelName)), rng_(seed) {
  graph_.set_name(modelName_);
}

Value OnnxGraphBuilder::input(const std::string& name, const Shape& shape) {
  setFloatType(*graph_.add_input(), name, shape);
  return {name, shape};
}

void OnnxGraphBuilder::output(const Value& v) { setFloatType(*graph_.add_output(), v.name, v.shape); }

onnx::NodeProto& OnnxGraphBuilder::addNode(const std::string& opType, const std::string& name,
                                           const std::vector<std::string>& inputs, const std::string& output) {
  onnx::NodeProto* n = graph_.add_node();
  n->set_name(name);
  n->set_op_type(opType);
  for (const auto& i : inputs) n->add_input(i);
  n->add_output(output);
  return *n;
}

std::string OnnxGraphBuilder::addInitializer(const std::string& name, const Shape& shape,
                                             const std::vector<float>& values) {
  onnx::TensorProto* t = graph_.add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : shape) t->add_dims(d);
  // raw_data is little-endian; copy element by element so the bytes do not depend on the host order.
  std::string raw(values.size() * 4, '\0');
  for (size_t i = 0; i < values.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &values[i], 4);
    for (int b = 0; b < 4; ++b) raw[i * 4 + static_cast<size_t>(b)] = static_cast<char>((bits >> (8 * b)) & 0xFF);
  }
  t->set_raw_data(raw);
  return name;
}

std::vector<float> OnnxGraphBuilder::uniformValues(int64_t count, float center, float halfWidth) {
  std::vector<float> v(static_cast<size_t>(count));
  for (float& x : v) x = center + halfWidth * rng_.uniform();
  return v;
}

Value OnnxGraphBuilder::conv(const Value& x, const std::string& name, const ConvSpec& spec,
                             const std::string& outName) {
  const int64_t inC = x.shape[1], inH = x.shape[2], inW = x.shape[3];
  int64_t padT = 0, padB = 0, padL = 0, padR = 0, outH = 0, outW = 0;
  if (spec.padding == Padding::Same) {
    samePadding(inH, spec.kernelH, spec.strideH, padT, padB, outH);
    samePadding(inW, spec.kernelW, spec.strideW, padL, padR, outW);
  } else {
    outH = (inH - spec.kernelH) / spec.strideH + 1;
    outW = (inW - spec.kernelW) / spec.strideW + 1;
  }
  const int64_t inPerGroup = inC / spec.group;
  const int64_t fanIn = inPerGroup * spec.kernelH * spec.kernelW;
  // He-uniform: U(-a, a) with a = sqrt(6 / fan_in) has variance 2 / fan_in.
  const float a = static_cast<float>(std::sqrt(6.0 / static_cast<double>(fanIn)));
  const Shape wShape = {spec.outChannels, inPerGroup, spec.kernelH, spec.kernelW};
  std::vector<std::string> inputs = {x.name, addInitializer(name + ".weight", wShape,
                                                            uniformValues(shapeElements(wShape), 0.0f, a))};
  if (spec.bias) inputs.push_back(addInitializer(name + ".bias", {spec.outChannels},
                                                 uniformValues(spec.outChannels, 0.0f, 0.02f)));
  const std::string out = outName.empty() ? name : outName;
  onnx::NodeProto& n = addNode("Conv", name, inputs, out);
  setInts(n, "kernel_shape", {spec.kernelH, spec.kernelW});
  setInts(n, "strides", {spec.strideH, spec.strideW});
  setInts(n, "pads", {padT, padL, padB, padR});
  setInts(n, "dilations", {1, 1});
  setInt(n, "group", spec.group);
  Value y{out, {x.shape[0], spec.outChannels, outH, outW}};
  macs_ += shapeElements(y.shape) * fanIn;
  return y;
}

Value OnnxGraphBuilder::batchNorm(const Value& x, const std::string& name, const std::string& outName) {
  const int64_t c = x.shape[1];
  std::vector<std::string> inputs = {
      x.name,
      addInitializer(name + ".scale", {c}, uniformValues(c, 1.0f, 0.1f)),
      addInitializer(name + ".bias", {c}, uniformValues(c, 0.0f, 0.05f)),
      addInitializer(name + ".mean", {c}, uniformValues(c, 0.0f, 0.05f)),
      addInitializer(name + ".var", {c}, uniformValues(c, 1.0f, 0.25f)),
  };
  const std::string out = outName.empty() ? name : outName;
  setFloat(addNode("BatchNormalization", name, inputs, out), "epsilon", 1e-3f);
  return {out, x.shape};
}

Value OnnxGraphBuilder::relu(const Value& x, const std::string& name, const std::string& outName) {
  const std::string out = outName.empty() ? name : outName;
  addNode("Relu", name, {x.name}, out);
  return {out, x.shape};
}

Value OnnxGraphBuilder::relu6(const Value& x, const std::string& name, const std::string& outName) {
  if (!haveRelu6Bounds_) {
    addInitializer("relu6.min", {}, {0.0f});
    addInitializer("relu6.max", {}, {6.0f});
    haveRelu6Bounds_ = true;
  }
  const std::string out = outName.empty() ? name : outName;
  addNode("Clip", name, {x.name, "relu6.min", "relu6.max"}, out);
  return {out, x.shape};
}

Value OnnxGraphBuilder::add(const Value& a, const Value& b, const std::string& name, const std::string& outName) {
  const std::string out = outName.empty() ? name : outName;
  addNode("Add", name, {a.name, b.name}, out);
  return {out, a.shape};
}

Value OnnxGraphBuilder::averagePool(const Value& x, const std::string& name, int64_t kernelH, int64_t kernelW,
                                    const std::string& outName) {
  const std::string out = outName.empty() ? name : outName;
  onnx::NodeProto& n = addNode("AveragePool", name, {x.name}, out);
  setInts(n, "kernel_shape", {kernelH, kernelW});
  setInts(n, "strides", {kernelH, kernelW});
  setInts(n, "pads", {0, 0, 0, 0});
  return {out, {x.shape[0], x.shape[1], (x.shape[2] - kernelH) / kernelH + 1, (x.shape[3] - kernelW) / kernelW + 1}};
}

Value OnnxGraphBuilder::globalAveragePool(const Value& x, const std::string& name, const std::string& outName) {
  const std::string out = outName.empty() ? name : outName;
  addNode("GlobalAveragePool", name, {x.name}, out);
  return {out, {x.shape[0], x.shape[1], 1, 1}};
}

Value OnnxGraphBuilder::flatten(const Value& x, const std::string& name, const std::string& outName) {
  const std::string out = outName.empty() ? name : outName;
  setInt(addNode("Flatten", name, {x.name}, out), "axis", 1);
  Shape rest(x.shape.begin() + 1, x.shape.end());
  return {out, {x.shape[0], shapeElements(rest)}};
}

Value OnnxGraphBuilder::gemm(const Value& x, const std::string& name, int64_t outFeatures, bool heInit,
                             const std::string& outName) {
  const int64_t k = x.shape[1];
  const float a = static_cast<float>(std::sqrt((heInit ? 6.0 : 3.0) / static_cast<double>(k)));
  std::vector<std::string> inputs = {
      x.name,
      addInitializer(name + ".weight", {outFeatures, k}, uniformValues(outFeatures * k, 0.0f, a)),
      addInitializer(name + ".bias", {outFeatures}, uniformValues(outFeatures, 0.0f, 0.02f)),
  };
  const std::string out = outName.empty() ? name : outName;
  onnx::NodeProto& n = addNode("Gemm", name, inputs, out);
  setFloat(n, "alpha", 1.0f);
  setFloat(n, "beta", 1.0f);
  setInt(n, "transB", 1);
  Value y{out, {x.shape[0], outFeatures}};
  macs_ += shapeElements(y.shape) * k;
  return y;
}

Value OnnxGraphBuilder::softmax(const Value& x, const std::string& name, const std::string& outName) {
  const std::string out = outName.empty() ? name : outName;
  setInt(addNode("Softmax", name, {x.name}, out), "axis", -1);
  return {out, x.shape};
}

onnx::ModelProto OnnxGraphBuilder::finish(const std::string& docString) {
  onnx::ModelProto m;
  m.set_ir_version(7);
  m.set_producer_name("stowage-zoo");
#ifdef STOWAGE_VERSION
  m.set_producer_version(STOWAGE_VERSION);
#endif
  m.set_doc_string(docString);
  onnx::OperatorSetIdProto* opset = m.add_opset_import();
  opset->set_domain("");
  opset->set_version(13);
  *m.mutable_graph() = graph_;
  return m;
}

int64_t countParameters(const onnx::ModelProto& model) {
  int64_t n = 0;
  for (const onnx::TensorProto& t : model.graph().initializer()) {
    if (t.dims_size() == 0) continue;
    int64_t e = 1;
    for (int64_t d : t.dims()) e *= d;
    n += e;
  }
  return n;
}

}  // namespace stowage::zoo
