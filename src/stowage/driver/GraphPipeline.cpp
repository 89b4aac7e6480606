// compileGraph: the pipeline after import (see Compiler.h). Reads top to bottom, one timed stage per line.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>

#include "stowage/codegen/CEmitter.h"
#include "stowage/codegen/CNames.h"
#include "stowage/driver/BoardKernelFiles.h"
#include "stowage/driver/Compiler.h"
#include "stowage/driver/StageTimer.h"
#include "stowage/ir/Printer.h"
#include "stowage/ir/Verifier.h"
#include "stowage/pass/FoldBatchNorm.h"
#include "stowage/pass/FoldConstants.h"
#include "stowage/pass/FoldConstantChannels.h"
#include "stowage/pass/FoldPad.h"
#include "stowage/pass/PruneConstantChannels.h"
#include "stowage/pass/FuseActivation.h"
#include "stowage/pass/FuseQdq.h"
#include "stowage/pass/QdqNhwc.h"
#include "stowage/pass/ReorderForMemory.h"
#include "stowage/plan/analysis/MergeCheck.h"
#include "stowage/plan/PlanProgram.h"
#include "stowage/plan/PoolBudget.h"
#include "stowage/tile/FusedBands.h"
#include "stowage/tile/TileProgram.h"
#include "stowage/tile/WeightPrefetch.h"

namespace stowage {

namespace {

/// The remark naming the float layers with int8 weights (TFLite dynamic-range models: ConvNhwc, DepthwiseConvNhwc
/// and Gemm with weight scales as 4th input) and the semantics they are computed with; "" when there are none.
std::string hybridLayersRemark(const Graph& g) {
  std::vector<std::string> names;
  for (const Node& n : g.nodes) {
    const bool floatOp = n.op == OpKind::ConvNhwc || n.op == OpKind::DepthwiseConvNhwc || n.op == OpKind::Gemm;
    if (floatOp && n.input(3) != kNoTensor && n.input(1) != kNoTensor && g.tensor(n.input(1)).dtype == DType::Int8)
      names.push_back(n.name);
  }
  if (names.empty()) return "";
  return fmt::format("hybrid: {} layer(s) with int8 weights and float activations ({}) computed with their weights dequantized "
                     "inside the kernel (the float model the int8 weights define), not TFLite's on-the-fly activation "
                     "quantization; docs/quantized-onnx.md",
                     names.size(), fmt::join(names, ", "));
}

}  // namespace

Result<CompileResult> compileGraph(Graph graph, const CompileOptions& options, std::vector<StageTime> timings) {
  std::vector<std::string> remarks;
  STOWAGE_ASSIGN_OR_RETURN(Board board, resolveCompileBoard(options, &remarks));
  return compileGraphOnBoard(std::move(graph), board, options, std::move(timings));
}

Result<CompileResult> compileGraphOnBoard(Graph graph, const Board& boardIn, const CompileOptions& options,
                                          std::vector<StageTime> timings) {
  // `--kernels portable`: the board's own kernels ([[kernels]]) are left out, every call goes to the portable kernel.
  Board board = boardIn;
  if (options.portableKernels) board.kernels.clear();
  CompileResult r;
  r.name = options.name;
  STOWAGE_TRY(validateModelName(options.name));

  STOWAGE_TRY(timeStage(timings, "verify-input", [&] { return verifyGraph(graph); }));
  // Before folding constants, which would turn the int8 weights behind their DequantizeLinear into float ones.
  std::vector<std::string> qdqRemarks;
  if (options.fuseQdq) {
    STOWAGE_ASSIGN_OR_RETURN(qdqRemarks, timeStage(timings, "fuse-qdq", [&] { return fuseQdq(graph); }));
    // A board's own int8 convolution kernels know TFLite's requantization only: the QDQ layers then stay NCHW.
    const auto own = std::find_if(board.kernels.begin(), board.kernels.end(), [](const KernelOverride& k) {
      return k.kernel == "stowage_qconv2d_s8" || k.kernel == "stowage_qdepthwise_conv2d_s8" || k.kernel == "stowage_qfully_connected_s8";
    });
    if (options.qdqNhwc && own != board.kernels.end()) {
      qdqRemarks.push_back(fmt::format("QDQ: the integer layers stay on the NCHW QLinear kernels: the board replaces {} ({}), "
                                       "which would not requantize as ONNX Runtime does",
                                       own->kernel, own->origin));
    } else if (options.qdqNhwc) {
      STOWAGE_ASSIGN_OR_RETURN(auto nhwcRemarks, timeStage(timings, "qdq-nhwc", [&] { return qdqToNhwc(graph); }));
      qdqRemarks.insert(qdqRemarks.end(), nhwcRemarks.begin(), nhwcRemarks.end());
    }
  }
  STOWAGE_TRY(timeStage(timings, "fold-constants", [&] { return foldConstants(graph); }));
  // Folding and fusing merge two tensors; the board's rules and pins decide whether they may become one.
  const MergeVeto veto = [&board](const Graph& g, TensorId inner, TensorId outer) {
    return whyRulesKeepApart(g, board, inner, outer);
  };
  STOWAGE_TRY(timeStage(timings, "fold-batch-norm", [&] { return foldBatchNorm(graph, veto); }));
  // Output channels that write one byte whatever the input (dead filters) become small exact constants.
  std::vector<std::string> channelRemarks;
  if (options.foldConstantChannels) {
    STOWAGE_ASSIGN_OR_RETURN(channelRemarks, timeStage(timings, "fold-constant-channels", [&] { return foldConstantChannels(graph); }));
    // On the CPU a convolution then computes only its other channels (an accelerator's tiles keep whole layers).
    const bool cpuOnly = std::all_of(board.targets.begin(), board.targets.end(), [](const Target& t) { return t.kind == TargetKind::Cpu; });
    if (cpuOnly) {
      STOWAGE_ASSIGN_OR_RETURN(auto pruned, timeStage(timings, "prune-constant-channels", [&] { return pruneConstantChannels(graph); }));
      channelRemarks.insert(channelRemarks.end(), pruned.begin(), pruned.end());
    }
  }
  // An explicit Pad of the zero point before an int8 convolution becomes its padding (a rule or pin may keep it).
  std::vector<std::string> padRemarks;
  if (options.foldPad) {
    const MergeVeto padVeto = [&board](const Graph& g, TensorId padded, TensorId source) -> std::string {
      for (const Node& n : g.nodes)
        if (std::find(n.outputs.begin(), n.outputs.end(), padded) != n.outputs.end())
          for (const PlacementRule& rule : board.rules)
            if ((rule.inputs || rule.outputs) && rule.matches(opName(n.op), n.name))
              return fmt::format("the rule at {} places the tensors of '{}'", rule.origin, n.name);
      return whyRulesKeepApart(g, board, padded, source);
    };
    STOWAGE_ASSIGN_OR_RETURN(padRemarks, timeStage(timings, "fold-pad", [&] { return foldPad(graph, padVeto); }));
  }
  std::vector<std::string> fusionRemarks;
  if (options.fuse) {
    STOWAGE_ASSIGN_OR_RETURN(fusionRemarks,
                             timeStage(timings, "fuse-activation", [&] { return fuseActivation(graph, veto); }));
  }
  // Last graph pass: the order of the nodes with the lowest peak of live bytes (branching graphs).
  ReorderResult reordered;
  if (options.reorder)
    reordered = timeStage(timings, "reorder", [&] { return reorderForMemory(graph, ReorderOptions{options.ioInPools}); });
  // Chains of int8 layers around the peak run band by band (CPU-only boards): ordinary nodes on band tensors.
  FuseBandsResult fusedBands;
  std::optional<Graph> unfused;  // the layer-by-layer candidate, planned too when bands were fused
  // Copied only where bands may be fused (a workspace pool with a size, or forced): the copy holds every weight.
  if (options.forceFuseLayers || (options.fuseLayers && fusedBandsPoolGoal(board) > 0)) unfused = graph;
  if (options.fuseLayers || options.forceFuseLayers)
    fusedBands = timeStage(timings, "fuse-layers", [&] {
      return fuseLayerBands(graph, board, FuseBandsOptions{options.forceFuseLayers, options.ioInPools, FuseBandsOptions{}.maxChainLayers, options.fuseExtraMacsPercent});
    });
  STOWAGE_TRY(timeStage(timings, "verify", [&] { return verifyGraph(graph); }));
  // Liveness, constraints, pool assignment, offsets and the validator all run inside planProgram.
  PlanOptions planner = options.planner;
  if (options.guard) planner.guardBytes = kGuardCanaryBytes;
  planner.ioInPools = options.ioInPools;
  EmitOptions emit;
  emit.weights = options.weights;
  emit.ioInPools = options.ioInPools;
  // What each pool can still hold beside the buffers that can only live there (the planner's own analysis and
  // liveness, before tiling): the tiler keeps its tiles, residents and prefetched weights within it.
  const PoolBudgetOptions budgetOptions{options.ioInPools, planner.aliasing, planner.guardBytes};
  const PoolBudget budget = timeStage(timings, "pool-budget", [&] { return poolBudget(graph, board, budgetOptions); });
  // Partition between CPU and accelerators, tile the offloaded layers; their tile buffers are planned below.
  // Activations may stay in an accelerator's local pool between its layers (not in guard mode: the CPU writes the
  // canaries around every activation).
  const TileOptions tileOptions{.doubleBuffer = options.doubleBuffer,
                                .resident = options.resident && !options.guard,
                                .prefetchWeights = options.prefetchWeights,
                                .viewsShareBuffers = planner.aliasing,
                                .observer = options.tileSearchObserver,
                                .weightsOnce = options.weightsOnce,
                                .farWeightPrefetch = options.farWeightPrefetch,
                                .everyOnceCore = options.everyOnceCore,
                                .weightStream = options.weightStream,
                                .budget = &budget,
                                .sharedInput = options.sharedInput,
                                .sharedWholeInput = options.sharedWholeInput,
                                .handInputs = options.handInputs};
  TiledProgram tiled = timeStage(timings, "tile", [&] { return tileProgram(graph, board, tileOptions); });
  planner.nodeTargets = tiled.nodeTargets;
  planner.partitionRemarks = tiled.remarks;
  planner.scratch = tiled.scratch;
  planner.scratchPools = tiled.scratchPools;
  planner.resident = tiled.resident;
  Result<ProgramPlan> plan = timeStage(timings, "plan", [&] { return planProgram(graph, board, planner); });
  if (!plan) return plan.error();
  // Fused bands and the layer-by-layer schedule are two candidates: the planner's bytes decide (its overlaps and
  // aliases are more than the fusion's estimate sees); equal bytes keep the one without recomputed halos.
  if (!fusedBands.chains.empty() && unfused && !options.forceFuseLayers) {
    auto workspaceBytes = [&](const ProgramPlan& p) {
      size_t used = 0;
      for (const PoolUse& u : p.pools)
        if (board.pools[static_cast<size_t>(u.pool)].kind != PoolKind::Constant) used += u.usedBytes;
      return used;
    };
    const PoolBudget plainBudget = poolBudget(*unfused, board, budgetOptions);
    TileOptions plainOptions = tileOptions;
    plainOptions.budget = &plainBudget;
    TiledProgram plainTiles = timeStage(timings, "tile-unfused", [&] { return tileProgram(*unfused, board, plainOptions); });
    PlanOptions plainPlanner = planner;
    plainPlanner.nodeTargets = plainTiles.nodeTargets;
    plainPlanner.partitionRemarks = plainTiles.remarks;
    plainPlanner.scratch = plainTiles.scratch;
    plainPlanner.scratchPools = plainTiles.scratchPools;
    plainPlanner.resident = plainTiles.resident;
    Result<ProgramPlan> plain = timeStage(timings, "plan-unfused", [&] { return planProgram(*unfused, board, plainPlanner); });
    if (plain && workspaceBytes(*plain) <= workspaceBytes(*plan)) {
      fusedBands.remarks = {fmt::format("fused bands: not kept: the layer-by-layer plan needs {} bytes, the fused one {} "
                                        "(--fuse-layers keeps them)",
                                        workspaceBytes(*plain), workspaceBytes(*plan))};
      fusedBands.chains.clear();
      fusedBands.extraMacs = 0;
      graph = std::move(*unfused);
      tiled = std::move(plainTiles);
      plan = std::move(plain);
    } else if (plain) {
      fusedBands.remarks.push_back(fmt::format("fused bands: {} bytes of workspace instead of {} layer by layer (-{} bytes)",
                                               workspaceBytes(*plan), workspaceBytes(*plain), workspaceBytes(*plain) - workspaceBytes(*plan)));
    }
  }
  r.plan = std::move(*plan);
  r.plan.offloaded = tiled.offloaded;
  // Weight transfers handed over across CPU steps (or other targets' layers) arrive that much earlier.
  settlePrefetchArrivals(graph, r.plan);
  r.plan.remarks.insert(r.plan.remarks.end(), qdqRemarks.begin(), qdqRemarks.end());
  r.plan.remarks.insert(r.plan.remarks.end(), channelRemarks.begin(), channelRemarks.end());
  r.plan.remarks.insert(r.plan.remarks.end(), padRemarks.begin(), padRemarks.end());
  r.plan.remarks.insert(r.plan.remarks.end(), fusionRemarks.begin(), fusionRemarks.end());
  if (reordered.changed) r.plan.remarks.push_back(reordered.remark);
  r.plan.remarks.insert(r.plan.remarks.end(), fusedBands.remarks.begin(), fusedBands.remarks.end());
  r.fusedBandExtraMacs = fusedBands.extraMacs;
  r.fusedChains = static_cast<int>(fusedBands.chains.size());
  if (std::string hybrid = hybridLayersRemark(graph); !hybrid.empty()) r.plan.remarks.push_back(std::move(hybrid));
  // Which kernel and which variant of it each layer runs: the board's CPU (DSP, Helium), its [[kernels]], `--kernels`.
  r.kernelIsa = kernelIsaFor(board, options.portableKernels);
  STOWAGE_ASSIGN_OR_RETURN(LoweredProgram lowered, timeStage(timings, "lower-kernels", [&] { return lowerProgram(graph, r.plan, r.kernelIsa); }));
  for (const LoweredLayer& layer : lowered.layers) r.layerKernels.push_back(layer.kernel);
  STOWAGE_ASSIGN_OR_RETURN(r.code, timeStage(timings, "emit-c", [&] { return emitC(graph, r.plan, lowered, options.name, emit); }));
  // The board's own kernels the code calls: their files go beside the generated C, remarks say which layers call them.
  STOWAGE_TRY(timeStage(timings, "board-kernels", [&] { return attachBoardKernels(graph, r.plan, r.code); }));

  for (const Node& n : graph.nodes) r.macs += macCount(graph, n);
  for (const Tensor& t : graph.tensors)
    if (t.isConstant()) r.weightBytes += t.byteSize();
  if (options.dumpIr) r.irDump = printGraph(graph);
  r.graph = std::move(graph);
  r.timings = std::move(timings);
  return r;
}

}  // namespace stowage
