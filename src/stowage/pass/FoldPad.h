// Graph pass: folds an explicit int8 PAD (constant, value = the zero point, height and width only) into the
// convolution or depthwise convolution that is its only reader, as that layer's padding: no padded copy is made.
#pragma once

#include <string>
#include <vector>

#include "stowage/ir/Graph.h"
#include "stowage/pass/MergeVeto.h"
#include "stowage/support/Diagnostic.h"

namespace stowage {

/// Rewrites every `QConv2d(Pad(X))` / `QDepthwiseConv2d(Pad(X))` into the convolution reading X, its "pads" grown by the
/// Pad's (top, left, bottom, right), when: the Pad is int8, constant mode, its value the zero point of X (the kernels
/// skip taps outside the input, which is what a tap on the zero point adds: (zp - zp) * w = 0), it pads only H and W
/// (NHWC), its output is read by that one convolution as its input 0 and is no graph output, and each resulting pad is at
/// most the window's span (dilation * (k - 1)), so that every window still touches the input. `veto` (asked with the
/// padded tensor as `inner` and X as `outer`) may keep a pair (a placement rule or pin naming the padded tensor).
/// Returns remarks: one listing the folded pairs with the bytes of the padded copies removed, one per pair kept.
Result<std::vector<std::string>> foldPad(Graph& g, const MergeVeto& veto = {});

}  // namespace stowage
