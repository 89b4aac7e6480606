// Kernel lowering of a planned program (see LowerProgram.h).
#include "stowage/lower/LowerProgram.h"

#include <fmt/format.h>

#include "stowage/lower/TileKernel.h"

namespace stowage {

namespace {

/// The plan's buffer of the single output of `n`, or null.
const PlacedBuffer* outputBuffer(const ProgramPlan& plan, const Node& n) {
  if (n.outputs.size() != 1) return nullptr;
  const int b = plan.bufferOf(n.outputs[0]);
  return b < 0 ? nullptr : &plan.buffers[static_cast<size_t>(b)];
}

/// Applies what the plan asks of the layer's kernel: an output pixel stride for an output planned as a strided Concat
/// slice (plan/analysis/Aliasing.h), a row band order for an output planned over its input (plan/analysis/RowOverlap.h).
Status adjustToPlan(const Graph& g, const ProgramPlan& plan, size_t step, std::vector<KernelCall>& calls) {
  const Node& n = g.nodes[step];
  const PlacedBuffer* out = outputBuffer(plan, n);
  if (out == nullptr) return Status::success();
  const bool offloaded = plan.offloadedAt(static_cast<int>(step)) != nullptr;
  if (out->aliasRunBytes != 0) {
    const size_t elem = dtypeSize(g.tensor(n.outputs[0]).dtype);
    if (offloaded || calls.size() != 1 || elem == 0 || out->aliasStrideBytes % elem != 0 ||
        !setOutputPixelStride(calls[0], static_cast<int64_t>(out->aliasStrideBytes / elem), static_cast<int64_t>(out->aliasRunBytes / elem)))
      return makeError(fmt::format("node '{}' ({})", n.name, opName(n.op)),
                       fmt::format("its output '{}' is planned as a strided slice of '{}', but its kernel cannot write with "
                                   "an output pixel stride here (an internal planner error)",
                                   g.tensor(n.outputs[0]).name, g.tensor(out->aliasOf).name));
  }
  if (out->overlapsInput != kNoTensor && out->rowBand != 0) {
    if (offloaded || calls.size() != 1 || !setRowBand(calls[0], out->rowBand))
      return makeError(fmt::format("node '{}' ({})", n.name, opName(n.op)),
                       fmt::format("its output '{}' is planned over its input in bands of {} rows, but its kernel cannot run "
                                   "in that order here (an internal planner error)",
                                   g.tensor(n.outputs[0]).name, out->rowBand));
  }
  return Status::success();
}

}  // namespace

Result<LoweredProgram> lowerProgram(const Graph& g, const ProgramPlan& plan, const KernelIsa& isa) {
  LoweredProgram program;
  program.isa = isa;
  program.layers.resize(g.nodes.size());
  for (size_t step = 0; step < g.nodes.size(); ++step) {
    LoweredLayer& layer = program.layers[step];
    STOWAGE_ASSIGN_OR_RETURN(layer.calls, lowerNode(g, g.nodes[step]));
    STOWAGE_TRY(adjustToPlan(g, plan, step, layer.calls));
    layer.kernel = layerKernelOf(g, plan, static_cast<int>(step), layer.calls, isa);
    const OffloadedLayer* off = plan.offloadedAt(static_cast<int>(step));
    for (const KernelCall& call : layer.calls) {
      if (off != nullptr) {
        const std::optional<TileKernel> k = off->mode != "engine" ? tileKernelOfIntrinsic(off->kernel) : std::nullopt;
        layer.boardKernels.push_back(k ? boardKernelFor(g, plan.board, off->target, tileKernelFunction(*k), firstTensorOf(call)) : nullptr);
        continue;
      }
      const int target = step < plan.nodeTargets.size() ? plan.nodeTargets[step] : -1;
      layer.boardKernels.push_back(boardKernelFor(g, plan.board, target, kernelFunctionName(call), firstTensorOf(call)));
    }
  }
  return program;
}

Int8KernelCode int8KernelCodeNeeded(const ProgramPlan& plan, const LoweredProgram& program) {
  Int8KernelCode need{false, false, false, false, false, false, false};
  for (size_t step = 0; step < program.layers.size(); ++step) {
    const LoweredLayer& layer = program.layers[step];
    const bool offloaded = plan.offloadedAt(static_cast<int>(step)) != nullptr;
    for (size_t k = 0; k < layer.calls.size(); ++k) {
      const KernelCall& call = layer.calls[k];
      if (offloaded) {
        if (std::holds_alternative<QuantCall>(call.params)) return Int8KernelCode{};
        continue;
      }
      if (k < layer.boardKernels.size() && layer.boardKernels[k] != nullptr) continue;
      const int paths = int8ConvPaths(call);
      need.referenceLoops = need.referenceLoops || runsInt8ReferenceLoops(call);
      need.convPointwise = need.convPointwise || (paths & STOWAGE_QCONV_PATH_POINTWISE) != 0;
      need.convIm2col = need.convIm2col || (paths & STOWAGE_QCONV_PATH_IM2COL) != 0;
      need.convByFilterRows = need.convByFilterRows || (paths & STOWAGE_QCONV_PATH_BY_FILTER_ROWS) != 0;
      need.convBorderPairs = need.convBorderPairs || (paths & STOWAGE_QCONV_PATH_BORDER_PAIRS) != 0;
      const int depthwise = int8DepthwisePaths(call);
      need.depthwiseStrip = need.depthwiseStrip || (depthwise & STOWAGE_QDW_PATH_STRIP) != 0;
      need.depthwisePixels = need.depthwisePixels || (depthwise & STOWAGE_QDW_PATH_PIXELS) != 0;
    }
  }
  return need;
}

}  // namespace stowage
