// The kernels an offloaded layer can be tiled into (see TileKernel.h).
#include "stowage/lower/TileKernel.h"


namespace stowage {

const char* tileKernelIntrinsic(TileKernel k) {
  switch (k) {
    case TileKernel::QConv2d: return "qconv2d_s8";
    case TileKernel::QDepthwiseConv2d: return "qdepthwise_conv2d_s8";
    case TileKernel::QFullyConnected: return "qfully_connected_s8";
    case TileKernel::Conv2dF32: return "conv2d_f32";
    case TileKernel::GemmF32: return "gemm_f32";
    case TileKernel::MatMulF32: return "matmul_f32";
    case TileKernel::QLinearConv: return "qlinear_conv";
    case TileKernel::ConvInteger: return "conv_integer";
    case TileKernel::QLinearMatMul: return "qlinear_matmul";
    case TileKernel::MatMulInteger: return "matmul_integer";
    case TileKernel::AddF32: return "add_f32";
    case TileKernel::QAddS8: return "qadd_s8";
    case TileKernel::AvgPoolF32: return "avgpool2d_f32";
    case TileKernel::MaxPoolF32: return "maxpool2d_f32";
    case TileKernel::QAvgPoolS8: return "qavgpool2d_s8";
    case TileKernel::QMaxPoolS8: return "qmaxpool2d_s8";
    case TileKernel::GlobalAvgPoolF32: return "global_avgpool2d_f32";
    case TileKernel::GlobalMaxPoolF32: return "global_maxpool2d_f32";
  }
  return "";
}

std::string tileKernelFunction(TileKernel k) { return std::string("stowage_") + tileKernelIntrinsic(k); }

bool isGlobalPool(TileKernel k) { return k == TileKernel::GlobalAvgPoolF32 || k == TileKernel::GlobalMaxPoolF32; }

bool isFloatPool(TileKernel k) { return k == TileKernel::AvgPoolF32 || k == TileKernel::MaxPoolF32 || isGlobalPool(k); }

const char* tileKernelParamsType(TileKernel k) {
  switch (k) {
    case TileKernel::QConv2d:
    case TileKernel::QDepthwiseConv2d: return "stowage_qconv_params";
    case TileKernel::QFullyConnected: return "stowage_qfc_params";
    case TileKernel::Conv2dF32: return "stowage_conv2d_params";
    case TileKernel::GemmF32: return "stowage_gemm_params";
    case TileKernel::MatMulF32: return "stowage_matmul_params";
    case TileKernel::QLinearConv:
    case TileKernel::ConvInteger: return "stowage_qlinear_conv_params";
    case TileKernel::QLinearMatMul:
    case TileKernel::MatMulInteger: return "stowage_qlinear_matmul_params";
    case TileKernel::AddF32: return "stowage_broadcast_params";
    case TileKernel::QAddS8: return "stowage_qbinary_params";
    case TileKernel::AvgPoolF32:
    case TileKernel::MaxPoolF32:
    case TileKernel::GlobalAvgPoolF32:
    case TileKernel::GlobalMaxPoolF32: return "stowage_pool2d_params";
    case TileKernel::QAvgPoolS8:
    case TileKernel::QMaxPoolS8: return "stowage_qpool_params";
  }
  return "";
}

const char* tileKernelDtype(TileKernel k) {
  return k == TileKernel::Conv2dF32 || k == TileKernel::GemmF32 || k == TileKernel::MatMulF32 || k == TileKernel::AddF32 || isFloatPool(k)
             ? "float32"
             : "int8";
}

bool isElementwiseTileKernel(TileKernel k) { return k == TileKernel::AddF32 || k == TileKernel::QAddS8; }

bool isPoolTileKernel(TileKernel k) {
  return isFloatPool(k) || k == TileKernel::QAvgPoolS8 || k == TileKernel::QMaxPoolS8;
}

bool runsOnCoresOnly(TileKernel k) { return isElementwiseTileKernel(k) || isPoolTileKernel(k); }

std::optional<TileKernel> tileKernelOfIntrinsic(std::string_view intrinsic) {
  for (TileKernel k : kAllTileKernels)
    if (intrinsic == tileKernelIntrinsic(k)) return k;
  return std::nullopt;
}

}  // namespace stowage
