// Graph pass: an int8 convolution computes only its output channels that depend on the input; the constant ones (see
// FoldConstantChannels.h) are copied in by a Concat, and the readers take the channels in that new order.
#pragma once

#include <string>
#include <vector>

#include "stowage/ir/Graph.h"
#include "stowage/support/Diagnostic.h"

namespace stowage {

/// For every QConv2d (TFLite's requantization) with at least a quarter, not all, of its output channels constant
/// (constantChannels; fewer are not worth the Concat's call in the code): the
/// convolution keeps the L live channels only (its weights, biases, multipliers and shifts cut to them) and writes a new
/// tensor [N, H, W, L]; a Concat on the channels of that tensor and a constant [N, H, W, D] holding each constant
/// channel's byte writes the original output tensor (same name, so rules and pins still find it), its channels now live
/// ones first, then the constant ones. That order is carried through the output's readers: a depthwise convolution
/// (multiplier 1) or an int8 pool passes it on (the depthwise layer's per-channel constants permuted), a Reshape of a
/// single pixel to [.., C] passes it on, a convolution or fully connected layer reading it as its input takes it in its
/// weights' input axis. Where a reader is anything else, or a carried tensor is a graph output, the layer is left
/// whole. Returns one remark naming the layers and the MACs left out (none when nothing changed).
Result<std::vector<std::string>> pruneConstantChannels(Graph& g);

}  // namespace stowage
