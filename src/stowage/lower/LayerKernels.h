// The kernel of a layer (stage lower/): the C function that computes it and its variant (KernelVariant.h), as
// report.json names them. Made for every step by lowerProgram (LowerProgram.h).
#pragma once

#include <string>
#include <vector>

#include "stowage/ir/Graph.h"
#include "stowage/lower/KernelVariant.h"
#include "stowage/plan/ProgramPlan.h"

namespace stowage {

/// The kernel a layer runs.
struct LayerKernel {
  /// The portable kernel the layer calls ("stowage_qconv2d_s8"; an offloaded layer's: the one its tiles compute); ""
  /// when it calls none (an output without elements).
  std::string kernel;
  std::string function;  ///< what is called: the board's function for KernelVariant::Board, else `kernel`
  KernelVariant variant = KernelVariant::Portable;
};

/// The kernel of step `step` of `g` placed by `plan` (nodeTargets, offloaded layers, board), computed by `calls` (its
/// lowered calls; the first one names the layer): a CPU layer's by cpuKernelVariant with `isa`; an offloaded layer's is
/// KernelVariant::Engine in engine mode, else the board's kernel for its cores or the portable one (an accelerator's
/// cores build the portable C for their own CPU, which the board does not describe).
LayerKernel layerKernelOf(const Graph& g, const ProgramPlan& plan, int step, const std::vector<KernelCall>& calls, const KernelIsa& isa);

}  // namespace stowage
