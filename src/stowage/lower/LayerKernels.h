// The kernel of every layer (stage lower/): per step of the schedule, the C function that computes the layer and its
// variant (KernelVariant.h). Made once per compile after tiling and planning; report.json names both for each layer.
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
  /// when it calls none (an output without elements, or an op that does not lower).
  std::string kernel;
  std::string function;  ///< what is called: the board's function for KernelVariant::Board, else `kernel`
  KernelVariant variant = KernelVariant::Portable;
};

/// One entry per step of `g` (its node order) placed by `plan` (nodeTargets, offloaded layers, board): CPU layers by
/// cpuKernelVariant with `isa`, offloaded layers KernelVariant::Engine in engine mode, else the board's kernel for their
/// cores or the portable one (an accelerator's cores build the portable C for their own CPU, which the board does not
/// describe).
std::vector<LayerKernel> lowerLayerKernels(const Graph& g, const ProgramPlan& plan, const KernelIsa& isa);

}  // namespace stowage
