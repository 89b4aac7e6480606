// The portable kernels a board may replace and the matching of a `[[kernels]]` table to a call (KernelOverride.h).
#include "stowage/target/KernelOverride.h"

#include <algorithm>

namespace stowage {

bool KernelOverride::appliesTo(const Target& target) const {
  if (targets.empty()) return target.kind == TargetKind::Cpu;
  return std::find(targets.begin(), targets.end(), target.name) != targets.end();
}

bool KernelOverride::appliesToDtype(std::string_view d) const { return !dtype || *dtype == d; }

const std::vector<std::string>& kernelDtypeNames() {
  static const std::vector<std::string> v = {"int8", "uint8", "float32", "int32", "int64", "bool"};
  return v;
}

std::string_view kernelDtypeName(DType t) {
  switch (t) {
    case DType::Float32: return "float32";
    case DType::Int8: return "int8";
    case DType::UInt8: return "uint8";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::Bool: return "bool";
  }
  return "?";
}

const std::vector<PortableKernel>& portableKernels() {
  // The first tensor argument's types: fixed by the kernel's name for most, int8 or uint8 for the ONNX integer
  // kernels (stowage_kernels_qlinear.h), any type for the data-movement kernels that copy elements of a given size.
  const std::vector<std::string> f32 = {"float32"}, s8 = {"int8"}, q8 = {"int8", "uint8"};
  static const std::vector<PortableKernel> v = {
      // stowage_kernels.h
      {"stowage_conv2d_f32", f32}, {"stowage_conv_transpose2d_f32", f32}, {"stowage_gemm_f32", f32},
      {"stowage_matmul_f32", f32}, {"stowage_binary_f32", f32}, {"stowage_add_f32", f32}, {"stowage_unary_f32", f32},
      {"stowage_softmax_f32", f32}, {"stowage_batchnorm_f32", f32}, {"stowage_lrn_f32", f32},
      {"stowage_maxpool2d_f32", f32}, {"stowage_avgpool2d_f32", f32}, {"stowage_global_avgpool2d_f32", f32},
      {"stowage_global_maxpool2d_f32", f32}, {"stowage_global_avgpool_f32", f32}, {"stowage_global_maxpool_f32", f32},
      {"stowage_gather_strided", kernelDtypeNames()}, {"stowage_concat_part", kernelDtypeNames()},
      {"stowage_pad_f32", f32}, {"stowage_reduce_f32", f32},
      // stowage_kernels_int8.h
      {"stowage_qconv2d_s8", s8}, {"stowage_qdepthwise_conv2d_s8", s8}, {"stowage_qfully_connected_s8", s8},
      {"stowage_qavgpool2d_s8", s8}, {"stowage_qmaxpool2d_s8", s8}, {"stowage_qadd_s8", s8}, {"stowage_qmul_s8", s8},
      {"stowage_qsoftmax_s8", s8}, {"stowage_quantize_f32_s8", f32}, {"stowage_dequantize_s8_f32", s8},
      {"stowage_requantize_s8", s8}, {"stowage_pad_s8", s8}, {"stowage_qmean_hw_s8", s8}, {"stowage_qlogistic_s8", s8},
      {"stowage_qtanh_s8", s8}, {"stowage_qhardswish_s8", s8}, {"stowage_qrelu_s8", s8}, {"stowage_qsub_s8", s8},
      {"stowage_qmaximum_s8", s8}, {"stowage_qminimum_s8", s8},
      // stowage_kernels_nhwc.h
      {"stowage_conv2d_nhwc_f32", f32}, {"stowage_depthwise_conv2d_nhwc_f32", f32}, {"stowage_avgpool2d_nhwc_f32", f32},
      {"stowage_maxpool2d_nhwc_f32", f32},
      // stowage_kernels_qlinear.h
      {"stowage_quantize_linear_f32", f32}, {"stowage_dequantize_linear_f32", q8}, {"stowage_conv_integer", q8},
      {"stowage_qlinear_conv", q8}, {"stowage_matmul_integer", q8}, {"stowage_qlinear_matmul", q8},
  };
  return v;
}

const PortableKernel* findPortableKernel(std::string_view name) {
  for (const PortableKernel& k : portableKernels())
    if (k.name == name) return &k;
  return nullptr;
}

}  // namespace stowage
