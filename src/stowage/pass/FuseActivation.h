// Graph pass: fuses a Relu or Clip into the float Conv, Gemm, Add, Sub or Mul that feeds it (its kernel clamps the
// outputs): no kernel call, no pass over the tensor and no buffer for it, and offloaded tiles come back activated.
#pragma once

#include <string>
#include <vector>

#include "stowage/ir/Graph.h"
#include "stowage/pass/MergeVeto.h"
#include "stowage/support/Diagnostic.h"

namespace stowage {

/// Attributes of a fused activation on its producer: its op ("Relu" or "Clip") and the clamp bounds (floats; Relu: 0 and
/// +inf). KernelCall lowers them to the clamp, clamp_min, clamp_max of stowage_conv2d_params, stowage_gemm_params
/// and stowage_broadcast_params.
inline constexpr const char* kFusedActivationAttr = "stowage_fused_activation";
inline constexpr const char* kFusedMinAttr = "stowage_fused_min";
inline constexpr const char* kFusedMaxAttr = "stowage_fused_max";

/// Rewrites every `Relu(P)` and `Clip(P)` with P a Conv, Gemm, Add, Sub or Mul into P with the kFused* attributes,
/// writing the activation's output tensor. Leaves the pair alone when P's output has another reader or is a graph output,
/// the tensors are not float32, P already has a fused activation, or `veto` (asked with P's output as
/// `inner` and the activation's as `outer`) objects. ConvTranspose and MatMul
/// are never fused. Returns remarks: one listing the fused pairs, one per pair the veto kept apart.
Result<std::vector<std::string>> fuseActivation(Graph& g, const MergeVeto& veto = {});

}  // namespace stowage
