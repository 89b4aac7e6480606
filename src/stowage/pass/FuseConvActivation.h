// Graph pass: fuses a Relu or Clip into the float Conv that feeds it (the conv kernel clamps its outputs), so the
// activation costs no kernel call, no pass over the tensor and no buffer, and an offloaded conv's tiles come back done.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "stowage/ir/Graph.h"
#include "stowage/support/Diagnostic.h"

namespace stowage {

/// Conv attributes of a fused activation: its op ("Relu" or "Clip") and the clamp bounds (floats; Relu: 0 and
/// +inf). KernelCall lowers them to stowage_conv2d_params clamp, clamp_min, clamp_max.
inline constexpr const char* kFusedActivationAttr = "stowage_fused_activation";
inline constexpr const char* kFusedMinAttr = "stowage_fused_min";
inline constexpr const char* kFusedMaxAttr = "stowage_fused_max";

/// Asked before each fusion with the conv's output (`inner`, which disappears) and the activation's output
/// (`outer`, which the conv then writes): an empty string allows it, anything else is why not (e.g. a placement
/// rule wants the two in different pools; see plan/analysis/MergeCheck.h).
using FusionVeto = std::function<std::string(const Graph& g, TensorId inner, TensorId outer)>;

/// Rewrites every `Relu(Conv(X, W, B?))` and `Clip(Conv(X, W, B?))` into the Conv with the kFused* attributes,
/// writing the activation's output tensor. Leaves the pair alone when the conv output has another reader or is a
/// graph output, the tensors are not float32, the Conv already has a fused activation, or `veto` objects.
/// ConvTranspose is never fused. Returns remarks: one listing the fused pairs, one per pair the veto kept apart.
Result<std::vector<std::string>> fuseConvActivation(Graph& g, const FusionVeto& veto = {});

}  // namespace stowage
