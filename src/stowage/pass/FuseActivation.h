// Graph pass: fuses a Relu or Clip into the float Conv, Gemm, Add, Sub or Mul that feeds it (its kernel clamps the
// outputs): no kernel call, no pass over the tensor and no buffer for it, and offloaded tiles come back activated.
#pragma once

#include <string>
#include <vector>

#include "stowage/ir/Graph.h"
#include "stowage/ir/LoweringAttributes.h"
#include "stowage/pass/MergeVeto.h"
#include "stowage/support/Diagnostic.h"

namespace stowage {

/// Rewrites every `Relu(P)` and `Clip(P)` with P a Conv, Gemm, Add, Sub or Mul into P with the kFused* attributes,
/// writing the activation's output tensor. Leaves the pair alone when P's output has another reader or is a graph output,
/// the tensors are not float32, P already has a fused activation, or `veto` (asked with P's output as
/// `inner` and the activation's as `outer`) objects. ConvTranspose and MatMul
/// are never fused. Returns remarks: one listing the fused pairs, one per pair the veto kept apart.
Result<std::vector<std::string>> fuseActivation(Graph& g, const MergeVeto& veto = {});

}  // namespace stowage
