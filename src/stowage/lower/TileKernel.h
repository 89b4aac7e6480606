// The kernels an offloaded layer can be tiled into (stage lower/): one per compute call of stowage_accel.h, with the
// portable kernel its tiles call on an accelerator's cores, its parameter struct and the engine data type it needs.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace stowage {

/// The kernels a layer can be tiled into (names of the stowage_accel.h compute calls).
/// TFLite int8 NHWC (QConv2d .. QFullyConnected), float32 NCHW (Conv2dF32, GemmF32, MatMulF32), the ONNX
/// integer ops, NCHW with int8 / uint8 operands (QLinearConv, ConvInteger, QLinearMatMul, MatMulInteger), and the
/// element-wise Add of two same-shape tensors (AddF32 float, QAddS8 TFLite int8: cores mode only; rows of the
/// tensor's last dim), and 2-D pooling (AvgPoolF32 / MaxPoolF32 float NCHW, QAvgPoolS8 / QMaxPoolS8 TFLite int8
/// NHWC: cores mode only; no weights; tiles of output rows by channels, as a depthwise convolution's).
enum class TileKernel {
  QConv2d,
  QDepthwiseConv2d,
  QFullyConnected,
  Conv2dF32,
  GemmF32,
  MatMulF32,
  QLinearConv,
  ConvInteger,
  QLinearMatMul,
  MatMulInteger,
  AddF32,
  QAddS8,
  AvgPoolF32,
  MaxPoolF32,
  QAvgPoolS8,
  QMaxPoolS8,
  GlobalAvgPoolF32,
  GlobalMaxPoolF32
};
inline constexpr TileKernel kAllTileKernels[] = {TileKernel::QConv2d,     TileKernel::QDepthwiseConv2d, TileKernel::QFullyConnected,
                                                 TileKernel::Conv2dF32,   TileKernel::GemmF32,          TileKernel::MatMulF32,
                                                 TileKernel::QLinearConv, TileKernel::ConvInteger,      TileKernel::QLinearMatMul,
                                                 TileKernel::MatMulInteger, TileKernel::AddF32,       TileKernel::QAddS8,
                                                 TileKernel::AvgPoolF32,  TileKernel::MaxPoolF32,       TileKernel::QAvgPoolS8,
                                                 TileKernel::QMaxPoolS8,  TileKernel::GlobalAvgPoolF32, TileKernel::GlobalMaxPoolF32};

/// "qconv2d_s8", "qdepthwise_conv2d_s8", "qfully_connected_s8", "conv2d_f32", "gemm_f32", "matmul_f32",
/// "qlinear_conv", "conv_integer", "qlinear_matmul", "matmul_integer", "add_f32", "qadd_s8", "avgpool2d_f32",
/// "maxpool2d_f32", "qavgpool2d_s8", "qmaxpool2d_s8", "global_avgpool2d_f32", "global_maxpool2d_f32".
const char* tileKernelIntrinsic(TileKernel k);
/// The portable kernel its tiles call on an accelerator's cores: "stowage_" + the intrinsic ("stowage_qconv2d_s8", ...).
std::string tileKernelFunction(TileKernel k);
/// The parameter struct: "stowage_qconv_params", ...
const char* tileKernelParamsType(TileKernel k);
/// The engine data type the kernel needs (a board's `engine_dtypes`): "int8" (int8 and uint8 operands) or "float32".
const char* tileKernelDtype(TileKernel k);

/// The kernel whose compute intrinsic is `intrinsic` (tileKernelIntrinsic: an OffloadedLayer's `kernel`); nullopt for none.
std::optional<TileKernel> tileKernelOfIntrinsic(std::string_view intrinsic);

/// True for the element-wise kernels (AddF32, QAddS8).
bool isElementwiseTileKernel(TileKernel k);
/// True for the float pools: AvgPoolF32, MaxPoolF32 and the global ones (PoolCall parameters).
bool isFloatPool(TileKernel k);
/// True for GlobalAvgPoolF32 and GlobalMaxPoolF32.
bool isGlobalPool(TileKernel k);
/// True for the pooling kernels (AvgPoolF32, MaxPoolF32, QAvgPoolS8, QMaxPoolS8, and the global pools, tiled as a
/// pool whose window is the whole plane): no weights.
bool isPoolTileKernel(TileKernel k);
/// True for the kernels a target's cores run and a matrix engine does not (element-wise and pooling).
bool runsOnCoresOnly(TileKernel k);

}  // namespace stowage
