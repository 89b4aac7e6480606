/* Reduction kernels for generated code: ONNX ReduceMean/Sum/Max/Min/Prod/SumSquare/L1/L2 over any subset of
 * dims of a dense tensor; sums and products accumulate in double. */
#include <math.h>
#include <string.h>

#include "stowage_kernels.h"

/* Dims after merging neighbours with the same reduce flag; kept and reduced dims listed separately. */
typedef struct {
  int32_t n_keep, n_red;
  int64_t keep_shape[STOWAGE_MAX_RANK], keep_stride[STOWAGE_MAX_RANK];
  int64_t red_shape[STOWAGE_MAX_RANK], red_stride[STOWAGE_MAX_RANK];
} reduce_plan;

static double reduce_line(stowage_reduce_op op, const float* x, const reduce_plan* rp, int64_t red_count) {
  int64_t idx[STOWAGE_MAX_RANK];
  const int32_t nr = rp->n_red;
  const int64_t inner_n = nr > 0 ? rp->red_shape[nr - 1] : 1;
  const int64_t inner_s = nr > 0 ? rp->red_stride[nr - 1] : 0;
  const int64_t outer = inner_n > 0 ? red_count / inner_n : 0;
  double acc;
  int64_t t, i, off = 0;
  int32_t d;
  switch (op) {
    case STOWAGE_REDUCE_MAX: acc = -INFINITY; break;
    case STOWAGE_REDUCE_MIN: acc = INFINITY; break;
    case STOWAGE_REDUCE_PROD: acc = 1.0; break;
    default: acc = 0.0; break;
  }
  for (d = 0; d < nr - 1; ++d) idx[d] = 0;
  for (t = 0; t < outer; ++t) {
    const float* xp = x + off;
    switch (op) {
      case STOWAGE_REDUCE_MAX:
        for (i = 0; i < inner_n; ++i) {
          const double v = xp[i * inner_s];
          if (v > acc || v != v) acc = v;
        }
        break;
      case STOWAGE_REDUCE_MIN:
        for (i = 0; i < inner_n; ++i) {
          const double v = xp[i * inner_s];
          if (v < acc || v != v) acc = v;
        }
        break;
      case STOWAGE_REDUCE_PROD:
        for (i = 0; i < inner_n; ++i) acc *= (double)xp[i * inner_s];
        break;
      case STOWAGE_REDUCE_SUM_SQUARE:
      case STOWAGE_REDUCE_L2:
        for (i = 0; i < inner_n; ++i) {
          const double v = xp[i * inner_s];
          acc += v * v;
        }
        break;
      case STOWAGE_REDUCE_L1:
        for (i = 0; i < inner_n; ++i) acc += fabs((double)xp[i * inner_s]);
        break;
      default: /* mean, sum */
        for (i = 0; i < inner_n; ++i) acc += (double)xp[i * inner_s];
        break;
    }
    for (d = nr - 2; d >= 0; --d) {
      off += rp->red_stride[d];
      if (++idx[d] < rp->red_shape[d]) break;
      off -= rp->red_stride[d] * rp->red_shape[d];
      idx[d] = 0;
    }
  }
  if (op == STOWAGE_REDUCE_MEAN) acc /= (double)red_count;
  if (op == STOWAGE_REDUCE_L2) acc = sqrt(acc);
  return acc;
}

void stowage_reduce_f32(stowage_reduce_op op, const float* x, float* y, const stowage_reduce_params* p) {
  reduce_plan rp;
  int64_t stride[STOWAGE_MAX_RANK], idx[STOWAGE_MAX_RANK];
  int64_t s = 1, red_count = 1, keep_count = 1, t, off = 0;
  int32_t d, prev = -1; /* reduce flag of the last listed dim, -1 before the first */

  for (d = p->rank - 1; d >= 0; --d) {
    stride[d] = s;
    s *= p->in_shape[d];
  }
  rp.n_keep = 0;
  rp.n_red = 0;
  /* Dims of size 1 are skipped; a dim merges into the previous listed one when both share a flag and are
   * adjacent in memory (skipped unit dims do not break adjacency). */
  for (d = 0; d < p->rank; ++d) {
    const int32_t red = p->reduce[d] != 0;
    if (p->in_shape[d] == 1) continue;
    if (red) {
      red_count *= p->in_shape[d];
      if (prev == 1) {
        rp.red_shape[rp.n_red - 1] *= p->in_shape[d];
        rp.red_stride[rp.n_red - 1] = stride[d];
      } else {
        rp.red_shape[rp.n_red] = p->in_shape[d];
        rp.red_stride[rp.n_red] = stride[d];
        ++rp.n_red;
      }
    } else {
      keep_count *= p->in_shape[d];
      if (prev == 0) {
        rp.keep_shape[rp.n_keep - 1] *= p->in_shape[d];
        rp.keep_stride[rp.n_keep - 1] = stride[d];
      } else {
        rp.keep_shape[rp.n_keep] = p->in_shape[d];
        rp.keep_stride[rp.n_keep] = stride[d];
        ++rp.n_keep;
      }
    }
    prev = red;
  }
  for (d = 0; d < rp.n_keep; ++d) idx[d] = 0;
  for (t = 0; t < keep_count; ++t) {
    y[t] = (float)reduce_line(op, x + off, &rp, red_count);
    for (d = rp.n_keep - 1; d >= 0; --d) {
      off += rp.keep_stride[d];
      if (++idx[d] < rp.keep_shape[d]) break;
      off -= rp.keep_stride[d] * rp.keep_shape[d];
      idx[d] = 0;
    }
  }
}
