// The node attributes graph passes set for kernel lowering to read: a fused activation's clamp (pass/FuseActivation)
// and the requantization mode of the integer ops made from QDQ patterns (pass/FuseQdq). Part of the IR (ir/).
#pragma once

namespace stowage {

/// Attributes of a fused activation on its producer: its op ("Relu" or "Clip") and the clamp bounds (floats; Relu: 0 and
/// +inf). lower/KernelCall lowers them to the clamp, clamp_min, clamp_max of stowage_conv2d_params, stowage_gemm_params
/// and stowage_broadcast_params.
inline constexpr const char* kFusedActivationAttr = "stowage_fused_activation";
inline constexpr const char* kFusedMinAttr = "stowage_fused_min";
inline constexpr const char* kFusedMaxAttr = "stowage_fused_max";
/// On the nodes a fused chain became (tile/FusedBands.h): "fused chain N"; report.json layers' "band_of".
inline constexpr const char* kBandOfAttr = "band_of";
/// On a node whose output keeps a buffer of its own: plan/analysis/Aliasing never writes it into the Concat that reads
/// it, whatever the sizes say. Any pass may set it; tile/FusedBands sets it on the copy that carries a chain's cached
/// halo rows into its next band (written into that band's Concat, it would reserve the next band's whole tensor while
/// the previous one is still live).
inline constexpr const char* kOwnBufferAttr = "own_buffer";

/// Attributes pass/FuseQdq sets on the QLinearConv / QLinearMatMul it makes (read by lower/QLinearKernelCall):
/// requantize with the product in float32 as ONNX Runtime's integer kernels do (int, 1), and the clamp in output
/// units of an absorbed Relu or Clip (ints; either may be absent).
inline constexpr const char* kQdqRequantF32Attr = "requant_f32";
inline constexpr const char* kQdqOutputMinAttr = "y_min";
inline constexpr const char* kQdqOutputMaxAttr = "y_max";

}  // namespace stowage
