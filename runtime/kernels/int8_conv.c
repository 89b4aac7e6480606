/* Int8 convolution, depthwise convolution and fully connected layers in NHWC with TFLite's reference
 * arithmetic: int32 accumulation of filter * (input + input_offset), bias, per-channel requantization,
 * output offset, clamp to the activation range. Declared in stowage_kernels_int8.h. */
#include "stowage_kernels.h"

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

void stowage_qconv2d_s8(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
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

void stowage_qdepthwise_conv2d_s8(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
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

void stowage_qfully_connected_s8(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
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
