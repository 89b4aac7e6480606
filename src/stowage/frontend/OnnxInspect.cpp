// Model inventory for `stowage info` (see OnnxInspect.h).
#include "stowage/frontend/OnnxInspect.h"

#include <fmt/format.h>

#include <map>

#include "stowage/frontend/OnnxContext.h"
#include "stowage/frontend/OnnxTensor.h"

namespace stowage {

const char* onnxOpSupportName(OnnxOpSupport s) {
  switch (s) {
    case OnnxOpSupport::Supported: return "yes";
    case OnnxOpSupport::ConstantOnly: return "constant inputs only";
    case OnnxOpSupport::Unsupported: return "no";
  }
  return "no";
}

OnnxOpSupport classifyOnnxOp(const std::string& domain, const std::string& opType) {
  if (!domain.empty() && domain != "ai.onnx") return OnnxOpSupport::Unsupported;
  const auto& ops = supportedOnnxOps();
  if (std::find(ops.begin(), ops.end(), opType) != ops.end()) return OnnxOpSupport::Supported;
  if (onnxfe::foldableOnnxOps().count(opType)) return OnnxOpSupport::ConstantOnly;
  return OnnxOpSupport::Unsupported;
}

namespace {

OnnxValueSummary summarize(const onnx::ValueInfoProto& vi) {
  OnnxValueSummary v;
  v.name = vi.name();
  if (!vi.type().has_tensor_type()) {
    v.dtype = "non-tensor";
    v.shape = "?";
    return v;
  }
  const auto& tt = vi.type().tensor_type();
  v.dtype = onnxDtypeName(tt.elem_type());
  if (!tt.has_shape()) {
    v.shape = "?";
    return v;
  }
  if (tt.shape().dim_size() == 0) v.shape = "scalar";
  for (int i = 0; i < tt.shape().dim_size(); ++i) {
    const auto& d = tt.shape().dim(i);
    v.shape += (i ? "x" : "") + (d.has_dim_value() ? std::to_string(d.dim_value()) : (d.dim_param().empty() ? "?" : d.dim_param()));
  }
  return v;
}

void countTensor(const onnx::TensorProto& t, OnnxModelSummary& s) {
  int64_t n = 1;
  for (int64_t d : t.dims()) n = (d > 0 && n <= (int64_t{1} << 40) / d) ? n * d : (d == 0 ? 0 : n);
  s.initializerParams += n;
  auto dt = dtypeFromOnnx(t.data_type());
  s.initializerBytes += n * static_cast<int64_t>(dt ? dtypeSize(*dt) : 4);
}

}  // namespace

Result<OnnxModelSummary> inspectOnnxFile(const std::string& path, const OnnxImportOptions& options) {
  try {
    STOWAGE_ASSIGN_OR_RETURN(std::string bytes, onnxfe::readModelBytes(path));
    STOWAGE_ASSIGN_OR_RETURN(onnx::ModelProto model, onnxfe::parseAndCheckOnnx(bytes, path));
    OnnxModelSummary s;
    const auto& g = model.graph();
    s.graphName = g.name();
    s.irVersion = model.ir_version();
    s.producer = model.producer_name() + (model.producer_version().empty() ? "" : " " + model.producer_version());
    for (const auto& o : model.opset_import())
      if (o.domain().empty() || o.domain() == "ai.onnx") s.opset = o.version();
    std::set<std::string> inits;
    for (const auto& t : g.initializer()) {
      inits.insert(t.name());
      countTensor(t, s);
    }
    for (const auto& vi : g.input())
      if (!inits.count(vi.name())) s.inputs.push_back(summarize(vi));
    for (const auto& vi : g.output()) s.outputs.push_back(summarize(vi));
    std::map<std::pair<std::string, std::string>, OnnxOpSummary> ops;
    for (int i = 0; i < g.node_size(); ++i) {
      const auto& n = g.node(i);
      auto& op = ops[{n.op_type(), n.domain()}];
      op.opType = n.op_type();
      op.domain = n.domain();
      op.support = classifyOnnxOp(n.domain(), n.op_type());
      op.nodes.push_back(n.name().empty() ? fmt::format("{}_{}", n.op_type(), i) : n.name());
      if (n.op_type() == "Constant")
        for (const auto& a : n.attribute())
          if (a.has_t()) countTensor(a.t(), s);
    }
    for (auto& [key, op] : ops) s.ops.push_back(std::move(op));
    auto graph = importOnnxBytes(bytes, path, options);
    if (graph.ok()) {
      s.graph = std::move(*graph);
      s.initializerParams = 0;
      s.initializerBytes = 0;
      for (const Tensor& t : s.graph->tensors)
        if (t.isConstant()) {
          s.initializerParams += t.numElements();
          s.initializerBytes += static_cast<int64_t>(t.byteSize());
        }
    } else {
      s.importError = graph.error();
    }
    return s;
  } catch (const std::exception& e) {
    return makeError(path, fmt::format("could not be inspected: {}", e.what()));
  }
}

}  // namespace stowage
