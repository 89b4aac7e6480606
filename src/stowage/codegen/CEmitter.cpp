// C emitter for <name>.h and <name>.c (see CEmitter.h); weights come from WeightsEmitter.
#include "stowage/codegen/CEmitter.h"

#include <fmt/format.h>

#include <algorithm>

#include "stowage/codegen/CNames.h"
#include "stowage/codegen/KernelCall.h"
#include "stowage/codegen/WeightsEmitter.h"

#ifndef STOWAGE_VERSION
#define STOWAGE_VERSION "0.0.0"
#endif

namespace stowage {

namespace {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

std::string tensorComment(const Tensor& t) {
  return fmt::format("'{}': {}[{}]", commentText(t.name), dtypeName(t.dtype), shapeToString(t.shape));
}

template <typename T>
std::string intList(const T* v, int32_t count) {
  std::string s = "{";
  for (int32_t i = 0; i < count; ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "}";
}

const char* binaryOpName(stowage_binary_op op) {
  static const char* names[] = {"STOWAGE_BINARY_ADD", "STOWAGE_BINARY_SUB", "STOWAGE_BINARY_MUL", "STOWAGE_BINARY_DIV",
                                "STOWAGE_BINARY_POW", "STOWAGE_BINARY_MAX", "STOWAGE_BINARY_MIN", "STOWAGE_BINARY_PRELU"};
  return names[op];
}

const char* unaryOpName(stowage_unary_op op) {
  static const char* names[] = {
      "STOWAGE_UNARY_RELU",  "STOWAGE_UNARY_LEAKY_RELU", "STOWAGE_UNARY_CLIP",       "STOWAGE_UNARY_SIGMOID",
      "STOWAGE_UNARY_TANH",  "STOWAGE_UNARY_ABS",        "STOWAGE_UNARY_NEG",        "STOWAGE_UNARY_EXP",
      "STOWAGE_UNARY_LOG",   "STOWAGE_UNARY_SQRT",       "STOWAGE_UNARY_RECIPROCAL", "STOWAGE_UNARY_FLOOR",
      "STOWAGE_UNARY_CEIL",  "STOWAGE_UNARY_ELU",        "STOWAGE_UNARY_SELU",       "STOWAGE_UNARY_HARD_SIGMOID",
      "STOWAGE_UNARY_HARD_SWISH", "STOWAGE_UNARY_SOFTPLUS", "STOWAGE_UNARY_SOFTSIGN", "STOWAGE_UNARY_SIGN",
      "STOWAGE_UNARY_ERF",   "STOWAGE_UNARY_SIN",        "STOWAGE_UNARY_COS"};
  return names[op];
}

const char* reduceOpName(stowage_reduce_op op) {
  static const char* names[] = {"STOWAGE_REDUCE_MEAN", "STOWAGE_REDUCE_SUM",        "STOWAGE_REDUCE_MAX", "STOWAGE_REDUCE_MIN",
                                "STOWAGE_REDUCE_PROD", "STOWAGE_REDUCE_SUM_SQUARE", "STOWAGE_REDUCE_L1",  "STOWAGE_REDUCE_L2"};
  return names[op];
}

const char* padModeName(stowage_pad_mode m) {
  static const char* names[] = {"STOWAGE_PAD_CONSTANT", "STOWAGE_PAD_REFLECT", "STOWAGE_PAD_EDGE"};
  return names[m];
}

/// Designated initializer body of a call's parameter struct ("" when the kernel takes scalars only).
std::string paramsInitializer(const KernelCall& call) {
  return std::visit(
      Overloaded{
          [](const ConvCall& c) {
            const auto& p = c.params;
            return fmt::format(
                ".n = {}, .c = {}, .h = {}, .w = {}, .m = {}, .kh = {}, .kw = {}, .oh = {}, .ow = {},\n"
                "  .stride_h = {}, .stride_w = {}, .pad_top = {}, .pad_left = {}, .dil_h = {}, .dil_w = {}, .group = {}",
                p.n, p.c, p.h, p.w, p.m, p.kh, p.kw, p.oh, p.ow, p.stride_h, p.stride_w, p.pad_top, p.pad_left, p.dil_h,
                p.dil_w, p.group);
          },
          [](const GemmCall& c) {
            const auto& p = c.params;
            return fmt::format(".m = {}, .n = {}, .k = {}, .trans_a = {}, .trans_b = {}, .alpha = {}, .beta = {},\n"
                               "  .c_rows = {}, .c_cols = {}",
                               p.m, p.n, p.k, p.trans_a, p.trans_b, floatLiteral(p.alpha), floatLiteral(p.beta), p.c_rows,
                               p.c_cols);
          },
          [](const MatMulCall& c) {
            const auto& p = c.params;
            return fmt::format(".batch_rank = {}, .batch_shape = {}, .a_stride = {}, .b_stride = {},\n  .m = {}, .n = {}, .k = {}",
                               p.batch_rank, intList(p.batch_shape, std::max(1, p.batch_rank)),
                               intList(p.a_stride, std::max(1, p.batch_rank)), intList(p.b_stride, std::max(1, p.batch_rank)),
                               p.m, p.n, p.k);
          },
          [](const BinaryCall& c) {
            const auto& p = c.params;
            const int32_t r = std::max(1, p.rank);
            return fmt::format(".rank = {}, .shape = {}, .a_stride = {}, .b_stride = {}", p.rank, intList(p.shape, r),
                               intList(p.a_stride, r), intList(p.b_stride, r));
          },
          [](const PoolCall& c) {
            const auto& p = c.params;
            return fmt::format(
                ".n = {}, .c = {}, .h = {}, .w = {}, .oh = {}, .ow = {}, .kh = {}, .kw = {}, .stride_h = {}, .stride_w = {},\n"
                "  .pad_top = {}, .pad_left = {}, .pad_bottom = {}, .pad_right = {}, .dil_h = {}, .dil_w = {},\n"
                "  .count_include_pad = {}",
                p.n, p.c, p.h, p.w, p.oh, p.ow, p.kh, p.kw, p.stride_h, p.stride_w, p.pad_top, p.pad_left, p.pad_bottom,
                p.pad_right, p.dil_h, p.dil_w, p.count_include_pad);
          },
          [](const GatherCall& c) {
            const auto& p = c.params;
            const int32_t r = std::max(1, p.rank);
            return fmt::format(".rank = {}, .out_shape = {}, .in_stride = {}, .in_offset = {}", p.rank, intList(p.out_shape, r),
                               intList(p.in_stride, r), p.in_offset);
          },
          [](const PadCall& c) {
            const auto& p = c.params;
            const int32_t r = std::max(1, p.rank);
            return fmt::format(".rank = {}, .in_shape = {}, .out_shape = {}, .pad_begin = {},\n  .mode = {}, .value = {}", p.rank,
                               intList(p.in_shape, r), intList(p.out_shape, r), intList(p.pad_begin, r), padModeName(p.mode),
                               floatLiteral(p.value));
          },
          [](const ReduceCall& c) {
            const auto& p = c.params;
            const int32_t r = std::max(1, p.rank);
            return fmt::format(".rank = {}, .in_shape = {}, .reduce = {}", p.rank, intList(p.in_shape, r), intList(p.reduce, r));
          },
          [](const QuantCall& c) { return quantParamsInitializer(c); },
          [](const NhwcCall& c) { return nhwcParamsInitializer(c); },
          [](const auto&) { return std::string(); },
      },
      call.params);
}

class SourceWriter {
 public:
  SourceWriter(const Graph& g, const CSymbols& syms) : g_(g), syms_(syms) {
    inputIndex_.assign(g.tensors.size(), -1);
    outputIndex_.assign(g.tensors.size(), -1);
    for (size_t i = 0; i < g.inputs.size(); ++i) inputIndex_[static_cast<size_t>(g.inputs[i])] = static_cast<int>(i);
    for (size_t i = 0; i < g.outputs.size(); ++i) outputIndex_[static_cast<size_t>(g.outputs[i])] = static_cast<int>(i);
  }

  /// C expression for a pointer to tensor `id`'s data.
  Result<std::string> pointer(TensorId id, bool typed) const {
    if (id == kNoTensor) return std::string("NULL");
    const size_t i = static_cast<size_t>(id);
    const Tensor& t = g_.tensor(id);
    if (inputIndex_[i] >= 0) return "in->" + syms_.inputFields[static_cast<size_t>(inputIndex_[i])];
    if (outputIndex_[i] >= 0) return "out->" + syms_.outputFields[static_cast<size_t>(outputIndex_[i])];
    if (t.isConstant()) return syms_.weightArrays[i];
    if (syms_.offsetMacros[i].empty())
      return makeError(fmt::format("tensor '{}'", t.name), "has no workspace offset in the memory plan");
    if (!typed) return fmt::format("(void*)(base + {})", syms_.offsetMacros[i]);
    return fmt::format("({}*)(void*)(base + {})", dtypeCType(t.dtype), syms_.offsetMacros[i]);
  }

  /// The C statement for `call`, using `paramsName` for its parameter struct.
  Result<std::string> statement(const KernelCall& call, const std::string& paramsName) const {
    std::vector<std::string> in;
    const bool typed = !std::holds_alternative<GatherCall>(call.params) && !std::holds_alternative<ConcatPartCall>(call.params) &&
                       !std::holds_alternative<CopyCall>(call.params);
    for (TensorId id : call.inputs) {
      STOWAGE_ASSIGN_OR_RETURN(std::string p, pointer(id, typed));
      in.push_back(p);
    }
    STOWAGE_ASSIGN_OR_RETURN(std::string y, pointer(call.output, typed));
    const std::string fn = kernelFunctionName(call);
    auto join = [](const std::vector<std::string>& v) {
      std::string s;
      for (const auto& x : v) s += x + ", ";
      return s;
    };
    const std::string pp = "&" + paramsName;
    return std::visit(
        Overloaded{
            [&](const BinaryCall& c) { return fmt::format("{}({}, {}{}, {});", fn, binaryOpName(c.op), join(in), y, pp); },
            [&](const UnaryCall& c) {
              return fmt::format("{}({}, {}{}, {}, {}, {});", fn, unaryOpName(c.op), join(in), y, c.count, floatLiteral(c.alpha),
                                 floatLiteral(c.beta));
            },
            [&](const SoftmaxCall& c) {
              return fmt::format("{}({}{}, {}, {}, {}, {});", fn, join(in), y, c.outer, c.len, c.inner, c.log);
            },
            [&](const BatchNormCall& c) {
              return fmt::format("{}({}{}, {}, {}, {}, {});", fn, join(in), y, c.n, c.c, c.spatial, floatLiteral(c.epsilon));
            },
            [&](const LrnCall& c) {
              return fmt::format("{}({}{}, {}, {}, {}, {}, {}, {}, {});", fn, join(in), y, c.n, c.c, c.spatial, c.size,
                                 floatLiteral(c.alpha), floatLiteral(c.beta), floatLiteral(c.bias));
            },
            [&](const GlobalPoolCall& c) { return fmt::format("{}({}{}, {}, {});", fn, join(in), y, c.channels, c.spatial); },
            [&](const GatherCall& c) { return fmt::format("{}({}{}, {}u, {});", fn, join(in), y, c.elemSize, pp); },
            [&](const ConcatPartCall& c) {
              return fmt::format("{}({}{}, {}u, {}, {}, {}, {});", fn, join(in), y, c.elemSize, c.outer, c.inBlock, c.outBlock,
                                 c.outOffset);
            },
            [&](const ReduceCall& c) { return fmt::format("{}({}, {}{}, {});", fn, reduceOpName(c.op), join(in), y, pp); },
            [&](const CopyCall& c) { return fmt::format("memcpy({}, {}, {}u);", y, in.at(0), c.bytes); },
            [&](const auto&) { return fmt::format("{}({}{}, {});", fn, join(in), y, pp); },
        },
        call.params);
  }

 private:
  const Graph& g_;
  const CSymbols& syms_;
  std::vector<int> inputIndex_, outputIndex_;
};

std::string emitHeader(const Graph& g, const MemoryPlan& plan, const CSymbols& s) {
  const std::string& p = s.prefix;
  const std::string& P = s.macroPrefix;
  std::string h = fmt::format(
      "/* {}.h: C API of model '{}', compiled ahead of time; no malloc, every tensor at a fixed place.\n"
      " * generated by stowage {}; do not edit. */\n"
      "#ifndef {}_H_INCLUDED\n#define {}_H_INCLUDED\n\n#include <stddef.h>\n#include <stdint.h>\n\n"
      "#ifdef __cplusplus\nextern \"C\" {{\n#endif\n\n",
      p, commentText(g.name), stowageVersion(), P, P);
  h += fmt::format(
      "/* Scratch memory {0}_run needs, in bytes (at least 1 so it can size an array), and the alignment of its\n"
      " * base address in bytes. Plan: {2} bytes used; {3} bytes are live at the busiest step. */\n"
      "#define {1}_WORKSPACE_SIZE {4}u\n#define {1}_WORKSPACE_ALIGN {5}u\n\n",
      p, P, plan.workspaceBytes, plan.lowerBoundBytes, std::max<size_t>(1, plan.workspaceBytes), kWorkspaceAlignment);
  h += fmt::format("/* Return codes of {}_run. */\n#define {}_OK 0\n#define {}_ERR_NULL_ARGUMENT 1\n"
                   "#define {}_ERR_WORKSPACE_MISALIGNED 2\n\n",
                   p, P, P, P);
  h += "/* Sizes of each input and output: _ELEMS in elements, _BYTES in bytes. */\n";
  auto sizes = [&](const char* kind, const std::vector<TensorId>& ids, const std::vector<std::string>& fields) {
    for (size_t i = 0; i < ids.size(); ++i) {
      const Tensor& t = g.tensor(ids[i]);
      const std::string f = upperIdentifier(fields[i]);
      h += fmt::format("#define {}_{}_{}_ELEMS {}u\n#define {}_{}_{}_BYTES {}u\n", P, kind, f, t.numElements(), P, kind, f,
                       t.byteSize());
    }
  };
  sizes("INPUT", g.inputs, s.inputFields);
  sizes("OUTPUT", g.outputs, s.outputFields);
  auto fields = [&](bool isConst, const std::vector<TensorId>& ids, const std::vector<std::string>& names, const char* what) {
    std::string body;
    for (size_t i = 0; i < ids.size(); ++i) {
      const Tensor& t = g.tensor(ids[i]);
      body += fmt::format("  {}{}* {}; /* {} */\n", isConst ? "const " : "", dtypeCType(t.dtype), names[i], tensorComment(t));
    }
    if (body.empty()) body = fmt::format("  char unused; /* the model has no {} */\n", what);
    return body;
  };
  h += fmt::format("\n/* Input data, read by {}_run; every pointer must be non-NULL and hold _ELEMS elements. */\n", p);
  h += "typedef struct {\n" + fields(true, g.inputs, s.inputFields, "inputs") + "} " + p + "_inputs;\n\n";
  h += fmt::format("/* Output buffers, written by {}_run; every pointer must be non-NULL and hold _ELEMS elements. */\n", p);
  h += "typedef struct {\n" + fields(false, g.outputs, s.outputFields, "outputs") + "} " + p + "_outputs;\n\n";
  h += fmt::format(
      "/* Scratch memory: base points at {0}_WORKSPACE_SIZE bytes aligned to {0}_WORKSPACE_ALIGN. It holds no state\n"
      " * between calls; concurrent calls need separate workspaces. */\n"
      "typedef struct {{\n  uint8_t* base;\n}} {1}_workspace;\n\n",
      P, p);
  h += fmt::format(
      "/* Runs the model once: reads *in, writes *out, uses ws->base as scratch. Returns {0}_OK, or\n"
      " * {0}_ERR_NULL_ARGUMENT when an argument or pointer field is NULL, or {0}_ERR_WORKSPACE_MISALIGNED when\n"
      " * ws->base is not aligned to {0}_WORKSPACE_ALIGN; nothing is written on error. Outputs must not overlap\n"
      " * inputs or the workspace. */\n"
      "int {1}_run(const {1}_inputs* in, {1}_outputs* out, {1}_workspace* ws);\n\n",
      P, p);
  h += fmt::format("#ifdef __cplusplus\n}}\n#endif\n\n#endif /* {}_H_INCLUDED */\n", P);
  return h;
}

}  // namespace

std::string stowageVersion() { return STOWAGE_VERSION; }

Result<GeneratedC> emitC(const Graph& g, const MemoryPlan& plan, const std::string& name) {
  STOWAGE_TRY(validateModelName(name));
  std::vector<TensorId> wsTensors;
  for (const Buffer& b : plan.buffers) wsTensors.push_back(b.tensor);
  const CSymbols syms = assignSymbols(g, name, wsTensors);
  const std::string& p = syms.prefix;
  const std::string& P = syms.macroPrefix;
  SourceWriter writer(g, syms);

  // Lower every node first: the parameter structs go at file scope, the calls inside <name>_run.
  std::string params, calls;
  size_t numCalls = 0;
  std::vector<bool> weightUsed(g.tensors.size(), false);
  for (size_t step = 0; step < g.nodes.size(); ++step) {
    const Node& n = g.nodes[step];
    STOWAGE_ASSIGN_OR_RETURN(std::vector<KernelCall> lowered, lowerNode(g, n));
    calls += fmt::format("\n  /* step {}: node '{}' ({}) */\n", step, commentText(n.name), opName(n.op));
    if (lowered.empty()) calls += "  /* output has no elements: nothing to compute */\n";
    for (size_t k = 0; k < lowered.size(); ++k) {
      const KernelCall& call = lowered[k];
      const std::string paramsName = fmt::format("{}_p{}", p, numCalls);
      const std::string type = kernelParamsTypeName(call);
      if (!type.empty())
        params += fmt::format("/* step {}: node '{}' ({}) */\nstatic const {} {} = {{\n  {}}};\n", step, commentText(n.name),
                              opName(n.op), type, paramsName, paramsInitializer(call));
      STOWAGE_ASSIGN_OR_RETURN(std::string stmt, writer.statement(call, paramsName));
      calls += "  " + stmt + "\n";
      for (TensorId id : call.inputs)
        if (id != kNoTensor && g.tensor(id).isConstant()) weightUsed[static_cast<size_t>(id)] = true;
      ++numCalls;
    }
  }

  GeneratedC out;
  out.kernelCalls = numCalls;
  out.header = {p + ".h", emitHeader(g, plan, syms)};
  out.weights = {p + "_weights.c", emitWeightsFile(g, syms, stowageVersion())};

  std::string c = fmt::format(
      "/* {}.c: model '{}' as {} kernel calls over a {}-byte workspace.\n * generated by stowage {}; do not edit. */\n"
      "#include <math.h>\n#include <stddef.h>\n#include <stdint.h>\n#include <string.h>\n\n#include \"{}.h\"\n"
      "#include \"stowage_kernels.h\"\n",
      p, commentText(g.name), numCalls, plan.workspaceBytes, stowageVersion(), p);
  if (!plan.buffers.empty()) {
    c += fmt::format("\n/* Workspace offsets in bytes from ws->base (multiples of {}_WORKSPACE_ALIGN); steps are the\n"
                     " * half-open range of node steps during which the tensor is live. */\n",
                     P);
    // Offset order: by address, then tensor id, so the map reads like the memory layout.
    std::vector<size_t> order(plan.buffers.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return plan.offsets[a] != plan.offsets[b] ? plan.offsets[a] < plan.offsets[b] : plan.buffers[a].tensor < plan.buffers[b].tensor;
    });
    for (size_t i : order) {
      const Buffer& b = plan.buffers[i];
      c += fmt::format("#define {} {}u /* {}, {} bytes, steps [{}, {}) */\n", syms.offsetMacros[static_cast<size_t>(b.tensor)],
                       plan.offsets[i], tensorComment(g.tensor(b.tensor)), b.sizeBytes, b.firstStep, b.endStep);
    }
  }
  std::string decls;
  for (size_t i = 0; i < g.tensors.size(); ++i)
    if (weightUsed[i])
      decls += fmt::format("{} /* {} */\n", weightDeclaration(g, syms, static_cast<TensorId>(i)), tensorComment(g.tensors[i]));
  if (!decls.empty()) c += fmt::format("\n/* Weights, defined in {}_weights.c. */\n{}", p, decls);
  if (!params.empty()) c += "\n/* Kernel parameters. */\n" + params;

  c += fmt::format("\nint {0}_run(const {0}_inputs* in, {0}_outputs* out, {0}_workspace* ws) {{\n", p);
  c += "  if (in == NULL || out == NULL || ws == NULL) return " + P + "_ERR_NULL_ARGUMENT;\n";
  std::vector<std::string> nullChecks;
  for (const auto& f : syms.inputFields) nullChecks.push_back("in->" + f + " == NULL");
  for (const auto& f : syms.outputFields) nullChecks.push_back("out->" + f + " == NULL");
  // A workspace of 0 bytes (only empty intermediates) may be NULL; any bytes need a valid aligned base.
  if (plan.workspaceBytes > 0) nullChecks.push_back("ws->base == NULL");
  for (const auto& check : nullChecks) c += fmt::format("  if ({}) return {}_ERR_NULL_ARGUMENT;\n", check, P);
  if (plan.workspaceBytes > 0)
    c += fmt::format("  if ((uintptr_t)ws->base % {0}_WORKSPACE_ALIGN != 0u) return {0}_ERR_WORKSPACE_MISALIGNED;\n", P);
  if (!plan.buffers.empty()) {
    c += "  {\n    uint8_t* const base = ws->base;\n";
    if (calls.find("(base + ") == std::string::npos) c += "    (void)base; /* every workspace tensor is empty */\n";
    // Indent the calls one more level inside the block.
    std::string indented;
    size_t start = 0;
    while (start < calls.size()) {
      size_t end = calls.find('\n', start);
      if (end == std::string::npos) end = calls.size();
      std::string line = calls.substr(start, end - start);
      indented += (line.empty() ? "" : "  " + line) + "\n";
      start = end + 1;
    }
    c += indented.substr(1) + "  }\n";
  } else {
    c += calls;
  }
  c += fmt::format("  return {}_OK;\n}}\n", P);
  out.source = {p + ".c", c};
  return out;
}

}  // namespace stowage
