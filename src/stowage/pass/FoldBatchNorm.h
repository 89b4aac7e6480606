// Graph pass: folds inference-mode BatchNormalization into the preceding Conv / ConvTranspose weights and
// bias. Runs after the frontend, before planning; saves one pass over the activation and its buffer.
#pragma once

#include "stowage/ir/Graph.h"
#include "stowage/support/Diagnostic.h"

namespace stowage {

/// Rewrites every `BatchNormalization(Conv(X, W, B?))` into `Conv(X, W', B')` with
///   s = scale / sqrt(var + epsilon),  W'[m] = W[m] * s[m],  B' = (B - mean) * s + bias
/// (per output channel m; ConvTranspose scales its [C, M/group, k...] weight along the output-channel dim).
/// The BatchNormalization output tensor becomes the conv's output; W' and B' are new constants (the old
/// ones are dropped when nothing else reads them), so a weight shared with another node is never changed.
///
/// Bails out (leaves the BatchNormalization for its kernel) when: the conv output has another reader or is
/// a graph output; W, B or any BN parameter is not a float32 constant; a parameter does not hold exactly one
/// value per output channel. Never fails on a verified graph; an error means the graph was inconsistent.
Status foldBatchNormIntoConv(Graph& g);

}  // namespace stowage
