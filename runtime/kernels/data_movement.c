/* Data movement kernels for generated code: a strided gather covering Transpose, Slice (any step) and
 * Expand for any element type, and N-d Pad (constant, reflect, edge; negative pads crop). */
#include <string.h>

#include "stowage_kernels.h"

/* Copies n elements of size es from src (step s elements, may be 0 or negative) to dense dst. */
static void copy_run(const unsigned char* src, int64_t s, unsigned char* dst, int64_t n, size_t es) {
  int64_t i;
  if (s == 1) {
    memcpy(dst, src, (size_t)n * es);
    return;
  }
  switch (es) {
    case 1:
      for (i = 0; i < n; ++i) dst[i] = src[i * s];
      break;
    case 2:
      for (i = 0; i < n; ++i) memcpy(dst + i * 2, src + i * s * 2, 2);
      break;
    case 4:
      for (i = 0; i < n; ++i) memcpy(dst + i * 4, src + i * s * 4, 4);
      break;
    case 8:
      for (i = 0; i < n; ++i) memcpy(dst + i * 8, src + i * s * 8, 8);
      break;
    default:
      for (i = 0; i < n; ++i) memcpy(dst + (size_t)i * es, src + i * s * (int64_t)es, es);
      break;
  }
}

void stowage_gather_strided(const void* x, void* y, size_t elem_size, const stowage_strided_params* p) {
  const unsigned char* src = (const unsigned char*)x;
  unsigned char* dst = (unsigned char*)y;
  const int64_t es = (int64_t)elem_size;
  int32_t shape[STOWAGE_MAX_RANK], idx[STOWAGE_MAX_RANK];
  int64_t st[STOWAGE_MAX_RANK];
  int32_t r = 0, d;
  int64_t outer = 1, t, n, off = p->in_offset;

  /* Drop unit dims; merge a dim into the next inner one when the input steps through both as one run. */
  for (d = 0; d < p->rank; ++d) {
    if (p->out_shape[d] == 0) return;
    if (p->out_shape[d] == 1) continue;
    if (r > 0 && st[r - 1] == p->in_stride[d] * p->out_shape[d]) {
      shape[r - 1] *= p->out_shape[d];
      st[r - 1] = p->in_stride[d];
      continue;
    }
    shape[r] = p->out_shape[d];
    st[r] = p->in_stride[d];
    ++r;
  }
  if (r == 0) { /* rank 0 or all unit dims: one element */
    memcpy(dst, src + off * es, elem_size);
    return;
  }
  n = shape[r - 1];
  for (d = 0; d < r - 1; ++d) {
    idx[d] = 0;
    outer *= shape[d];
  }
  for (t = 0; t < outer; ++t) {
    /* The run's lowest address is off (positive step) or off + (n-1)*step (negative step); both in range. */
    copy_run(src + off * es, st[r - 1], dst + t * n * es, n, elem_size);
    for (d = r - 2; d >= 0; --d) {
      off += st[d];
      if (++idx[d] < shape[d]) break;
      off -= st[d] * shape[d];
      idx[d] = 0;
    }
  }
}

/* Source index along one dim for output index o, or -1 when o falls in a constant pad. */
static int32_t pad_src(int32_t o, int32_t begin, int32_t in, stowage_pad_mode mode) {
  int32_t i = o - begin;
  if (i >= 0 && i < in) return i;
  if (mode == STOWAGE_PAD_CONSTANT || in <= 0) return -1;
  if (mode == STOWAGE_PAD_EDGE) return i < 0 ? 0 : in - 1;
  /* reflect (numpy "reflect", edge not repeated), folding repeatedly for pads wider than the input */
  if (in == 1) return 0;
  {
    const int32_t period = 2 * (in - 1);
    i %= period;
    if (i < 0) i += period;
    return i < in ? i : period - i;
  }
}

void stowage_pad_f32(const float* x, float* y, const stowage_pad_params* p) {
  int32_t idx[STOWAGE_MAX_RANK], src[STOWAGE_MAX_RANK];
  int64_t in_stride[STOWAGE_MAX_RANK];
  const int32_t r = p->rank;
  int32_t d;
  int64_t outer = 1, t, s;
  int32_t ow, iw, pb, mid_lo, mid_hi, o;

  if (r == 0) {
    y[0] = x[0];
    return;
  }
  for (d = 0; d < r; ++d)
    if (p->out_shape[d] <= 0) return;
  s = 1;
  for (d = r - 1; d >= 0; --d) {
    in_stride[d] = s;
    s *= p->in_shape[d];
  }
  for (d = 0; d < r - 1; ++d) {
    idx[d] = 0;
    outer *= p->out_shape[d];
  }
  ow = p->out_shape[r - 1];
  iw = p->in_shape[r - 1];
  pb = p->pad_begin[r - 1];
  /* output columns [mid_lo, mid_hi) copy input columns directly */
  mid_lo = pb < 0 ? 0 : pb;
  mid_hi = pb + iw < ow ? pb + iw : ow;
  if (mid_hi < mid_lo) mid_hi = mid_lo;

  for (t = 0; t < outer; ++t) {
    float* yr = y + t * ow;
    int constant_row = 0;
    int64_t row_off = 0;
    for (d = 0; d < r - 1; ++d) {
      src[d] = pad_src(idx[d], p->pad_begin[d], p->in_shape[d], p->mode);
      if (src[d] < 0) constant_row = 1;
      else row_off += src[d] * in_stride[d];
    }
    if (constant_row || (iw <= 0 && p->mode == STOWAGE_PAD_CONSTANT)) {
      for (o = 0; o < ow; ++o) yr[o] = p->value;
    } else {
      const float* xr = x + row_off;
      for (o = 0; o < mid_lo; ++o) {
        const int32_t i = pad_src(o, pb, iw, p->mode);
        yr[o] = i < 0 ? p->value : xr[i];
      }
      if (mid_hi > mid_lo) memcpy(yr + mid_lo, xr + (mid_lo - pb), (size_t)(mid_hi - mid_lo) * sizeof(float));
      for (o = mid_hi; o < ow; ++o) {
        const int32_t i = pad_src(o, pb, iw, p->mode);
        yr[o] = i < 0 ? p->value : xr[i];
      }
    }
    for (d = r - 2; d >= 0; --d) {
      if (++idx[d] < p->out_shape[d]) break;
      idx[d] = 0;
    }
  }
}
