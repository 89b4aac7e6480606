/* Int8 average and max pooling in NHWC with TFLite's reference arithmetic (windows clipped to the input,
 * average rounded half away from zero by integer division). Declared in stowage_kernels_int8.h. */
#include "stowage_kernels.h"

#include "int8_fixedpoint.h"

static void pool(const int8_t* x, int8_t* y, const stowage_qpool_params* p, int is_max) {
  int32_t b, oy, ox, ch, fy, fx;
  for (b = 0; b < p->n; ++b)
    for (oy = 0; oy < p->oh; ++oy)
      for (ox = 0; ox < p->ow; ++ox) {
        const int32_t iy0 = oy * p->stride_h - p->pad_top;
        const int32_t ix0 = ox * p->stride_w - p->pad_left;
        const int32_t fy0 = iy0 < 0 ? -iy0 : 0;
        const int32_t fx0 = ix0 < 0 ? -ix0 : 0;
        const int32_t fy1 = p->kh < p->h - iy0 ? p->kh : p->h - iy0;
        const int32_t fx1 = p->kw < p->w - ix0 ? p->kw : p->w - ix0;
        for (ch = 0; ch < p->c; ++ch) {
          int32_t acc = is_max ? -128 : 0;
          int32_t count = 0;
          for (fy = fy0; fy < fy1; ++fy)
            for (fx = fx0; fx < fx1; ++fx) {
              const int32_t v = x[(((int64_t)b * p->h + iy0 + fy) * p->w + ix0 + fx) * p->c + ch];
              if (is_max) acc = v > acc ? v : acc;
              else acc += v;
              ++count;
            }
          if (!is_max) {
            if (count == 0) acc = 0;
            else acc = acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count;
          }
          y[(((int64_t)b * p->oh + oy) * p->ow + ox) * p->c + ch] = (int8_t)stowage_fx_clamp(acc, p->act_min, p->act_max);
        }
      }
}

void stowage_qavgpool2d_s8(const int8_t* x, int8_t* y, const stowage_qpool_params* p) { pool(x, y, p, 0); }

void stowage_qmaxpool2d_s8(const int8_t* x, int8_t* y, const stowage_qpool_params* p) { pool(x, y, p, 1); }

void stowage_qmean_hw_s8(const int8_t* x, int8_t* y, const stowage_qmean_params* p) {
  const int32_t count = p->h * p->w;
  int32_t b, ch, i;
  for (b = 0; b < p->n; ++b)
    for (ch = 0; ch < p->c; ++ch) {
      int32_t acc = 0;
      for (i = 0; i < count; ++i) acc += (int32_t)x[((int64_t)b * count + i) * p->c + ch] - p->input_zero_point;
      acc = stowage_fx_requant(acc, p->multiplier, p->shift);
      if (count > 0) acc = acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count;
      acc += p->output_zero_point;
      y[(int64_t)b * p->c + ch] = (int8_t)stowage_fx_clamp(acc, -128, 127);
    }
}
