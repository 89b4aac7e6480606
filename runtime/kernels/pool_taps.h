/* The taps of a pooling window that fall inside a range (pad handling shared by the float and the QLinear
 * average pools: pool.c, onnx_qlinear.c). Internal to runtime/kernels. */
#ifndef STOWAGE_POOL_TAPS_H
#define STOWAGE_POOL_TAPS_H

#include <stdint.h>

/* Taps k in [0, k_count) with lo_lim <= start + k * d < hi_lim, as the half-open range [*lo, *hi). */
static inline void pool_taps(int32_t start, int32_t d, int32_t lo_lim, int32_t hi_lim, int32_t k_count, int32_t* lo,
                      int32_t* hi) {
  int32_t a = 0, b = k_count;
  const int32_t rel = start - lo_lim; /* position relative to the lower limit */
  const int32_t span = hi_lim - lo_lim;
  if (rel < 0) a = (-rel + d - 1) / d;
  if (rel >= span) {
    b = 0;
  } else {
    const int32_t cnt = (span - rel + d - 1) / d;
    if (cnt < b) b = cnt;
  }
  if (a > b) a = b;
  *lo = a;
  *hi = b;
}

#endif /* STOWAGE_POOL_TAPS_H */
