// Graph pass: folds inference-mode BatchNormalization into the preceding Conv / ConvTranspose / Gemm weights
// and bias. Runs after the frontend, before planning; saves one pass over the activation and its buffer.
#pragma once

#include "stowage/ir/Graph.h"
#include "stowage/pass/MergeVeto.h"
#include "stowage/support/Diagnostic.h"

namespace stowage {

/// Rewrites every `BatchNormalization(Conv(X, W, B?))` into `Conv(X, W', B')` with
///   s = scale / sqrt(var + epsilon),  W'[m] = W[m] * s[m],  B' = (B - mean) * s + bias
/// (per output channel m; ConvTranspose scales its [C, M/group, k...] weight along the output-channel dim).
/// The BatchNormalization output tensor becomes the conv's output; W' and B' are new constants (the old
/// ones are dropped when nothing else reads them), so a weight shared with another node is never changed.
/// A BatchNormalization over a Gemm's [M, N] output (channels = the N columns) folds into B and C alike:
///   B'[., n] = B[., n] * s[n],  C' = (beta * C - mean) * s + bias, beta' = 1
/// when C is absent or one row ([], [1], [N], [1, N]); a full [M, N] C keeps the BatchNormalization.
///
/// Bails out (leaves the BatchNormalization for its kernel) when: the conv output has another reader or is
/// a graph output; W, B or any BN parameter is not a float32 constant; a parameter does not hold exactly one
/// value per output channel; `veto` (asked with the conv's output as `inner`, the BatchNormalization's as `outer`)
/// objects, e.g. a board rule or pin names the BatchNormalization or its input. Never fails on a verified graph; an
/// error means the graph was inconsistent.
Status foldBatchNorm(Graph& g, const MergeVeto& veto = {});

}  // namespace stowage
