// Float ONNX -> QDQ ONNX as ONNX Runtime's quantize_static writes it (see QdqQuantizer.h).
#include "stowage/zoo/QdqQuantizer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>

#include "stowage/zoo/ZooModels.h"

namespace stowage::zoo {
// Helpers live in their own namespace: the library is a unity build, and OnnxGraphBuilder.cpp defines
// similarly named helpers in stowage::zoo's anonymous namespace.
namespace qdqimpl {
namespace {

const onnx::AttributeProto* findAttr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

int64_t intAttrOr(const onnx::NodeProto& n, const std::string& name, int64_t dflt) {
  const auto* a = findAttr(n, name);
  return a ? a->i() : dflt;
}

float floatAttrOr(const onnx::NodeProto& n, const std::string& name, float dflt) {
  const auto* a = findAttr(n, name);
  return a ? a->f() : dflt;
}

void setIntAttr(onnx::NodeProto& n, const std::string& name, int64_t v) {
  onnx::AttributeProto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

int64_t elementCount(const onnx::TensorProto& t) {
  int64_t e = 1;
  for (int64_t d : t.dims()) e *= d;
  return e;
}

std::vector<float> floatsOf(const onnx::TensorProto& t) {
  std::vector<float> v;
  if (t.has_raw_data()) {
    v.resize(t.raw_data().size() / 4);
    for (size_t i = 0; i < v.size(); ++i) {
      uint32_t bits = 0;
      for (int b = 0; b < 4; ++b)
        bits |= static_cast<uint32_t>(static_cast<uint8_t>(t.raw_data()[i * 4 + static_cast<size_t>(b)])) << (8 * b);
      std::memcpy(&v[i], &bits, 4);
    }
  } else {
    v.assign(t.float_data().begin(), t.float_data().end());
  }
  return v;
}

/// Little-endian raw bytes of `values` (float, int8, uint8 or int32).
template <typename T>
std::string rawBytes(const std::vector<T>& values) {
  std::string raw(values.size() * sizeof(T), '\0');
  for (size_t i = 0; i < values.size(); ++i) {
    uint32_t bits = 0;
    if constexpr (std::is_same_v<T, float>) std::memcpy(&bits, &values[i], 4);
    else bits = static_cast<uint32_t>(values[i]);
    for (size_t b = 0; b < sizeof(T); ++b) raw[i * sizeof(T) + b] = static_cast<char>((bits >> (8 * b)) & 0xFF);
  }
  return raw;
}

template <typename T>
onnx::TensorProto makeTensor(const std::string& name, int dataType, const std::vector<int64_t>& dims,
                             const std::vector<T>& values) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(dataType);
  for (int64_t d : dims) t.add_dims(d);
  t.set_raw_data(rawBytes(values));
  return t;
}

size_t elementSize(int dataType) {
  switch (dataType) {
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::BOOL: return 1;
    case onnx::TensorProto::INT16:
    case onnx::TensorProto::UINT16:
    case onnx::TensorProto::FLOAT16: return 2;
    case onnx::TensorProto::INT64:
    case onnx::TensorProto::DOUBLE: return 8;
    default: return 4;
  }
}

/// The graph's initializers by name (pointers stay valid while the graph is not resized).
std::map<std::string, onnx::TensorProto*> initializersByName(onnx::GraphProto& g) {
  std::map<std::string, onnx::TensorProto*> m;
  for (auto& t : *g.mutable_initializer()) m[t.name()] = &t;
  return m;
}

std::map<std::string, int> consumerCounts(const onnx::GraphProto& g) {
  std::map<std::string, int> c;
  for (const auto& n : g.node())
    for (const auto& i : n.input())
      if (!i.empty()) ++c[i];
  return c;
}

bool isGraphOutput(const onnx::GraphProto& g, const std::string& name) {
  for (const auto& o : g.output())
    if (o.name() == name) return true;
  return false;
}

bool isGraphInput(const onnx::GraphProto& g, const std::string& name) {
  for (const auto& i : g.input())
    if (i.name() == name) return true;
  return false;
}

/// Drops initializers no node reads (and that are not graph outputs).
void dropUnusedInitializers(onnx::GraphProto& g) {
  const auto used = consumerCounts(g);
  auto* inits = g.mutable_initializer();
  for (int i = inits->size() - 1; i >= 0; --i)
    if (!used.count(inits->Get(i).name()) && !isGraphOutput(g, inits->Get(i).name())) inits->DeleteSubrange(i, 1);
}

/// ORT's quantize_nparray for float32: round-half-even(x / scale) + zp, clamped.
int32_t quantizeValue(float x, float scale, int32_t zp, int32_t lo, int32_t hi) {
  const float q = std::nearbyint(x / scale) + static_cast<float>(zp);
  return static_cast<int32_t>(std::clamp(q, static_cast<float>(lo), static_cast<float>(hi)));
}

struct QuantizedWeight {
  std::string dqOutput;
  std::vector<float> scales;  ///< one per channel, or one
  bool perChannel = false;
};

/// One activation tensor to quantize: its own range, or the parameters of `sameAs`.
struct ActTensor {
  std::string sameAs;
};

struct ActParams {
  QdqParams params;
  std::string scaleName, zeroPointName;
};

class Quantizer {
 public:
  Quantizer(onnx::ModelProto& m, const std::map<std::string, TensorRange>& ranges, const QdqOptions& o)
      : m_(m), g_(*m.mutable_graph()), ranges_(ranges), opt_(o) {}

  Status run();

 private:
  void wantActivation(const std::string& name) {
    if (name.empty() || acts_.count(name)) return;
    acts_[name] = {};
    actOrder_.push_back(name);
  }
  void wantSameAs(const std::string& out, const std::string& in) {
    if (acts_.count(out)) return;
    acts_[out] = {in};
    actOrder_.push_back(out);
  }
  void forgetActivation(const std::string& name) {
    acts_.erase(name);
    actOrder_.erase(std::remove(actOrder_.begin(), actOrder_.end(), name), actOrder_.end());
  }
  Status decide();
  Result<ActParams> paramsOf(const std::string& name, int depth = 0);
  Result<QuantizedWeight> quantizeWeight(const std::string& name, int64_t axis, const std::string& node);
  Result<std::string> quantizeBias(const std::string& name, const ActParams& x, const QuantizedWeight& w,
                                   const std::string& node);
  void addQdqPair(const std::string& tensor, const ActParams& p, std::vector<onnx::NodeProto>& out);
  /// The DequantizeLinear of constant `name` (initializers <name>_quantized, <name><scaleSuffix>,
  /// <name><zeroSuffix>), queued for the next node emitted; returns its output, <name>_DequantizeLinear_Output.
  std::string addConstDequantize(const std::string& name, const char* scaleSuffix, const char* zeroSuffix, bool perAxis,
                                 int64_t axis);

  int actType() const {
    return opt_.activations == QdqActivationType::Int8 ? onnx::TensorProto::INT8 : onnx::TensorProto::UINT8;
  }

  onnx::ModelProto& m_;
  onnx::GraphProto& g_;
  const std::map<std::string, TensorRange>& ranges_;
  QdqOptions opt_;
  std::map<std::string, onnx::TensorProto*> inits_;
  std::map<std::string, ActTensor> acts_;
  std::vector<std::string> actOrder_;
  std::map<std::string, ActParams> params_;
  std::set<std::string> paramInitsAdded_;
  std::vector<bool> removed_;
  /// Per node: input index -> "weight" (axis) or "bias" to quantize.
  struct ConstInput {
    int node, input;
    bool bias;
    int64_t axis;  ///< weights: -1 per tensor
  };
  std::vector<ConstInput> constInputs_;
  std::map<std::string, QuantizedWeight> weightCache_;
  std::vector<onnx::TensorProto> newInits_;
  std::vector<onnx::NodeProto> constDq_;  ///< DQ nodes of weights and biases made since the last node emitted
};

Status Quantizer::decide() {
  inits_ = initializersByName(g_);
  removed_.assign(static_cast<size_t>(g_.node_size()), false);
  const bool keepActs = opt_.keepActivations || opt_.symmetricActivations;
  std::map<std::string, int> producer;
  for (int i = 0; i < g_.node_size(); ++i)
    for (const auto& o : g_.node(i).output()) producer[o] = i;
  const auto consumers = consumerCounts(g_);
  auto isConst = [&](const std::string& n) { return inits_.count(n) > 0; };

  for (int i = 0; i < g_.node_size(); ++i) {
    onnx::NodeProto& n = *g_.mutable_node(i);
    const std::string& op = n.op_type();
    const std::string where = n.name();
    if (op == "Conv" || op == "Gemm") {
      if (n.input_size() < 2 || !isConst(n.input(1)))
        return makeUnsupported(where, op + " with a non-constant weight", "QDQ quantization needs constant weights");
      int64_t axis = 0;
      if (op == "Gemm") {
        if (intAttrOr(n, "transA", 0) != 0 || floatAttrOr(n, "alpha", 1.0f) != 1.0f ||
            floatAttrOr(n, "beta", 1.0f) != 1.0f)
          return makeUnsupported(where, "Gemm with transA, alpha or beta other than the defaults");
        axis = intAttrOr(n, "transB", 0) ? 0 : 1;
      }
      wantActivation(n.input(0));
      constInputs_.push_back({i, 1, false, opt_.perChannel ? axis : -1});
      if (n.input_size() > 2 && !n.input(2).empty()) {
        if (!isConst(n.input(2))) return makeUnsupported(where, op + " with a non-constant bias");
        constInputs_.push_back({i, 2, true, 0});
      }
      wantActivation(n.output(0));
    } else if (op == "MatMul") {
      for (int k = 0; k < 2; ++k) {
        if (isConst(n.input(k))) {
          const int64_t rank = inits_.at(n.input(k))->dims_size();
          if (k == 0 || rank != 2) return makeUnsupported(where, "MatMul with a constant other than a 2-D B");
          constInputs_.push_back({i, k, false, opt_.perChannel ? rank - 1 : -1});
        } else {
          wantActivation(n.input(k));
        }
      }
      wantActivation(n.output(0));
    } else if (op == "Relu" || op == "Clip") {
      const std::string& in = n.input(0);
      const bool removable = !keepActs && producer.count(in) && !removed_[static_cast<size_t>(producer[in])] &&
                             consumers.at(in) == 1 && !isGraphOutput(g_, in) && !isGraphInput(g_, in) &&
                             ranges_.count(n.output(0));
      if (removable) {
        onnx::NodeProto& up = *g_.mutable_node(producer[in]);
        for (auto& o : *up.mutable_output())
          if (o == in) o = n.output(0);
        producer[n.output(0)] = producer[in];
        forgetActivation(in);
        removed_[static_cast<size_t>(i)] = true;
      } else {
        wantActivation(in);
      }
      wantActivation(n.output(0));
    } else if (op == "MaxPool" || op == "AveragePool" || op == "Reshape" || op == "Transpose") {
      if (opt_.forceQuantizeAllInputs) wantActivation(n.input(0));
      if (acts_.count(n.input(0))) wantSameAs(n.output(0), n.input(0));
    } else if (op == "Add" || op == "Mul" || op == "Concat" || op == "Sigmoid" || op == "GlobalAveragePool" ||
               (op == "Softmax" && opt_.quantizeSoftmax)) {
      for (const auto& in : n.input()) {
        if (isConst(in)) return makeUnsupported(where, op + " with a constant input", "only activations are quantized");
        wantActivation(in);
      }
      wantActivation(n.output(0));
    }
  }
  return Status::success();
}

Result<ActParams> Quantizer::paramsOf(const std::string& name, int depth) {
  if (auto it = params_.find(name); it != params_.end()) return it->second;
  if (depth > 64) return makeError(name, "cycle in shared quantization parameters");
  const ActTensor& a = acts_.at(name);
  ActParams p;
  if (!a.sameAs.empty()) {
    STOWAGE_ASSIGN_OR_RETURN(p, paramsOf(a.sameAs, depth + 1));
  } else {
    auto r = ranges_.find(name);
    if (r == ranges_.end())
      return makeError(name, "no calibrated range for this activation tensor", "give its range to quantizeToQdq");
    p.params = qdqActivationParams(r->second, opt_.activations, opt_.symmetricActivations);
    p.scaleName = name + "_scale";
    p.zeroPointName = name + "_zero_point";
  }
  params_[name] = p;
  return p;
}

Result<QuantizedWeight> Quantizer::quantizeWeight(const std::string& name, int64_t axis, const std::string& node) {
  const std::string key = fmt::format("{}@{}", name, axis);
  if (auto it = weightCache_.find(key); it != weightCache_.end()) return it->second;
  const onnx::TensorProto& t = *inits_.at(name);
  if (t.data_type() != onnx::TensorProto::FLOAT) return makeUnsupported(node, "weight " + name + " is not float32");
  const std::vector<float> w = floatsOf(t);
  std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
  int64_t channels = 1, inner = static_cast<int64_t>(w.size());
  if (axis >= 0) {
    channels = dims[static_cast<size_t>(axis)];
    inner = 1;
    for (size_t d = static_cast<size_t>(axis) + 1; d < dims.size(); ++d) inner *= dims[d];
  }
  auto channelOf = [&](size_t i) { return static_cast<size_t>((static_cast<int64_t>(i) / inner) % channels); };
  std::vector<float> absMax(static_cast<size_t>(channels), 0.0f);
  for (size_t i = 0; i < w.size(); ++i) absMax[channelOf(i)] = std::max(absMax[channelOf(i)], std::fabs(w[i]));
  QuantizedWeight q;
  q.perChannel = axis >= 0;
  // compute_scale_zp with symmetric int8 [-127, 127] ([-64, 64] with reduce_range): (2 * absmax) / (qmax - qmin)
  // in double, stored as float32.
  const int32_t qmax = opt_.reduceRange ? 64 : 127;
  for (float a : absMax) {
    const float s = static_cast<float>(2.0 * static_cast<double>(a) / (2.0 * qmax));
    q.scales.push_back(s < FLT_MIN ? 1.0f : s);
  }
  std::vector<int8_t> qv(w.size());
  for (size_t i = 0; i < w.size(); ++i)
    qv[i] = static_cast<int8_t>(quantizeValue(w[i], q.scales[channelOf(i)], 0, -qmax, qmax));
  const std::vector<int64_t> scaleDims = q.perChannel ? std::vector<int64_t>{channels} : std::vector<int64_t>{};
  newInits_.push_back(makeTensor(name + "_quantized", onnx::TensorProto::INT8, dims, qv));
  newInits_.push_back(makeTensor(name + "_scale", onnx::TensorProto::FLOAT, scaleDims, q.scales));
  newInits_.push_back(makeTensor(name + "_zero_point", onnx::TensorProto::INT8, scaleDims,
                                 std::vector<int8_t>(static_cast<size_t>(channels), 0)));
  q.dqOutput = addConstDequantize(name, "_scale", "_zero_point", q.perChannel, axis);
  weightCache_[key] = q;
  return q;
}

Result<std::string> Quantizer::quantizeBias(const std::string& name, const ActParams& x, const QuantizedWeight& w,
                                            const std::string& node) {
  const onnx::TensorProto& t = *inits_.at(name);
  if (t.data_type() != onnx::TensorProto::FLOAT || t.dims_size() != 1)
    return makeUnsupported(node, "bias " + name + " is not a 1-D float32 tensor");
  const std::vector<float> b = floatsOf(t);
  if (w.perChannel && w.scales.size() != b.size())
    return makeError(node, fmt::format("bias {} has {} values for {} weight channels", name, b.size(), w.scales.size()));
  // ORT's quantize_bias_static: scale = x_scale * w_scale and q = round(b / scale), both in float32.
  std::vector<float> scales;
  for (size_t c = 0; c < (w.perChannel ? b.size() : 1); ++c) scales.push_back(x.params.scale * w.scales[c]);
  std::vector<int32_t> q(b.size());
  for (size_t c = 0; c < b.size(); ++c) {
    const float s = scales[w.perChannel ? c : 0];
    const double v = s == 0.0f ? 0.0 : static_cast<double>(std::nearbyint(b[c] / s));
    q[c] = static_cast<int32_t>(std::clamp(v, -2147483648.0, 2147483647.0));
  }
  const std::vector<int64_t> scaleDims =
      w.perChannel ? std::vector<int64_t>{static_cast<int64_t>(b.size())} : std::vector<int64_t>{};
  newInits_.push_back(makeTensor(name + "_quantized", onnx::TensorProto::INT32, {static_cast<int64_t>(b.size())}, q));
  newInits_.push_back(makeTensor(name + "_quantized_scale", onnx::TensorProto::FLOAT, scaleDims, scales));
  newInits_.push_back(makeTensor(name + "_quantized_zero_point", onnx::TensorProto::INT32, scaleDims,
                                 std::vector<int32_t>(scales.size(), 0)));
  return addConstDequantize(name, "_quantized_scale", "_quantized_zero_point", w.perChannel, 0);
}

std::string Quantizer::addConstDequantize(const std::string& name, const char* scaleSuffix, const char* zeroSuffix,
                                          bool perAxis, int64_t axis) {
  onnx::NodeProto dq;
  dq.set_name(name + "_DequantizeLinear");
  dq.set_op_type("DequantizeLinear");
  dq.add_input(name + "_quantized");
  dq.add_input(name + scaleSuffix);
  dq.add_input(name + zeroSuffix);
  dq.add_output(name + "_DequantizeLinear_Output");
  if (perAxis) setIntAttr(dq, "axis", axis);
  constDq_.push_back(dq);
  return dq.output(0);
}

void Quantizer::addQdqPair(const std::string& tensor, const ActParams& p, std::vector<onnx::NodeProto>& out) {
  const bool graphOutput = isGraphOutput(g_, tensor);
  if (paramInitsAdded_.insert(p.scaleName).second) {
    newInits_.push_back(makeTensor(p.scaleName, onnx::TensorProto::FLOAT, {}, std::vector<float>{p.params.scale}));
    if (actType() == onnx::TensorProto::INT8)
      newInits_.push_back(makeTensor(p.zeroPointName, onnx::TensorProto::INT8, {},
                                     std::vector<int8_t>{static_cast<int8_t>(p.params.zeroPoint)}));
    else
      newInits_.push_back(makeTensor(p.zeroPointName, onnx::TensorProto::UINT8, {},
                                     std::vector<uint8_t>{static_cast<uint8_t>(p.params.zeroPoint)}));
  }
  onnx::NodeProto q;
  q.set_name(tensor + "_QuantizeLinear");
  q.set_op_type("QuantizeLinear");
  q.add_input(graphOutput ? tensor + "_QuantizeLinear_Input" : tensor);
  q.add_input(p.scaleName);
  q.add_input(p.zeroPointName);
  q.add_output(tensor + "_QuantizeLinear_Output");
  onnx::NodeProto dq;
  dq.set_name(tensor + "_DequantizeLinear");
  dq.set_op_type("DequantizeLinear");
  dq.add_input(q.output(0));
  dq.add_input(p.scaleName);
  dq.add_input(p.zeroPointName);
  dq.add_output(graphOutput ? tensor : tensor + "_DequantizeLinear_Output");
  out.push_back(std::move(q));
  out.push_back(std::move(dq));
}

Status Quantizer::run() {
  STOWAGE_TRY(decide());
  for (const std::string& name : actOrder_) STOWAGE_TRY(paramsOf(name));

  std::map<std::string, std::string> dqName;  // activation -> what its consumers read now
  for (const std::string& name : actOrder_)
    if (!isGraphOutput(g_, name)) dqName[name] = name + "_DequantizeLinear_Output";

  std::vector<onnx::NodeProto> out;
  for (const auto& in : g_.input())
    if (acts_.count(in.name())) addQdqPair(in.name(), params_.at(in.name()), out);
  for (int i = 0; i < g_.node_size(); ++i) {
    if (removed_[static_cast<size_t>(i)]) continue;
    onnx::NodeProto n = g_.node(i);
    if (n.name().empty()) n.set_name(fmt::format("{}_{}", n.op_type(), i));
    QuantizedWeight w;
    for (const ConstInput& ci : constInputs_) {
      if (ci.node != i) continue;
      const std::string& in = n.input(ci.input);
      if (!ci.bias) {
        STOWAGE_ASSIGN_OR_RETURN(w, quantizeWeight(in, ci.axis, n.name()));
        n.set_input(ci.input, w.dqOutput);
      } else {
        STOWAGE_ASSIGN_OR_RETURN(std::string dqOut, quantizeBias(in, params_.at(n.input(0)), w, n.name()));
        n.set_input(ci.input, dqOut);
      }
    }
    for (auto& in : *n.mutable_input())
      if (auto it = dqName.find(in); it != dqName.end()) in = it->second;
    for (auto& o : *n.mutable_output())
      if (acts_.count(o) && isGraphOutput(g_, o)) o += "_QuantizeLinear_Input";
    for (auto& dq : constDq_) out.push_back(std::move(dq));
    constDq_.clear();
    const std::vector<std::string> outputs(g_.node(i).output().begin(), g_.node(i).output().end());
    out.push_back(std::move(n));
    for (const std::string& o : outputs)
      if (acts_.count(o)) addQdqPair(o, params_.at(o), out);
  }
  g_.clear_node();
  for (auto& n : out) *g_.add_node() = std::move(n);
  for (auto& t : newInits_) *g_.add_initializer() = std::move(t);
  dropUnusedInitializers(g_);
  return Status::success();
}

}  // namespace
}  // namespace qdqimpl

QdqParams qdqActivationParams(const TensorRange& range, QdqActivationType type, bool symmetric) {
  const int32_t qmin = type == QdqActivationType::UInt8 ? 0 : (symmetric ? -127 : -128);
  const int32_t qmax = type == QdqActivationType::UInt8 ? 255 : 127;
  float rmin = std::min(range.min, 0.0f), rmax = std::max(range.max, 0.0f);
  if (symmetric) {
    const float a = std::max(std::fabs(rmin), std::fabs(rmax));
    rmin = -a;
    rmax = a;
  }
  // As ORT's compute_scale_zp: the float32 difference, divided in double; the zero point from the double scale.
  const double scale = static_cast<double>(rmax - rmin) / static_cast<double>(qmax - qmin);
  if (scale < static_cast<double>(FLT_MIN)) return {1.0f, 0};
  const double zp = symmetric ? std::nearbyint((qmin + qmax) / 2.0) : std::nearbyint(qmin - rmin / scale);
  return {static_cast<float>(scale), static_cast<int32_t>(std::clamp(zp, double(qmin), double(qmax)))};
}

Status foldBatchNormalization(onnx::ModelProto& model) {
  using namespace qdqimpl;
  onnx::GraphProto& g = *model.mutable_graph();
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto bn = g.node(i);
    if (bn.op_type() != "BatchNormalization" || bn.output_size() != 1) continue;
    int p = -1;
    for (int j = 0; j < i; ++j)
      for (const auto& o : g.node(j).output())
        if (o == bn.input(0)) p = j;
    if (p < 0) continue;
    onnx::NodeProto& prod = *g.mutable_node(p);
    const auto consumers = consumerCounts(g);
    auto inits = initializersByName(g);
    if ((prod.op_type() != "Conv" && prod.op_type() != "Gemm") || consumers.at(bn.input(0)) != 1 ||
        isGraphOutput(g, bn.input(0)) || prod.input_size() < 2 || !inits.count(prod.input(1)) ||
        consumers.at(prod.input(1)) != 1)
      continue;
    bool constParams = true;
    for (int k = 1; k < 5; ++k) constParams = constParams && inits.count(bn.input(k));
    if (!constParams) continue;
    const bool gemmNotTransposed = prod.op_type() == "Gemm" && intAttrOr(prod, "transB", 0) == 0;
    if (prod.op_type() == "Gemm" && (intAttrOr(prod, "transA", 0) != 0 || floatAttrOr(prod, "alpha", 1.0f) != 1.0f ||
                                     floatAttrOr(prod, "beta", 1.0f) != 1.0f))
      continue;
    const auto sc = floatsOf(*inits.at(bn.input(1))), beta = floatsOf(*inits.at(bn.input(2))),
               mean = floatsOf(*inits.at(bn.input(3))), var = floatsOf(*inits.at(bn.input(4)));
    const double eps = floatAttrOr(bn, "epsilon", 1e-5f);
    const size_t c = sc.size();
    std::vector<double> f(c);
    for (size_t k = 0; k < c; ++k) f[k] = sc[k] / std::sqrt(static_cast<double>(var[k]) + eps);

    onnx::TensorProto& wt = *inits.at(prod.input(1));
    std::vector<float> w = floatsOf(wt);
    if (wt.data_type() != onnx::TensorProto::FLOAT || wt.dims_size() < 2) continue;
    const size_t outDim = static_cast<size_t>(gemmNotTransposed ? wt.dims(1) : wt.dims(0));
    if (outDim != c) return makeError(bn.name(), "BatchNormalization channels differ from its producer's outputs");
    for (size_t k = 0; k < w.size(); ++k) {
      const size_t ch = gemmNotTransposed ? k % c : k / (w.size() / c);
      w[k] = static_cast<float>(w[k] * f[ch]);
    }
    wt.clear_float_data();
    wt.set_raw_data(rawBytes(w));

    std::vector<float> b(c, 0.0f);
    const bool hasBias = prod.input_size() > 2 && !prod.input(2).empty();
    if (hasBias) {
      if (!inits.count(prod.input(2)) || consumers.at(prod.input(2)) != 1 || elementCount(*inits.at(prod.input(2))) !=
                                                                                static_cast<int64_t>(c))
        return makeUnsupported(prod.name(), "cannot fold BatchNormalization: the bias is shared, not constant or "
                                            "not one value per channel");
      b = floatsOf(*inits.at(prod.input(2)));
    }
    for (size_t k = 0; k < c; ++k) b[k] = static_cast<float>((b[k] - mean[k]) * f[k] + beta[k]);
    std::string biasName = hasBias ? prod.input(2) : prod.name() + ".bias";
    while (!hasBias && inits.count(biasName)) biasName += "_";
    if (hasBias) {
      inits.at(biasName)->clear_float_data();
      inits.at(biasName)->set_raw_data(rawBytes(b));
      inits.at(biasName)->clear_dims();
      inits.at(biasName)->add_dims(static_cast<int64_t>(c));
    } else {
      *g.add_initializer() = makeTensor(biasName, onnx::TensorProto::FLOAT, {static_cast<int64_t>(c)}, b);
      while (prod.input_size() < 2) prod.add_input("");
      if (prod.input_size() == 2) prod.add_input(biasName);
      else prod.set_input(2, biasName);
    }
    prod.set_output(0, bn.output(0));
    g.mutable_node()->DeleteSubrange(i, 1);
    --i;
  }
  dropUnusedInitializers(g);
  return Status::success();
}

Result<onnx::ModelProto> quantizeToQdq(const onnx::ModelProto& floatModel,
                                       const std::map<std::string, TensorRange>& ranges, const QdqOptions& options) {
  onnx::ModelProto m = floatModel;
  STOWAGE_TRY(foldBatchNormalization(m));
  std::map<std::string, TensorRange> r = ranges;
  if (options.quantizeSoftmax)
    for (const auto& n : m.graph().node())
      if (n.op_type() == "Softmax") r[n.output(0)] = {0.0f, 1.0f};  // ORT's adjust_tensor_ranges
  qdqimpl::Quantizer q(m, r, options);
  STOWAGE_TRY(q.run());
  bool haveDefault = false;
  for (auto& op : *m.mutable_opset_import())
    if (op.domain().empty() || op.domain() == "ai.onnx") {
      haveDefault = true;
      if (op.version() < 13) op.set_version(13);
    }
  if (!haveDefault) {
    auto* op = m.add_opset_import();
    op->set_domain("");
    op->set_version(13);
  }
  if (m.ir_version() < 7) m.set_ir_version(7);
  return m;
}

Result<std::map<std::string, TensorRange>> calibrateRanges(const onnx::ModelProto& floatModel,
                                                           const std::vector<refeval::FloatTensor>& samples) {
  std::map<std::string, TensorRange> ranges;
  if (samples.empty()) return makeError(floatModel.graph().name(), "calibration needs at least one sample input");
  for (const auto& x : samples) {
    const auto env = refeval::evaluate(floatModel, x);
    if (env.empty())
      return makeUnsupported(floatModel.graph().name(), "the reference interpreter (ZooReferenceEval.h) lacks an op "
                                                        "of this model");
    std::vector<std::string> names = {floatModel.graph().input(0).name()};
    for (const auto& n : floatModel.graph().node())
      for (const auto& o : n.output()) names.push_back(o);
    for (const auto& name : names) {
      const auto& v = env.at(name).v;
      if (v.empty()) continue;
      const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
      auto [it, fresh] = ranges.try_emplace(name, TensorRange{*lo, *hi});
      if (!fresh) {
        it->second.min = std::min(it->second.min, *lo);
        it->second.max = std::max(it->second.max, *hi);
      }
    }
  }
  return ranges;
}

int64_t initializerBytes(const onnx::ModelProto& model) {
  int64_t bytes = 0;
  for (const auto& t : model.graph().initializer())
    bytes += qdqimpl::elementCount(t) * static_cast<int64_t>(qdqimpl::elementSize(t.data_type()));
  return bytes;
}

Result<ZooQdqModel> buildZooQdqModel(const std::string& name, uint64_t seed, const QdqOptions& options,
                                     int calibrationSamples) {
  STOWAGE_ASSIGN_OR_RETURN(ZooModel z, buildZooModel(name, seed));
  const ZooModelInfo* info = nullptr;
  for (const auto& m : zooModels())
    if (m.name == name) info = &m;
  std::vector<refeval::FloatTensor> samples;
  for (int i = 0; i < calibrationSamples; ++i) {
    const Tensor t = sampleInput(*info, seed + 1000 + static_cast<uint64_t>(i));
    refeval::FloatTensor f{t.shape, std::vector<float>(static_cast<size_t>(t.numElements()))};
    std::memcpy(f.v.data(), t.data.data(), f.v.size() * sizeof(float));
    samples.push_back(std::move(f));
  }
  STOWAGE_ASSIGN_OR_RETURN(auto ranges, calibrateRanges(z.model, samples));
  STOWAGE_ASSIGN_OR_RETURN(onnx::ModelProto q, quantizeToQdq(z.model, ranges, options));
  q.set_doc_string(fmt::format("{} Quantized to QDQ ({} activations{}, {}{} weights) on {} calibration inputs.",
                               z.model.doc_string(), options.activations == QdqActivationType::Int8 ? "int8" : "uint8",
                               options.symmetricActivations ? " symmetric" : "",
                               options.perChannel ? "per-channel" : "per-tensor",
                               options.reduceRange ? " 7-bit" : "", calibrationSamples));
  ZooQdqModel out;
  out.floatWeightBytes = initializerBytes(z.model);
  out.qdqWeightBytes = initializerBytes(q);
  out.model = std::move(q);
  return out;
}

}  // namespace stowage::zoo
