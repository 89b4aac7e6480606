// C for tiled (offloaded) layers (see TiledLayerEmitter.h).
#include "stowage/codegen/TiledLayerEmitter.h"

#include <fmt/format.h>

#include <set>

#include "stowage/codegen/BoardKernelCode.h"
#include "stowage/codegen/KernelParamsText.h"
#include "stowage/lower/KernelCall.h"
#include "stowage/tile/CostModel.h"
#include "stowage/tile/TileChoice.h"
#include "stowage/tile/TileGeometry.h"
#include "stowage/tile/InputHandover.h"
#include "stowage/tile/WeightPrefetch.h"

namespace stowage {

namespace {

/// An operand of the compute call besides input, weights and output (bias, multipliers, scales, zero points, C):
/// read in place in main memory, at the tile's channel ('c') or row ('r') offset when it has one entry per
/// channel / row.
struct SideOperand {
  std::string arg;   ///< the intrinsic's argument name
  std::string type;  ///< C element type; "uint8_t" for zero points (passed as const void*)
  char offset = 0;   ///< 0, 'c' (d->ch_off) or 'r' (d->row_off)
};

/// The compute call's arguments: names of input and weights (no weights: wArg empty), C element types of input
/// and output, side operands in the kernel's (and the lowered call's) order.
struct KernelArgs {
  std::string xArg = "x", wArg = "w", xType, yType;
  std::vector<SideOperand> sides;
};

KernelArgs kernelArgs(const LayerShape& s) {
  KernelArgs a;
  switch (s.kernel) {
    case TileKernel::QConv2d:
    case TileKernel::QDepthwiseConv2d:
    case TileKernel::QFullyConnected: {
      const auto& q = std::get<QuantCall>(s.call.params);
      const bool pc = s.kernel == TileKernel::QFullyConnected ? std::get<stowage_qfc_params>(q.params).per_channel != 0
                                                              : std::get<stowage_qconv_params>(q.params).per_channel != 0;
      a.xType = a.yType = "int8_t";
      a.sides = {{"bias", "int32_t", 'c'}, {"multiplier", "int32_t", pc ? 'c' : '\0'}, {"shift", "int32_t", pc ? 'c' : '\0'}};
      break;
    }
    case TileKernel::Conv2dF32:
      a.xType = a.yType = "float";
      a.sides = {{"bias", "float", 'c'}};
      break;
    case TileKernel::GemmF32:
      a = {"a", "b", "float", "float", {{"c", "float", 'c'}}};
      break;
    case TileKernel::MatMulF32:
    case TileKernel::AddF32:
      a = {"a", "b", "float", "float", {}};
      break;
    case TileKernel::QAddS8:
      a = {"a", "b", "int8_t", "int8_t", {}};
      break;
    case TileKernel::AvgPoolF32:
    case TileKernel::MaxPoolF32:
    case TileKernel::GlobalAvgPoolF32:
    case TileKernel::GlobalMaxPoolF32:
      a = {"x", "", "float", "float", {}};
      break;
    case TileKernel::QAvgPoolS8:
    case TileKernel::QMaxPoolS8:
      a = {"x", "", "int8_t", "int8_t", {}};
      break;
    case TileKernel::QLinearConv:
    case TileKernel::ConvInteger: {
      const auto& p = std::get<stowage_qlinear_conv_params>(std::get<QLinearCall>(s.call.params).params);
      const char pc = p.w_quant_count > 1 ? 'c' : '\0';
      a.xType = "void";
      if (s.kernel == TileKernel::ConvInteger) {
        a.yType = "int32_t";
        a.sides = {{"x_zero_point", "uint8_t", 0}, {"w_zero_point", "uint8_t", pc}};
      } else {
        a.yType = "void";
        a.sides = {{"x_scale", "float", 0},  {"x_zero_point", "uint8_t", 0}, {"w_scale", "float", pc}, {"w_zero_point", "uint8_t", pc},
                   {"y_scale", "float", 0},  {"y_zero_point", "uint8_t", 0}, {"bias", "int32_t", 'c'}};
      }
      break;
    }
    case TileKernel::QLinearMatMul:
    case TileKernel::MatMulInteger: {
      const auto& p = std::get<stowage_qlinear_matmul_params>(std::get<QLinearCall>(s.call.params).params);
      const char ar = p.a_quant_count > 1 ? 'r' : '\0', bc = p.b_quant_count > 1 ? 'c' : '\0', yr = p.y_quant_count > 1 ? 'r' : '\0';
      a.xArg = "a";
      a.wArg = "b";
      a.xType = "void";
      if (s.kernel == TileKernel::MatMulInteger) {
        a.yType = "int32_t";
        a.sides = {{"a_zero_point", "uint8_t", ar}, {"b_zero_point", "uint8_t", bc}};
      } else {
        a.yType = "void";
        a.sides = {{"a_scale", "float", ar}, {"a_zero_point", "uint8_t", ar}, {"b_scale", "float", bc},
                   {"b_zero_point", "uint8_t", bc}, {"y_scale", "float", yr}, {"y_zero_point", "uint8_t", yr}};
      }
      break;
    }
  }
  return a;
}

/// The most side operands of any kernel (size of the cores-mode argument struct's array).
constexpr size_t kMaxSideOperands = 8;

std::string descType(const CSymbols& syms, TileKernel k) { return fmt::format("{}_tile_{}", syms.prefix, tileKernelIntrinsic(k)); }

/// Designated initializer of the tile's kernel parameters.
std::string paramsText(TileKernel k, const TileDesc& t) {
  auto quant = [](QuantKernel kernel, const auto& params) {
    QuantCall c;
    c.kernel = kernel;
    c.params = params;
    return quantParamsInitializer(c);
  };
  switch (k) {
    case TileKernel::QConv2d: return quant(QuantKernel::Conv2d, t.qconvParams());
    case TileKernel::QDepthwiseConv2d: return quant(QuantKernel::DepthwiseConv2d, t.qconvParams());
    case TileKernel::QFullyConnected: return quant(QuantKernel::FullyConnected, t.qfcParams());
    case TileKernel::Conv2dF32: {
      const auto& p = t.convParams();
      return fmt::format(".n = {}, .c = {}, .h = {}, .w = {}, .m = {}, .kh = {}, .kw = {}, .oh = {}, .ow = {}, .stride_h = {}, "
                         ".stride_w = {}, .pad_top = {}, .pad_left = {}, .dil_h = {}, .dil_w = {}, .group = {}{}",
                         p.n, p.c, p.h, p.w, p.m, p.kh, p.kw, p.oh, p.ow, p.stride_h, p.stride_w, p.pad_top, p.pad_left, p.dil_h,
                         p.dil_w, p.group, clampFields(p));
    }
    case TileKernel::GemmF32: {
      const auto& p = t.gemmParams();
      return fmt::format(".m = {}, .n = {}, .k = {}, .trans_a = {}, .trans_b = {}, .alpha = {}, .beta = {}, .c_rows = {}, .c_cols = {}{}",
                         p.m, p.n, p.k, p.trans_a, p.trans_b, floatLiteral(p.alpha), floatLiteral(p.beta), p.c_rows, p.c_cols,
                         clampFields(p));
    }
    case TileKernel::AddF32:
      return fmt::format(".rank = 1, .shape = {{{}}}, .a_stride = {{1}}, .b_stride = {{1}}{}", t.binaryParams().shape[0], clampFields(t.binaryParams()));
    case TileKernel::QAddS8: return quant(QuantKernel::Add, t.qbinaryParams());
    case TileKernel::AvgPoolF32:
    case TileKernel::MaxPoolF32:
    case TileKernel::GlobalAvgPoolF32:
    case TileKernel::GlobalMaxPoolF32: return poolParamsInitializer(t.poolParams());
    case TileKernel::QAvgPoolS8: return quant(QuantKernel::AvgPool2d, t.qpoolParams());
    case TileKernel::QMaxPoolS8: return quant(QuantKernel::MaxPool2d, t.qpoolParams());
    case TileKernel::MatMulF32:
      // One matrix product per tile (the tiles walk the batch).
      return fmt::format(".batch_rank = 0, .m = {}, .n = {}, .k = {}", t.matmulParams().m, t.matmulParams().n, t.matmulParams().k);
    case TileKernel::QLinearConv:
    case TileKernel::ConvInteger:
    case TileKernel::QLinearMatMul:
    case TileKernel::MatMulInteger: {
      QLinearCall c;
      c.kernel = k == TileKernel::QLinearConv     ? QLinearKernel::QLinearConv
                 : k == TileKernel::ConvInteger   ? QLinearKernel::ConvInteger
                 : k == TileKernel::QLinearMatMul ? QLinearKernel::QLinearMatMul
                                                  : QLinearKernel::MatMulInteger;
      if (k == TileKernel::QLinearConv || k == TileKernel::ConvInteger) c.params = t.qlconvParams();
      else c.params = t.qlmatmulParams();
      return qlinearParamsInitializer(c);
    }
  }
  return "";
}

/// Collapses the newlines of a multi-line initializer.
std::string oneLine(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '\n') continue;
    if (c == ' ' && !out.empty() && out.back() == ' ') continue;
    out += c;
  }
  return out;
}

/// Indents every line of `text` by `n` spaces.
std::string indentText(const std::string& text, size_t n) {
  std::string out, pad(n, ' ');
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out += pad + text.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

/// `spec`'s call with arguments by name.
std::string callOf(const IntrinsicSpec& spec, const std::vector<std::pair<std::string, std::string>>& args) {
  std::string s = spec.name + "(";
  for (size_t i = 0; i < spec.args.size(); ++i) {
    std::string value = "/* missing " + spec.args[i] + " */ 0";
    for (const auto& [k, v] : args)
      if (k == spec.args[i]) value = v;
    s += (i ? ", " : "") + value;
  }
  return s + ")";
}

/// C expression (uint8_t*) of scratch buffer `name`; `core` is the C expression of the core id ("" in engine mode).
std::string localPointer(const ProgramPlan& plan, const CSymbols& syms, const std::string& name, size_t coreStride, const std::string& core) {
  const PlacedBuffer& b = plan.buffers[static_cast<size_t>(plan.scratchOf(name))];
  const MemoryPool& pool = plan.board.pools[static_cast<size_t>(b.slot.pool)];
  const std::string& M = syms.poolMacros[static_cast<size_t>(b.slot.pool)];
  std::string base;
  size_t offset = b.offset;
  if (pool.placement == PoolPlacement::Fixed) {
    std::string address = fmt::format("{}_BASE", M), size = fmt::format("{}_SIZE", M);
    if (pool.banks > 1 && !pool.bankBases.empty()) {
      address = fmt::format("{}_BANK{}_BASE", M, b.slot.bank);
      size = fmt::format("{}_BANK_SIZE", M);
      offset -= static_cast<size_t>(b.slot.bank) * pool.bankSizeBytes;
    }
    if (pool.perCoreStride != 0 && !core.empty()) address = fmt::format("({} + (uintptr_t){} * {}u)", address, core, pool.perCoreStride);
    base = fmt::format("(uint8_t*)STOWAGE_FIXED_ADDRESS({}, {})", address, size);
  } else if (pool.placement == PoolPlacement::Static) {
    base = fmt::format("{}_pool_{}", syms.prefix, syms.poolIdents[static_cast<size_t>(b.slot.pool)]);
  } else {
    base = fmt::format("ws->{}", syms.poolIdents[static_cast<size_t>(b.slot.pool)]);
  }
  std::string e = fmt::format("{} + {}u", base, offset);
  if (coreStride != 0 && !core.empty()) e += fmt::format(" + (size_t){} * {}u", core, coreStride);
  return e;
}

/// Wraps a layer's statements in the simulator's layer-span marks (host simulator only; nothing on a device).
void markLayerSpan(std::string& statements, const std::string& nodeName) {
  const std::string name = cStringText(nodeName);
  statements = fmt::format("#if defined(STOWAGE_HOST_SIM)\nstowage_sim_layer_begin(\"{}\");\n#endif\n", name) + statements +
               fmt::format("#if defined(STOWAGE_HOST_SIM)\nstowage_sim_layer_end(\"{}\");\n#endif\n", name);
}

}  // namespace

std::string tiledProgramPrelude(const ProgramPlan& plan, const CSymbols& syms) {
  if (plan.offloaded.empty()) return "";
  const std::string& p = syms.prefix;
  std::string out = "\n/* Offloaded layers: one descriptor per tile (main-memory side offsets in bytes, rows, row bytes and\n"
                    " * stride of each copy; the half of each ping-pong buffer it uses; whether its input / weights must be\n"
                    " * loaded; its first output channel and row; its compute cycles under the cost model; its kernel parameters). */\n";
  std::set<std::string> done;
  bool cores = false;
  size_t laterLayers = 1;  // the most later layers whose first weight tiles one layer's cores load
  for (const OffloadedLayer& l : plan.offloaded) {
    cores = cores || l.mode == "cores";
    if (l.mode == "cores") laterLayers = std::max(laterLayers, l.prefetches.size());
    const TileKernel k = tileKernelOfIntrinsic(l.kernel).value_or(TileKernel::QConv2d);
    const std::string type = descType(syms, k);
    if (!done.insert(type).second) continue;
    out += fmt::format(
        "typedef struct {{\n  uint32_t x_off, x_rows, x_row_bytes, x_stride;\n  uint32_t w_off, w_rows, w_row_bytes, w_stride;\n"
        "  uint32_t y_off, y_rows, y_row_bytes, y_stride;\n  uint8_t x_buf, w_buf, y_buf, load_x, load_w;\n  uint32_t ch_off, row_off;\n"
        "  uint32_t cycles;\n  {} p;\n}} {};\n",
        tileKernelParamsType(k), type);
  }
  if (cores)
    out += fmt::format("/* The operands of a layer run by cores (stowage_run_on_cores passes a pointer to it). */\n"
                       "typedef struct {{\n  const uint8_t* x;\n  const uint8_t* w;\n"
                       "  const void* side[{}]; /* bias, multipliers, scales, zero points: read in main memory */\n"
                       "  uint8_t* y;\n  const {}_workspaces* ws; /* tile buffers in pools the application passes */\n"
                       "  const uint8_t* later_w[{}]; /* the weights of the later layers whose first tiles this layer's cores load, in order (set for those only) */\n"
                       "}} {}_tile_args;\n",
                       kMaxSideOperands, p, laterLayers, p);
  // The simulator's view of the board.
  out += fmt::format("\n#if defined(STOWAGE_HOST_SIM)\n/* Describes the board to the host simulator; {}_run calls it first. */\nstatic void {}_sim_setup(void) {{\n", p, p);
  for (size_t t = 0; t < plan.board.targets.size(); ++t) {
    const Target& tg = plan.board.targets[t];
    out += fmt::format("  stowage_sim_target({}, \"{}\", {}, {});\n", t, cStringText(tg.name), tg.cores, tg.engineDim);
    if (tg.dmaBytesPerCycle > 0)
      // Shortest text that reads back as the same double, so the simulator times with the board's exact numbers.
      out += fmt::format("  stowage_sim_dma({}, {}, {}, {});\n", t, tg.dmaChannels, doubleLiteral(tg.dmaBytesPerCycle), doubleLiteral(tg.dmaSetupCycles));
  }
  for (size_t i = 0; i < plan.board.pools.size(); ++i) {
    const MemoryPool& pool = plan.board.pools[i];
    if (pool.placement != PoolPlacement::Fixed || !pool.base || !pool.sizeBytes) continue;
    int cores = 1;
    for (const Target& tg : plan.board.targets)
      if (pool.canAccess(tg.name)) cores = std::max(cores, tg.cores);
    if (pool.banks > 1 && !pool.bankBases.empty()) {
      for (int b = 0; b < pool.banks; ++b)
        out += fmt::format("  stowage_sim_pool(\"{}\", (uintptr_t)0x{:X}u, {}u, 0u, 1);\n", cStringText(pool.name + ".bank" + std::to_string(b)),
                           pool.bankBases[static_cast<size_t>(b)], pool.bankSizeBytes);
    } else {
      out += fmt::format("  stowage_sim_pool(\"{}\", (uintptr_t)0x{:X}u, {}u, {}u, {});\n", cStringText(pool.name), *pool.base,
                         *pool.sizeBytes, pool.perCoreStride, pool.perCoreStride != 0 ? cores : 1);
    }
  }
  out += "}\n#endif\n";
  return out;
}

Result<TiledLayerCode> emitTiledLayer(const Graph& g, const ProgramPlan& plan, const OffloadedLayer& layer, const CSymbols& syms,
                                      const std::vector<std::string>& callOperands, const std::vector<std::string>& laterWeights,
                                      const KernelOverride* boardKernel, const std::string& nextInput) {
  const Node& node = g.nodes[static_cast<size_t>(layer.step)];
  const LayerShapeResult shape = layerShapeOf(g, node);
  if (!shape.shape) return makeError(fmt::format("node '{}'", node.name), "was offloaded but cannot be tiled: " + shape.whyNot);
  const LayerShape& s = *shape.shape;
  const Target& target = plan.board.targets[static_cast<size_t>(layer.target)];
  const TileKernel k = s.kernel;
  const bool engine = layer.mode == "engine";
  // Per operand two halves (the next tile's load overlaps this tile's compute) or one (loaded at its own tile, after
  // the previous compute): the tiler's choice, with the tiles in its order.
  const OperandBuffers buffers = operandBuffersOf(layer);
  const bool anyDoubled = !buffers.none(), anySingle = !buffers.all();
  const TileSchedule sched = offloadedSchedule(s, layer);
  const std::string& p = syms.prefix;
  const std::string base = fmt::format("{}_s{}", p, layer.step);
  const std::string type = descType(syms, k);
  const KernelArgs kargs = kernelArgs(s);
  // A kernel without weights (pooling) gets NULL in their place: every layer has x, w, sides..., y.
  const bool hasWeights = !kargs.wArg.empty();
  std::vector<std::string> operands = callOperands;
  if (!hasWeights && !operands.empty()) operands.insert(operands.begin() + 1, "NULL");
  const size_t expected = 3 + kargs.sides.size();
  if (operands.size() != expected || kargs.sides.size() > kMaxSideOperands)
    return makeError(fmt::format("node '{}'", node.name), fmt::format("tiled layer expects {} operands, got {}", expected, operands.size()));

  // A direct operand (cores mode) is used in place: the tensor at the tile's offset.
  const DirectOperands direct = directOperandsOf(layer);
  if (engine && direct.any())
    return makeError(fmt::format("node '{}'", node.name), "a matrix engine layer cannot use its operands in place");
  TiledLayerCode code;
  std::string& d = code.definitions;
  d += fmt::format("\n/* step {}: node '{}' ({}) on '{}' ({} mode{}): {} tiles of {} {} x {} channels, {}. */\n", layer.step,
                   commentText(node.name), opName(node.op), commentText(target.name), layer.mode,
                   layer.cores > 1 ? fmt::format(", {} cores", layer.cores) : "", sched.tiles.size(), layer.rowTile,
                   layer.rowsArePixels ? "pixels" : "rows", layer.channelTile,
                   tilingText(layer));
  d += fmt::format("static const {} {}_tiles[{}] = {{\n", type, base, sched.tiles.size());
  for (const TileDesc& t : sched.tiles)
    d += fmt::format("  {{{}u, {}u, {}u, {}u, {}u, {}u, {}u, {}u, {}u, {}u, {}u, {}u, {}, {}, {}, {}, {}, {}u, {}u, {}u,\n   {{{}}}}},\n", t.x.offset,
                     t.x.rows, t.x.rowBytes, t.x.stride, t.w.offset, t.w.rows, t.w.rowBytes, t.w.stride, t.y.offset, t.y.rows,
                     t.y.rowBytes, t.y.stride, t.xBuf, t.wBuf, t.yBuf, t.loadX ? 1 : 0, t.loadW ? 1 : 0, t.channelOffset, t.rowOffset,
                     tileComputeCycles(target, s, t), oneLine(paramsText(k, t)));
  d += "};\n";

  // Kernel arguments for descriptor `dd`, local halves xl / wl / yl; side operands from `sideBase`[i] ("side" in
  // engine mode, "a->side" in cores mode), at the tile's channel / row offset where they have one entry per channel / row.
  // Weights loaded once and shared (tile/WeightPrefetch.h, onceWeightsShared): every core's first tile reads the one
  // block in core 0's region of half 0.
  std::string sharedFirstW;
  if (layer.mode == "cores" && layer.weightsOnceCore >= 0 && layer.weightsPrefetchedCores > 0) {
    const std::optional<TileCopy> once = onceWeightCopy(sched, layer.weightsPrefetchedCores, layer.coreStride[1]);
    if (!once) return makeError(fmt::format("node '{}'", node.name), "expects weights loaded once that make no one transfer (an internal tiler error)");
    if (onceWeightsShared(*once)) sharedFirstW = localPointer(plan, syms, layer.buffers[1][0], 0, "");
  }
  auto computeArgs = [&](const std::string& dd, const std::string& sideBase) {
    std::vector<std::pair<std::string, std::string>> a;
    a.emplace_back(kargs.xArg, direct.direct[0] ? fmt::format("(const {}*)(const void*)(a->x + {}->x_off)", kargs.xType, dd)
                                                : fmt::format("(const {}*)(const void*)xl[{}->x_buf]", kargs.xType, dd));
    if (hasWeights)
      a.emplace_back(kargs.wArg, direct.direct[1] ? fmt::format("(const {}*)(const void*)(a->w + {}->w_off)", kargs.xType, dd)
                                                  : !sharedFirstW.empty()
                                                      ? fmt::format("(const {}*)(const void*)(t == first ? {} : wl[{}->w_buf])", kargs.xType, sharedFirstW, dd)
                                                      : fmt::format("(const {}*)(const void*)wl[{}->w_buf]", kargs.xType, dd));
    for (size_t i = 0; i < kargs.sides.size(); ++i) {
      const SideOperand& so = kargs.sides[i];
      if (operands[2 + i] == "NULL") {
        a.emplace_back(so.arg, "NULL");
        continue;
      }
      const std::string off = so.offset == 'c' ? fmt::format(" + {}->ch_off", dd) : so.offset == 'r' ? fmt::format(" + {}->row_off", dd) : "";
      const std::string e = fmt::format("(const {}*){}[{}]{}", so.type, sideBase, i, off);
      a.emplace_back(so.arg, so.type == "uint8_t" ? fmt::format("(const void*)({})", e) : e);
    }
    a.emplace_back("y", direct.direct[2] ? fmt::format("({}*)(void*)(a->y + {}->y_off)", kargs.yType, dd)
                                         : fmt::format("({}*)(void*)yl[{}->y_buf]", kargs.yType, dd));
    a.emplace_back("p", "&" + dd + "->p");
    return a;
  };
  // A QDQ layer (ONNX Runtime's float32 requantization, requant_f32) calls the int8 kernels' _rqf32 entry points on
  // the cores (the engine's intrinsic dispatches on the field itself).
  bool requantF32 = false;
  if (!sched.tiles.empty() && (k == TileKernel::QConv2d || k == TileKernel::QDepthwiseConv2d))
    requantF32 = sched.tiles[0].qconvParams().requant_f32 != 0;
  if (!sched.tiles.empty() && k == TileKernel::QFullyConnected) requantF32 = sched.tiles[0].qfcParams().requant_f32 != 0;
  const IntrinsicSpec computeSpec =
      engine ? target.intrinsic(tileKernelIntrinsic(k))
             : IntrinsicSpec{"", tileKernelFunction(k) + (requantF32 ? "_rqf32" : ""), target.intrinsic(tileKernelIntrinsic(k)).args};
  // The portable kernel keeps the stowage_kernels order; only engine intrinsics are renamed. A board kernel for the
  // target's cores ([[kernels]]) has the portable kernel's signature and takes its place.
  IntrinsicSpec portable = computeSpec;
  if (!engine) {
    for (const auto& def : defaultIntrinsics())
      if (def.intrinsic == tileKernelIntrinsic(k)) portable.args = def.args;
    code.boardKernel = boardKernel;
    if (code.boardKernel) portable.name = code.boardKernel->function;
  }
  auto halves = [&](int op, const std::string& core) {
    if (direct.direct[op] || layer.buffers[op][0].empty()) return std::string("{NULL, NULL}");  // in place, or no weights: no tile buffer
    const std::string& h0 = layer.buffers[op][0];
    const std::string& h1 = layer.buffers[op][1].empty() ? h0 : layer.buffers[op][1];
    return fmt::format("{{{}, {}}}", localPointer(plan, syms, h0, layer.coreStride[op], core),
                       localPointer(plan, syms, h1, layer.coreStride[op], core));
  };

  // The later layers on the target whose first weight tiles this layer loads (tile/WeightPrefetch.h), in issue order,
  // and the first weight copy per core each expects from this layer (rows 0: none).
  if (laterWeights.size() != layer.prefetches.size() || (engine && layer.prefetches.size() > 1))
    return makeError(fmt::format("node '{}'", node.name), "prefetches weights that no later layer expects (an internal tiler error)");
  std::vector<const OffloadedLayer*> later;
  std::vector<std::vector<TileCopy>> laterFirstW;
  for (const WeightPrefetchTo& to : layer.prefetches) {
    const OffloadedLayer* l = plan.offloadedAt(to.step);
    if (l == nullptr || l->weightsPrefetchedCores <= 0 || l->mode != layer.mode || laterWeights[later.size()].empty())
      return makeError(fmt::format("node '{}'", node.name), "prefetches the weights of a layer that does not expect them (an internal tiler error)");
    const Node& laterNode = g.nodes[static_cast<size_t>(l->step)];
    const LayerShapeResult laterShape = layerShapeOf(g, laterNode);
    if (!laterShape.shape) return makeError(fmt::format("node '{}'", laterNode.name), "was offloaded but cannot be tiled: " + laterShape.whyNot);
    later.push_back(l);
    laterFirstW.push_back(firstWeightCopies(offloadedSchedule(*laterShape.shape, *l), l->weightsPrefetchedCores));
  }
  const OffloadedLayer* next = later.empty() ? nullptr : later.front();

  if (engine) {
    const IntrinsicSpec mvin = target.intrinsic("mvin"), mvout = target.intrinsic("mvout"), fence = target.intrinsic("fence");
    // The loads of the operands with two halves (`doubled`) or with one. The first tile's weights may have come with
    // the layer before on the engine (its last mvin).
    const std::string skipFirstW = layer.weightsPrefetchedCores > 0 ? " && t != 0u" : "";
    // The first tile's input may have come with the layer before (its load after its last compute).
    const std::string skipFirstX = layer.inputHandedOver ? " && t != 0u" : "";
    auto load = [&](const std::string& dd, bool doubled) {
      std::string out;
      if (buffers.doubled[0] == doubled)
        out += fmt::format("if ({}->load_x{}) {};\n", dd, dd == "d" ? skipFirstX : "",
                           callOf(mvin, {{"dram", fmt::format("xs + {}->x_off", dd)}, {"local", fmt::format("xl[{}->x_buf]", dd)},
                                         {"rows", dd + "->x_rows"}, {"row_bytes", dd + "->x_row_bytes"}, {"dram_stride", dd + "->x_stride"}}));
      if (buffers.doubled[1] == doubled)
        out += fmt::format("if ({}->load_w{}) {};\n", dd, dd == "d" ? skipFirstW : "",
                           callOf(mvin, {{"dram", fmt::format("ws_ + {}->w_off", dd)}, {"local", fmt::format("wl[{}->w_buf]", dd)},
                                         {"rows", dd + "->w_rows"}, {"row_bytes", dd + "->w_row_bytes"}, {"dram_stride", dd + "->w_stride"}}));
      return out;
    };
    std::string& c = code.statements;
    c += fmt::format("{{ /* {} tiles on '{}': mvin, compute, mvout{} */\n", sched.tiles.size(), commentText(target.name),
                     anyDoubled ? "; the next tile's mvin overlaps this tile's compute" : "");
    c += fmt::format("  const uint8_t* const xs = (const uint8_t*)(const void*)({});\n", operands[0]);
    c += fmt::format("  const uint8_t* const ws_ = (const uint8_t*)(const void*)({});\n", operands[1]);
    c += fmt::format("  uint8_t* const ys = (uint8_t*)(void*)({});\n", operands.back());
    if (!kargs.sides.empty()) {
      c += "  const void* const side[" + std::to_string(kargs.sides.size()) + "] = {";
      for (size_t i = 0; i < kargs.sides.size(); ++i) c += (i ? ", " : "") + operands[2 + i];
      c += "};\n  (void)side;\n";
    }
    c += fmt::format("  uint8_t* const xl[2] = {};\n  uint8_t* const wl[2] = {};\n  uint8_t* const yl[2] = {};\n", halves(0, ""), halves(1, ""),
                     halves(2, ""));
    c += "  uint32_t t;\n";
    c += fmt::format("  for (t = 0; t < {}u; ++t) {{\n    const {}* const d = &{}_tiles[t];\n", sched.tiles.size(), type, base);
    // The first tile's doubled operands, this tile's single ones (after the previous compute read their one half),
    // the next tile's doubled ones (into the halves the previous tile used).
    if (anyDoubled) c += "    if (t == 0u) {\n" + indentText(load("d", true), 6) + "    }\n";
    if (anySingle) c += indentText(load("d", false), 4);
    if (anyDoubled && sched.tiles.size() > 1)
      c += fmt::format("    if (t + 1u < {}u) {{\n      const {}* const n = d + 1;\n", sched.tiles.size(), type) + indentText(load("n", true), 6) +
           "    }\n";
    c += "    " + callOf(computeSpec, computeArgs("d", "side")) + ";\n";
    // Input handover (tile/InputHandover.h): after the last compute call, the next layer's first weight block (when
    // this layer loads it) and a fence: every earlier store has ended, so the last store and the next layer's first
    // input load below may run side by side.
    const OffloadedLayer* handTo = layer.handsInputTo >= 0 ? plan.offloadedAt(layer.handsInputTo) : nullptr;
    if (layer.handsInputTo >= 0 && (handTo == nullptr || !handTo->inputHandedOver || handTo->mode != "engine" || nextInput.empty()))
      return makeError(fmt::format("node '{}'", node.name), "hands over the input of a layer that does not expect it (an internal tiler error)");
    TileCopy handX;
    if (handTo != nullptr) {
      const LayerShapeResult handShape = layerShapeOf(g, g.nodes[static_cast<size_t>(handTo->step)]);
      if (!handShape.shape) return makeError(fmt::format("node '{}'", node.name), "hands over the input of a layer that cannot be tiled");
      handX = handedInputCopy(offloadedSchedule(*handShape.shape, *handTo));
    }
    const std::string nextWeightLoad = next == nullptr || laterFirstW.front().front().rows == 0 ? std::string()
        : fmt::format("/* the first weight block of step {} ('{}') */\n{};\n", next->step, commentText(g.nodes[static_cast<size_t>(next->step)].name),
                      callOf(mvin, {{"dram", fmt::format("(const uint8_t*)(const void*)({}) + {}u", laterWeights.front(), laterFirstW.front().front().offset)},
                                    {"local", localPointer(plan, syms, next->buffers[1][0], 0, "")}, {"rows", fmt::format("{}u", laterFirstW.front().front().rows)},
                                    {"row_bytes", fmt::format("{}u", laterFirstW.front().front().rowBytes)},
                                    {"dram_stride", fmt::format("{}u", laterFirstW.front().front().stride)}}));
    if (handTo != nullptr)
      c += fmt::format("    if (t + 1u == {}u) {{\n", sched.tiles.size()) + indentText(nextWeightLoad, 6) + "      " + callOf(fence, {}) + ";\n    }\n";
    c += "    " +
         callOf(mvout, {{"dram", "ys + d->y_off"}, {"local", "yl[d->y_buf]"}, {"rows", "d->y_rows"}, {"row_bytes", "d->y_row_bytes"},
                        {"dram_stride", "d->y_stride"}}) +
         ";\n  }\n";
    // The next engine layer's first weight block, after this layer's loads on the load queue: it arrives while the
    // last tiles compute and store, and the fence waits for it (with an input handover, issued before that fence).
    if (handTo == nullptr) c += indentText(nextWeightLoad, 2);
    if (handTo != nullptr)
      c += fmt::format("  /* the first input tile of step {} ('{}'), beside the last store */\n  {};\n", handTo->step,
                       commentText(g.nodes[static_cast<size_t>(handTo->step)].name),
                       callOf(mvin, {{"dram", fmt::format("(const uint8_t*)(const void*)({}) + {}u", nextInput, handX.offset)},
                                     {"local", localPointer(plan, syms, handTo->buffers[0][0], 0, "")}, {"rows", fmt::format("{}u", handX.rows)},
                                     {"row_bytes", fmt::format("{}u", handX.rowBytes)}, {"dram_stride", fmt::format("{}u", handX.stride)}}));
    c += "  " + callOf(fence, {}) + ";\n}\n";
    markLayerSpan(code.statements, node.name);
    return code;
  }

  // Cores mode: each core walks its chunk of the table.
  const IntrinsicSpec dmaStart = target.intrinsic("dma_start"), dmaWait = target.intrinsic("dma_wait"),
                      coreId = target.intrinsic("core_id"), run = target.intrinsic("run_on_cores");
  // Input tiles load on channel 0; weights and stores share channel 1 when there are two, so the first tile's
  // input and weights arrive in parallel (weights move once per channel block, stores once per tile).
  const int outChannel = target.dmaChannels > 1 ? 1 : 0;
  const int weightChannel = outChannel;
  const bool splitWeights = sched.weightsSplit && target.dmaChannels > 1;
  d += fmt::format("static const uint32_t {}_chunks[{}] = {{", base, sched.chunkStart.size());
  for (size_t i = 0; i < sched.chunkStart.size(); ++i) d += fmt::format("{}{}u", i ? ", " : "", sched.chunkStart[i]);
  d += "};\n";
  // The loads of the operands with two halves (`doubled`) or with one.
  // The first weight tile of core c < layer.weightsPrefetchedCores was loaded by an earlier layer on the target
  // (its ticket in <prefix>_s<step>_wpre); `dd` is tile t itself ("d") or the next one.
  // Weights loaded once (layer.weightsOnceCore): one core of that layer loaded every core's first weight tile in one
  // transfer; core weightsOnceCore waits for its ticket and all cores meet at a barrier before their first tile's
  // waits, so the first tile loads no weights and waits for no ticket.
  const std::string prefetchTickets = fmt::format("{}_s{}_wpre", p, layer.step);
  const bool once = layer.weightsOnceCore >= 0 && layer.weightsPrefetchedCores > 0;
  // A shared input (tile/SharedInput.h): every row block's input copy (offset, rows, row bytes, stride), in the order
  // every core walks them; cores [0, loaders) each load their part of it (rows r * core / loaders ..) into the one
  // buffer, and the cores meet at barriers (CostModel's estimateSharedInput replays this order).
  const int loaders = sched.sharedLoaders;
  const bool shared = loaders > 0;
  std::vector<TileCopy> rowBlockX;
  if (shared) {
    for (size_t i = sched.chunkStart[0]; i < sched.chunkStart[1]; ++i)
      if (sched.tiles[i].loadX) rowBlockX.push_back(sched.tiles[i].x);
    d += fmt::format("/* The input of each row block, shared by the {} cores (loaded by {}). */\nstatic const uint32_t {}_xb[{}][4] = {{", layer.cores,
                     loaders == 1 ? std::string("core 0") : fmt::format("cores 0..{}, a part each", loaders - 1), base, rowBlockX.size());
    for (size_t b = 0; b < rowBlockX.size(); ++b)
      d += fmt::format("{}{{{}u, {}u, {}u, {}u}}", b ? ", " : "", rowBlockX[b].offset, rowBlockX[b].rows, rowBlockX[b].rowBytes, rowBlockX[b].stride);
    d += "};\n";
  }
  auto load = [&](const std::string& dd, bool doubled) {
    std::string out;
    const std::string weightTicket =
        layer.weightsPrefetchedCores > 0 && dd == "d" && !once
            ? fmt::format("t == first && core < {} ? {}[core] : ", layer.weightsPrefetchedCores, prefetchTickets)
            : "";
    const std::string loadW = once && dd == "d" ? fmt::format("{}->load_w && t != first", dd) : dd + "->load_w";
    if (buffers.doubled[0] == doubled && !direct.direct[0] && !shared)
      out += fmt::format("if ({0}->load_x) {{\n  tx[{0}->x_buf] = {1};\n  px[{0}->x_buf] = 1;\n}}\n", dd,
                         callOf(dmaStart, {{"channel", "0"}, {"dst", fmt::format("xl[{}->x_buf]", dd)}, {"src", fmt::format("a->x + {}->x_off", dd)},
                                           {"row_bytes", dd + "->x_row_bytes"}, {"rows", dd + "->x_rows"}, {"dst_stride", dd + "->x_row_bytes"},
                                           {"src_stride", dd + "->x_stride"}}));
    // Loaded once, the first tile's weights are loaded by nobody here: with two halves "d" loads only the first tile.
    if (once && dd == "d" && doubled && buffers.doubled[1]) return out;
    if (buffers.doubled[1] == doubled && !direct.direct[1] && hasWeights && splitWeights) {
      // Two transfers (CostModel: TileSchedule::weightsSplit): the first half of the rows on the weight channel, the
      // rest on the input channel; a prefetched first tile came whole (both tickets are its one).
      const std::string prefetched =
          weightTicket.empty() ? "" : fmt::format("if (t == first && core < {}) {{\n  tw[{}->w_buf] = tw2[{}->w_buf] = {}[core];\n}} else ",
                                                  layer.weightsPrefetchedCores, dd, dd, prefetchTickets);
      out += fmt::format("if ({4}) {{\n  {1}{{\n    const uint32_t h = ({0}->w_rows + 1u) / 2u;\n    tw[{0}->w_buf] = {2};\n"
                         "    tw2[{0}->w_buf] = {0}->w_rows > h ? {3} : tw[{0}->w_buf];\n  }}\n  pw[{0}->w_buf] = 1;\n}}\n",
                         dd, prefetched,
                         callOf(dmaStart, {{"channel", std::to_string(weightChannel)}, {"dst", fmt::format("wl[{}->w_buf]", dd)},
                                           {"src", fmt::format("a->w + {}->w_off", dd)}, {"row_bytes", dd + "->w_row_bytes"}, {"rows", "h"},
                                           {"dst_stride", dd + "->w_row_bytes"}, {"src_stride", dd + "->w_stride"}}),
                         callOf(dmaStart, {{"channel", "0"}, {"dst", fmt::format("wl[{0}->w_buf] + h * {0}->w_row_bytes", dd)},
                                           {"src", fmt::format("a->w + {0}->w_off + h * {0}->w_stride", dd)}, {"row_bytes", dd + "->w_row_bytes"},
                                           {"rows", fmt::format("{}->w_rows - h", dd)}, {"dst_stride", dd + "->w_row_bytes"},
                                           {"src_stride", dd + "->w_stride"}}),
                         loadW);
    } else if (buffers.doubled[1] == doubled && !direct.direct[1] && hasWeights)
      out += fmt::format("if ({3}) {{\n  tw[{0}->w_buf] = {2}{1};\n  pw[{0}->w_buf] = 1;\n}}\n", dd,
                         callOf(dmaStart, {{"channel", std::to_string(weightChannel)}, {"dst", fmt::format("wl[{}->w_buf]", dd)},
                                           {"src", fmt::format("a->w + {}->w_off", dd)}, {"row_bytes", dd + "->w_row_bytes"}, {"rows", dd + "->w_rows"},
                                           {"dst_stride", dd + "->w_row_bytes"}, {"src_stride", dd + "->w_stride"}}),
                         weightTicket, loadW);
    return out;
  };
  auto wait = [&](const std::string& ticket) { return callOf(dmaWait, {{"ticket", ticket}}); };
  // A later layer's first weight tiles (tile/WeightPrefetch.h): core c loads its core c's on `channel` during its
  // last tile here; that layer waits for the ticket instead of loading them. `name` is the function's suffix and the
  // copy table's ("later0", "later1", ..), `weights` the tile args' field.
  auto loadLaterWeights = [&](const OffloadedLayer& later, const std::vector<TileCopy>& firstW, int channel, const std::string& name,
                              const std::string& weights) {
    const Node& laterNode = g.nodes[static_cast<size_t>(later.step)];
    const int n = later.weightsPrefetchedCores;
    const std::string laterBase = fmt::format("{}_s{}", p, later.step);
    if (later.weightsOnceCore >= 0) {
      // Weights loaded once: core weightsOnceCore loads every core's first weight tile in one 2-D transfer, row c
      // into core c's region of the later layer's buffer (coreStride[1] apart).
      const std::optional<TileCopy> w = onceWeightCopy(offloadedSchedule(*layerShapeOf(g, laterNode).shape, later), n, later.coreStride[1]);
      if (!w) return false;
      d += fmt::format("/* Core {} loads the first weight tiles of all {} cores of step {} ('{}') in one transfer during its last tile here\n"
                       " * (channel {}, weights loaded once{}); step {} waits for the ticket on core {}, then at a barrier. */\n",
                       later.weightsOnceCore, n, later.step, commentText(laterNode.name), channel,
                       onceWeightsShared(*w) ? ": one block that every core's first tile reads in core 0's region" : ", row c into core c's region",
                       later.step, later.weightsOnceCore);
      d += fmt::format("static stowage_dma_ticket {}_wpre[{}];\n", laterBase, n);
      d += fmt::format("static void {}_load_{}(const {}_tile_args* a, const {}_workspaces* ws, int core) {{\n  (void)ws;\n", base, name, p, p);
      d += fmt::format("  if (core != {}) return;\n", later.weightsOnceCore);
      d += fmt::format("  {}_wpre[core] = {};\n}}\n", laterBase,
                       callOf(dmaStart, {{"channel", std::to_string(channel)}, {"dst", localPointer(plan, syms, later.buffers[1][0], 0, "")},
                                         {"src", fmt::format("a->{} + {}u", weights, w->offset)}, {"row_bytes", fmt::format("{}u", w->rowBytes)},
                                         {"rows", fmt::format("{}u", w->rows)},
                                         {"dst_stride", fmt::format("{}u", onceWeightsShared(*w) ? w->rowBytes : later.coreStride[1])},
                                         {"src_stride", fmt::format("{}u", w->stride)}}));
      return true;
    }
    d += fmt::format("/* Core c < {} loads the first weight tile of its chunk of step {} ('{}') during its last tile here (channel {}): offset,\n"
                     " * rows, row bytes and stride of each (rows 0: none); step {} waits for the ticket. */\n",
                     n, later.step, commentText(laterNode.name), channel, later.step);
    d += fmt::format("static stowage_dma_ticket {}_wpre[{}];\nstatic const uint32_t {}_{}_w[{}][4] = {{", laterBase, n, base, name, n);
    for (int c = 0; c < n; ++c) {
      const TileCopy& w = firstW[static_cast<size_t>(c)];
      d += fmt::format("{}{{{}u, {}u, {}u, {}u}}", c ? ", " : "", w.offset, w.rows, w.rowBytes, w.stride);
    }
    d += "};\n";
    d += fmt::format("static void {}_load_{}(const {}_tile_args* a, const {}_workspaces* ws, int core) {{\n", base, name, p, p);
    d += fmt::format("  const uint32_t* const nw = {}_{}_w[core < {} ? core : 0];\n  (void)ws;\n", base, name, n);
    d += fmt::format("  if (core >= {} || nw[1] == 0u) return;\n", n);
    d += fmt::format("  {}_wpre[core] = {};\n}}\n", laterBase,
                     callOf(dmaStart, {{"channel", std::to_string(channel)},
                                       {"dst", localPointer(plan, syms, later.buffers[1][0], later.coreStride[1], "core")},
                                       {"src", "a->" + weights + " + nw[0]"}, {"row_bytes", "nw[2]"}, {"rows", "nw[1]"}, {"dst_stride", "nw[2]"},
                                       {"src_stride", "nw[3]"}}));
    return true;
  };
  // Each in issue order (CostModel's issueLater).
  std::string loadLater;
  for (size_t k = 0; k < later.size(); ++k) {
    if (!loadLaterWeights(*later[k], laterFirstW[k], layer.prefetches[k].channel, fmt::format("later{}", k), fmt::format("later_w[{}]", k)))
      return makeError(fmt::format("node '{}'", node.name), "loads weights once for a layer whose first weight tiles make no one transfer (an internal tiler error)");
    loadLater += fmt::format("{}_load_later{}(a, ws, core); ", base, k);
  }
  d += fmt::format("static void {}_core(void* arg) {{\n", base);
  d += fmt::format("  const {}_tile_args* const a = (const {}_tile_args*)arg;\n", p, p);
  d += fmt::format("  const {}_workspaces* const ws = a->ws;\n", p);
  d += fmt::format("  const int core = {};\n", callOf(coreId, {}));
  d += "  (void)ws;\n";
  d += fmt::format("  uint8_t* const xl[2] = {};\n  uint8_t* const wl[2] = {};\n  uint8_t* const yl[2] = {};\n", halves(0, "core"), halves(1, "core"),
                   halves(2, "core"));
  if (direct.any() || !hasWeights) d += "  (void)xl;\n  (void)wl;\n  (void)yl;\n";
  d += "  stowage_dma_ticket tx[2] = {0u, 0u}, tw[2] = {0u, 0u}, ty[2] = {0u, 0u};\n  int px[2] = {0, 0}, pw[2] = {0, 0}, py[2] = {0, 0};\n";
  if (splitWeights) d += "  stowage_dma_ticket tw2[2] = {0u, 0u};\n";
  d += fmt::format("  const uint32_t first = {0}_chunks[core], end = {0}_chunks[core + 1];\n  uint32_t t;\n", base);
  if (shared) d += "  uint32_t rb = 0u; /* row blocks begun */\n";
  d += fmt::format("  for (t = first; t < end; ++t) {{\n    const {}* const d = &{}_tiles[t];\n", type, base);
  // The first tile's doubled operands; this tile's single ones (the previous compute, which read their one half, is
  // done); the next tile's doubled ones, into the halves the previous tile used (CostModel issues them in this order).
  // (Direct operands have no loads: no block at all when they are the only doubled ones.)
  const std::string firstLoads = anyDoubled ? load("d", true) : "", nextLoads = anyDoubled ? load("n", true) : "";
  if (!firstLoads.empty()) d += "    if (t == first) {\n" + indentText(firstLoads, 6) + "    }\n";
  const IntrinsicSpec barrier = target.intrinsic("barrier");
  // This core's part of row block `block`'s input into shared half `half` (a loader core only).
  auto loadInputPart = [&](const std::string& block, const std::string& half) {
    return fmt::format(
        "{{\n  const uint32_t* const xb = {0}_xb[{1}];\n  const uint32_t r0 = xb[1] * (uint32_t)core / {2}u, r1 = xb[1] * (uint32_t)(core + 1) / {2}u;\n"
        "  if (r1 > r0) {{\n    tx[0] = {3};\n    px[0] = 1;\n  }}\n}}\n",
        base, block, loaders,
        callOf(dmaStart, {{"channel", "0"}, {"dst", fmt::format("xl[{}] + r0 * xb[2]", half)}, {"src", "a->x + xb[0] + r0 * xb[3]"},
                          {"row_bytes", "xb[2]"}, {"rows", "r1 - r0"}, {"dst_stride", "xb[2]"}, {"src_stride", "xb[3]"}}));
  };
  if (shared) {
    // A row block's first tile: with one half, every core is done reading the previous block (a barrier) before the
    // loaders overwrite it; with two, the loaders loaded this block during the previous one (the first at the start).
    d += "    if (d->load_x) { /* a new row block: its input, shared by all cores */\n";
    if (!buffers.doubled[0]) d += fmt::format("      if (rb > 0u) {};\n", callOf(barrier, {}));
    d += fmt::format("      if (core < {}{}) ", loaders, buffers.doubled[0] ? " && rb == 0u" : "") + indentText(loadInputPart("rb", "d->x_buf"), 6).substr(6);
    d += "    }\n";
  }
  if (anySingle) d += indentText(load("d", false), 4);
  // (A layer of one tile has no next tile: no prefetch, which also keeps the compiler's bounds analysis quiet.)
  if (sched.tiles.size() > 1 && !nextLoads.empty())
    d += fmt::format("    if (t + 1u < end) {{\n      const {}* const n = d + 1;\n", type) + indentText(nextLoads, 6) + "    }\n";
  if (shared) {
    // The loaders wait for their parts; at the barrier every part has arrived. With two halves the loaders then load
    // the next row block's input into the other half (every core is past the block that used it).
    d += fmt::format("    if (d->load_x) {{\n      if (px[0]) {{\n        {};\n        px[0] = 0;\n      }}\n      {};\n", wait("tx[0]"),
                     callOf(barrier, {}));
    if (buffers.doubled[0])
      d += fmt::format("      if (core < {} && rb + 1u < {}u) ", loaders, rowBlockX.size()) + indentText(loadInputPart("rb + 1u", "(rb + 1u) % 2u"), 6).substr(6);
    d += "      ++rb;\n    }\n";
  }
  if (!loadLater.empty()) d += fmt::format("    if (t + 1u == end) {{ {}}}\n", loadLater);
  if (once)
    d += fmt::format("    if (t == first) {{ /* every core's first weight tile, loaded once */\n      if (core == {}) {};\n      {};\n    }}\n",
                     layer.weightsOnceCore, wait(fmt::format("{}[core]", prefetchTickets)), callOf(barrier, {}));
  if (!shared) d += fmt::format("    if (px[d->x_buf]) {{\n      {};\n      px[d->x_buf] = 0;\n    }}\n", wait("tx[d->x_buf]"));
  d += fmt::format("    if (pw[d->w_buf]) {{\n      {};\n{}      pw[d->w_buf] = 0;\n    }}\n", wait("tw[d->w_buf]"),
                   splitWeights ? "      " + wait("tw2[d->w_buf]") + ";\n" : std::string());
  d += fmt::format("    if (py[d->y_buf]) {{\n      {};\n      py[d->y_buf] = 0;\n    }}\n", wait("ty[d->y_buf]"));
  d += "    " + callOf(portable, computeArgs("d", "a->side")) + ";\n";
  d += fmt::format("    STOWAGE_SIM_COMPUTE(\"{}\", d->cycles);\n", cStringText(node.name));
  if (direct.direct[2])
    d += "  }\n";  // the output was written in place
  else
    d += fmt::format("    ty[d->y_buf] = {};\n    py[d->y_buf] = 1;\n  }}\n",
                     callOf(dmaStart, {{"channel", std::to_string(outChannel)}, {"dst", "a->y + d->y_off"}, {"src", "yl[d->y_buf]"},
                                       {"row_bytes", "d->y_row_bytes"}, {"rows", "d->y_rows"}, {"dst_stride", "d->y_stride"},
                                       {"src_stride", "d->y_row_bytes"}}));
  if (!loadLater.empty()) d += fmt::format("  if (first == end) {{ {}}}\n", loadLater);
  if (once) d += fmt::format("  if (first == end) {};\n", callOf(barrier, {}));
  d += fmt::format("  if (py[0]) {};\n  if (py[1]) {};\n}}\n", wait("ty[0]"), wait("ty[1]"));

  std::string& c = code.statements;
  c += fmt::format("{{ /* {} tiles over {} core(s) of '{}' */\n  {}_tile_args a;\n", sched.tiles.size(), layer.cores, commentText(target.name), p);
  c += fmt::format("  a.x = (const uint8_t*)(const void*)({});\n  a.w = (const uint8_t*)(const void*)({});\n", operands[0], operands[1]);
  for (size_t i = 0; i < kMaxSideOperands; ++i)
    c += fmt::format("  a.side[{}] = {};\n", i, 2 + i + 1 < operands.size() ? operands[2 + i] : std::string("NULL"));
  c += fmt::format("  a.y = (uint8_t*)(void*)({});\n  a.ws = ws;\n", operands.back());
  for (size_t k = 0; k < laterWeights.size(); ++k) c += fmt::format("  a.later_w[{}] = (const uint8_t*)(const void*)({});\n", k, laterWeights[k]);
  // A CPU streaming a layer through its own fast pool runs it on the calling core: no stowage_run_on_cores.
  if (target.kind == TargetKind::Cpu && layer.cores == 1)
    c += fmt::format("  {}_core(&a);\n}}\n", base);
  else
    c += "  " + callOf(run, {{"target", std::to_string(layer.target)}, {"cores", std::to_string(layer.cores)}, {"fn", base + "_core"}, {"arg", "&a"}}) +
         ";\n}\n";
  markLayerSpan(code.statements, node.name);
  return code;
}

}  // namespace stowage
