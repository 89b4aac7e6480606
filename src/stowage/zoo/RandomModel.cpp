// Random recipes and their ONNX models (see RandomModel.h).
#include "stowage/zoo/RandomModel.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "stowage/zoo/OnnxGraphBuilder.h"
#include "stowage/zoo/QdqQuantizer.h"

namespace stowage::zoo {
namespace random_model_detail {

/// A tensor of the model under construction: name, shape and an estimate of its value range (for quantisation).
struct RValue {
  std::string name;
  std::vector<int64_t> shape;
  float lo = -1.0f, hi = 1.0f;
};

int64_t pick(SplitMix64& rng, int64_t lo, int64_t hi) {  // uniform in [lo, hi]
  return lo + static_cast<int64_t>(rng.next() % static_cast<uint64_t>(hi - lo + 1));
}
bool chance(SplitMix64& rng, int percent) { return static_cast<int>(rng.next() % 100) < percent; }
int64_t elementsOf(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

class RandomGraph {
 public:
  explicit RandomGraph(uint64_t seed) : rng_(seed ^ 0x5EED5EEDull) {}

  onnx::GraphProto graph;
  std::map<std::string, TensorRange> ranges;
  std::vector<RValue> values;  // every 4-D activation made so far, in order (joins look back here)
  std::set<std::string> outputs;
  int nodes = 0;
  bool usesHardSwish = false;  // an opset 14 op

  RValue input(const std::vector<int64_t>& shape) {
    RValue v{"input", shape, -1.0f, 1.0f};
    addValueInfo(*graph.add_input(), v);
    ranges[v.name] = {v.lo, v.hi};
    return v;
  }
  void output(const RValue& v) {
    if (!outputs.insert(v.name).second) return;
    addValueInfo(*graph.add_output(), v);
  }

  onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& inputs, RValue& out) {
    out.name = fmt::format("n{}_{}", nodes++, op);
    onnx::NodeProto* n = graph.add_node();
    n->set_op_type(op);
    n->set_name(out.name);
    for (const std::string& i : inputs) n->add_input(i);
    n->add_output(out.name);
    ranges[out.name] = {std::min(out.lo, 0.0f), std::max(out.hi, 0.0f)};
    if (out.shape.size() == 4) values.push_back(out);
    return *n;
  }

  std::string floats(const std::string& name, const std::vector<int64_t>& shape, float halfWidth, float center = 0) {
    onnx::TensorProto* t = graph.add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : shape) t->add_dims(d);
    for (int64_t i = 0; i < elementsOf(shape); ++i) t->add_float_data(center + halfWidth * rng_.uniform());
    return name;
  }
  std::string ints(const std::string& name, const std::vector<int64_t>& v) {
    onnx::TensorProto* t = graph.add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(v.size()));
    for (int64_t x : v) t->add_int64_data(x);
    return name;
  }
  float jitter() { return 0.75f + 0.25f * (rng_.uniform() + 1.0f); }  // [0.75, 1.25)

  static void setInt(onnx::NodeProto& n, const std::string& name, int64_t v) {
    onnx::AttributeProto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void setInts(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
    onnx::AttributeProto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  static void setFloat(onnx::NodeProto& n, const std::string& name, float v) {
    onnx::AttributeProto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }

  /// Conv of `step` on x; false when it cannot apply (then nothing is added).
  bool conv(const RValue& x, const RandomStep& step, RValue& out) {
    if (x.shape.size() != 4) return false;
    const int64_t c = x.shape[1], h = x.shape[2], w = x.shape[3];
    int64_t oc = std::max<int64_t>(1, step.outChannels), group = 1;
    if (step.groupMode == 1) {
      group = c;
      oc = c * std::max<int64_t>(1, std::min<int64_t>(2, oc / std::max<int64_t>(1, c)));
    } else if (step.groupMode == 2 && step.groups > 1 && c % step.groups == 0) {
      group = step.groups;
      oc = std::max(group, oc / group * group);
    }
    int64_t kh = step.kernelH, kw = step.kernelW, dh = step.dilationH, dw = step.dilationW;
    int64_t pads[4];
    auto fit = [](int64_t in, int64_t& k, int64_t& d, int64_t& pb, int64_t& pe) {
      if (d * (k - 1) + 1 > in + pb + pe) d = 1;
      if (k > in + pb + pe) k = std::max<int64_t>(1, in);
      pb = std::min(pb, d * (k - 1));
      pe = std::min(pe, d * (k - 1));
      return d * (k - 1) + 1 <= in + pb + pe;
    };
    std::copy(step.pads, step.pads + 4, pads);
    if (!fit(h, kh, dh, pads[0], pads[2]) || !fit(w, kw, dw, pads[1], pads[3])) return false;
    const int64_t oh = (h + pads[0] + pads[2] - dh * (kh - 1) - 1) / step.strideH + 1;
    const int64_t ow = (w + pads[1] + pads[3] - dw * (kw - 1) - 1) / step.strideW + 1;
    if (oh < 1 || ow < 1) return false;
    const int64_t fanIn = (c / group) * kh * kw;
    const float mag = std::max(std::fabs(x.lo), std::fabs(x.hi));
    out.shape = {x.shape[0], oc, oh, ow};
    out.lo = -mag * jitter();
    out.hi = mag * jitter();
    const std::string id = fmt::format("n{}_Conv", nodes);
    std::vector<std::string> inputs{x.name, floats(id + ".weight", {oc, c / group, kh, kw},
                                                   std::sqrt(6.0f / static_cast<float>(fanIn)))};
    if (step.bias) inputs.push_back(floats(id + ".bias", {oc}, 0.1f));
    onnx::NodeProto& n = node("Conv", inputs, out);
    setInts(n, "kernel_shape", {kh, kw});
    setInts(n, "strides", {step.strideH, step.strideW});
    setInts(n, "dilations", {dh, dw});
    setInts(n, "pads", {pads[0], pads[1], pads[2], pads[3]});
    if (group != 1) setInt(n, "group", group);
    return true;
  }

  /// A same-shape convolution (stride 1, centred pads) with `outChannels` outputs, for branches.
  bool sameConv(const RValue& x, const RandomStep& step, int64_t outChannels, RValue& out) {
    RandomStep s = step;
    s.outChannels = outChannels;
    s.strideH = s.strideW = 1;
    s.kernelH = s.kernelH % 2 ? s.kernelH : s.kernelH - 1;
    s.kernelW = s.kernelW % 2 ? s.kernelW : s.kernelW - 1;
    s.kernelH = std::max<int64_t>(1, std::min<int64_t>(s.kernelH, x.shape[2] % 2 ? x.shape[2] : x.shape[2] - 1));
    s.kernelW = std::max<int64_t>(1, std::min<int64_t>(s.kernelW, x.shape[3] % 2 ? x.shape[3] : x.shape[3] - 1));
    s.pads[0] = s.pads[2] = s.dilationH * (s.kernelH - 1) / 2;
    s.pads[1] = s.pads[3] = s.dilationW * (s.kernelW - 1) / 2;
    if (s.groupMode == 1 && outChannels != x.shape[1]) s.groupMode = 0;
    if (!conv(x, s, out)) return false;
    return out.shape[2] == x.shape[2] && out.shape[3] == x.shape[3] && out.shape[1] == outChannels;
  }

  bool pool(const RValue& x, const RandomStep& step, RValue& out) {
    if (x.shape.size() != 4) return false;
    const bool isMax = step.kind == RandomStepKind::MaxPool;
    const int64_t h = x.shape[2], w = x.shape[3];
    const int64_t kh = std::min(step.kernelH, h), kw = std::min(step.kernelW, w);
    // ONNX Runtime (and ONNX's shape inference) want every pad smaller than the kernel.
    const int64_t pads[4] = {std::min(step.pads[0], kh - 1), std::min(step.pads[1], kw - 1),
                             std::min(step.pads[2], kh - 1), std::min(step.pads[3], kw - 1)};
    const int64_t oh = (h + pads[0] + pads[2] - kh) / step.strideH + 1;
    const int64_t ow = (w + pads[1] + pads[3] - kw) / step.strideW + 1;
    if (oh < 1 || ow < 1) return false;
    out.shape = {x.shape[0], x.shape[1], oh, ow};
    out.lo = x.lo;
    out.hi = x.hi;
    onnx::NodeProto& n = node(isMax ? "MaxPool" : "AveragePool", {x.name}, out);
    setInts(n, "kernel_shape", {kh, kw});
    setInts(n, "strides", {step.strideH, step.strideW});
    setInts(n, "pads", {pads[0], pads[1], pads[2], pads[3]});
    if (!isMax && step.countIncludePad) setInt(n, "count_include_pad", 1);
    return true;
  }

  RValue activation(const RValue& x, const RandomStep& step) {
    RValue out;
    out.shape = x.shape;
    const std::string& a = step.activation;
    if (a == "Relu") {
      out.lo = 0, out.hi = std::max(x.hi, 0.1f);
      node("Relu", {x.name}, out);
    } else if (a == "Clip") {
      out.lo = step.clipMin, out.hi = step.clipMax;
      const std::string id = fmt::format("n{}_Clip", nodes);
      const std::string mn = id + ".min", mx = id + ".max";
      for (auto [name, v] : {std::pair{mn, step.clipMin}, std::pair{mx, step.clipMax}}) {
        onnx::TensorProto* t = graph.add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::FLOAT);
        t->add_float_data(v);
      }
      node("Clip", {x.name, mn, mx}, out);
    } else if (a == "Sigmoid") {
      out.lo = 0, out.hi = 1;
      node("Sigmoid", {x.name}, out);
    } else if (a == "Tanh") {
      out.lo = -1, out.hi = 1;
      node("Tanh", {x.name}, out);
    } else if (a == "LeakyRelu") {
      out.lo = x.lo * step.alpha, out.hi = x.hi;
      setFloat(node("LeakyRelu", {x.name}, out), "alpha", step.alpha);
    } else {  // HardSwish
      out.lo = -0.375f, out.hi = std::max(x.hi, 0.1f);
      node("HardSwish", {x.name}, out);
      usesHardSwish = true;
    }
    return out;
  }

  RValue binary(const std::string& op, const RValue& a, const RValue& b) {
    RValue out;
    out.shape = a.shape;
    if (op == "Add") {
      out.lo = a.lo + b.lo, out.hi = a.hi + b.hi;
    } else {
      const float m = std::max(std::fabs(a.lo), std::fabs(a.hi)) * std::max(std::fabs(b.lo), std::fabs(b.hi));
      out.lo = -m, out.hi = m;
    }
    node(op, {a.name, b.name}, out);
    return out;
  }

  RValue transpose(const RValue& x, const std::vector<int64_t>& perm) {
    RValue out = x;
    for (size_t i = 0; i < perm.size(); ++i) out.shape[i] = x.shape[static_cast<size_t>(perm[i])];
    setInts(node("Transpose", {x.name}, out), "perm", perm);
    return out;
  }

  RValue reshape(const RValue& x, const std::vector<int64_t>& shape) {
    RValue out = x;
    out.shape = shape;
    const std::string s = ints(fmt::format("n{}_Reshape.shape", nodes), shape);
    node("Reshape", {x.name, s}, out);
    return out;
  }

  RValue head(const RValue& x, const RandomStep& step) {
    RValue flat = x;
    const int64_t k = elementsOf(x.shape) / x.shape[0];
    if (step.variant == 0) {
      flat.shape = {x.shape[0], k};
      setInt(node("Flatten", {x.name}, flat), "axis", 1);
    } else {
      flat = reshape(x, {x.shape[0], k});
    }
    const int64_t f = std::max<int64_t>(1, step.outChannels);
    const float mag = std::max(std::fabs(x.lo), std::fabs(x.hi)) * 1.5f;
    RValue y;
    y.shape = {x.shape[0], f};
    y.lo = -mag, y.hi = mag;
    const float bound = std::sqrt(3.0f / static_cast<float>(k));
    const std::string id = fmt::format("n{}_{}", nodes, step.variant2 == 0 ? "Gemm" : "MatMul");
    if (step.variant2 == 0) {
      const bool transB = step.groupMode != 0;
      const std::string wName = floats(id + ".weight", transB ? std::vector<int64_t>{f, k} : std::vector<int64_t>{k, f}, bound);
      std::vector<std::string> inputs{flat.name, wName};
      if (step.bias) inputs.push_back(floats(id + ".bias", {f}, 0.1f));
      onnx::NodeProto& n = node("Gemm", inputs, y);
      if (transB) setInt(n, "transB", 1);
    } else {
      node("MatMul", {flat.name, floats(id + ".weight", {k, f}, bound)}, y);
    }
    if (!step.softmax) return y;
    RValue s;
    s.shape = y.shape;
    s.lo = 0, s.hi = 1;
    setInt(node("Softmax", {y.name}, s), "axis", -1);
    return s;
  }

 private:
  static void addValueInfo(onnx::ValueInfoProto& vi, const RValue& v) {
    vi.set_name(v.name);
    onnx::TypeProto_Tensor* tt = vi.mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : v.shape) tt->mutable_shape()->add_dim()->set_dim_value(d);
  }

  SplitMix64 rng_;
};

const char* stepName(RandomStepKind k) {
  switch (k) {
    case RandomStepKind::Conv: return "conv";
    case RandomStepKind::MaxPool: return "maxpool";
    case RandomStepKind::AveragePool: return "avgpool";
    case RandomStepKind::GlobalAveragePool: return "gap";
    case RandomStepKind::Activation: return "act";
    case RandomStepKind::ResidualAdd: return "res-add";
    case RandomStepKind::ResidualMul: return "res-mul";
    case RandomStepKind::JoinEarlier: return "join";
    case RandomStepKind::ConcatBranch: return "concat";
    case RandomStepKind::Transpose: return "transpose";
    case RandomStepKind::Reshape: return "reshape";
    case RandomStepKind::ExtraOutput: return "extra-output";
    case RandomStepKind::Head: return "head";
  }
  return "?";
}

RandomStep randomConvStep(SplitMix64& rng, int64_t maxChannels) {
  RandomStep s;
  s.kind = RandomStepKind::Conv;
  s.outChannels = pick(rng, 1, maxChannels);
  static const int64_t kernels[] = {1, 1, 2, 3, 3, 3, 5};
  s.kernelH = kernels[rng.next() % 7];
  s.kernelW = chance(rng, 70) ? s.kernelH : kernels[rng.next() % 7];
  s.strideH = chance(rng, 65) ? 1 : pick(rng, 2, 3);
  s.strideW = chance(rng, 70) ? s.strideH : pick(rng, 1, 2);
  s.dilationH = chance(rng, 15) ? 2 : 1;
  s.dilationW = chance(rng, 15) ? 2 : 1;
  const int64_t padMode = pick(rng, 0, 2);  // 0: none, 1: centred ("same" for stride 1), 2: random asymmetric
  for (int i = 0; i < 4; ++i) {
    const int64_t k = i % 2 == 0 ? s.kernelH : s.kernelW, d = i % 2 == 0 ? s.dilationH : s.dilationW;
    s.pads[i] = padMode == 0 ? 0 : padMode == 1 ? d * (k - 1) / 2 : pick(rng, 0, 2);
  }
  const int64_t g = pick(rng, 0, 99);
  s.groupMode = g < 60 ? 0 : g < 85 ? 1 : 2;
  s.groups = pick(rng, 2, 4);
  s.bias = chance(rng, 80);
  return s;
}

}  // namespace random_model_detail

std::string RandomRecipe::describe() const {
  using namespace random_model_detail;  // in the function: the unity build must not see these names elsewhere
  std::string s = fmt::format("{}{}x{}x{}:", quantized ? (tflite ? "tflite " : "int8 ") : (tflite ? "f32 tflite " : "f32 "), channels, height, width);
  for (const RandomStep& st : steps) {
    s += ' ';
    s += stepName(st.kind);
    if (st.kind == RandomStepKind::Conv)
      s += fmt::format("(o{} k{}x{} s{}x{} d{}x{} p{},{},{},{} g{}{})", st.outChannels, st.kernelH, st.kernelW, st.strideH,
                       st.strideW, st.dilationH, st.dilationW, st.pads[0], st.pads[1], st.pads[2], st.pads[3],
                       st.groupMode == 0 ? "1" : st.groupMode == 1 ? "dw" : std::to_string(st.groups), st.bias ? "" : " nobias");
    else if (st.kind == RandomStepKind::MaxPool || st.kind == RandomStepKind::AveragePool)
      s += fmt::format("(k{}x{} s{}x{} p{},{},{},{}{})", st.kernelH, st.kernelW, st.strideH, st.strideW, st.pads[0],
                       st.pads[1], st.pads[2], st.pads[3], st.countIncludePad ? " incl" : "");
    else if (st.kind == RandomStepKind::Activation)
      s += "(" + st.activation + ")";
    else if (st.kind == RandomStepKind::ConcatBranch || st.kind == RandomStepKind::Head)
      s += fmt::format("(o{}{}{})", st.outChannels, st.kind == RandomStepKind::Head ? (st.variant2 ? " matmul" : " gemm") : "",
                       st.softmax ? " softmax" : "");
  }
  if (quantized && tflite)
    s += fmt::format(" | s8{}{}", perChannel ? " pc" : " pt", symmetric ? " sym" : "");
  else if (quantized)
    s += fmt::format(" | {}{}{}{}{}", uint8Activations ? "u8" : "s8", perChannel ? " pc" : " pt", symmetric ? " sym" : "",
                     reduceRange ? " rr" : "", keepActivations ? " keep-act" : "");
  return s;
}

RandomRecipe randomRecipe(uint64_t seed, const RandomModelOptions& options) {
  using namespace random_model_detail;
  // The start state is hashed: SplitMix64 steps its state by the same 0x9E37... that `seed * 0x9E37...` used to
  // start from, so seed s + 1 drew seed s's stream shifted by one draw (consecutive seeds shared most of their steps).
  SplitMix64 rng(SplitMix64(seed * 0x9E3779B97F4A7C15ull + 27).next());
  RandomRecipe r;
  r.seed = seed;
  r.quantized = options.quantized;
  r.channels = chance(rng, 30) ? pick(rng, 1, 3) : pick(rng, 1, options.maxChannels);
  r.height = pick(rng, 3, options.maxSpatial);
  r.width = chance(rng, 60) ? r.height : pick(rng, 3, options.maxSpatial);
  const int count = static_cast<int>(pick(rng, 1, std::max(1, options.maxSteps)));
  static const char* const activations[] = {"Relu", "Relu", "Clip", "Sigmoid", "Tanh", "LeakyRelu", "HardSwish"};
  for (int i = 0; i < count; ++i) {
    const int64_t roll = pick(rng, 0, 99);
    RandomStep s = randomConvStep(rng, options.maxChannels);  // branches use its parameters too
    if (roll < 28) {
      s.kind = RandomStepKind::Conv;
    } else if (roll < 36 || roll < 42) {
      s.kind = roll < 36 ? RandomStepKind::MaxPool : RandomStepKind::AveragePool;
      s.kernelH = pick(rng, 1, 3);
      s.kernelW = chance(rng, 70) ? s.kernelH : pick(rng, 1, 3);
      s.strideH = pick(rng, 1, 2);
      s.strideW = chance(rng, 70) ? s.strideH : pick(rng, 1, 2);
      for (int64_t& p : s.pads) p = chance(rng, 60) ? 0 : pick(rng, 0, 1);
      s.countIncludePad = chance(rng, 40);
    } else if (roll < 44) {
      s.kind = RandomStepKind::GlobalAveragePool;
    } else if (roll < 60) {
      s.kind = RandomStepKind::Activation;
      s.activation = activations[rng.next() % 7];
      s.alpha = 0.01f * static_cast<float>(pick(rng, 1, 30));
      s.clipMin = chance(rng, 50) ? 0.0f : -0.5f * static_cast<float>(pick(rng, 1, 4));
      s.clipMax = 0.5f * static_cast<float>(pick(rng, 1, 12));
    } else if (roll < 70) {
      s.kind = RandomStepKind::ResidualAdd;
    } else if (roll < 74) {
      s.kind = RandomStepKind::ResidualMul;
    } else if (roll < 80) {
      s.kind = RandomStepKind::JoinEarlier;
    } else if (roll < 89) {
      s.kind = RandomStepKind::ConcatBranch;
      s.outChannels = pick(rng, 1, std::max<int64_t>(1, options.maxChannels / 2));
      s.variant = static_cast<int>(pick(rng, 0, 1));  // branch first or second
    } else if (roll < 93) {
      s.kind = RandomStepKind::Transpose;
      s.variant = static_cast<int>(pick(rng, 0, 1));
    } else if (roll < 97) {
      s.kind = RandomStepKind::Reshape;
      s.variant = static_cast<int>(pick(rng, 0, 1));
    } else {
      s.kind = RandomStepKind::ExtraOutput;
    }
    r.steps.push_back(s);
  }
  if (chance(rng, 50)) {
    RandomStep h;
    h.kind = RandomStepKind::Head;
    h.variant = static_cast<int>(pick(rng, 0, 1));
    h.variant2 = static_cast<int>(pick(rng, 0, 1));
    h.groupMode = static_cast<int>(pick(rng, 0, 1));  // Gemm transB
    h.outChannels = pick(rng, 1, 16);
    h.bias = chance(rng, 80);
    h.softmax = chance(rng, 40);
    r.steps.push_back(h);
  }
  r.uint8Activations = chance(rng, 30);
  r.perChannel = chance(rng, 60);
  r.symmetric = chance(rng, 20);
  r.reduceRange = chance(rng, 15);
  r.keepActivations = chance(rng, 25);
  r.quantizeSoftmax = chance(rng, 50);
  r.tflite = chance(rng, options.quantized ? options.tflitePercent : options.floatTflitePercent);
  return r;
}

Result<RandomModel> buildRandomModel(const RandomRecipe& recipe) {
  using namespace random_model_detail;
  if (recipe.channels < 1 || recipe.height < 1 || recipe.width < 1)
    return makeError("random model", fmt::format("empty input {}x{}x{}", recipe.channels, recipe.height, recipe.width));
  RandomGraph g(recipe.seed);
  g.graph.set_name(fmt::format("random_{}", recipe.seed));
  RValue cur = g.input({1, recipe.channels, recipe.height, recipe.width});
  for (const RandomStep& step : recipe.steps) {
    const bool is4d = cur.shape.size() == 4;
    if (!is4d && step.kind != RandomStepKind::Activation && step.kind != RandomStepKind::ExtraOutput) continue;
    RValue out, branch;
    switch (step.kind) {
      case RandomStepKind::Conv:
        if (g.conv(cur, step, out)) cur = out;
        break;
      case RandomStepKind::MaxPool:
      case RandomStepKind::AveragePool:
        if (g.pool(cur, step, out)) cur = out;
        break;
      case RandomStepKind::GlobalAveragePool:
        out.shape = {cur.shape[0], cur.shape[1], 1, 1};
        out.lo = cur.lo, out.hi = cur.hi;
        g.node("GlobalAveragePool", {cur.name}, out);
        cur = out;
        break;
      case RandomStepKind::Activation: cur = g.activation(cur, step); break;
      case RandomStepKind::ResidualAdd:
        if (g.sameConv(cur, step, cur.shape[1], branch)) cur = g.binary("Add", cur, branch);
        break;
      case RandomStepKind::ResidualMul:
        if (g.sameConv(cur, step, cur.shape[1], branch)) {
          RandomStep sig;
          sig.activation = "Sigmoid";
          cur = g.binary("Mul", cur, g.activation(branch, sig));
        }
        break;
      case RandomStepKind::JoinEarlier:
        for (auto it = g.values.rbegin(); it != g.values.rend(); ++it)
          if (it->name != cur.name && it->shape == cur.shape) {
            cur = g.binary("Add", cur, *it);
            break;
          }
        break;
      case RandomStepKind::ConcatBranch:
        if (g.sameConv(cur, step, std::max<int64_t>(1, step.outChannels), branch)) {
          out.shape = cur.shape;
          out.shape[1] += branch.shape[1];
          out.lo = std::min(cur.lo, branch.lo), out.hi = std::max(cur.hi, branch.hi);
          onnx::NodeProto& n = g.node("Concat", step.variant ? std::vector{branch.name, cur.name} : std::vector{cur.name, branch.name}, out);
          RandomGraph::setInt(n, "axis", 1);
          cur = out;
        }
        break;
      case RandomStepKind::Transpose:
        cur = g.transpose(cur, step.variant ? std::vector<int64_t>{0, 2, 3, 1} : std::vector<int64_t>{0, 1, 3, 2});
        break;
      case RandomStepKind::Reshape:
        cur = g.reshape(cur, step.variant ? std::vector<int64_t>{cur.shape[0], cur.shape[1] * cur.shape[2], cur.shape[3], 1}
                                          : std::vector<int64_t>{cur.shape[0], cur.shape[1], cur.shape[2] * cur.shape[3], 1});
        break;
      case RandomStepKind::ExtraOutput:
        if (cur.name != "input") g.output(cur);
        break;
      case RandomStepKind::Head: cur = g.head(cur, step); break;
    }
  }
  if (cur.name == "input" || g.outputs.count(cur.name)) {  // every model has at least one node and a fresh output
    RandomStep relu;
    cur = g.activation(cur, relu);
  }
  g.output(cur);

  RandomModel result;
  onnx::ModelProto& m = result.floatModel;
  m.set_ir_version(7);
  m.set_producer_name("stowage-random");
  m.add_opset_import()->set_version(g.usesHardSwish ? 14 : 13);
  *m.mutable_graph() = std::move(g.graph);
  m.set_doc_string(recipe.describe());
  result.nodes = m.graph().node_size();
  if (!recipe.quantized) {
    result.model = m;
    return result;
  }
  QdqOptions q;
  q.activations = recipe.uint8Activations ? QdqActivationType::UInt8 : QdqActivationType::Int8;
  q.perChannel = recipe.perChannel;
  q.symmetricActivations = recipe.symmetric;
  q.reduceRange = recipe.reduceRange;
  q.keepActivations = recipe.keepActivations;
  q.quantizeSoftmax = recipe.quantizeSoftmax;
  STOWAGE_ASSIGN_OR_RETURN(result.model, quantizeToQdq(m, g.ranges, q));
  result.model.set_doc_string(recipe.describe());
  return result;
}

}  // namespace stowage::zoo
