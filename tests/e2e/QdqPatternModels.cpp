// The single-op QDQ pattern models (see QdqPatternModels.h). Each pattern builds a float graph and the range of
// every activation tensor, worked out from the weight and input statistics: for inputs uniform in [-1, 1] and
// weights uniform in [-a, a], a dot product of fan-in n has standard deviation sigma = a * sqrt(n) / 3, and
// ranges of about +-3 sigma saturate few values.
// Helper names start with "qdq": the e2e tests are a unity build.
#include "QdqPatternModels.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <stdexcept>

#include "stowage/zoo/OnnxGraphBuilder.h"
#include "stowage/zoo/QdqQuantizer.h"

namespace stowage::e2e {
namespace {

using zoo::TensorRange;

/// A float graph under construction and the ranges of its tensors.
class QdqFloatGraph {
 public:
  explicit QdqFloatGraph(uint64_t seed) : rng_(seed) {}

  std::string input(const std::string& name, const Shape& shape, TensorRange range = {-1.0f, 1.0f}) {
    addValueInfo(*graph_.add_input(), name, shape);
    inputs_.push_back({name, shape});
    ranges_[name] = range;
    return name;
  }
  void output(const std::string& name, const Shape& shape) { addValueInfo(*graph_.add_output(), name, shape); }

  /// Uniform weights in [-a, a].
  std::string weights(const std::string& name, const Shape& shape, float a) {
    std::vector<float> v(static_cast<size_t>(shapeElements(shape)));
    for (float& x : v) x = a * rng_.uniform();
    return constant(name, shape, v);
  }
  std::string constant(const std::string& name, const Shape& shape, const std::vector<float>& v) {
    onnx::TensorProto* t = graph_.add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : shape) t->add_dims(d);
    std::string raw(v.size() * 4, '\0');
    for (size_t i = 0; i < v.size(); ++i) {
      uint32_t bits;
      std::memcpy(&bits, &v[i], 4);
      for (int b = 0; b < 4; ++b) raw[i * 4 + static_cast<size_t>(b)] = static_cast<char>((bits >> (8 * b)) & 0xFF);
    }
    t->set_raw_data(raw);
    return name;
  }
  std::string int64s(const std::string& name, const std::vector<int64_t>& v) {
    onnx::TensorProto* t = graph_.add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(v.size()));
    for (int64_t x : v) t->add_int64_data(x);
    return name;
  }

  onnx::NodeProto& node(const std::string& op, const std::string& name, const std::vector<std::string>& inputs,
                        TensorRange range) {
    onnx::NodeProto* n = graph_.add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& i : inputs) n->add_input(i);
    n->add_output(name + "_out");
    ranges_[name + "_out"] = range;
    return *n;
  }

  static void ints(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  static void intAttr(onnx::NodeProto& n, const std::string& name, int64_t v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }

  /// Conv with weights uniform in [-a, a], a = gain * sqrt(3 / fanIn) / sigmaIn, so that the output's standard
  /// deviation is about `gain` (less at padded borders); its range is [-3 gain, 3.3 gain].
  std::string conv(const std::string& name, const std::string& x, int64_t inC, int64_t outC, int64_t k,
                   int64_t stride, int64_t pad, int64_t group, bool bias, double sigmaIn, double gain) {
    const int64_t fanIn = inC / group * k * k;
    const float a = static_cast<float>(gain * std::sqrt(3.0 / static_cast<double>(fanIn)) / sigmaIn);
    std::vector<std::string> in = {x, weights(name + ".weight", {outC, inC / group, k, k}, a)};
    if (bias) in.push_back(weights(name + ".bias", {outC}, 0.05f));
    const float r = static_cast<float>(3.0 * gain);
    onnx::NodeProto& n = node("Conv", name, in, {-r, 1.1f * r});
    ints(n, "kernel_shape", {k, k});
    ints(n, "strides", {stride, stride});
    ints(n, "pads", {pad, pad, pad, pad});
    intAttr(n, "group", group);
    return n.output(0);
  }

  onnx::ModelProto finish(const std::string& name) {
    graph_.set_name(name);
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.set_producer_name("stowage-qdq-patterns");
    auto* op = m.add_opset_import();
    op->set_domain("");
    op->set_version(13);
    *m.mutable_graph() = graph_;
    return m;
  }

  const std::map<std::string, TensorRange>& ranges() const { return ranges_; }
  std::map<std::string, TensorRange>& ranges() { return ranges_; }
  const std::vector<QdqPatternInput>& inputs() const { return inputs_; }

 private:
  static void addValueInfo(onnx::ValueInfoProto& vi, const std::string& name, const Shape& shape) {
    vi.set_name(name);
    auto* tt = vi.mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : shape) tt->mutable_shape()->add_dim()->set_dim_value(d);
  }

  zoo::SplitMix64 rng_;
  onnx::GraphProto graph_;
  std::map<std::string, TensorRange> ranges_;
  std::vector<QdqPatternInput> inputs_;
};

/// One pattern: builds its float graph; says whether it has weights and which QdqOptions it needs.
struct QdqPattern {
  std::string name;
  bool hasWeights = false;
  bool keepActivations = false;
  bool quantizeSoftmax = false;
  std::function<void(QdqFloatGraph&)> build;
};

constexpr double kQdqUniformSigma = 0.5773502691896258;  // of U[-1, 1]

/// Conv pattern: input [1, inC, hw, hw].
QdqPattern qdqConvPattern(const std::string& name, int64_t inC, int64_t outC, int64_t hw, int64_t k, int64_t stride,
                          int64_t pad, int64_t group, bool bias) {
  return {name, true, false, false, [=](QdqFloatGraph& g) {
            std::string x = g.input("x", {1, inC, hw, hw});
            std::string y = g.conv("conv", x, inC, outC, k, stride, pad, group, bias, kQdqUniformSigma, 0.8);
            const int64_t o = (hw + 2 * pad - k) / stride + 1;
            g.output(y, {1, outC, o, o});
          }};
}

std::vector<QdqPattern> qdqPatterns() {
  std::vector<QdqPattern> p;
  p.push_back(qdqConvPattern("conv3x3_pad1", 4, 6, 8, 3, 1, 1, 1, true));
  p.push_back(qdqConvPattern("conv3x3_pad1_c3", 3, 5, 7, 3, 1, 1, 1, true));
  p.push_back(qdqConvPattern("conv3x3_stride2", 5, 3, 9, 3, 2, 1, 1, true));
  p.push_back(qdqConvPattern("conv_depthwise", 5, 5, 8, 3, 1, 1, 5, true));
  p.push_back(qdqConvPattern("conv_depthwise_stride2", 8, 8, 9, 3, 2, 1, 8, true));
  p.push_back(qdqConvPattern("conv1x1", 8, 5, 6, 1, 1, 0, 1, true));
  p.push_back(qdqConvPattern("conv3x3_nobias", 3, 4, 8, 3, 1, 1, 1, false));
  p.push_back(qdqConvPattern("conv1x1_nobias", 5, 3, 5, 1, 1, 0, 1, false));

  // Conv then Relu / Clip(0, 6): kept as nodes with their own Q/DQ, and removed as ORT does by default.
  for (bool keep : {true, false}) {
    p.push_back({keep ? "conv_relu" : "conv_relu_fused", true, keep, false, [](QdqFloatGraph& g) {
                   std::string x = g.input("x", {1, 4, 6, 6});
                          std::string y = g.conv("conv", x, 4, 6, 3, 1, 1, 1, true, kQdqUniformSigma, 0.8);
                   g.node("Relu", "relu", {y}, {0.0f, 2.64f});
                   g.output("relu_out", {1, 6, 6, 6});
                 }});
    p.push_back({keep ? "conv_clip6" : "conv_clip6_fused", true, keep, false, [](QdqFloatGraph& g) {
                   std::string x = g.input("x", {1, 3, 6, 6});
                          // sigma about 3, so that the bound 6 clips.
                   std::string y = g.conv("conv", x, 3, 5, 3, 1, 1, 1, true, kQdqUniformSigma, 3.0);
                   g.constant("clip.min", {}, {0.0f});
                   g.constant("clip.max", {}, {6.0f});
                   g.node("Clip", "clip", {y, "clip.min", "clip.max"}, {0.0f, 6.0f});
                   g.output("clip_out", {1, 5, 6, 6});
                 }});
  }

  for (int transB : {0, 1}) {
    p.push_back({fmt::format("gemm_transb{}", transB), true, false, false, [transB](QdqFloatGraph& g) {
                   std::string x = g.input("x", {2, 16});
                   const float a = static_cast<float>(std::sqrt(3.0 / 16.0));
                   std::string w = g.weights("fc.weight", transB ? Shape{10, 16} : Shape{16, 10}, a);
                   std::string b = g.weights("fc.bias", {10}, 0.05f);
                   // sigma = a * sqrt(16 / 3) / sqrt(3) = 1 / sqrt(3).
                   auto& n = g.node("Gemm", "fc", {x, w, b}, {-1.8f, 1.9f});
                   QdqFloatGraph::intAttr(n, "transB", transB);
                   g.output("fc_out", {2, 10});
                 }});
  }
  p.push_back({"matmul_const", true, false, false, [](QdqFloatGraph& g) {
                 std::string x = g.input("x", {3, 12});
                 std::string w = g.weights("mm.weight", {12, 7}, static_cast<float>(std::sqrt(3.0 / 12.0)));
                 g.node("MatMul", "mm", {x, w}, {-1.7f, 1.8f});
                 g.output("mm_out", {3, 7});
               }});
  p.push_back({"matmul_act", false, false, false, [](QdqFloatGraph& g) {
                 std::string a = g.input("a", {4, 8});
                 std::string b = g.input("b", {8, 6});
                 // 8 products of two U[-1, 1]: sigma = sqrt(8) / 3.
                 g.node("MatMul", "mm", {a, b}, {-2.6f, 2.8f});
                 g.output("mm_out", {4, 6});
               }});
  p.push_back({"add", false, false, false, [](QdqFloatGraph& g) {
                 std::string a = g.input("a", {1, 4, 5, 5});
                 std::string b = g.input("b", {1, 4, 5, 5}, {-1.5f, 1.2f});
                 g.node("Add", "add", {a, b}, {-1.9f, 2.0f});
                 g.output("add_out", {1, 4, 5, 5});
               }});
  p.push_back({"mul", false, false, false, [](QdqFloatGraph& g) {
                 std::string a = g.input("a", {1, 4, 5, 5});
                 std::string b = g.input("b", {1, 4, 5, 5}, {-1.2f, 1.0f});
                 g.node("Mul", "mul", {a, b}, {-0.9f, 0.95f});
                 g.output("mul_out", {1, 4, 5, 5});
               }});
  p.push_back({"averagepool_2x2", false, false, false, [](QdqFloatGraph& g) {
                 std::string x = g.input("x", {1, 3, 8, 8});
                 auto& n = g.node("AveragePool", "pool", {x}, {-1.0f, 1.0f});
                 QdqFloatGraph::ints(n, "kernel_shape", {2, 2});
                 QdqFloatGraph::ints(n, "strides", {2, 2});
                 g.output("pool_out", {1, 3, 4, 4});
               }});
  p.push_back({"averagepool_3x3_pad1", false, false, false, [](QdqFloatGraph& g) {
                 std::string x = g.input("x", {1, 5, 7, 7});
                 auto& n = g.node("AveragePool", "pool", {x}, {-1.0f, 1.0f});
                 QdqFloatGraph::ints(n, "kernel_shape", {3, 3});
                 QdqFloatGraph::ints(n, "strides", {2, 2});
                 QdqFloatGraph::ints(n, "pads", {1, 1, 1, 1});
                 g.output("pool_out", {1, 5, 4, 4});
               }});
  p.push_back({"maxpool_2x2", false, false, false, [](QdqFloatGraph& g) {
                 std::string x = g.input("x", {1, 3, 8, 8});
                 auto& n = g.node("MaxPool", "pool", {x}, {-1.0f, 1.0f});
                 QdqFloatGraph::ints(n, "kernel_shape", {2, 2});
                 QdqFloatGraph::ints(n, "strides", {2, 2});
                 g.output("pool_out", {1, 3, 4, 4});
               }});
  p.push_back({"maxpool_3x3_pad1", false, false, false, [](QdqFloatGraph& g) {
                 std::string x = g.input("x", {1, 5, 7, 7});
                 auto& n = g.node("MaxPool", "pool", {x}, {-1.0f, 1.0f});
                 QdqFloatGraph::ints(n, "kernel_shape", {3, 3});
                 QdqFloatGraph::ints(n, "strides", {2, 2});
                 QdqFloatGraph::ints(n, "pads", {1, 1, 1, 1});
                 g.output("pool_out", {1, 5, 4, 4});
               }});
  p.push_back({"globalaveragepool", false, false, false, [](QdqFloatGraph& g) {
                 std::string x = g.input("x", {1, 6, 5, 5});
                 // the mean of 25 U[-1, 1]: sigma = 0.577 / 5.
                 g.node("GlobalAveragePool", "gap", {x}, {-0.33f, 0.35f});
                 g.output("gap_out", {1, 6, 1, 1});
               }});
  p.push_back({"concat", false, false, false, [](QdqFloatGraph& g) {
                 std::string a = g.input("a", {1, 3, 4, 4});
                 std::string b = g.input("b", {1, 2, 4, 4}, {-2.0f, 1.5f});
                 QdqFloatGraph::intAttr(g.node("Concat", "concat", {a, b}, {-2.0f, 1.5f}), "axis", 1);
                 g.output("concat_out", {1, 5, 4, 4});
               }});
  p.push_back({"conv_reshape_conv", true, false, false, [](QdqFloatGraph& g) {
                 std::string x = g.input("x", {1, 4, 6, 6});
                 std::string y = g.conv("conv1", x, 4, 8, 3, 1, 1, 1, true, kQdqUniformSigma, 0.8);
                 std::string shape = g.int64s("reshape.shape", {1, 16, 3, 6});
                 g.node("Reshape", "reshape", {y, shape}, g.ranges().at(y));
                 g.conv("conv2", "reshape_out", 16, 4, 1, 1, 0, 1, true, 0.8, 0.8);
                 g.output("conv2_out", {1, 4, 3, 6});
               }});
  p.push_back({"conv_transpose_conv", true, false, false, [](QdqFloatGraph& g) {
                 std::string x = g.input("x", {1, 3, 4, 8});
                 std::string y = g.conv("conv1", x, 3, 6, 3, 1, 1, 1, true, kQdqUniformSigma, 0.8);
                 QdqFloatGraph::ints(g.node("Transpose", "transpose", {y}, g.ranges().at(y)), "perm", {0, 1, 3, 2});
                 g.conv("conv2", "transpose_out", 6, 5, 3, 1, 1, 1, true, 0.8, 0.8);
                 g.output("conv2_out", {1, 5, 8, 4});
               }});
  p.push_back({"conv_flatten_gemm", true, false, false, [](QdqFloatGraph& g) {
                 std::string x = g.input("x", {1, 3, 4, 4});
                 std::string y = g.conv("conv", x, 3, 4, 3, 1, 1, 1, true, kQdqUniformSigma, 0.8);
                 QdqFloatGraph::intAttr(g.node("Flatten", "flatten", {y}, g.ranges().at(y)), "axis", 1);
                 const float a = static_cast<float>(0.8 * std::sqrt(3.0 / 64.0) / 0.8);
                 std::string w = g.weights("fc.weight", {10, 64}, a);
                 std::string b = g.weights("fc.bias", {10}, 0.05f);
                 QdqFloatGraph::intAttr(g.node("Gemm", "fc", {"flatten_out", w, b}, {-2.4f, 2.5f}), "transB", 1);
                 g.output("fc_out", {1, 10});
               }});
  p.push_back({"sigmoid", false, false, false, [](QdqFloatGraph& g) {
                 std::string x = g.input("x", {1, 4, 6, 6}, {-1.0f, 1.0f});
                 g.node("Sigmoid", "sigmoid", {x}, {0.2689f, 0.7311f});
                 g.output("sigmoid_out", {1, 4, 6, 6});
               }});
  // A Sigmoid after an int8 convolution: with int8 activations its table lookup runs on the convolution's NHWC tensor.
  p.push_back({"conv_sigmoid", true, false, false, [](QdqFloatGraph& g) {
                 std::string x = g.input("x", {1, 4, 6, 6});
                 std::string y = g.conv("conv", x, 4, 6, 3, 1, 1, 1, true, kQdqUniformSigma, 1.5);
                 g.node("Sigmoid", "sigmoid", {y}, {0.01f, 0.99f});
                 g.output("sigmoid_out", {1, 6, 6, 6});
               }});
  p.push_back({"softmax", false, false, true, [](QdqFloatGraph& g) {
                 std::string x = g.input("x", {2, 10});
                 QdqFloatGraph::intAttr(g.node("Softmax", "softmax", {x}, {0.0f, 1.0f}), "axis", -1);
                 g.output("softmax_out", {2, 10});
               }});
  return p;
}

}  // namespace

std::vector<QdqPatternModel> qdqPatternModels() {
  std::vector<QdqPatternModel> out;
  uint64_t seed = 0x51D9;
  for (const QdqPattern& pattern : qdqPatterns()) {
    ++seed;
    for (zoo::QdqActivationType type : {zoo::QdqActivationType::Int8, zoo::QdqActivationType::UInt8})
      for (bool perChannel : {true, false}) {
        if (!pattern.hasWeights && !perChannel) continue;
        for (int variant = 0; variant < 3; ++variant) {
          // 0: asymmetric activations, 1: symmetric, 2: asymmetric with 7-bit weights (weights per channel only)
          const bool symmetric = variant == 1, reduceRange = variant == 2;
          if (reduceRange && !(pattern.hasWeights && perChannel)) continue;
          QdqFloatGraph g(seed);  // the same weights in every variant of a pattern
          pattern.build(g);
          std::string name = pattern.name + (type == zoo::QdqActivationType::Int8 ? "_s8" : "_u8");
          if (pattern.hasWeights) name += perChannel ? "_pc" : "_pt";
          name += symmetric ? "_sym" : "_asym";
          if (reduceRange) name += "_rr";
          zoo::QdqOptions o;
          o.activations = type;
          o.perChannel = perChannel;
          o.symmetricActivations = symmetric;
          o.keepActivations = pattern.keepActivations;
          o.quantizeSoftmax = pattern.quantizeSoftmax;
          o.forceQuantizeAllInputs = true;
          o.reduceRange = reduceRange;
          onnx::ModelProto floatModel = g.finish(name);
          auto q = zoo::quantizeToQdq(floatModel, g.ranges(), o);
          if (!q.ok()) throw std::runtime_error(name + ": " + q.error().render());
          out.push_back({name, std::move(*q), g.inputs(), std::move(floatModel)});
        }
      }
  }
  return out;
}

}  // namespace stowage::e2e
