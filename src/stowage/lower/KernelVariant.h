// Variant selection (stage lower/): which build of a kernel computes a call: the portable C, the Cortex-M DSP path
// (SMLAD), Helium (MVE), the board's own function ([[kernels]]) or an accelerator's matrix engine, from the target CPU.
#pragma once

#include <string>

#include "stowage/ir/Graph.h"
#include "stowage/lower/KernelCall.h"
#include "stowage/target/Board.h"

namespace stowage {

/// The code that computes a kernel call.
enum class KernelVariant {
  Portable,    ///< the portable C loops of runtime/kernels
  CortexMDsp,  ///< the int8 kernels' Arm DSP extension path (SXTB16 + SMLAD; runtime/kernels/int8_dot.h)
  HeliumMve,   ///< the int8 kernels' Helium (MVE) vector path (Cortex-M55)
  Board,       ///< the board's own function ([[kernels]], docs/kernels.md)
  Engine,      ///< an accelerator's matrix engine intrinsics (an offloaded layer in engine mode)
};
/// "portable", "cortex-m-dsp", "helium-mve", "board", "engine" (report.json's `kernel_variant`).
const char* kernelVariantName(KernelVariant v);

/// The instruction-set paths the runtime kernels of a compile are built with: runtime/kernels/int8_dot.h takes the DSP
/// path when the C compiler defines __ARM_FEATURE_DSP and the Helium path with __ARM_FEATURE_MVE, unless STOWAGE_NO_SIMD.
struct KernelIsa {
  std::string cpu = "host";  ///< the board's [device] CPU ("cortex-m4"; an emulated machine's after --emulate), else "host"
  bool dsp = false;          ///< the kernels are built with the DSP path
  bool mve = false;          ///< ... and with the Helium path
  /// `--kernels portable` on a CPU that has DSP or MVE: the runtime kernels must be built with -DSTOWAGE_NO_SIMD (the
  /// firmware project and `run --emulate` do) so that they run their portable loops.
  bool noSimd = false;
};

/// The paths for `board`: its [device] CPU's DSP and MVE features (Arm only), none for a board without a [device] (the
/// generated C is built for the host, whose kernels have no such path) and none with `portableKernels`.
KernelIsa kernelIsaFor(const Board& board, bool portableKernels);

/// The first tensor a call reads (kNoTensor when it reads none).
TensorId firstTensorOf(const KernelCall& call);

/// The board kernel that replaces portable kernel `function` for a call whose first tensor argument is `firstTensor`,
/// made by target `target` (Board::targets index), or null when the portable kernel is called.
const KernelOverride* boardKernelFor(const Graph& g, const Board& board, int target, const std::string& function,
                                     TensorId firstTensor);

/// Whether `call` is an int8 convolution, depthwise convolution or fully connected call (stowage_kernels_int8.h) that
/// runs the kernels' reference loops rather than their fast path (grouped, dilated window rows, 2^31 elements).
bool runsInt8ReferenceLoops(const KernelCall& call);

/// The optional code paths of the int8 convolution kernel `call` may take (stowage_qconv2d_s8_paths bits:
/// STOWAGE_QCONV_PATH_POINTWISE, _IM2COL, _BY_FILTER_ROWS, _BORDER_PAIRS); 0 for every other call.
int int8ConvPaths(const KernelCall& call);

/// The path of the int8 depthwise convolution kernel `call` takes with the DSP extension
/// (stowage_qdepthwise_conv2d_s8_paths: STOWAGE_QDW_PATH_STRIP or _PIXELS); 0 for every other call.
int int8DepthwisePaths(const KernelCall& call);

/// The variant of `call` made by target `target` on the CPU (not offloaded): the board's kernel when one replaces it,
/// the Helium or DSP path for the int8 convolution, depthwise convolution and fully connected calls that take the
/// kernels' fast path (runtime/kernels/int8_conv.c: one group, unit width dilation, 32-bit indices), else portable.
KernelVariant cpuKernelVariant(const Graph& g, const Board& board, int target, const KernelCall& call, const KernelIsa& isa);

}  // namespace stowage
