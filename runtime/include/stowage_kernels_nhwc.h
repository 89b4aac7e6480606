/* Float32 NHWC kernels for models imported from .tflite (TFLite's float reference loop order: accumulate
 * over kernel rows, columns, then channels; add bias; clamp to the fused activation range). Included from
 * stowage_kernels.h; implemented in runtime/kernels/nhwc_f32.c. C99, no malloc. */
#ifndef STOWAGE_KERNELS_NHWC_H
#define STOWAGE_KERNELS_NHWC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Geometry as stowage_qconv_params: x [n, h, w, c], y [n, oh, ow, m]; conv filter [m, kh, kw, kc]
 * (groups = c / kc), depthwise filter [1, kh, kw, m]; bias [m] or NULL; results clamped to
 * [act_min, act_max] (-INFINITY/INFINITY for none). */
typedef struct {
  int32_t n, h, w, c;
  int32_t oh, ow, m;
  int32_t kh, kw, kc;
  int32_t stride_h, stride_w, dil_h, dil_w, pad_top, pad_left;
  int32_t depth_multiplier;
  float act_min, act_max;
  int32_t out_pixel_stride; /* elements between output pixels; 0 (or m) = packed, as stowage_qconv_params */
} stowage_nhwc_conv_params;

void stowage_conv2d_nhwc_f32(const float* x, const float* w, const float* bias, float* y, const stowage_nhwc_conv_params* p);
void stowage_depthwise_conv2d_nhwc_f32(const float* x, const float* w, const float* bias, float* y,
                                       const stowage_nhwc_conv_params* p);

/* The same with int8 weights and float activations (TFLite dynamic-range / "hybrid" models): filter element i of
 * output channel oc is w_scale[oc] * (float)w[i] (symmetric quantization, one scale per output channel: a
 * per-tensor scale is repeated m times), computed in the kernel; otherwise exactly the float32 kernels above,
 * so the result is bit-identical to calling them on those dequantized weights. */
void stowage_conv2d_nhwc_w8_f32(const float* x, const int8_t* w, const float* w_scale, const float* bias, float* y,
                                const stowage_nhwc_conv_params* p);
void stowage_depthwise_conv2d_nhwc_w8_f32(const float* x, const int8_t* w, const float* w_scale, const float* bias, float* y,
                                          const stowage_nhwc_conv_params* p);

/* Pooling, NHWC; windows clipped to the input (average over the taps inside). */
typedef struct {
  int32_t n, h, w, c, oh, ow, kh, kw;
  int32_t stride_h, stride_w, pad_top, pad_left;
  float act_min, act_max;
} stowage_nhwc_pool_params;

void stowage_avgpool2d_nhwc_f32(const float* x, float* y, const stowage_nhwc_pool_params* p);
void stowage_maxpool2d_nhwc_f32(const float* x, float* y, const stowage_nhwc_pool_params* p);

#ifdef __cplusplus
}
#endif

#endif /* STOWAGE_KERNELS_NHWC_H */
