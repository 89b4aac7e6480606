/* float32 <-> int8 conversion as TFLite's QUANTIZE (float division, round half away from zero, clamp) and
 * DEQUANTIZE (double-precision scale * (q - zero_point), rounded to float). Declared in stowage_kernels_int8.h. */
#include <math.h>

#include "stowage_kernels.h"

void stowage_quantize_f32_s8(const float* x, int8_t* y, const stowage_quant_params* p) {
  int32_t i;
  for (i = 0; i < p->count; ++i) {
    const float r = roundf(x[i] / p->scale);
    int32_t q;
    /* Out-of-range (and NaN) values clamp; the float compare keeps the int conversion defined. */
    if (!(r > -1e9f)) q = -128;
    else if (r > 1e9f) q = 127;
    else q = (int32_t)r + p->zero_point;
    y[i] = (int8_t)(q < -128 ? -128 : (q > 127 ? 127 : q));
  }
}

void stowage_dequantize_s8_f32(const int8_t* x, float* y, const stowage_quant_params* p) {
  int32_t i;
  for (i = 0; i < p->count; ++i) y[i] = (float)((double)p->scale * (double)((int32_t)x[i] - p->zero_point));
}
