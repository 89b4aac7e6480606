// Graph pass: finds the output channels of int8 convolutions and fully connected layers whose output is one value for
// every possible input (a "dead" filter: its scale rounds every reachable accumulator to the same byte) and rewrites them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stowage/ir/Graph.h"
#include "stowage/support/Diagnostic.h"

namespace stowage {

/// constantChannels' value for a channel whose output depends on the input.
inline constexpr int kNotConstant = -1000;

/// The byte each output channel of `n` writes for every input (kNotConstant where it depends on the input), as
/// foldConstantChannels decides it below; empty when `n` is not a layer it handles.
std::vector<int> constantChannels(const Graph& g, const Node& n);

/// For every QConv2d, QDepthwiseConv2d and QFullyConnected with TFLite's requantization (not ONNX Runtime's float32
/// one), per-channel multipliers and constant weights: a channel whose accumulator, over every int8 input (taps the
/// kernels skip add 0, which is in each tap's range), lies in [lo, hi] with the requantized, clamped output the same at
/// both ends (the requantization is monotone: the whole range gives that value) always writes that byte c. Such a channel
/// gets weights 0, bias 4 (c - output zero point), multiplier 2^30 and shift -1, which requantize to c exactly: the same
/// bytes, but its accumulators stay small, so the kernels' narrow requantization (and with it the pointwise and other
/// fast paths that need every channel narrow) takes the layer. Accumulator ranges that leave int32 are not touched.
/// Tensors read by another node are copied first. Returns one remark naming the layers and the channels rewritten
/// (none when nothing was).
Result<std::vector<std::string>> foldConstantChannels(Graph& g);

}  // namespace stowage
