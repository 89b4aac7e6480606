// ONNX importer (see OnnxImporter.h): parse, onnx::checker, graph inputs with static shapes, ONNX shape
// inference (for a cross-check), node-by-node conversion with constant folding (OnnxConstantFolding.cpp,
// OnnxOpConverters.cpp, OnnxLayoutConverters.cpp), graph-output fix-ups, dead-code elimination and
// verifyGraph. Every failure is a Diagnostic; no exception escapes.
#include "stowage/frontend/OnnxImporter.h"

#include <fmt/format.h>
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "stowage/frontend/OnnxContext.h"
#include "stowage/frontend/OnnxTensor.h"
#include "stowage/ir/Verifier.h"

namespace stowage {

using namespace onnxfe;

namespace {

std::string oneLine(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

std::string stemOf(const std::string& path) {
  std::string stem = std::filesystem::path(path).stem().string();
  return stem.empty() ? "model" : stem;
}

/// The ai.onnx opset the model imports, or an error.
Result<int64_t> modelOpset(const onnx::ModelProto& m, const std::string& file) {
  for (const auto& o : m.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") return o.version();
  (void)file;
  return int64_t{1};  // no default-domain import: the checker has verified that no node needs one
}

/// Static shape of a graph input, or an error suggesting --shape.
Result<Shape> inputShapeOf(const onnx::ValueInfoProto& vi, const OnnxImportOptions& options, const std::string& file) {
  if (auto it = options.inputShapes.find(vi.name()); it != options.inputShapes.end()) return it->second;
  const std::string where = fmt::format("{}: input '{}'", file, vi.name());
  const auto& tt = vi.type().tensor_type();
  if (!tt.has_shape())
    return makeError(where, "has no shape in the model", fmt::format("give it one with --shape {}=1x3x32x32 (your dims)", vi.name()));
  Shape s;
  std::string suggestion;
  bool dynamic = false;
  std::string shown;
  for (int i = 0; i < tt.shape().dim_size(); ++i) {
    const auto& d = tt.shape().dim(i);
    std::string part;
    if (d.has_dim_value() && d.dim_value() >= 0) {
      s.push_back(d.dim_value());
      part = std::to_string(d.dim_value());
      shown += (i ? "," : "") + part;
    } else {
      dynamic = true;
      part = "N";
      shown += (i ? "," : "") + (d.has_dim_param() && !d.dim_param().empty() ? d.dim_param() : std::string("?"));
    }
    suggestion += (i ? "x" : "") + part;
  }
  if (dynamic)
    return makeError(where, fmt::format("has dynamic dims [{}]; Stowage compiles static shapes only", shown),
                     fmt::format("fix them with --shape {}={} (replace each N by a size)", vi.name(), suggestion));
  return s;
}

/// Fully known shapes from ONNX shape inference, by value name.
std::map<std::string, Shape> onnxInferredShapes(onnx::ModelProto model, const Context& ctx) {
  std::map<std::string, Shape> out;
  try {
    auto* g = model.mutable_graph();
    for (auto& in : *g->mutable_input()) {
      auto it = ctx.ids.find(in.name());
      if (it == ctx.ids.end() || !in.type().has_tensor_type()) continue;
      auto* shape = in.mutable_type()->mutable_tensor_type()->mutable_shape();
      shape->clear_dim();
      for (int64_t d : ctx.graph.tensor(it->second).shape) shape->add_dim()->set_dim_value(d);
    }
    g->clear_value_info();
    // Declared output shapes are the exporter's claims, not inference results: let inference fill them.
    for (auto& out : *g->mutable_output())
      if (out.type().has_tensor_type()) out.mutable_type()->mutable_tensor_type()->clear_shape();
    onnx::ShapeInferenceOptions opts(false, 0, true);
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), opts);
    auto collect = [&](const onnx::ValueInfoProto& vi) {
      if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) return;
      Shape s;
      for (const auto& d : vi.type().tensor_type().shape().dim()) {
        if (!d.has_dim_value()) return;
        s.push_back(d.dim_value());
      }
      out[vi.name()] = s;
    };
    for (const auto& vi : g->value_info()) collect(vi);
    for (const auto& vi : g->output()) collect(vi);
  } catch (const std::exception&) {
    out.clear();  // the cross-check is best effort: no inferred shapes, no check
  }
  return out;
}

/// Output size of a ceil_mode pool as ONNX 1.12 shape inference computes it (without dropping a last window
/// that starts in the end padding); used to switch the cross-check off where the two rules legitimately differ.
bool poolDiffersFromLegacyOnnx(const Graph& g, const Node& n) {
  if ((n.op != OpKind::MaxPool && n.op != OpKind::AveragePool) || n.attrs.getInt("ceil_mode", 0) == 0) return false;
  const Shape& x = g.tensor(n.inputs[0]).shape;
  const Shape& y = g.tensor(n.outputs[0]).shape;
  const size_t sp = x.size() - 2;
  auto k = n.attrs.getInts("kernel_shape"), s = n.attrs.getInts("strides"), p = n.attrs.getInts("pads"), d = n.attrs.getInts("dilations");
  for (size_t i = 0; i < sp; ++i) {
    const int64_t span = x[i + 2] + p[i] + p[i + sp] - ((k[i] - 1) * d[i] + 1);
    if ((span + s[i] - 1) / s[i] + 1 != y[i + 2]) return true;
  }
  return false;
}

/// Adds a Reshape node copying `src` (same shape) into a new activation named `outName`.
void addCopyNode(Context& ctx, TensorId src, const std::string& outName) {
  Tensor out;
  out.name = outName;
  out.dtype = ctx.graph.tensor(src).dtype;
  out.shape = ctx.graph.tensor(src).shape;
  out.kind = TensorKind::Activation;
  Node n;
  n.name = ctx.freshNodeName(outName + "_copy");
  n.op = OpKind::Reshape;
  n.attrs.set("shape", ctx.graph.tensor(src).shape);
  n.inputs.push_back(src);
  n.outputs.push_back(ctx.graph.addTensor(std::move(out)));
  ctx.names.insert(outName);
  ctx.graph.addNode(std::move(n));
}

Status fixOutputs(Context& ctx, const onnx::GraphProto& gp) {
  std::set<TensorId> listed;
  for (const auto& vi : gp.output()) {
    const std::string& name = vi.name();
    const std::string where = fmt::format("{}: output '{}'", ctx.file, name);
    if (!ctx.known(name)) return makeError(where, "is a graph output but no node, input or initializer defines it");
    auto it = ctx.ids.find(name);
    if (it == ctx.ids.end() || ctx.graph.tensor(it->second).kind == TensorKind::Constant) {
      // A constant output (possibly folded): keep the constant under another name, copy it into the output.
      TensorId cid;
      const std::string constName = ctx.freshName(name + "_value");
      if (it == ctx.ids.end()) {
        Tensor t = ctx.consts.at(name);
        t.name = constName;
        t.kind = TensorKind::Constant;
        cid = ctx.graph.addTensor(std::move(t));
      } else {
        cid = it->second;
        ctx.graph.tensor(cid).name = constName;
      }
      ctx.consts.erase(name);
      addCopyNode(ctx, cid, name);
      ctx.ids[name] = ctx.graph.nodes.back().outputs[0];
      listed.insert(ctx.ids[name]);
      ctx.graph.outputs.push_back(ctx.ids[name]);
      continue;
    }
    TensorId id = it->second;
    if (ctx.graph.tensor(id).kind == TensorKind::Input || listed.count(id)) {
      addCopyNode(ctx, id, ctx.freshName(name + "_out"));
      id = ctx.graph.nodes.back().outputs[0];
    }
    listed.insert(id);
    ctx.graph.outputs.push_back(id);
  }
  if (ctx.graph.outputs.empty()) return makeError(ctx.file, "the model has no graph outputs");
  return Status::success();
}

void eliminateDeadNodes(Graph& g) {
  std::vector<bool> live(g.tensors.size(), false);
  for (TensorId o : g.outputs) live[static_cast<size_t>(o)] = true;
  std::vector<Node> kept;
  for (size_t i = g.nodes.size(); i-- > 0;) {
    Node& n = g.nodes[i];
    bool used = false;
    for (TensorId o : n.outputs) used = used || live[static_cast<size_t>(o)];
    if (!used) continue;
    for (TensorId in : n.inputs)
      if (in != kNoTensor) live[static_cast<size_t>(in)] = true;
    kept.push_back(std::move(n));
  }
  std::reverse(kept.begin(), kept.end());
  g.nodes = std::move(kept);
  g.compactTensors();
}

Result<Graph> importModel(const onnx::ModelProto& model, const std::string& file, const OnnxImportOptions& options) {
  Context ctx;
  ctx.file = file;
  ctx.maxFoldElements = options.maxFoldElements;
  STOWAGE_ASSIGN_OR_RETURN(ctx.opset, modelOpset(model, file));
  const auto& gp = model.graph();
  ctx.graph.name = gp.name().empty() ? stemOf(file) : gp.name();

  // Every ONNX name is reserved up front so invented names never collide with later ones.
  for (const auto& vi : gp.input()) ctx.names.insert(vi.name());
  for (const auto& t : gp.initializer()) ctx.names.insert(t.name());
  for (const auto& n : gp.node())
    for (const auto& o : n.output()) ctx.names.insert(o);

  if (gp.sparse_initializer_size() > 0)
    return makeUnsupported(file, "the model has sparse initializers, which Stowage does not support");
  for (const auto& init : gp.initializer()) {
    STOWAGE_ASSIGN_OR_RETURN(Tensor t, tensorFromOnnx(init, fmt::format("{}: initializer '{}'", file, init.name())));
    if (!checkedElements(t.shape)) return makeError(fmt::format("{}: initializer '{}'", file, init.name()), "has an impossibly large shape");
    ctx.consts[init.name()] = std::move(t);
  }

  std::set<std::string> inputNames;
  for (const auto& vi : gp.input()) {
    inputNames.insert(vi.name());
    if (ctx.isConst(vi.name())) continue;  // IR < 4 lists initializers among the inputs: they are constants
    const std::string where = fmt::format("{}: input '{}'", file, vi.name());
    if (vi.name().empty()) return makeError(file, "a graph input has an empty name");
    if (auto b = options.boundInputs.find(vi.name()); b != options.boundInputs.end()) {
      Tensor t = b->second;
      t.name = vi.name();
      t.kind = TensorKind::Constant;
      if (!checkedElements(t.shape) || t.data.size() != t.byteSize())
        return makeError(where, fmt::format("the bound value holds {} bytes but its type {}[{}] needs {}", t.data.size(),
                                            dtypeName(t.dtype), shapeToString(t.shape), t.byteSize()));
      ctx.consts[vi.name()] = std::move(t);
      continue;
    }
    if (!vi.type().has_tensor_type())
      return makeUnsupported(where, "is not a tensor (sequences, maps and optionals are not supported)");
    auto dtype = dtypeFromOnnx(vi.type().tensor_type().elem_type());
    if (!dtype)
      return makeUnsupported(where, fmt::format("has element type {}, which Stowage does not support",
                                                onnxDtypeName(vi.type().tensor_type().elem_type())));
    STOWAGE_ASSIGN_OR_RETURN(Shape shape, inputShapeOf(vi, options, file));
    if (!checkedElements(shape)) return makeError(where, fmt::format("has an invalid or too large shape [{}]", shapeToString(shape)));
    Tensor t;
    t.name = vi.name();
    t.dtype = *dtype;
    t.shape = shape;
    t.kind = TensorKind::Input;
    TensorId id = ctx.graph.addTensor(std::move(t));
    ctx.graph.inputs.push_back(id);
    ctx.ids[vi.name()] = id;
  }
  for (const auto& [name, shape] : options.inputShapes)
    if (!inputNames.count(name)) return makeError(file, fmt::format("--shape names '{}', which is not a graph input", name));
  for (const auto& [name, t] : options.boundInputs)
    if (!inputNames.count(name)) return makeError(file, fmt::format("--bind names '{}', which is not a graph input", name));

  for (const auto& n : gp.node())
    for (const auto& in : n.input()) ++ctx.uses[in];
  for (const auto& o : gp.output()) ++ctx.uses[o.name()];

  bool crossCheck = true;

  for (int i = 0; i < gp.node_size(); ++i) {
    const onnx::NodeProto& proto = gp.node(i);
    std::string base = proto.name().empty() ? fmt::format("{}_{}", proto.op_type(), i) : proto.name();
    NodeRef node{proto, ctx.freshNodeName(base), {}, 0};
    node.loc = fmt::format("{}: node '{}' ({})", file, node.name, proto.op_type());
    if (!proto.domain().empty() && proto.domain() != "ai.onnx")
      return makeUnsupported(node.loc, fmt::format("op {} of domain '{}' is not supported (only the default ONNX domain is)",
                                                   proto.op_type(), proto.domain()));
    for (const auto& a : proto.attribute())
      if (a.has_g() || a.graphs_size() > 0 || a.type() == onnx::AttributeProto_AttributeType_GRAPH ||
          a.type() == onnx::AttributeProto_AttributeType_GRAPHS)
        return makeUnsupported(node.loc, fmt::format("attribute '{}' holds a subgraph; control flow is not supported", a.name()));
    for (const auto& in : proto.input())
      if (!in.empty() && !ctx.known(in))
        return makeError(node.loc, fmt::format("reads value '{}' before any node, input or initializer defines it", in),
                         "ONNX requires nodes in topological order; re-export or sort the model");
    STOWAGE_ASSIGN_OR_RETURN(FoldResult folded, foldOnnxNode(ctx, node));
    if (folded.handled) continue;
    const size_t before = ctx.graph.nodes.size();
    STOWAGE_TRY(convertOnnxNode(ctx, node));
    for (size_t k = before; k < ctx.graph.nodes.size(); ++k)
      if (poolDiffersFromLegacyOnnx(ctx.graph, ctx.graph.nodes[k])) crossCheck = false;
  }

  STOWAGE_TRY(fixOutputs(ctx, gp));
  // ONNX shape inference runs only on a model whose every node and output converted: Debian's libonnx reads out of
  // bounds on some malformed models (a ConvTranspose weight of lower rank than its input crashed in
  // convTransposeShapeInference), which the converters reject with a clear error. Before dead-code elimination, which
  // renumbers the tensors that onnxInferredShapes looks up.
  std::map<std::string, Shape> onnxShapes;
  if (crossCheck) onnxShapes = onnxInferredShapes(model, ctx);
  eliminateDeadNodes(ctx.graph);

  if (crossCheck) {
    for (const Tensor& t : ctx.graph.tensors) {
      auto it = onnxShapes.find(t.name);
      if (it == onnxShapes.end() || it->second == t.shape) continue;
      return makeError(fmt::format("{}: tensor '{}'", file, t.name),
                       fmt::format("Stowage computes shape [{}] but ONNX shape inference gives [{}]", shapeToString(t.shape),
                                   shapeToString(it->second)),
                       "this is a bug in Stowage's shape rules or the model; please report it with the model");
    }
  }
  if (Status s = verifyGraph(ctx.graph); !s.ok()) {
    Diagnostic d = s.error();
    d.location = fmt::format("{}: {}", file, d.location);
    d.notes.push_back("the imported graph failed verification; this is a bug in the ONNX importer");
    return d;
  }
  return std::move(ctx.graph);
}

}  // namespace

namespace onnxfe {

/// Parses and checks a model; shared by the importer and `inspectOnnxBytes`.
Result<onnx::ModelProto> parseAndCheckOnnx(const std::string& bytes, const std::string& file) {
  onnx::ModelProto model;
  bool parsed = false;
  try {
    parsed = model.ParseFromString(bytes);
  } catch (const std::exception&) {
    parsed = false;
  }
  if (!parsed || !model.has_graph())
    return makeError(file, fmt::format("is not a readable ONNX model: its {} bytes do not parse as an ONNX ModelProto (the file is "
                                       "truncated, corrupt or not ONNX)",
                                       bytes.size()),
                     "check that the path points to a .onnx file and that it downloaded completely (a Git LFS pointer is "
                     "not the model)");
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    return makeError(file, fmt::format("is not a valid ONNX model: the ONNX checker reports: {}", oneLine(e.what())),
                     "re-export the model, or run onnx.checker.check_model on it in Python for details");
  }
  return model;
}

}  // namespace onnxfe

Result<Graph> importOnnxBytes(const std::string& bytes, const std::string& displayName, const OnnxImportOptions& options) {
  try {
    STOWAGE_ASSIGN_OR_RETURN(onnx::ModelProto model, parseAndCheckOnnx(bytes, displayName));
    return importModel(model, displayName, options);
  } catch (const std::exception& e) {
    return makeError(displayName, fmt::format("import failed: {}", oneLine(e.what())),
                     "this is a bug in the ONNX importer; please report it with the model");
  }
}

Result<std::string> onnxfe::readModelBytes(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return makeError(path, "no such file", "check the path to the .onnx model");
  if (std::filesystem::is_directory(path, ec))
    return makeError(path, "is a directory, not an ONNX model file", "give the path of the .onnx file inside it");
  std::ifstream in(path, std::ios::binary);
  if (!in) return makeError(path, "cannot be opened for reading", "check the file's permissions");
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

Result<Graph> importOnnxFile(const std::string& path, const OnnxImportOptions& options) {
  STOWAGE_ASSIGN_OR_RETURN(std::string bytes, readModelBytes(path));
  return importOnnxBytes(bytes, path, options);
}

const std::vector<std::string>& supportedOnnxOps() {
  static const std::vector<std::string> ops = [] {
    std::set<std::string> s = convertibleOnnxOps();
    s.insert("Shape");
    s.insert("Size");
    return std::vector<std::string>(s.begin(), s.end());
  }();
  return ops;
}

}  // namespace stowage
