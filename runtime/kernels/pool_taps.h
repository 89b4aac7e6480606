/* The taps of a pooling window that fall inside a range, and an average pool's divisor: pad handling shared by the
 * float and the QLinear pools (pool.c, onnx_qlinear.c). Internal to runtime/kernels. */
#ifndef STOWAGE_POOL_TAPS_H
#define STOWAGE_POOL_TAPS_H

#include <stdint.h>

#include "stowage_kernels.h"

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

/* The divisor of an average pool's window that starts at (iy0, ix0) and has `taps_inside` taps inside the input:
 * those taps, or with count_include_pad the taps inside the padded input (ONNX's AveragePool). */
static inline int32_t pool_divisor(const stowage_pool2d_params* p, int32_t iy0, int32_t ix0, int32_t taps_inside) {
  int32_t cy_lo, cy_hi, cx_lo, cx_hi;
  if (!p->count_include_pad) return taps_inside;
  pool_taps(iy0, p->dil_h, -p->pad_top, p->h + p->pad_bottom, p->kh, &cy_lo, &cy_hi);
  pool_taps(ix0, p->dil_w, -p->pad_left, p->w + p->pad_right, p->kw, &cx_lo, &cx_hi);
  return (cy_hi - cy_lo) * (cx_hi - cx_lo);
}

#endif /* STOWAGE_POOL_TAPS_H */
