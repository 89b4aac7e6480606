// Kernel lowering of a planned program (stage lower/): per step, the kernel calls that compute the layer, with their
// parameters as the plan needs them (strided Concat outputs, row bands of overlapping layers), the function each call
// makes (the board's own kernel or the portable one) and the layer's kernel and variant. The C emitter prints it.
#pragma once

#include <vector>

#include "stowage/ir/Graph.h"
#include "stowage/lower/LayerKernels.h"
#include "stowage/plan/ProgramPlan.h"
#include "stowage/support/Diagnostic.h"

namespace stowage {

/// One step of the program.
struct LoweredLayer {
  /// The calls computing the node, in order (lowerNode), adjusted to the plan. An offloaded layer keeps its one untiled
  /// call: tile/ cuts it into tiles.
  std::vector<KernelCall> calls;
  /// Per call: the board's kernel ([[kernels]]) called in its place by the target running the layer, else null. An
  /// offloaded layer in cores mode: the board's kernel its cores call on each tile.
  std::vector<const KernelOverride*> boardKernels;
  LayerKernel kernel;  ///< what report.json names
};

/// The lowered program: one LoweredLayer per step of `g`.
struct LoweredProgram {
  KernelIsa isa;  ///< the instruction-set paths the variants were chosen for
  std::vector<LoweredLayer> layers;
};

/// Lowers every node of `g` (verified, in schedule order) as `plan` (validated) places it, choosing variants for `isa`.
/// Errors: a node that does not lower (names it), and a plan asking a kernel for an output pixel stride or a row band it
/// cannot run with (an internal planner error, naming the node and tensor).
Result<LoweredProgram> lowerProgram(const Graph& g, const ProgramPlan& plan, const KernelIsa& isa);

/// The int8 kernel code that running a program may need beyond the kernels' general loops; a firmware build leaves
/// out what it does not (runtime/kernels/int8_conv.c).
struct Int8KernelCode {
  bool referenceLoops = true;    ///< the reference loops (else STOWAGE_INT8_FAST_PATHS_ONLY: a call needing them traps)
  bool convPointwise = true;     ///< the convolution's pointwise kernel (else STOWAGE_NO_CONV_POINTWISE)
  bool convIm2col = true;        ///< its im2col buffer for short window rows (else STOWAGE_NO_CONV_IM2COL)
  bool convByFilterRows = true;  ///< its filters widened one window row at a time (else STOWAGE_NO_CONV_BY_FILTER_ROWS)
  bool convBorderPairs = true;   ///< its pixel pairs in border rows (else STOWAGE_NO_CONV_BORDER_PAIRS)
  bool depthwiseStrip = true;    ///< the depthwise kernel's strip of widened rows (else STOWAGE_NO_DW_STRIP)
  bool depthwisePixels = true;   ///< its pixel-after-pixel path (else STOWAGE_NO_DW_PIXELS)
};

/// What running `program` (placed by `plan`) needs: a CPU layer calling the portable kernel (not a board's) needs what
/// its call takes (runsInt8ReferenceLoops, int8ConvPaths, int8DepthwisePaths); a layer offloaded with an int8 kernel needs everything (its
/// cores call the kernels on tiles whose shapes this does not know).
Int8KernelCode int8KernelCodeNeeded(const ProgramPlan& plan, const LoweredProgram& program);

}  // namespace stowage
