// C for layers the tiler offloaded (tile/): per layer a static table of tile descriptors and the loop that runs
// it - engine mode (mvin of the next tile into the other half, compute, mvout, fence at the end) or cores mode
// (a function each core runs over its chunk of tiles with DMA start / wait and the portable kernel) - with the
// board's intrinsic names and argument orders; plus the host simulator's setup function.
#pragma once

#include <string>
#include <vector>

#include "stowage/codegen/CNames.h"
#include "stowage/ir/Graph.h"
#include "stowage/plan/ProgramPlan.h"
#include "stowage/support/Diagnostic.h"

namespace stowage {

/// C for one offloaded layer.
struct TiledLayerCode {
  std::string definitions;  ///< file scope: descriptor table and the per-core function
  std::string statements;   ///< inside <name>_run
  /// The board kernel ([[kernels]]) the cores call instead of the portable kernel, or null (cores mode only).
  const KernelOverride* boardKernel = nullptr;
};

/// `operands` are C expressions for the layer call's tensors in kernel order (x, w, bias, multiplier, shift, y
/// for int8; x, w, bias, y for conv; a, b, c, y for gemm), "NULL" for absent ones. `laterWeights`: the C expression
/// of the weights of each layer of `layer.prefetches` (same order), whose first tiles this layer's cores load
/// (tile/WeightPrefetch.h). `boardKernel`: the board's kernel the cores call on each tile in place of the portable one
/// (kernel lowering's choice, lower/LowerProgram.h), or null. `nextInput`: the C expression of the input of the layer
/// at `layer.handsInputTo`, whose first input tile this layer loads after a fence that follows its last compute
/// (engine mode, tile/InputHandover.h).
Result<TiledLayerCode> emitTiledLayer(const Graph& g, const ProgramPlan& plan, const OffloadedLayer& layer, const CSymbols& syms,
                                      const std::vector<std::string>& operands, const std::vector<std::string>& laterWeights = {},
                                      const KernelOverride* boardKernel = nullptr, const std::string& nextInput = "");

/// File-scope C every tiled program needs: descriptor types of the kernels used, the argument struct of
/// cores-mode functions and, under STOWAGE_HOST_SIM, <name>_sim_setup describing targets, DMA and fixed pools.
std::string tiledProgramPrelude(const ProgramPlan& plan, const CSymbols& syms);

}  // namespace stowage
