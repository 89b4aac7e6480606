// C emitter for <name>.h and <name>.c (see CEmitter.h); weights come from WeightsEmitter.
#include "stowage/codegen/CEmitter.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "stowage/codegen/BoardKernelCode.h"
#include "stowage/codegen/CNames.h"
#include "stowage/codegen/GuardCode.h"
#include "stowage/codegen/KernelParamsText.h"
#include "stowage/lower/KernelCall.h"
#include "stowage/lower/LowerProgram.h"
#include "stowage/codegen/PositionalIo.h"
#include "stowage/codegen/TiledLayerEmitter.h"
#include "stowage/ir/Op.h"
#include "stowage/plan/CpuLayerCost.h"
#include "stowage/codegen/WeightsEmitter.h"
#include "stowage/lower/LoweringSupport.h"

#ifndef STOWAGE_VERSION
#define STOWAGE_VERSION "0.0.0"
#endif

namespace stowage {

namespace {

using lowering::intList;
using lowering::Overloaded;

std::string tensorComment(const Tensor& t) {
  return fmt::format("'{}': {}[{}]", commentText(t.name), dtypeName(t.dtype), shapeToString(t.shape));
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
                "  .stride_h = {}, .stride_w = {}, .pad_top = {}, .pad_left = {}, .dil_h = {}, .dil_w = {}, .group = {}{}",
                p.n, p.c, p.h, p.w, p.m, p.kh, p.kw, p.oh, p.ow, p.stride_h, p.stride_w, p.pad_top, p.pad_left, p.dil_h,
                p.dil_w, p.group, clampFields(p));
          },
          [](const GemmCall& c) {
            const auto& p = c.params;
            return fmt::format(".m = {}, .n = {}, .k = {}, .trans_a = {}, .trans_b = {}, .alpha = {}, .beta = {},\n"
                               "  .c_rows = {}, .c_cols = {}{}",
                               p.m, p.n, p.k, p.trans_a, p.trans_b, floatLiteral(p.alpha), floatLiteral(p.beta), p.c_rows,
                               p.c_cols, clampFields(p));
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
            return fmt::format(".rank = {}, .shape = {}, .a_stride = {}, .b_stride = {}{}", p.rank, intList(p.shape, r),
                               intList(p.a_stride, r), intList(p.b_stride, r), clampFields(p));
          },
          [](const PoolCall& c) { return poolParamsInitializer(c.params); },
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
          [](const QLinearCall& c) { return qlinearParamsInitializer(c); },
          [](const auto&) { return std::string(); },
      },
      call.params);
}

/// How generated code reaches one pool: its placement and the C names of its base pointers.
struct PoolCode {
  const MemoryPool* pool = nullptr;
  std::string ident, macro;  ///< "sram", "NET_POOL_SRAM"
  size_t used = 0;           ///< bytes the plan uses (PoolUse::usedBytes)
  bool perBankPointers = false;  ///< fixed pool with explicit bank bases: one pointer per bank
  bool image = false;            ///< constant pool delivered as a binary image (isImagePool)
  std::string imageFile;         ///< its file name, "net_weights_flash.bin"
  /// True when the application passes this pool's address in ws: user workspace pools, and image pools
  /// that are not at a fixed address.
  bool inWorkspaces() const {
    return pool->placement == PoolPlacement::User ? (pool->kind == PoolKind::Workspace || image)
                                                  : image && pool->placement != PoolPlacement::Fixed;
  }
  /// The local variable holding bank `bank`'s base (or the pool's, when not per bank).
  std::string pointer(int bank) const { return perBankPointers ? fmt::format("p_{}_b{}", ident, bank) : "p_" + ident; }
};

std::vector<PoolCode> poolCode(const ProgramPlan& plan, const CSymbols& syms, WeightsFormat weights) {
  std::vector<PoolCode> v;
  for (size_t i = 0; i < plan.board.pools.size(); ++i) {
    PoolCode pc;
    pc.pool = &plan.board.pools[i];
    pc.ident = syms.poolIdents[i];
    pc.macro = syms.poolMacros[i];
    pc.used = plan.pools[i].usedBytes;
    pc.perBankPointers = pc.pool->placement == PoolPlacement::Fixed && pc.pool->banks > 1 && !pc.pool->bankBases.empty();
    pc.image = isImagePool(*pc.pool, weights);
    if (pc.image) pc.imageFile = fmt::format("{}_weights_{}.bin", syms.prefix, pc.ident);
    v.push_back(pc);
  }
  return v;
}

/// Guard mode: the layer at a step whose output is written over its input (an overlapping layer, one kernel call),
/// with the byte sizes of both and where the output's copy starts in the shadow buffer; y = kNoTensor otherwise.
struct OverlapShadow {
  TensorId x = kNoTensor, y = kNoTensor;
  size_t xBytes = 0, yBytes = 0, yAt = 0;
};
OverlapShadow overlapShadowAt(const Graph& g, const ProgramPlan& plan, const std::vector<KernelCall>& lowered, int step) {
  OverlapShadow s;
  if (lowered.size() != 1 || lowered[0].output == kNoTensor) return s;
  const int b = plan.bufferOf(lowered[0].output);
  if (b < 0) return s;
  const PlacedBuffer& y = plan.buffers[static_cast<size_t>(b)];
  if (y.firstStep != step || !sharesBytesWithInput(plan, y)) return s;
  if (std::find(lowered[0].inputs.begin(), lowered[0].inputs.end(), y.overlapsInput) == lowered[0].inputs.end()) return s;
  s.x = y.overlapsInput;
  s.y = y.tensor;
  s.xBytes = g.tensor(s.x).byteSize();
  s.yBytes = g.tensor(s.y).byteSize();
  s.yAt = (s.xBytes + 15) / 16 * 16;
  return s;
}

class SourceWriter {
 public:
  SourceWriter(const Graph& g, const CSymbols& syms, const ProgramPlan& plan, const std::vector<PoolCode>& pools)
      : g_(g), syms_(syms), plan_(plan), pools_(pools) {
    inputIndex_.assign(g.tensors.size(), -1);
    outputIndex_.assign(g.tensors.size(), -1);
    bufferIndex_.assign(g.tensors.size(), -1);
    for (size_t i = 0; i < g.inputs.size(); ++i) inputIndex_[static_cast<size_t>(g.inputs[i])] = static_cast<int>(i);
    for (size_t i = 0; i < g.outputs.size(); ++i) outputIndex_[static_cast<size_t>(g.outputs[i])] = static_cast<int>(i);
    for (size_t i = 0; i < plan.buffers.size(); ++i)
      if (plan.buffers[i].tensor != kNoTensor) bufferIndex_[static_cast<size_t>(plan.buffers[i].tensor)] = static_cast<int>(i);
  }

  /// C expression for a pointer to tensor `id`'s data.
  Result<std::string> pointer(TensorId id, bool typed) {
    if (id == kNoTensor) return std::string("NULL");
    const size_t i = static_cast<size_t>(id);
    const Tensor& t = g_.tensor(id);
    if (const auto r = redirect_.find(id); r != redirect_.end())
      return typed ? fmt::format("({}*)(void*)({})", dtypeCType(t.dtype), r->second) : fmt::format("(void*)({})", r->second);
    // Graph inputs and outputs have a buffer only with --io-in-pools; otherwise the application's pointers.
    const bool planned = bufferIndex_[i] >= 0 && !syms_.offsetMacros[i].empty();
    if (!planned && inputIndex_[i] >= 0) return "in->" + syms_.inputFields[static_cast<size_t>(inputIndex_[i])];
    if (!planned && outputIndex_[i] >= 0) return "out->" + syms_.outputFields[static_cast<size_t>(outputIndex_[i])];
    if (!planned && t.isConstant()) return syms_.weightArrays[i];
    if (!planned) return makeError(fmt::format("tensor '{}'", t.name), "has no place in the memory plan");
    const PlacedBuffer& b = plan_.buffers[static_cast<size_t>(bufferIndex_[i])];
    const PoolCode& pc = pools_[static_cast<size_t>(b.slot.pool)];
    const std::string base = pc.pointer(b.slot.bank);
    usedPointers_.insert(base);
    const char* q = b.role == BufferRole::Constant ? "const " : "";  // constants in an image pool
    if (!typed) return fmt::format("({}void*)({} + {})", q, base, syms_.offsetMacros[i]);
    return fmt::format("({}{}*)({}void*)({} + {})", q, dtypeCType(t.dtype), q, base, syms_.offsetMacros[i]);
  }

  /// Base-pointer variables some statement used.
  const std::set<std::string>& usedPointers() const { return usedPointers_; }

  /// Statements printed from now on use the byte address `expr` for tensor `id` (guard mode's shadow run of an
  /// overlapping layer); clearRedirects() ends that.
  void redirect(TensorId id, const std::string& expr) { redirect_[id] = expr; }
  void clearRedirects() { redirect_.clear(); }

  /// True when `a` and `b` are planned at the same pool, bank and offset (a declared alias: see
  /// analysis/Aliasing.h).
  bool sameBytes(TensorId a, TensorId b) const {
    if (a == kNoTensor || b == kNoTensor) return false;
    const int ia = bufferIndex_[static_cast<size_t>(a)], ib = bufferIndex_[static_cast<size_t>(b)];
    if (ia < 0 || ib < 0) return false;
    return placedOnSameBytes(plan_.buffers[static_cast<size_t>(ia)], plan_.buffers[static_cast<size_t>(ib)]);
  }

  /// True when `out`, a gather of `in` (a Slice), was planned as a view: in `in`'s alias group, at the bytes the gather
  /// starts reading (analysis/Aliasing.h aliases only Slices whose output is one contiguous run of the input).
  bool isSliceView(TensorId in, TensorId out, const GatherCall& c) const {
    const PlacedBuffer *x = bufferOf(in), *y = bufferOf(out);
    if (x == nullptr || y == nullptr || y->aliasOf == kNoTensor || x->slot != y->slot || x->aliasRunBytes != 0 || y->aliasRunBytes != 0) return false;
    const TensorId root = x->aliasOf == kNoTensor ? in : x->aliasOf;
    if (y->aliasOf != root) return false;
    return y->offset == x->offset + static_cast<size_t>(c.params.in_offset) * c.elemSize;
  }

  /// True when `call` is a Slice planned as a view (isSliceView): it emits no statement and no parameters.
  bool isSliceViewCall(const KernelCall& call) const {
    const auto* gather = std::get_if<GatherCall>(&call.params);
    return gather != nullptr && call.inputs.size() == 1 && isSliceView(call.inputs[0], call.output, *gather);
  }

  /// True when Concat input `in` was planned exactly on its slice of `out` (a declared alias; see
  /// analysis/Aliasing.h), so its producer already wrote it there.
  bool inItsSlice(TensorId in, TensorId out, const ConcatPartCall& c) const {
    const int ii = bufferIndex_[static_cast<size_t>(in)], io = bufferIndex_[static_cast<size_t>(out)];
    if (ii < 0 || io < 0) return false;
    const PlacedBuffer &x = plan_.buffers[static_cast<size_t>(ii)], &y = plan_.buffers[static_cast<size_t>(io)];
    const TensorId root = y.aliasOf == kNoTensor ? out : y.aliasOf;
    if (x.aliasOf != root || x.slot != y.slot || x.offset != y.offset + static_cast<size_t>(c.outOffset) * c.elemSize) return false;
    // One contiguous slice, or (a strided alias) one run of inBlock elements per outBlock of the output.
    if (c.outer == 1) return x.aliasRunBytes == 0;
    return y.aliasRunBytes == 0 && x.aliasRunBytes == static_cast<size_t>(c.inBlock) * c.elemSize &&
           x.aliasStrideBytes == static_cast<size_t>(c.outBlock) * c.elemSize;
  }

  /// The plan's buffer of `id`, or nullptr.
  const PlacedBuffer* bufferOf(TensorId id) const {
    if (id == kNoTensor || bufferIndex_[static_cast<size_t>(id)] < 0) return nullptr;
    return &plan_.buffers[static_cast<size_t>(bufferIndex_[static_cast<size_t>(id)])];
  }

  /// The C statement for `call`, using `paramsName` for its parameter struct; `function` replaces the kernel's name
  /// when not empty (a board kernel with the same signature).
  Result<std::string> statement(const KernelCall& call, const std::string& paramsName, const std::string& function = "") {
    if (std::holds_alternative<CopyCall>(call.params) && call.inputs.size() == 1 && sameBytes(call.inputs[0], call.output))
      return std::string("/* a view: the output shares its input's buffer, nothing to copy */");
    if (const auto* gather = std::get_if<GatherCall>(&call.params);
        gather != nullptr && call.inputs.size() == 1 && isSliceView(call.inputs[0], call.output, *gather))
      return std::string("/* a view: the output is a contiguous part of its input's buffer, nothing to copy */");
    if (const auto* part = std::get_if<ConcatPartCall>(&call.params);
        part != nullptr && call.inputs.size() == 1 && inItsSlice(call.inputs[0], call.output, *part))
      return fmt::format("/* '{}' was written straight into its slice of the output: nothing to copy */",
                         commentText(g_.tensor(call.inputs[0]).name));
    std::vector<std::string> in;
    const bool typed = !std::holds_alternative<GatherCall>(call.params) && !std::holds_alternative<ConcatPartCall>(call.params) &&
                       !std::holds_alternative<CopyCall>(call.params);
    for (TensorId id : call.inputs) {
      STOWAGE_ASSIGN_OR_RETURN(std::string p, pointer(id, typed));
      in.push_back(p);
    }
    STOWAGE_ASSIGN_OR_RETURN(std::string y, pointer(call.output, typed));
    const std::string fn = function.empty() ? kernelFunctionName(call) : function;
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
  std::map<TensorId, std::string> redirect_;
  const Graph& g_;
  const CSymbols& syms_;
  const ProgramPlan& plan_;
  const std::vector<PoolCode>& pools_;
  std::vector<int> inputIndex_, outputIndex_, bufferIndex_;
  std::set<std::string> usedPointers_;
};

std::string placementText(const PoolCode& pc) {
  const MemoryPool& pool = *pc.pool;
  if (pc.image)
    return pool.placement == PoolPlacement::Fixed
               ? fmt::format("binary image {}, which the application loads at the fixed address _BASE", pc.imageFile)
               : pool.placement == PoolPlacement::Static
                   ? fmt::format("binary image {}, which the application loads (into a buffer it may place with _PLACE) and passes in ws", pc.imageFile)
                   : fmt::format("binary image {}, which the application loads and passes in ws", pc.imageFile);
  switch (pool.placement) {
    case PoolPlacement::User: return "user: the application passes its address in ws";
    case PoolPlacement::Static:
      return pool.section.empty() ? "static array" : fmt::format("static array in section {}", pool.section);
    case PoolPlacement::Fixed: return "fixed address";
  }
  return "";
}

/// "#define NET_POOL_X_PLACE ..." guarded so that other compilers can predefine it.
std::string placeMacro(const std::string& macro, const MemoryPool& pool, size_t alignment) {
  std::string attrs = pool.section.empty() ? "" : fmt::format("section(\"{}\"), ", pool.section);
  attrs += fmt::format("aligned({})", alignment);
  return fmt::format(
      "#ifndef {0}_PLACE\n#if defined(__GNUC__) || defined(__clang__)\n#define {0}_PLACE __attribute__(({1}))\n#else\n"
      "#define {0}_PLACE\n#endif\n#endif\n",
      macro, attrs);
}

std::string emitHeader(const Graph& g, const ProgramPlan& plan, const CSymbols& s, const std::vector<PoolCode>& pools,
                       const EmitOptions& options) {
  const std::string& p = s.prefix;
  const std::string& P = s.macroPrefix;
  std::string h = fmt::format(
      "/* {}.h: C API of model '{}', compiled ahead of time; no malloc, every tensor at a fixed place.\n"
      " * generated by stowage {}; do not edit. */\n"
      "#ifndef {}_H_INCLUDED\n#define {}_H_INCLUDED\n\n#include <stddef.h>\n#include <stdint.h>\n\n#include \"stowage_io.h\"\n\n"
      "#ifdef __cplusplus\nextern \"C\" {{\n#endif\n\n",
      p, commentText(g.name), stowageVersion(), P, P);
  h += fmt::format("/* Memory pools{}. _SIZE is the bytes this model uses (at least 1), _ALIGN the alignment of the\n"
                   " * pool's base address, _CAPACITY the board's size when it has one. */\n",
                   plan.board.name.empty() ? "" : fmt::format(" of board '{}'", commentText(plan.board.name)));
  for (size_t i = 0; i < pools.size(); ++i) {
    const PoolCode& pc = pools[i];
    const MemoryPool& pool = *pc.pool;
    const PoolUse& use = plan.pools[i];
    h += fmt::format("\n/* pool '{}': {} {}; {} buffers, {} bytes used, {} bytes live at the busiest step (lower bound {}) */\n",
                     commentText(pool.name), pool.kind == PoolKind::Constant ? "constant," : "workspace,", placementText(pc),
                     use.buffers, use.usedBytes, use.peakLiveBytes, use.lowerBoundBytes);
    h += fmt::format("#define {}_SIZE {}u\n#define {}_ALIGN {}u\n", pc.macro, std::max<size_t>(1, use.usedBytes), pc.macro,
                     pool.alignment);
    if (pool.sizeBytes) h += fmt::format("#define {}_CAPACITY {}u\n", pc.macro, *pool.sizeBytes);
    if (pool.banks > 1) h += fmt::format("#define {}_BANKS {}u\n#define {}_BANK_SIZE {}u\n", pc.macro, pool.banks, pc.macro, pool.bankSizeBytes);
    if (pool.placement == PoolPlacement::Fixed && pool.base)
      h += fmt::format("#define {}_BASE ((uintptr_t)0x{:X}u)\n", pc.macro, *pool.base);
    if (pc.perBankPointers)
      for (int b = 0; b < pool.banks; ++b)
        h += fmt::format("#define {}_BANK{}_BASE ((uintptr_t)0x{:X}u)\n", pc.macro, b, pool.bankBases[static_cast<size_t>(b)]);
    if (pool.placement == PoolPlacement::Static) h += placeMacro(pc.macro, pool, pool.alignment);
    if (pc.image && use.usedBytes > 0) h += fmt::format("#define {}_IMAGE \"{}\"\n", pc.macro, pc.imageFile);
  }
  h += fmt::format("\n/* Return codes of {0}_run (and of the positional functions below). */\n#define {1}_OK 0\n"
                   "#define {1}_ERR_NULL_ARGUMENT 1\n#define {1}_ERR_INDEX 2 /* positional functions only: no such input, output "
                   "or {0}_workspaces pool */\n",
                   p, P);
  for (size_t i = 0; i < pools.size(); ++i) {
    if (!pools[i].inWorkspaces()) continue;
    const std::string u = upperIdentifier(pools[i].ident);
    h += fmt::format("#define {0}_ERR_POOL_{1}_NULL {2}\n#define {0}_ERR_POOL_{1}_MISALIGNED {3}\n", P, u, 16 + 2 * i, 17 + 2 * i);
  }
  h += "\n/* Sizes of each input and output: _ELEMS in elements, _BYTES in bytes; by field name and by position, so an\n"
       " * application can also be written without knowing the model's tensor names. */\n";
  h += fmt::format("#define {0}_NUM_INPUTS {1}\n#define {0}_NUM_OUTPUTS {2}\n", P, g.inputs.size(), g.outputs.size());
  auto sizes = [&](const char* kind, const std::vector<TensorId>& ids, const std::vector<std::string>& fields) {
    for (size_t i = 0; i < ids.size(); ++i) {
      const Tensor& t = g.tensor(ids[i]);
      const std::string f = upperIdentifier(fields[i]);
      h += fmt::format("#define {}_{}_{}_ELEMS {}u\n#define {}_{}_{}_BYTES {}u\n", P, kind, f, t.numElements(), P, kind, f,
                       t.byteSize());
      h += fmt::format("#define {0}_{1}_{2}_ELEMS {0}_{1}_{3}_ELEMS\n#define {0}_{1}_{2}_BYTES {0}_{1}_{3}_BYTES\n", P, kind, i, f);
    }
  };
  sizes("INPUT", g.inputs, s.inputFields);
  sizes("OUTPUT", g.outputs, s.outputFields);
  // Offsets: by pool, then address, then tensor id, so the list reads like each pool's memory map.
  std::vector<size_t> order;
  for (size_t i = 0; i < plan.buffers.size(); ++i)
    if (plan.buffers[i].role == BufferRole::Activation) order.push_back(i);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const PlacedBuffer &x = plan.buffers[a], &y = plan.buffers[b];
    if (x.slot.pool != y.slot.pool) return x.slot.pool < y.slot.pool;
    if (x.offset != y.offset) return x.offset < y.offset;
    return x.tensor < y.tensor;
  });
  if (!order.empty())
    h += fmt::format("\n/* Offset of each {} in bytes from its pool's base (from its bank's base in pools\n"
                     " * with per-bank base addresses); steps are the half-open range of node steps it is live. */\n",
                     options.ioInPools ? "intermediate tensor, graph input and graph output" : "intermediate tensor");
  for (size_t i : order) {
    const PlacedBuffer& b = plan.buffers[i];
    const PoolCode& pc = pools[static_cast<size_t>(b.slot.pool)];
    const size_t off = pc.perBankPointers ? b.offset - static_cast<size_t>(b.slot.bank) * pc.pool->bankSizeBytes : b.offset;
    h += fmt::format("#define {} {}u /* pool {}{}: {}, {} bytes, steps [{}, {}) */\n", s.offsetMacros[static_cast<size_t>(b.tensor)], off,
                     pc.ident, pc.pool->banks > 1 ? fmt::format(" bank {}", b.slot.bank) : "", tensorComment(g.tensor(b.tensor)),
                     b.sizeBytes, b.firstStep, b.endStep);
  }
  // Constants in image pools: their offsets, so the image can be checked or produced by other tools.
  std::string constOffsets;
  for (const PlacedBuffer& b : plan.buffers) {
    if (b.role != BufferRole::Constant || !pools[static_cast<size_t>(b.slot.pool)].image) continue;
    constOffsets += fmt::format("#define {} {}u /* pool {}: {}, {} bytes */\n", s.offsetMacros[static_cast<size_t>(b.tensor)], b.offset,
                                pools[static_cast<size_t>(b.slot.pool)].ident, tensorComment(g.tensor(b.tensor)), b.sizeBytes);
  }
  if (!constOffsets.empty())
    h += "\n/* Offset of each constant in its pool's binary image (the generated code reads it there). */\n" + constOffsets;
  auto fields = [&](bool isConst, const std::vector<TensorId>& ids, const std::vector<std::string>& names, const char* what) {
    std::string body;
    for (size_t i = 0; i < ids.size(); ++i) {
      const Tensor& t = g.tensor(ids[i]);
      body += fmt::format("  {}{}* {}; /* {} */\n", isConst ? "const " : "", dtypeCType(t.dtype), names[i], tensorComment(t));
    }
    if (body.empty()) body = fmt::format("  char unused; /* the model has no {} */\n", what);
    return body;
  };
  if (options.ioInPools) {
    h += fmt::format("\n/* --io-in-pools: inputs live in the pools. {}_map_inputs sets these pointers to where the application\n"
                     " * writes each input (_ELEMS elements) before every {}_run. {}_run may overwrite them. */\n",
                     p, p, p);
    h += "typedef struct {\n" + fields(false, g.inputs, s.inputFields, "inputs") + "} " + p + "_inputs;\n\n";
    h += fmt::format("/* --io-in-pools: outputs live in the pools. {}_map_outputs sets these pointers to where each output\n"
                     " * (_ELEMS elements) is after {}_run; read them before the next call. */\n",
                     p, p);
    h += "typedef struct {\n" + fields(true, g.outputs, s.outputFields, "outputs") + "} " + p + "_outputs;\n\n";
  } else {
    h += fmt::format("\n/* Input data, read by {}_run; every pointer must be non-NULL and hold _ELEMS elements. */\n", p);
    h += "typedef struct {\n" + fields(true, g.inputs, s.inputFields, "inputs") + "} " + p + "_inputs;\n\n";
    h += fmt::format("/* Output buffers, written by {}_run; every pointer must be non-NULL and hold _ELEMS elements. */\n", p);
    h += "typedef struct {\n" + fields(false, g.outputs, s.outputFields, "outputs") + "} " + p + "_outputs;\n\n";
  }
  std::string wsFields;
  bool anyImage = false;
  for (const PoolCode& pc : pools) {
    if (!pc.inWorkspaces()) continue;
    if (pc.image) {
      anyImage = true;
      wsFields += fmt::format("  const uint8_t* {}; /* constant pool '{}': the bytes of {} ({}_SIZE), aligned to {}_ALIGN{} */\n",
                              pc.ident, commentText(pc.pool->name), pc.imageFile, pc.macro, pc.macro,
                              pc.used == 0 ? "; unused by this model, may be NULL" : "");
    } else {
      wsFields += fmt::format("  uint8_t* {}; /* pool '{}': {}_SIZE bytes aligned to {}_ALIGN{} */\n", pc.ident, commentText(pc.pool->name),
                              pc.macro, pc.macro, pc.used == 0 ? "; unused by this model, may be NULL" : "");
    }
  }
  if (wsFields.empty()) wsFields = "  char unused; /* every pool of this model is static or fixed: ws may be NULL */\n";
  h += fmt::format(
      "/* The memory the application provides: one pointer per `user` pool{}. Pools hold no state between calls;\n"
      " * concurrent calls need separate pools (and static or fixed pools make {}_run non-reentrant). */\n",
      anyImage ? ", and one per constant pool delivered as a binary\n * image (--weights: load the file at boot, pass its address; fixed-address images are loaded at _BASE)" : "",
      p);
  h += "typedef struct {\n" + wsFields + "} " + p + "_workspaces;\n\n";
  if (options.ioInPools) {
    h += fmt::format(
        "/* Sets in->* (out->*) to where the application writes the inputs (reads the outputs) inside the pools. Returns\n"
        " * {0}_OK, {0}_ERR_NULL_ARGUMENT, or {0}_ERR_POOL_<P>_NULL / _MISALIGNED like {1}_run. Pointers stay valid as\n"
        " * long as ws holds the same pools; a tensor with no elements maps to NULL. */\n"
        "int {1}_map_inputs(const {1}_workspaces* ws, {1}_inputs* in);\n"
        "int {1}_map_outputs(const {1}_workspaces* ws, {1}_outputs* out);\n\n"
        "/* Runs the model once on the inputs already written at {1}_map_inputs' pointers and leaves the outputs at\n"
        " * {1}_map_outputs' pointers; nothing is copied. Returns {0}_OK, or {0}_ERR_NULL_ARGUMENT when ws is NULL\n"
        " * but needed, or {0}_ERR_POOL_<P>_NULL / {0}_ERR_POOL_<P>_MISALIGNED when a pool pointer in ws is NULL or not\n"
        " * aligned to its _ALIGN; nothing is written on error. */\n"
        "int {1}_run(const {1}_workspaces* ws);\n\n",
        P, p);
  } else {
    h += fmt::format(
        "/* Runs the model once: reads *in, writes *out, uses the pools as scratch. Returns {0}_OK, or\n"
        " * {0}_ERR_NULL_ARGUMENT when an argument or input/output pointer is NULL, or {0}_ERR_POOL_<P>_NULL /\n"
        " * {0}_ERR_POOL_<P>_MISALIGNED when a {2} pointer is NULL or not aligned to its _ALIGN; nothing is\n"
        " * written on error. Outputs must not overlap inputs or the pools. */\n"
        "int {1}_run(const {1}_inputs* in, {1}_outputs* out, const {1}_workspaces* ws);\n\n",
        P, p, anyImage ? "pool" : "user pool's");
  }
  h += positionalIoDeclarations(s, pools.size(), options.ioInPools);
  h += fmt::format("#ifdef __cplusplus\n}}\n#endif\n\n#endif /* {}_H_INCLUDED */\n", P);
  return h;
}

/// Indents every non-empty line of `text` by `spaces`.
std::string indent(const std::string& text, size_t spaces) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    out += (line.empty() ? "" : std::string(spaces, ' ') + line) + "\n";
    start = end + 1;
  }
  return out;
}

}  // namespace

std::string stowageVersion() { return STOWAGE_VERSION; }

std::optional<WeightsFormat> weightsFormatFromName(std::string_view name) {
  if (name == "auto") return WeightsFormat::Auto;
  if (name == "c") return WeightsFormat::C;
  if (name == "bin") return WeightsFormat::Bin;
  return std::nullopt;
}

bool isImagePool(const MemoryPool& pool, WeightsFormat format) {
  if (pool.kind != PoolKind::Constant) return false;
  return format == WeightsFormat::Bin || pool.placement != PoolPlacement::Static;
}

namespace {

/// Errors for --weights / --io-in-pools choices that do not fit this board or plan.
Status checkEmitOptions(const Graph& g, const ProgramPlan& plan, const EmitOptions& options) {
  std::vector<bool> holdsConstants(plan.board.pools.size(), false);
  for (const PlacedBuffer& b : plan.buffers)
    if (b.role == BufferRole::Constant) holdsConstants[static_cast<size_t>(b.slot.pool)] = true;
  for (size_t i = 0; i < plan.board.pools.size(); ++i) {
    const MemoryPool& pool = plan.board.pools[i];
    if (pool.kind != PoolKind::Constant || !holdsConstants[i]) continue;
    const std::string where = pool.origin.empty() ? fmt::format("pool '{}'", pool.name) : fmt::format("{}: pool '{}'", pool.origin, pool.name);
    if (options.weights == WeightsFormat::C && pool.placement != PoolPlacement::Static) {
      Diagnostic d = makeError(where, fmt::format("is a `{}` constant pool, so its weights cannot be C arrays (the compiler and "
                                                  "linker cannot put an array at memory the application chooses or at a device address)",
                                                  poolPlacementName(pool.placement)));
      d.hint = "use --weights bin (or the default --weights auto) to get the pool as a binary image, or make the pool "
               "`placement = \"static\"`";
      return d;
    }
    if (isImagePool(pool, options.weights) && pool.placement == PoolPlacement::Fixed && pool.banks > 1 && !pool.bankBases.empty()) {
      Diagnostic d = makeUnsupported(where, "is a fixed constant pool with per-bank base addresses; its binary image would not be "
                                            "one contiguous range");
      d.hint = "describe each bank as its own fixed constant pool, or drop `bank_bases` so the banks are contiguous from `base`";
      return d;
    }
  }
  for (const PlacedBuffer& b : plan.buffers) {
    const bool io = std::find(g.inputs.begin(), g.inputs.end(), b.tensor) != g.inputs.end() ||
                    std::find(g.outputs.begin(), g.outputs.end(), b.tensor) != g.outputs.end();
    if (io && !options.ioInPools)
      return makeError(fmt::format("tensor '{}'", g.tensor(b.tensor).name),
                       "is a graph input or output with a place in the memory plan, but C was asked without --io-in-pools");
  }
  if (options.ioInPools)
    for (const std::vector<TensorId>* ids : {&g.inputs, &g.outputs})
      for (TensorId id : *ids)
        if (plan.bufferOf(id) < 0)
          return makeError(fmt::format("tensor '{}'", g.tensor(id).name),
                           "--io-in-pools needs every graph input and output planned into a pool, but this one has no place");
  return Status::success();
}

}  // namespace

Result<GeneratedC> emitC(const Graph& g, const ProgramPlan& plan, const std::string& name, const EmitOptions& options) {
  STOWAGE_TRY(validateModelName(name));
  STOWAGE_ASSIGN_OR_RETURN(LoweredProgram program, lowerProgram(g, plan, kernelIsaFor(plan.board, false)));
  return emitC(g, plan, program, name, options);
}

Result<GeneratedC> emitC(const Graph& g, const ProgramPlan& plan, const LoweredProgram& program, const std::string& name,
                         const EmitOptions& options) {
  STOWAGE_TRY(validateModelName(name));
  STOWAGE_TRY(checkEmitOptions(g, plan, options));
  std::vector<std::string> poolNames;
  for (const MemoryPool& pool : plan.board.pools) poolNames.push_back(pool.name);
  std::vector<TensorId> wsTensors;  // tensors with an offset macro: activations, and constants in image pools
  for (const PlacedBuffer& b : plan.buffers)
    if (b.role == BufferRole::Activation || isImagePool(plan.board.pools[static_cast<size_t>(b.slot.pool)], options.weights))
      wsTensors.push_back(b.tensor);
  const CSymbols syms = assignSymbols(g, name, wsTensors, poolNames);
  const std::string& p = syms.prefix;
  const std::string& P = syms.macroPrefix;
  const std::vector<PoolCode> pools = poolCode(plan, syms, options.weights);
  SourceWriter writer(g, syms, plan, pools);

  // Print every lowered node: the parameter structs go at file scope, the calls inside <name>_run.
  std::string params, calls;
  size_t numCalls = 0;
  std::vector<BoardKernelCall> boardCalls;
  std::vector<bool> weightUsed(g.tensors.size(), false);
  const GuardLayout guard = guardLayout(g, plan);
  size_t shadowBytes = 0;  // guard mode: the largest overlapping layer's input and output copies
  for (size_t step = 0; step < g.nodes.size(); ++step) {
    const Node& n = g.nodes[step];
    const LoweredLayer& layer = program.layers[step];
    const std::vector<KernelCall>& lowered = layer.calls;
    calls += fmt::format("\n/* step {}: node '{}' ({}) */\n", step, commentText(n.name), opName(n.op));
    calls += guardBeforeStep(g, plan, guard, static_cast<int>(step), p);
    if (const OffloadedLayer* off = plan.offloadedAt(static_cast<int>(step)); off != nullptr && lowered.size() == 1) {
      // Tiled onto an accelerator or cores (tile/): a descriptor table and a DMA / compute loop.
      std::vector<std::string> operands;
      for (TensorId id : lowered[0].inputs) {
        STOWAGE_ASSIGN_OR_RETURN(std::string ptr, writer.pointer(id, true));
        operands.push_back(ptr);
        if (id != kNoTensor && g.tensor(id).isConstant()) weightUsed[static_cast<size_t>(id)] = true;
      }
      STOWAGE_ASSIGN_OR_RETURN(std::string y, writer.pointer(lowered[0].output, true));
      operands.push_back(y);
      // The weights of each later layer on the target whose first weight tiles this layer's cores load.
      std::vector<std::string> laterWeights;
      for (const WeightPrefetchTo& to : off->prefetches) {
        const std::vector<KernelCall>& laterLowered = program.layers[static_cast<size_t>(to.step)].calls;
        if (laterLowered.size() != 1 || laterLowered[0].inputs.size() < 2)
          return makeError(fmt::format("node '{}'", n.name), "prefetches the weights of a layer with no weights (an internal tiler error)");
        STOWAGE_ASSIGN_OR_RETURN(std::string w, writer.pointer(laterLowered[0].inputs[1], true));
        laterWeights.push_back(std::move(w));
      }
      // And the input of the next engine layer, when this layer loads its first input tile (tile/InputHandover.h).
      std::string nextInput;
      if (off->handsInputTo >= 0) {
        const std::vector<KernelCall>& handLowered = program.layers[static_cast<size_t>(off->handsInputTo)].calls;
        if (handLowered.size() != 1 || handLowered[0].inputs.empty())
          return makeError(fmt::format("node '{}'", n.name), "hands over the input of a layer with no input (an internal tiler error)");
        STOWAGE_ASSIGN_OR_RETURN(nextInput, writer.pointer(handLowered[0].inputs[0], true));
      }
      STOWAGE_ASSIGN_OR_RETURN(TiledLayerCode tiled, emitTiledLayer(g, plan, *off, syms, operands, laterWeights,
                                                                        layer.boardKernels.empty() ? nullptr : layer.boardKernels[0], nextInput));
      if (tiled.boardKernel) boardCalls.push_back(boardKernelCall(g, plan.board, static_cast<int>(step), off->target, *tiled.boardKernel));
      params += tiled.definitions;
      calls += tiled.statements;
      calls += guardAfterStep(g, plan, guard, static_cast<int>(step), p);
      ++numCalls;
      continue;
    }
    if (lowered.empty()) calls += "/* output has no elements: nothing to compute */\n";
    // Guard mode, a layer writing its output over its input: the input is copied aside first, and the layer is
    // computed once more from the copy into a second one after the real call; any difference means the output was
    // written over input bytes the kernel still had to read (an overlap its row order does not allow).
    const OverlapShadow shadow = guard.records.empty() ? OverlapShadow{} : overlapShadowAt(g, plan, lowered, static_cast<int>(step));
    if (shadow.y != kNoTensor) {
      STOWAGE_ASSIGN_OR_RETURN(std::string x, writer.pointer(shadow.x, false));
      calls += fmt::format("memcpy({}_guard_shadow, {}, {}u); /* the input, before its layer writes over it */\n", p, x, shadow.xBytes);
      shadowBytes = std::max(shadowBytes, shadow.yAt + shadow.yBytes);
    }
    // The host simulator charges the calling core the cost model's cycles for the layer and marks its span
    // (nothing on a device).
    const uint64_t cpuCycles =
        lowered.empty() || step >= plan.nodeTargets.size() ? 0 : cpuLayerCycles(g, n, plan, plan.nodeTargets[step]);
    if (cpuCycles > 0) calls += fmt::format("#if defined(STOWAGE_HOST_SIM)\nstowage_sim_cpu_layer_begin(\"{}\");\n#endif\n", cStringText(n.name));
    for (size_t k = 0; k < lowered.size(); ++k) {
      const KernelCall& call = lowered[k];
      const std::string paramsName = fmt::format("{}_p{}", p, numCalls);
      const std::string type = kernelParamsTypeName(call);
      if (!type.empty() && !writer.isSliceViewCall(call))
        params += fmt::format("/* step {}: node '{}' ({}) */\nstatic const {} {} = {{\n  {}}};\n", step, commentText(n.name),
                              opName(n.op), type, paramsName, paramsInitializer(call));
      // A board kernel ([[kernels]]) for this call on the target running the node, else the portable kernel.
      const int target = step < plan.nodeTargets.size() ? plan.nodeTargets[step] : -1;
      const KernelOverride* own = layer.boardKernels[k];
      if (own) boardCalls.push_back(boardKernelCall(g, plan.board, static_cast<int>(step), target, *own));
      STOWAGE_ASSIGN_OR_RETURN(std::string stmt, writer.statement(call, paramsName, own ? own->function : ""));
      calls += stmt + "\n";
      for (TensorId id : call.inputs)
        if (id != kNoTensor && g.tensor(id).isConstant()) weightUsed[static_cast<size_t>(id)] = true;
      ++numCalls;
    }
    if (cpuCycles > 0)
      calls += fmt::format("#if defined(STOWAGE_HOST_SIM)\nSTOWAGE_SIM_COMPUTE(\"{0}\", {1}u);\nstowage_sim_layer_end(\"{0}\");\n#endif\n",
                           cStringText(n.name), cpuCycles);
    if (!lowered.empty())
      calls += fmt::format("#if defined(STOWAGE_PROFILE_LAYERS)\nstowage_profile_layer(\"{}\", {}ul);\n#endif\n", cStringText(n.name),
                           std::max<int64_t>(0, macCount(g, n)));
    if (shadow.y != kNoTensor) {
      writer.redirect(shadow.x, fmt::format("{}_guard_shadow", p));
      writer.redirect(shadow.y, fmt::format("{}_guard_shadow + {}", p, shadow.yAt));
      STOWAGE_ASSIGN_OR_RETURN(std::string again, writer.statement(lowered[0], fmt::format("{}_p{}", p, numCalls - 1),
                                                                    layer.boardKernels[0] ? layer.boardKernels[0]->function : ""));
      writer.clearRedirects();
      STOWAGE_ASSIGN_OR_RETURN(std::string y, writer.pointer(shadow.y, false));
      calls += fmt::format("{} /* again, from the copy */\nif (memcmp({}, {}_guard_shadow + {}, {}u) != 0)\n"
                           "  stowage_guard_fail(\"{}\", \"written over input bytes its layer still had to read (an overlap the "
                           "kernel's row order does not allow)\", {});\n",
                           again, y, p, shadow.yAt, shadow.yBytes, cStringText(g.tensor(shadow.y).name), step);
    }
    calls += guardAfterStep(g, plan, guard, static_cast<int>(step), p);
  }
  // Guard mode: one record per guarded tensor, filled at the start of <name>_run.
  std::string guardInit;
  // Records are numbered 0..n-1 (declared aliases share their root's record, or their slice's).
  const int guardCount = static_cast<int>(guard.records.size());
  if (guardCount > 0) {
    guardInit = fmt::format("{}_guard_buf guard[{}_GUARD_COUNT];\n", p, P);
    for (size_t k = 0; k < guard.records.size(); ++k) {
      const GuardRecord& r = guard.records[k];
      STOWAGE_ASSIGN_OR_RETURN(std::string ptr, writer.pointer(r.tensor, false));
      guardInit += fmt::format("guard[{0}].data = (uint8_t*){1};\nguard[{0}].size = {2}u;\nguard[{0}].name = \"{3}\";\n"
                               "guard[{0}].sum = 0u;\nguard[{0}].live = 0;\nguard[{0}].slice = {4};\n",
                               k, ptr, r.size, cStringText(g.tensor(r.tensor).name), r.slice ? 1 : 0);
    }
  }

  if (guardCount > 0 && options.ioInPools) guardInit += guardInputsWrittenByApplication(g, guard, p);

  GeneratedC out;
  out.kernelCalls = numCalls;
  out.int8Code = int8KernelCodeNeeded(plan, program);
  out.boardKernelCalls = boardCalls;
  out.options = options;
  out.header = {p + ".h", emitHeader(g, plan, syms, pools, options)};
  std::vector<bool> inImage(g.tensors.size(), false);
  for (const PlacedBuffer& b : plan.buffers)
    if (b.role == BufferRole::Constant && pools[static_cast<size_t>(b.slot.pool)].image) inImage[static_cast<size_t>(b.tensor)] = true;
  // --weights bin: no C arrays at all (constants no node reads are dropped rather than written as arrays).
  std::vector<bool> skipArray = inImage;
  if (options.weights == WeightsFormat::Bin) skipArray.assign(g.tensors.size(), true);
  out.weights = {p + "_weights.c", emitWeightsFile(g, syms, stowageVersion(), plan, skipArray)};
  for (const PoolCode& pc : pools) {
    if (!pc.image || pc.used == 0) continue;
    GeneratedImage image;
    image.fileName = pc.imageFile;
    image.pool = static_cast<int>(&pc - pools.data());
    image.bytes.assign(pc.used, '\0');
    for (const PlacedBuffer& b : plan.buffers) {
      if (b.role != BufferRole::Constant || b.slot.pool != image.pool) continue;
      const Tensor& t = g.tensor(b.tensor);
      std::copy(t.data.begin(), t.data.end(), image.bytes.begin() + static_cast<std::ptrdiff_t>(b.offset));
    }
    out.images.push_back(std::move(image));
  }

  size_t totalUsed = 0;
  for (const PoolUse& u : plan.pools)
    if (plan.board.pools[static_cast<size_t>(u.pool)].kind == PoolKind::Workspace) totalUsed += u.usedBytes;
  std::string c = fmt::format(
      "/* {}.c: model '{}' as {} kernel calls over {} bytes of workspace pools.\n * generated by stowage {}; do not edit. */\n"
      "#include <math.h>\n#include <stddef.h>\n#include <stdint.h>\n#include <string.h>\n\n#include \"{}.h\"\n"
      "#include \"stowage_hal.h\"\n#include \"stowage_kernels.h\"\n",
      p, commentText(g.name), numCalls, totalUsed, stowageVersion(), p);
  c += "#include \"stowage_accel.h\"\n";
  c += boardKernelPrelude(plan.board, boardCalls, p);
  std::string statics;
  for (const PoolCode& pc : pools)
    if (pc.pool->kind == PoolKind::Workspace && pc.pool->placement == PoolPlacement::Static && pc.used > 0)
      statics += fmt::format("static uint8_t {}_pool_{}[{}_SIZE] {}_PLACE;\n", p, pc.ident, pc.macro, pc.macro);
  if (!statics.empty()) c += "\n/* Static pools. */\n" + statics;
  if (guardCount > 0) c += guardHelpers(plan, p) + fmt::format("#define {}_GUARD_COUNT {}\n", P, guardCount);
  if (shadowBytes > 0)
    c += fmt::format("/* Guard mode: an overlapping layer's input and output, computed again apart (outside the pools). */\n"
                     "static uint8_t {}_guard_shadow[{}];\n",
                     p, shadowBytes);
  std::string decls;
  for (size_t i = 0; i < g.tensors.size(); ++i)
    if (weightUsed[i] && !inImage[i])
      decls += fmt::format("{} /* {} */\n", weightDeclaration(g, syms, static_cast<TensorId>(i)), tensorComment(g.tensors[i]));
  if (!decls.empty()) c += fmt::format("\n/* Weights, defined in {}_weights.c. */\n{}", p, decls);
  c += tiledProgramPrelude(plan, syms);
  if (!params.empty()) c += "\n/* Kernel parameters. */\n" + params;

  // The pointer checks and base-pointer locals every entry point starts with.
  bool needWs = false;
  for (const PoolCode& pc : pools) needWs = needWs || (pc.inWorkspaces() && pc.used > 0);
  // Checks of the ws pointers: every pool <name>_run uses, or (`only`) the pools whose base pointers are in it.
  auto poolChecks = [&](const std::set<std::string>* only) {
    std::string checks;
    for (const PoolCode& pc : pools) {
      if (!pc.inWorkspaces() || pc.used == 0 || (only && !only->count(pc.pointer(0)))) continue;
      checks += fmt::format("  if (ws->{0} == NULL) return {1}_ERR_POOL_{2}_NULL;\n"
                            "  if ((uintptr_t)ws->{0} % {3}_ALIGN != 0u) return {1}_ERR_POOL_{2}_MISALIGNED;\n",
                            pc.ident, P, upperIdentifier(pc.ident), pc.macro);
    }
    return checks;
  };
  auto baseLocals = [&](const std::set<std::string>& used) {
    std::string locals;
    for (const PoolCode& pc : pools) {
      if (pc.used == 0) continue;
      const MemoryPool& pool = *pc.pool;
      const char* q = pc.image ? "const " : "";
      if (pc.pool->kind == PoolKind::Constant && !pc.image) continue;  // C arrays
      if (pc.inWorkspaces()) {
        if (used.count(pc.pointer(0))) locals += fmt::format("{}uint8_t* const {} = ws->{};\n", q, pc.pointer(0), pc.ident);
      } else if (pool.placement == PoolPlacement::Static) {
        if (used.count(pc.pointer(0))) locals += fmt::format("uint8_t* const {} = {}_pool_{};\n", pc.pointer(0), p, pc.ident);
      } else if (pc.perBankPointers) {
        for (int b = 0; b < pool.banks; ++b)
          if (used.count(pc.pointer(b)))
            locals += fmt::format("{3}uint8_t* const {0} = ({3}uint8_t*)STOWAGE_FIXED_ADDRESS({1}_BANK{2}_BASE, {1}_BANK_SIZE);\n",
                                  pc.pointer(b), pc.macro, b, q);
      } else if (used.count(pc.pointer(0))) {
        locals += fmt::format("{2}uint8_t* const {0} = ({2}uint8_t*)STOWAGE_FIXED_ADDRESS({1}_BASE, {1}_SIZE);\n", pc.pointer(0),
                              pc.macro, q);
      }
    }
    return locals;
  };

  // The positional API (PositionalIo.h), ahead of the entry points so <name>_run stays the file's last function.
  std::vector<PositionalPool> positional;
  for (const PoolCode& pc : pools)
    positional.push_back({pc.pool, pc.ident, pc.macro, pc.inWorkspaces(), pc.image, pc.image && pc.used > 0,
                          pc.pool->placement == PoolPlacement::Fixed && pc.pool->base.has_value()});
  c += positionalIoDefinitions(g, syms, positional, options.ioInPools);

  if (options.ioInPools) {
    // <name>_map_inputs / <name>_map_outputs: pointers into the pools, computed as <name>_run computes them.
    auto mapFunction = [&](const char* fn, const char* arg, const char* type, const std::vector<TensorId>& ids,
                           const std::vector<std::string>& fields) -> Result<std::string> {
      SourceWriter mapWriter(g, syms, plan, pools);
      std::string sets;
      for (size_t i = 0; i < ids.size(); ++i) {
        if (g.tensor(ids[i]).byteSize() == 0) {  // no bytes, so no place in any pool
          sets += fmt::format("{}->{} = NULL; /* no elements */\n", arg, fields[i]);
          continue;
        }
        STOWAGE_ASSIGN_OR_RETURN(std::string ptr, mapWriter.pointer(ids[i], true));
        sets += fmt::format("{}->{} = {};\n", arg, fields[i], ptr);
      }
      std::string f = fmt::format("\nint {0}_{1}(const {0}_workspaces* ws, {0}_{2}* {3}) {{\n", p, fn, type, arg);
      f += fmt::format("  if ({}{} == NULL) return {}_ERR_NULL_ARGUMENT;\n", needWs ? "ws == NULL || " : "", arg, P);
      if (!needWs) f += "  (void)ws;\n";
      f += poolChecks(&mapWriter.usedPointers());
      const std::string locals = baseLocals(mapWriter.usedPointers());
      if (ids.empty()) f += fmt::format("  (void){};\n", arg);
      f += locals.empty() ? indent(sets, 2) : "  {\n" + indent(locals + sets, 4) + "  }\n";
      return f + fmt::format("  return {}_OK;\n}}\n", P);
    };
    STOWAGE_ASSIGN_OR_RETURN(std::string mapIn, mapFunction("map_inputs", "in", "inputs", g.inputs, syms.inputFields));
    STOWAGE_ASSIGN_OR_RETURN(std::string mapOut, mapFunction("map_outputs", "out", "outputs", g.outputs, syms.outputFields));
    c += mapIn + mapOut;
    c += fmt::format("\nint {0}_run(const {0}_workspaces* ws) {{\n", p);
    if (needWs) c += fmt::format("  if (ws == NULL) return {}_ERR_NULL_ARGUMENT;\n", P);
  } else {
    c += fmt::format("\nint {0}_run(const {0}_inputs* in, {0}_outputs* out, const {0}_workspaces* ws) {{\n", p);
    c += fmt::format("  if (in == NULL || out == NULL{}) return {}_ERR_NULL_ARGUMENT;\n", needWs ? " || ws == NULL" : "", P);
    for (const auto& f : syms.inputFields) c += fmt::format("  if (in->{} == NULL) return {}_ERR_NULL_ARGUMENT;\n", f, P);
    for (const auto& f : syms.outputFields) c += fmt::format("  if (out->{} == NULL) return {}_ERR_NULL_ARGUMENT;\n", f, P);
  }
  if (!needWs) c += "  (void)ws;\n";
  c += poolChecks(nullptr);
  if (!plan.offloaded.empty()) c += fmt::format("#if defined(STOWAGE_HOST_SIM)\n  {}_sim_setup();\n#endif\n", p);
  const std::string locals = baseLocals(writer.usedPointers());
  if (!locals.empty()) {
    c += "  {\n" + indent(locals + guardInit, 4) + indent(calls.empty() ? calls : calls.substr(1), 4) + "  }\n";
  } else {
    c += indent(calls, 2);
  }
  c += fmt::format("  return {}_OK;\n}}\n", P);
  out.source = {p + ".c", c};
  return out;
}

}  // namespace stowage
