// TFLite import (see TfliteImporter.h): tensors, graph inputs/outputs and the operator loop; the per-op
// conversion lives in TfliteOpConverters.cpp.
#include "stowage/frontend/TfliteImporter.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "stowage/frontend/TfliteContext.h"
#include "stowage/frontend/TfliteReader.h"
#include "stowage/ir/Verifier.h"

namespace stowage {

namespace tflite {

namespace {

std::optional<DType> irDType(int8_t type) {
  switch (type) {
    case kFloat32: return DType::Float32;
    case kInt8: return DType::Int8;
    case kUInt8: return DType::UInt8;
    case kInt32: return DType::Int32;
    case kInt64: return DType::Int64;
    case kBool: return DType::Bool;
    default: return std::nullopt;
  }
}

std::string tensorLoc(const std::string& file, int32_t index, const TensorInfo& t) {
  return fmt::format("{}: tensor {} ('{}')", file, index, t.name);
}

}  // namespace

Result<TensorId> ImportContext::tensor(int32_t index) {
  if (index < 0 || static_cast<size_t>(index) >= sg_.tensors.size())
    return makeError(file_, fmt::format("tensor index {} is out of range", index));
  TensorId& id = ids_[static_cast<size_t>(index)];
  if (id != kNoTensor) return id;
  const TensorInfo& info = sg_.tensors[static_cast<size_t>(index)];
  const std::string loc = tensorLoc(file_, index, info);
  auto dtype = irDType(info.type);
  if (!dtype) return makeUnsupported(loc, fmt::format("has element type {}, which Stowage does not support", tensorTypeName(info.type)));
  if (info.hasSparsity) return makeUnsupported(loc, "is a sparse tensor; sparse weights are not supported");
  if (info.isVariable) return makeUnsupported(loc, "is a variable (stateful) tensor; not supported");
  Tensor t;
  t.name = info.name.empty() ? fmt::format("tensor_{}", index) : info.name;
  if (g_.findTensor(t.name)) t.name = fmt::format("{}#{}", t.name, index);
  t.dtype = *dtype;
  int64_t elements = 1;
  for (int32_t d : info.shape) {
    if (d < 0) return makeUnsupported(loc, "has a dynamic dimension (-1); Stowage needs static shapes");
    t.shape.push_back(d);
    elements *= d;  // stays below 2^62: checked against 2^31 after every factor
    if (elements > (int64_t{1} << 31))
      return makeUnsupported(loc, fmt::format("has {} elements or more; tensors above 2^31 elements are not supported", elements));
  }
  if (info.quant && !info.quant->hasDetails && !info.quant->scales.empty()) {
    const QuantizationInfo& q = *info.quant;
    QuantParams p;
    p.scales = q.scales;
    p.zeroPoints = q.zeroPoints;
    if (p.zeroPoints.empty()) p.zeroPoints.assign(p.scales.size(), 0);
    if (p.zeroPoints.size() != p.scales.size())
      return makeError(loc, fmt::format("has {} quantization scales but {} zero points", p.scales.size(), p.zeroPoints.size()));
    for (float s : p.scales)
      if (!(s > 0.0f) || !std::isfinite(s)) return makeError(loc, fmt::format("has a quantization scale {} that is not positive", s));
    // Some converters write an out-of-range quantized_dimension on 1-D tensors; TFLite ignores it, so do we.
    p.axis = (q.quantizedDimension >= 0 && static_cast<size_t>(q.quantizedDimension) < t.shape.size()) ? q.quantizedDimension : 0;
    if (p.scales.size() > 1 && (t.shape.empty() || t.shape[static_cast<size_t>(p.axis)] != static_cast<int64_t>(p.scales.size())))
      return makeError(loc, fmt::format("has {} per-channel scales but dimension {} of its shape [{}] does not match", p.scales.size(),
                                        p.axis, shapeToString(t.shape)));
    t.quant = std::move(p);
  } else if (info.quant && info.quant->hasDetails) {
    return makeUnsupported(loc, "uses custom/blockwise quantization details; not supported");
  }
  const BufferInfo& buf = model_.buffers[info.buffer];  // index checked by the reader
  if (info.buffer != 0 && buf.size > 0) {
    if (buf.size != t.byteSize())
      return makeError(loc, fmt::format("holds {} bytes of constant data but {}[{}] needs {}", buf.size, dtypeName(t.dtype),
                                        shapeToString(t.shape), t.byteSize()));
    t.kind = TensorKind::Constant;
    t.data.assign(buf.data, buf.data + buf.size);
  } else {
    t.kind = TensorKind::Activation;
  }
  id = g_.addTensor(std::move(t));
  return id;
}

TensorId ImportContext::addInt32Constant(const std::string& name, const std::vector<int32_t>& values) {
  Tensor t;
  t.name = g_.findTensor(name) ? fmt::format("{}#{}", name, g_.tensors.size()) : name;
  t.dtype = DType::Int32;
  t.shape = {static_cast<int64_t>(values.size())};
  t.kind = TensorKind::Constant;
  t.data.resize(values.size() * sizeof(int32_t));
  if (!values.empty()) std::memcpy(t.data.data(), values.data(), t.data.size());
  return g_.addTensor(std::move(t));
}

void ImportContext::addNode(Node node) { g_.addNode(std::move(node)); }

const TensorInfo* OpRef::inputInfo(size_t i) const {
  const int32_t idx = inputIndex(i);
  return idx < 0 ? nullptr : &ctx.subgraph().tensors[static_cast<size_t>(idx)];
}

const TensorInfo* OpRef::outputInfo(size_t i) const {
  const int32_t idx = i < op.outputs.size() ? op.outputs[i] : -1;
  return idx < 0 ? nullptr : &ctx.subgraph().tensors[static_cast<size_t>(idx)];
}

namespace {

std::string opDisplayName(const OperatorCodeInfo& c) {
  if (c.code == kCustom) return fmt::format("custom op \"{}\"", c.customCode);
  return builtinOpName(c.code);
}

Result<Graph> buildGraph(const Model& model, const std::string& file) {
  if (model.subgraphs.size() > 1) {
    // Extra subgraphs are only reachable through control flow ops (IF/WHILE/CALL), rejected below when used.
  }
  const SubGraphInfo& sg = model.subgraphs[0];
  Graph g;
  g.name = std::filesystem::path(file).stem().string();
  ImportContext ctx(model, sg, g, file);

  for (int32_t idx : sg.inputs) {
    STOWAGE_ASSIGN_OR_RETURN(TensorId id, ctx.tensor(idx));
    Tensor& t = g.tensor(id);
    if (t.isConstant()) return makeError(fmt::format("{}: tensor {} ('{}')", file, idx, t.name), "is a subgraph input but holds constant data");
    t.kind = TensorKind::Input;
    if (std::find(g.inputs.begin(), g.inputs.end(), id) == g.inputs.end()) g.inputs.push_back(id);
  }

  for (size_t k = 0; k < sg.operators.size(); ++k) {
    const OperatorInfo& op = sg.operators[k];
    const OperatorCodeInfo& code = model.operatorCodes[op.opcodeIndex];
    const std::string loc = fmt::format("{}: operator {} ({} v{})", file, k, opDisplayName(code), code.version);
    if (code.code == kCustom)
      return makeUnsupported(loc, fmt::format("is a custom op (custom_code \"{}\"); Stowage compiles builtin TFLite ops only",
                                              code.customCode),
                             code.customCode == "ethos-u" ? "this model was compiled by Vela for an Arm Ethos-U NPU; compile the "
                                                            "original (pre-Vela) .tflite instead"
                                                          : "");
    if (!isSupportedBuiltin(code.code))
      return makeUnsupported(loc, fmt::format("builtin op {} (code {}, version {}) is not supported", builtinOpName(code.code), code.code,
                                              code.version));
    OpRef ref{ctx, op, code.code, code.version, k, fmt::format("{}_{}", builtinOpName(code.code), k), loc};
    STOWAGE_TRY(convertOperator(ref));
  }

  std::set<TensorId> seen;
  for (int32_t idx : sg.outputs) {
    STOWAGE_ASSIGN_OR_RETURN(TensorId id, ctx.tensor(idx));
    const Tensor& t = g.tensor(id);
    if (t.kind != TensorKind::Activation)
      return makeUnsupported(fmt::format("{}: tensor {} ('{}')", file, idx, t.name),
                             "is a subgraph output that no operator computes (an input or constant); not supported");
    if (!seen.insert(id).second) return makeUnsupported(file, fmt::format("tensor '{}' is listed twice as an output", t.name));
    g.outputs.push_back(id);
  }
  // Every activation read must have been produced: catches operators out of order or reading undefined tensors.
  std::vector<bool> available(g.tensors.size(), false);
  for (size_t i = 0; i < g.tensors.size(); ++i) available[i] = g.tensors[i].kind != TensorKind::Activation;
  for (const Node& n : g.nodes) {
    for (TensorId in : n.inputs)
      if (in != kNoTensor && !available[static_cast<size_t>(in)])
        return makeError(fmt::format("{}: node '{}'", file, n.name),
                         fmt::format("reads tensor '{}' before any operator computes it", g.tensor(in).name));
    for (TensorId out : n.outputs) {
      if (available[static_cast<size_t>(out)])
        return makeError(fmt::format("{}: node '{}'", file, n.name),
                         fmt::format("writes tensor '{}', which is an input, a constant or already computed", g.tensor(out).name));
      available[static_cast<size_t>(out)] = true;
    }
  }
  for (TensorId id : g.outputs)
    if (!available[static_cast<size_t>(id)])
      return makeError(file, fmt::format("output tensor '{}' is never computed", g.tensor(id).name));
  g.compactTensors();
  // Shape rules re-check every node (e.g. an output tensor whose declared shape disagrees with the op).
  if (Status s = verifyGraph(g); !s.ok()) {
    Diagnostic d = s.error();
    d.location = file + ": " + d.location;
    return d;
  }
  return g;
}

}  // namespace
}  // namespace tflite

Result<Graph> importTfliteBytes(std::vector<uint8_t> bytes, const std::string& displayName) {
  STOWAGE_ASSIGN_OR_RETURN(tflite::Model model, tflite::readTfliteBytes(std::move(bytes), displayName));
  return tflite::buildGraph(model, displayName);
}

Result<Graph> importTfliteFile(const std::string& path) {
  STOWAGE_ASSIGN_OR_RETURN(tflite::Model model, tflite::readTfliteFile(path));
  return tflite::buildGraph(model, path);
}

const std::vector<std::string>& supportedTfliteOps() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (int32_t c : tflite::supportedBuiltinCodes()) v.push_back(tflite::builtinOpName(c));
    std::sort(v.begin(), v.end());
    return v;
  }();
  return names;
}

Result<OnnxModelSummary> inspectTfliteFile(const std::string& path) {
  STOWAGE_ASSIGN_OR_RETURN(tflite::Model model, tflite::readTfliteFile(path));
  OnnxModelSummary s;
  const tflite::SubGraphInfo& sg = model.subgraphs[0];
  s.graphName = sg.name.empty() ? std::filesystem::path(path).stem().string() : sg.name;
  s.irVersion = model.version;
  s.producer = model.description;
  auto value = [&](int32_t idx) {
    const tflite::TensorInfo& t = sg.tensors[static_cast<size_t>(idx)];
    std::vector<int64_t> shape(t.shape.begin(), t.shape.end());
    return OnnxValueSummary{t.name, tflite::tensorTypeName(t.type), shapeToString(shape)};
  };
  for (int32_t idx : sg.inputs) s.inputs.push_back(value(idx));
  for (int32_t idx : sg.outputs) s.outputs.push_back(value(idx));
  std::map<std::pair<std::string, std::string>, OnnxOpSummary> ops;
  for (size_t k = 0; k < sg.operators.size(); ++k) {
    const tflite::OperatorCodeInfo& c = model.operatorCodes[sg.operators[k].opcodeIndex];
    const bool custom = c.code == tflite::kCustom;
    const std::string type = custom ? c.customCode : tflite::builtinOpName(c.code);
    const std::string domain = custom ? "custom" : "";
    OnnxOpSummary& o = ops[{domain, type}];
    o.opType = type;
    o.domain = domain;
    o.nodes.push_back(fmt::format("{}_{}", type, k));
    o.support = !custom && tflite::isSupportedBuiltin(c.code) ? OnnxOpSupport::Supported : OnnxOpSupport::Unsupported;
  }
  for (auto& [key, o] : ops) s.ops.push_back(std::move(o));
  for (const tflite::TensorInfo& t : sg.tensors) {
    if (t.buffer == 0 || model.buffers[t.buffer].size == 0) continue;
    int64_t n = 1;
    for (int32_t d : t.shape) n *= std::max(d, 0);
    s.initializerParams += n;
    s.initializerBytes += static_cast<int64_t>(model.buffers[t.buffer].size);
  }
  auto graph = tflite::buildGraph(model, path);
  if (graph.ok()) s.graph = std::move(graph.value());
  else s.importError = graph.error();
  return s;
}

}  // namespace stowage
