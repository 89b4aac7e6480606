/* reordered_int8.c: the example kernels of reordered_int8.h. TFLite's reference arithmetic, as the portable
 * kernels: int32 sums, bias, requantization by stowage_requantize_s32 (the runtime's, declared in
 * stowage_kernels_int8.h), output offset, clamp to the activation range. Strict C99. */
#include "reordered_int8.h"

#include <stddef.h>

#define BLOCK 8

/* a + b with two's complement wrap-around, as the portable kernels add the bias and the output offset. */
static int32_t add_wrap(int32_t a, int32_t b) { return (int32_t)(uint32_t)((uint32_t)a + (uint32_t)b); }

/* The requantized, offset and clamped output of accumulator `acc` of output channel `ch`. */
static int8_t finish(int32_t acc, const int32_t* bias, const int32_t* multiplier, const int32_t* shift, int32_t ch,
                     int32_t per_channel, int32_t output_offset, int32_t act_min, int32_t act_max) {
  const int32_t q = per_channel ? ch : 0;
  if (bias != NULL) acc = add_wrap(acc, bias[ch]);
  acc = stowage_requantize_s32(acc, multiplier[q], shift[q]);
  acc = add_wrap(acc, output_offset);
  if (acc < act_min) acc = act_min;
  if (acc > act_max) acc = act_max;
  return (int8_t)acc;
}

/* The taps [*lo, *hi) of a filter of `k` taps `dil` apart starting at input index `i0` that fall inside [0, n). */
static void taps_inside(int32_t i0, int32_t k, int32_t dil, int32_t n, int32_t* lo, int32_t* hi) {
  *lo = 0;
  while (*lo < k && i0 + dil * *lo < 0) ++*lo;
  *hi = k;
  while (*hi > *lo && i0 + dil * (*hi - 1) >= n) --*hi;
}

void board_qconv2d_s8(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
                      const int32_t* shift, int8_t* y, const stowage_qconv_params* p) {
  const int32_t groups = p->c / p->kc;
  const int32_t per_group = p->m / groups;
  const ptrdiff_t pixel_stride = p->out_pixel_stride > 0 ? p->out_pixel_stride : p->m;
  int32_t b, oy, ox, oc0, fy, fx, j, ic;
  for (b = 0; b < p->n; ++b)
    for (oy = 0; oy < p->oh; ++oy)
      for (ox = 0; ox < p->ow; ++ox) {
        const int32_t iy0 = oy * p->stride_h - p->pad_top;
        const int32_t ix0 = ox * p->stride_w - p->pad_left;
        int8_t* yp = y + (((ptrdiff_t)b * p->oh + oy) * p->ow + ox) * pixel_stride;
        int32_t fy_lo, fy_hi, fx_lo, fx_hi;
        taps_inside(iy0, p->kh, p->dil_h, p->h, &fy_lo, &fy_hi);
        taps_inside(ix0, p->kw, p->dil_w, p->w, &fx_lo, &fx_hi);
        for (oc0 = 0; oc0 < p->m; oc0 += BLOCK) {
          const int32_t count = p->m - oc0 < BLOCK ? p->m - oc0 : BLOCK;
          int32_t acc[BLOCK];
          for (j = 0; j < count; ++j) acc[j] = 0;
          for (fy = fy_lo; fy < fy_hi; ++fy)
            for (fx = fx_lo; fx < fx_hi; ++fx) {
              const int8_t* xp = x + (((ptrdiff_t)b * p->h + iy0 + p->dil_h * fy) * p->w + ix0 + p->dil_w * fx) * p->c;
              for (j = 0; j < count; ++j) {
                const int32_t oc = oc0 + j;
                const int8_t* xq = xp + (oc / per_group) * p->kc;
                const int8_t* wp = w + (((ptrdiff_t)oc * p->kh + fy) * p->kw + fx) * p->kc;
                int32_t sum = 0;
                for (ic = 0; ic < p->kc; ++ic) sum += (int32_t)wp[ic] * ((int32_t)xq[ic] + p->input_offset);
                acc[j] += sum;
              }
            }
          for (j = 0; j < count; ++j)
            yp[oc0 + j] = finish(acc[j], bias, multiplier, shift, oc0 + j, p->per_channel, p->output_offset, p->act_min, p->act_max);
        }
      }
}

void board_qdepthwise_conv2d_s8(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
                                const int32_t* shift, int8_t* y, const stowage_qconv_params* p) {
  const ptrdiff_t pixel_stride = p->out_pixel_stride > 0 ? p->out_pixel_stride : p->m;
  int32_t b, oy, ox, oc, fy, fx;
  for (b = 0; b < p->n; ++b)
    for (oy = 0; oy < p->oh; ++oy) {
      const int32_t iy0 = oy * p->stride_h - p->pad_top;
      int32_t fy_lo, fy_hi;
      taps_inside(iy0, p->kh, p->dil_h, p->h, &fy_lo, &fy_hi);
      for (ox = 0; ox < p->ow; ++ox) {
        const int32_t ix0 = ox * p->stride_w - p->pad_left;
        int8_t* yp = y + (((ptrdiff_t)b * p->oh + oy) * p->ow + ox) * pixel_stride;
        int32_t fx_lo, fx_hi;
        taps_inside(ix0, p->kw, p->dil_w, p->w, &fx_lo, &fx_hi);
        for (oc = 0; oc < p->m; ++oc) {
          const int32_t ic = oc / p->depth_multiplier;
          int32_t acc = 0;
          for (fy = fy_lo; fy < fy_hi; ++fy) {
            const int8_t* xrow = x + (((ptrdiff_t)b * p->h + iy0 + p->dil_h * fy) * p->w + ix0) * p->c + ic;
            const int8_t* wrow = w + (ptrdiff_t)fy * p->kw * p->m + oc;
            for (fx = fx_lo; fx < fx_hi; ++fx)
              acc += (int32_t)wrow[(ptrdiff_t)fx * p->m] * ((int32_t)xrow[(ptrdiff_t)p->dil_w * fx * p->c] + p->input_offset);
          }
          yp[oc] = finish(acc, bias, multiplier, shift, oc, p->per_channel, p->output_offset, p->act_min, p->act_max);
        }
      }
    }
}

void board_qfully_connected_s8(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
                               const int32_t* shift, int8_t* y, const stowage_qfc_params* p) {
  int32_t b, o, d;
  for (b = 0; b < p->batches; ++b)
    for (o = 0; o < p->m; ++o) {
      const int8_t* xp = x + (ptrdiff_t)b * p->k;
      const int8_t* wp = w + (ptrdiff_t)o * p->k;
      int32_t dot = 0, wsum = 0;
      for (d = 0; d < p->k; ++d) {
        dot += (int32_t)wp[d] * (int32_t)xp[d];
        wsum += wp[d];
      }
      y[(ptrdiff_t)b * p->m + o] = finish(dot + p->input_offset * wsum, bias, multiplier, shift, o, p->per_channel,
                                          p->output_offset, p->act_min, p->act_max);
    }
}
