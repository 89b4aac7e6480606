/* Private helper of the float kernels: the clamp of a Relu or Clip the compiler fused into a conv, Gemm or
 * binary op, with the Clip kernel's test so NaN passes through and a Relu (bounds 0, +inf) keeps -0. */
#ifndef STOWAGE_CLAMP_F32_H
#define STOWAGE_CLAMP_F32_H

#include <stdint.h>

/* y[i] = y[i] < lo ? lo : (y[i] > hi ? hi : y[i]) for the `count` floats at y. */
static inline void stowage_clamp_f32(float* y, int64_t count, float lo, float hi) {
  int64_t i;
  for (i = 0; i < count; ++i) {
    const float v = y[i];
    y[i] = v < lo ? lo : (v > hi ? hi : v);
  }
}

#endif
