/* Int8 convolution, depthwise convolution and fully connected layers in NHWC with TFLite's reference
 * arithmetic: int32 accumulation of filter * (input + input_offset), bias, per-channel requantization,
 * output offset, clamp to the activation range. Declared in stowage_kernels_int8.h.
 * Fast paths give the same bytes: the input offset is folded into a per-channel correction
 * (bias + input_offset * sum of the filter) where the whole window is inside the input, border pixels add it per
 * tap over the clipped window, and the dot products run on the DSP extension or Helium where the core has them
 * (int8_dot.h). Shapes the fast paths do not cover (grouped convolution, dilated columns, depth multipliers) run the
 * reference loops, kept below. */
#include "stowage_kernels.h"

#include "int8_dot.h"
#include "int8_fixedpoint.h"

int32_t stowage_requantize_s32(int32_t acc, int32_t multiplier, int32_t shift) {
  return stowage_fx_requant(acc, multiplier, shift);
}

static int8_t finish(int32_t acc, const int32_t* bias, const int32_t* multiplier, const int32_t* shift, int32_t ch,
                     int32_t per_channel, int32_t output_offset, int32_t act_min, int32_t act_max) {
  const int32_t q = per_channel ? ch : 0;
  if (bias != NULL) acc = stowage_fx_wrap((int64_t)acc + bias[ch]);
  acc = stowage_fx_requant(acc, multiplier[q], shift[q]);
  acc = stowage_fx_wrap((int64_t)acc + output_offset);
  return (int8_t)stowage_fx_clamp(acc, act_min, act_max);
}

static void qconv2d_ref(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
                        const int32_t* shift, int8_t* y, const stowage_qconv_params* p) {
  const int32_t groups = p->c / p->kc;
  const int32_t per_group = p->m / groups;
  const int64_t pixel_stride = p->out_pixel_stride > 0 ? p->out_pixel_stride : p->m;
  int32_t b, oy, ox, oc, fy, fx, ic;
  for (b = 0; b < p->n; ++b)
    for (oy = 0; oy < p->oh; ++oy)
      for (ox = 0; ox < p->ow; ++ox)
        for (oc = 0; oc < p->m; ++oc) {
          const int32_t iy0 = oy * p->stride_h - p->pad_top;
          const int32_t ix0 = ox * p->stride_w - p->pad_left;
          const int32_t c0 = (oc / per_group) * p->kc;
          int32_t acc = 0;
          for (fy = 0; fy < p->kh; ++fy) {
            const int32_t iy = iy0 + p->dil_h * fy;
            if (iy < 0 || iy >= p->h) continue;
            for (fx = 0; fx < p->kw; ++fx) {
              const int32_t ix = ix0 + p->dil_w * fx;
              const int8_t* xp;
              const int8_t* wp;
              if (ix < 0 || ix >= p->w) continue;
              xp = x + (((int64_t)b * p->h + iy) * p->w + ix) * p->c + c0;
              wp = w + (((int64_t)oc * p->kh + fy) * p->kw + fx) * p->kc;
              for (ic = 0; ic < p->kc; ++ic) acc += (int32_t)wp[ic] * ((int32_t)xp[ic] + p->input_offset);
            }
          }
          y[(((int64_t)b * p->oh + oy) * p->ow + ox) * pixel_stride + oc] =
              finish(acc, bias, multiplier, shift, oc, p->per_channel, p->output_offset, p->act_min, p->act_max);
        }
}

static void qdepthwise_ref(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
                                  const int32_t* shift, int8_t* y, const stowage_qconv_params* p) {
  const int64_t pixel_stride = p->out_pixel_stride > 0 ? p->out_pixel_stride : p->m;
  int32_t b, oy, ox, ic, dm, fy, fx;
  for (b = 0; b < p->n; ++b)
    for (oy = 0; oy < p->oh; ++oy)
      for (ox = 0; ox < p->ow; ++ox)
        for (ic = 0; ic < p->c; ++ic)
          for (dm = 0; dm < p->depth_multiplier; ++dm) {
            const int32_t oc = dm + ic * p->depth_multiplier;
            const int32_t iy0 = oy * p->stride_h - p->pad_top;
            const int32_t ix0 = ox * p->stride_w - p->pad_left;
            int32_t acc = 0;
            for (fy = 0; fy < p->kh; ++fy) {
              const int32_t iy = iy0 + p->dil_h * fy;
              if (iy < 0 || iy >= p->h) continue;
              for (fx = 0; fx < p->kw; ++fx) {
                const int32_t ix = ix0 + p->dil_w * fx;
                if (ix < 0 || ix >= p->w) continue;
                acc += (int32_t)w[((int64_t)fy * p->kw + fx) * p->m + oc] *
                       ((int32_t)x[(((int64_t)b * p->h + iy) * p->w + ix) * p->c + ic] + p->input_offset);
              }
            }
            y[(((int64_t)b * p->oh + oy) * p->ow + ox) * pixel_stride + oc] =
                finish(acc, bias, multiplier, shift, oc, p->per_channel, p->output_offset, p->act_min, p->act_max);
          }
}

static void qfully_connected_ref(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
                                 const int32_t* shift, int8_t* y, const stowage_qfc_params* p) {
  int32_t b, o, d;
  for (b = 0; b < p->batches; ++b)
    for (o = 0; o < p->m; ++o) {
      const int8_t* xp = x + (int64_t)b * p->k;
      const int8_t* wp = w + (int64_t)o * p->k;
      int32_t acc = 0;
      for (d = 0; d < p->k; ++d) acc += (int32_t)wp[d] * ((int32_t)xp[d] + p->input_offset);
      y[(int64_t)b * p->m + o] = finish(acc, bias, multiplier, shift, o, p->per_channel, p->output_offset, p->act_min, p->act_max);
    }
}


/* ---- Fast paths ---- */

/* Requantizes an accumulator that holds the bias already, adds the output offset, clamps. */
static inline int8_t out_s8(int32_t acc, int32_t multiplier, int32_t shift, int32_t output_offset, int32_t lo, int32_t hi) {
  const int32_t v = (int32_t)((uint32_t)stowage_requant_fast(acc, multiplier, shift) + (uint32_t)output_offset);
  return (int8_t)(v < lo ? lo : (v > hi ? hi : v));
}

/* bias + input_offset * sum(w[0..n)), modulo 2^32 as the reference's int32 accumulation. */
static inline int32_t folded_bias(const int32_t* bias, int32_t ch, int32_t input_offset, const int8_t* w, int32_t n) {
  const uint32_t b = bias != NULL ? (uint32_t)bias[ch] : 0u;
  return (int32_t)(b + (uint32_t)input_offset * (uint32_t)stowage_sum_s8(w, n));
}

/* First output index >= 0 whose window starts inside the input, and one past the last whose window ends inside. */
static void interior_range(int32_t out, int32_t in, int32_t k, int32_t stride, int32_t dil, int32_t pad, int32_t* lo, int32_t* hi) {
  const int32_t span = dil * (k - 1);
  int32_t a = (pad + stride - 1) / stride;
  int32_t b = in - 1 - span + pad < 0 ? 0 : (in - 1 - span + pad) / stride + 1;
  if (a > out) a = out;
  if (b > out) b = out;
  if (b < a) b = a;
  *lo = a;
  *hi = b;
}

/* Convolution with groups == 1 and contiguous window rows (dil_w == 1): output channels two at a time (the filter
 * rows stay in place while every pixel passes), interior pixels two at a time with the folded correction, border
 * pixels one at a time over their clipped window with the offset added per tap. */
static void qconv2d_fast(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
                         const int32_t* shift, int8_t* y, const stowage_qconv_params* p) {
  const int32_t c = p->c, kh = p->kh, kw = p->kw, seg = kw * c, K = kh * seg;
  const int32_t pix_stride = p->out_pixel_stride > 0 ? p->out_pixel_stride : p->m;
  const int32_t row_bytes = p->w * c, krow_bytes = p->dil_h * row_bytes, step_bytes = p->stride_w * c;
  int32_t oy_lo, oy_hi, ox_lo, ox_hi, oc;
  interior_range(p->oh, p->h, kh, p->stride_h, p->dil_h, p->pad_top, &oy_lo, &oy_hi);
  interior_range(p->ow, p->w, kw, p->stride_w, 1, p->pad_left, &ox_lo, &ox_hi);
  for (oc = 0; oc < p->m; oc += 2) {
    const int32_t two = oc + 1 < p->m;
    const int32_t oc1 = two ? oc + 1 : oc;
    const int8_t* w0 = w + (int32_t)oc * K;
    const int8_t* w1 = w + (int32_t)oc1 * K;
    const int32_t q0 = p->per_channel ? oc : 0, q1 = p->per_channel ? oc1 : 0;
    const int32_t m0 = multiplier[q0], s0 = shift[q0], m1 = multiplier[q1], s1 = shift[q1];
    const int32_t b0 = bias != NULL ? bias[oc] : 0, b1 = bias != NULL ? bias[oc1] : 0;
    const int32_t corr0 = folded_bias(bias, oc, p->input_offset, w0, K);
    const int32_t corr1 = folded_bias(bias, oc1, p->input_offset, w1, K);
    int32_t b, oy, ox;
    for (b = 0; b < p->n; ++b)
      for (oy = 0; oy < p->oh; ++oy) {
        const int32_t iy0 = oy * p->stride_h - p->pad_top;
        const int32_t row_inside = oy >= oy_lo && oy < oy_hi;
        const int8_t* x_row = x + ((int32_t)b * p->h + iy0) * row_bytes;
        int8_t* y_row = y + (((int32_t)b * p->oh + oy) * p->ow) * pix_stride + oc;
        for (ox = 0; ox < p->ow;) {
          const int32_t ix0 = ox * p->stride_w - p->pad_left;
          int8_t* yp = y_row + ox * pix_stride;
          int32_t acc[4];
          if (row_inside && ox >= ox_lo && ox + 1 < ox_hi) {
            const int8_t* xa = x_row + ix0 * c;
            int32_t fy;
            acc[0] = acc[1] = corr0;
            acc[2] = acc[3] = corr1;
            for (fy = 0; fy < kh; ++fy) stowage_dot_2x2(xa + fy * krow_bytes, xa + fy * krow_bytes + step_bytes, w0 + fy * seg, w1 + fy * seg, seg, acc);
            yp[0] = out_s8(acc[0], m0, s0, p->output_offset, p->act_min, p->act_max);
            yp[pix_stride] = out_s8(acc[1], m0, s0, p->output_offset, p->act_min, p->act_max);
            if (two) {
              yp[1] = out_s8(acc[2], m1, s1, p->output_offset, p->act_min, p->act_max);
              yp[pix_stride + 1] = out_s8(acc[3], m1, s1, p->output_offset, p->act_min, p->act_max);
            }
            ox += 2;
            continue;
          }
          if (row_inside && ox >= ox_lo && ox < ox_hi) {
            const int8_t* xa = x_row + ix0 * c;
            int32_t fy;
            acc[0] = corr0;
            acc[1] = corr1;
            for (fy = 0; fy < kh; ++fy) stowage_dot_1x2(xa + fy * krow_bytes, w0 + fy * seg, w1 + fy * seg, seg, acc);
          } else {
            /* Border: only the taps inside the input, each with the input offset. */
            const int32_t fx0 = ix0 < 0 ? -ix0 : 0;
            const int32_t fx1 = kw < p->w - ix0 ? kw : p->w - ix0;
            int32_t fy;
            acc[0] = b0;
            acc[1] = b1;
            if (fx1 > fx0)
              for (fy = 0; fy < kh; ++fy) {
                const int32_t iy = iy0 + p->dil_h * fy;
                if (iy < 0 || iy >= p->h) continue;
                stowage_dot_1x2_offset(x + (((int32_t)b * p->h + iy) * p->w + ix0 + fx0) * c, w0 + fy * seg + fx0 * c,
                                       w1 + fy * seg + fx0 * c, (fx1 - fx0) * c, p->input_offset, acc);
              }
          }
          yp[0] = out_s8(acc[0], m0, s0, p->output_offset, p->act_min, p->act_max);
          if (two) yp[1] = out_s8(acc[1], m1, s1, p->output_offset, p->act_min, p->act_max);
          ++ox;
        }
      }
  }
}

/* Depthwise convolution with depth multiplier 1: channels four at a time (contiguous in input, filter and output),
 * every pixel of the block, interior pixels with the folded correction, border pixels with the offset per tap. */
static void qdepthwise_fast(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
                            const int32_t* shift, int8_t* y, const stowage_qconv_params* p) {
  const int32_t c = p->c, kh = p->kh, kw = p->kw, taps = kh * kw;
  const int32_t pix_stride = p->out_pixel_stride > 0 ? p->out_pixel_stride : p->m;
  const int32_t tap_dx = p->dil_w * c, tap_dy = p->dil_h * p->w * c;
  int32_t oy_lo, oy_hi, ox_lo, ox_hi, ch0;
  interior_range(p->oh, p->h, kh, p->stride_h, p->dil_h, p->pad_top, &oy_lo, &oy_hi);
  interior_range(p->ow, p->w, kw, p->stride_w, p->dil_w, p->pad_left, &ox_lo, &ox_hi);
  for (ch0 = 0; ch0 < c; ch0 += 4) {
    const int32_t nb = c - ch0 < 4 ? c - ch0 : 4;
    int32_t corr[4], bs[4], mul[4], sh[4], j, t, b, oy, ox;
    for (j = 0; j < 4; ++j) {
      const int32_t ch = ch0 + (j < nb ? j : 0);
      const int32_t q = p->per_channel ? ch : 0;
      uint32_t s = 0;
      for (t = 0; t < taps; ++t) s += (uint32_t)w[t * c + ch];
      bs[j] = bias != NULL ? bias[ch] : 0;
      corr[j] = (int32_t)((uint32_t)bs[j] + (uint32_t)p->input_offset * s);
      mul[j] = multiplier[q];
      sh[j] = shift[q];
    }
    for (b = 0; b < p->n; ++b)
      for (oy = 0; oy < p->oh; ++oy) {
        const int32_t iy0 = oy * p->stride_h - p->pad_top;
        const int32_t row_inside = oy >= oy_lo && oy < oy_hi;
        for (ox = 0; ox < p->ow; ++ox) {
          const int32_t ix0 = ox * p->stride_w - p->pad_left;
          int8_t* yp = y + (((int32_t)b * p->oh + oy) * p->ow + ox) * pix_stride + ch0;
          int32_t a0, a1, a2, a3;
          if (row_inside && ox >= ox_lo && ox < ox_hi) {
            const int8_t* xrow = x + (((int32_t)b * p->h + iy0) * p->w + ix0) * c + ch0;
            const int8_t* wp = w + ch0;
            int32_t fy, fx;
            a0 = corr[0];
            a1 = corr[1];
            a2 = corr[2];
            a3 = corr[3];
#if defined(STOWAGE_DOT_DSP)
            if (nb == 4) {
              for (fy = 0; fy < kh; ++fy, xrow += tap_dy) {
                const int8_t* xp = xrow;
                for (fx = 0; fx < kw; ++fx, xp += tap_dx, wp += c) {
                  const int32_t xv = stowage_load4(xp), wv = stowage_load4(wp);
                  const int32_t xe = __sxtb16(xv), we = __sxtb16(wv), xo = stowage_sxtb16_odd(xv), wo = stowage_sxtb16_odd(wv);
                  a0 = __smlabb(xe, we, a0);
                  a2 = __smlatt(xe, we, a2);
                  a1 = __smlabb(xo, wo, a1);
                  a3 = __smlatt(xo, wo, a3);
                }
              }
            } else
#endif
            {
              for (fy = 0; fy < kh; ++fy, xrow += tap_dy) {
                const int8_t* xp = xrow;
                for (fx = 0; fx < kw; ++fx, xp += tap_dx, wp += c) {
                  a0 += (int32_t)xp[0] * wp[0];
                  if (nb > 1) a1 += (int32_t)xp[1] * wp[1];
                  if (nb > 2) a2 += (int32_t)xp[2] * wp[2];
                  if (nb > 3) a3 += (int32_t)xp[3] * wp[3];
                }
              }
            }
          } else {
            int32_t fy, fx;
            a0 = bs[0];
            a1 = bs[1];
            a2 = bs[2];
            a3 = bs[3];
            for (fy = 0; fy < kh; ++fy) {
              const int32_t iy = iy0 + p->dil_h * fy;
              if (iy < 0 || iy >= p->h) continue;
              for (fx = 0; fx < kw; ++fx) {
                const int32_t ix = ix0 + p->dil_w * fx;
                const int8_t* xp;
                const int8_t* wp;
                if (ix < 0 || ix >= p->w) continue;
                xp = x + (((int32_t)b * p->h + iy) * p->w + ix) * c + ch0;
                wp = w + (fy * kw + fx) * c + ch0;
                a0 += ((int32_t)xp[0] + p->input_offset) * wp[0];
                if (nb > 1) a1 += ((int32_t)xp[1] + p->input_offset) * wp[1];
                if (nb > 2) a2 += ((int32_t)xp[2] + p->input_offset) * wp[2];
                if (nb > 3) a3 += ((int32_t)xp[3] + p->input_offset) * wp[3];
              }
            }
          }
          yp[0] = out_s8(a0, mul[0], sh[0], p->output_offset, p->act_min, p->act_max);
          if (nb > 1) yp[1] = out_s8(a1, mul[1], sh[1], p->output_offset, p->act_min, p->act_max);
          if (nb > 2) yp[2] = out_s8(a2, mul[2], sh[2], p->output_offset, p->act_min, p->act_max);
          if (nb > 3) yp[3] = out_s8(a3, mul[3], sh[3], p->output_offset, p->act_min, p->act_max);
        }
      }
  }
}

/* Fully connected: output rows two at a time, the input offset added as the input is read. */
static void qfully_connected_fast(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
                                  const int32_t* shift, int8_t* y, const stowage_qfc_params* p) {
  const int32_t k = p->k;
  int32_t o, b;
  for (o = 0; o < p->m; o += 2) {
    const int32_t two = o + 1 < p->m;
    const int32_t o1 = two ? o + 1 : o;
    const int32_t q0 = p->per_channel ? o : 0, q1 = p->per_channel ? o1 : 0;
    for (b = 0; b < p->batches; ++b) {
      int32_t acc[2];
      acc[0] = bias != NULL ? bias[o] : 0;
      acc[1] = bias != NULL ? bias[o1] : 0;
      stowage_dot_1x2_offset(x + b * k, w + o * k, w + o1 * k, k, p->input_offset, acc);
      y[b * p->m + o] = out_s8(acc[0], multiplier[q0], shift[q0], p->output_offset, p->act_min, p->act_max);
      if (two) y[b * p->m + o1] = out_s8(acc[1], multiplier[q1], shift[q1], p->output_offset, p->act_min, p->act_max);
    }
  }
}

/* The fast paths index with 32-bit arithmetic: tensors must stay below 2^31 elements. */
static int fits_32bit(int64_t elements) { return elements < ((int64_t)1 << 31); }

void stowage_qconv2d_s8(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
                        const int32_t* shift, int8_t* y, const stowage_qconv_params* p) {
  const int64_t in = (int64_t)p->n * p->h * p->w * p->c;
  const int64_t out = (int64_t)p->n * p->oh * p->ow * (p->out_pixel_stride > 0 ? p->out_pixel_stride : p->m);
  if (p->kc == p->c && p->dil_w == 1 && fits_32bit(in) && fits_32bit(out) && fits_32bit((int64_t)p->m * p->kh * p->kw * p->c))
    qconv2d_fast(x, w, bias, multiplier, shift, y, p);
  else
    qconv2d_ref(x, w, bias, multiplier, shift, y, p);
}

void stowage_qdepthwise_conv2d_s8(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
                                  const int32_t* shift, int8_t* y, const stowage_qconv_params* p) {
  const int64_t in = (int64_t)p->n * p->h * p->w * p->c;
  const int64_t out = (int64_t)p->n * p->oh * p->ow * (p->out_pixel_stride > 0 ? p->out_pixel_stride : p->m);
  if (p->depth_multiplier == 1 && p->m == p->c && fits_32bit(in) && fits_32bit(out))
    qdepthwise_fast(x, w, bias, multiplier, shift, y, p);
  else
    qdepthwise_ref(x, w, bias, multiplier, shift, y, p);
}

void stowage_qfully_connected_s8(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
                                 const int32_t* shift, int8_t* y, const stowage_qfc_params* p) {
  if (fits_32bit((int64_t)p->batches * p->k) && fits_32bit((int64_t)p->m * p->k) && fits_32bit((int64_t)p->batches * p->m))
    qfully_connected_fast(x, w, bias, multiplier, shift, y, p);
  else
    qfully_connected_ref(x, w, bias, multiplier, shift, y, p);
}
