/* The int8 convolution, depthwise convolution and fully connected kernels of int8_conv.c a second time, with ONNX
 * Runtime's requantization (requant_f32 = 1: round_half_even((float)acc * m) + zero point, m's float32 bits in the
 * multiplier array; the QDQ layers of pass/QdqNhwc): the same fast paths (DSP, Helium) with a float32 epilogue, so that
 * the TFLite kernels keep their code and a firmware without QDQ layers links none of this. Declared in
 * stowage_kernels_int8.h (stowage_*_rqf32). */
#define STOWAGE_RQF32_VARIANT 1
/* This copy's own names for int8_conv.c's functions (its stowage_qconv2d_s8 etc. are the float32-epilogue ones). */
#define stowage_requantize_s32 rqf32_requantize_s32
#define stowage_qconv2d_s8_is_fast rqf32_qconv2d_s8_is_fast
#define stowage_qconv2d_s8_paths rqf32_qconv2d_s8_paths
#define stowage_qdepthwise_conv2d_s8_is_fast rqf32_qdepthwise_conv2d_s8_is_fast
#define stowage_qdepthwise_conv2d_s8_paths rqf32_qdepthwise_conv2d_s8_paths
#define stowage_qfully_connected_s8_is_fast rqf32_qfully_connected_s8_is_fast
#define stowage_qfully_connected_s8_stack_bytes rqf32_qfully_connected_s8_stack_bytes
#define stowage_qconv2d_s8_stack_bytes rqf32_qconv2d_s8_stack_bytes
#define stowage_qdepthwise_conv2d_s8_stack_bytes rqf32_qdepthwise_conv2d_s8_stack_bytes
#define stowage_qconv2d_s8 rqf32_qconv2d_s8
#define stowage_qdepthwise_conv2d_s8 rqf32_qdepthwise_conv2d_s8
#define stowage_qfully_connected_s8 rqf32_qfully_connected_s8
#include "int8_conv.c"
#undef stowage_qconv2d_s8
#undef stowage_qdepthwise_conv2d_s8
#undef stowage_qfully_connected_s8

void stowage_qconv2d_s8_rqf32(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
                              const int32_t* shift, int8_t* y, const stowage_qconv_params* p) {
  rqf32_qconv2d_s8(x, w, bias, multiplier, shift, y, p);
}

void stowage_qdepthwise_conv2d_s8_rqf32(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
                                        const int32_t* shift, int8_t* y, const stowage_qconv_params* p) {
  rqf32_qdepthwise_conv2d_s8(x, w, bias, multiplier, shift, y, p);
}

void stowage_qfully_connected_s8_rqf32(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
                                       const int32_t* shift, int8_t* y, const stowage_qfc_params* p) {
  rqf32_qfully_connected_s8(x, w, bias, multiplier, shift, y, p);
}
