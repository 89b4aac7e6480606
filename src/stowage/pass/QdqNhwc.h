// Graph pass after pass/FuseQdq: moves the QDQ pass's int8 convolutions and fully connected layers from the NCHW
// reference QLinear kernels to the NHWC int8 kernels of TFLite models (their DSP / Helium fast paths), with ONNX
// Runtime's requantization (requant_f32), so the bytes stay ONNX Runtime's.
#pragma once

#include <string>
#include <vector>

#include "stowage/ir/Graph.h"
#include "stowage/support/Diagnostic.h"

namespace stowage {

/// Rewrites, for int8 activations (per tensor) and int8 weights with zero point 0 (per tensor or per output channel):
/// - a 2-D `QLinearConv` with requant_f32 (made by fuseQdq) and group 1 into `QConv2d` on NHWC tensors, with group =
///   channels (depthwise) into `QDepthwiseConv2d`; the weights transposed at compile time to [M, kh, kw, C] /
///   [1, kh, kw, M]; the multiplier input holds the float32 bits of x_scale * w_scale / y_scale per channel (computed
///   in float32 as ONNX Runtime does), the shift input zeros, attribute requant_f32 = 1 (the kernels then requantize
///   as round_half_even((float)acc * m) + y_zp, runtime/include/stowage_kernels_int8.h);
/// - the 1-D QLinearConv that fuseQdq makes of a Gemm (input [rows, K, 1], kernel 1) into `QFullyConnected`;
/// - `QLinearAdd` / `QLinearMul` of equal 4-D shapes (no broadcasting) whose operand comes from a converted layer, and a
///   4-D `QLinearLookup` (Sigmoid) whose input does: computed on the NHWC tensors (elementwise, so the layout does not
///   matter).
/// NCHW tensors are turned into NHWC by a Transpose before the first NHWC reader that needs it, and back after an
/// NHWC producer only when some reader (or the graph's output) needs the NCHW tensor, so a chain of converted layers
/// has no Transpose inside it. Everything else is unchanged. Returns remarks: what moved, and each QLinearConv that
/// stays on the NCHW kernels with the reason.
Result<std::vector<std::string>> qdqToNhwc(Graph& g);

}  // namespace stowage
