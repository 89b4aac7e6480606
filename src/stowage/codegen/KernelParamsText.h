// The C text of a kernel call's parameter struct: the designated-initializer bodies the C emitter and the tiled-layer
// emitter print for what kernel lowering (lower/KernelCall.h) decided. Printing only; no parameter is derived here.
#pragma once

#include <string>

#include "stowage/lower/KernelCall.h"

namespace stowage {

/// Designated-initializer body of a pooling call's stowage_pool2d_params (the CPU call's and a pooling tile's).
std::string poolParamsInitializer(const stowage_pool2d_params& p);
/// ", .clamp = 1, .clamp_min = ..., .clamp_max = ..." for a conv, Gemm or binary op with a fused activation, else "" (for
/// the designated initializers of their params).
std::string clampFields(const stowage_conv2d_params& p);
std::string clampFields(const stowage_gemm_params& p);
std::string clampFields(const stowage_broadcast_params& p);
/// Designated-initializer body of an int8 (stowage_kernels_int8.h) call's parameter struct.
std::string quantParamsInitializer(const QuantCall& call);
/// Designated-initializer body of a float32 NHWC (stowage_kernels_nhwc.h) call's parameter struct.
std::string nhwcParamsInitializer(const NhwcCall& call);
/// Designated-initializer body of an ONNX integer (stowage_kernels_qlinear.h) call's parameter struct.
std::string qlinearParamsInitializer(const QLinearCall& call);

}  // namespace stowage
