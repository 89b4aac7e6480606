/* Float32 NHWC convolution, depthwise convolution and pooling with TFLite's reference loop order, for float
 * .tflite models. Declared in stowage_kernels_nhwc.h. */
#include "stowage_kernels.h"

static float clampf(float v, float lo, float hi) { return v < lo ? lo : (v > hi ? hi : v); }

/* The convolution loops, shared by the float32-weight kernels and the int8-weight ("_w8") ones: WEIGHT(i, oc)
 * is filter element i of output channel oc as a float. The _w8 kernels compute it as w_scale[oc] * (float)w[i],
 * the product the TFLite importer once evaluated at compile time to expand the weights to float32, so both
 * kernels see the same float weights and give bit-identical results. */
#define NHWC_CONV_LOOPS(WEIGHT)                                                                            \
  do {                                                                                                     \
    const int32_t groups = p->c / p->kc;                                                                   \
    const int32_t per_group = p->m / groups;                                                               \
    const int64_t pixel_stride = p->out_pixel_stride > 0 ? p->out_pixel_stride : p->m;                     \
    int32_t b, oy, ox, oc, fy, fx, ic;                                                                     \
    for (b = 0; b < p->n; ++b)                                                                             \
      for (oy = 0; oy < p->oh; ++oy)                                                                       \
        for (ox = 0; ox < p->ow; ++ox)                                                                     \
          for (oc = 0; oc < p->m; ++oc) {                                                                  \
            const int32_t iy0 = oy * p->stride_h - p->pad_top;                                             \
            const int32_t ix0 = ox * p->stride_w - p->pad_left;                                            \
            const int32_t c0 = (oc / per_group) * p->kc;                                                   \
            float acc = 0.0f;                                                                              \
            for (fy = 0; fy < p->kh; ++fy) {                                                               \
              const int32_t iy = iy0 + p->dil_h * fy;                                                      \
              if (iy < 0 || iy >= p->h) continue;                                                          \
              for (fx = 0; fx < p->kw; ++fx) {                                                             \
                const int32_t ix = ix0 + p->dil_w * fx;                                                    \
                const float* xp;                                                                           \
                int64_t wi;                                                                                \
                if (ix < 0 || ix >= p->w) continue;                                                        \
                xp = x + (((int64_t)b * p->h + iy) * p->w + ix) * p->c + c0;                               \
                wi = (((int64_t)oc * p->kh + fy) * p->kw + fx) * p->kc;                                    \
                for (ic = 0; ic < p->kc; ++ic) acc += xp[ic] * WEIGHT(wi + ic, oc);                        \
              }                                                                                            \
            }                                                                                              \
            if (bias != NULL) acc += bias[oc];                                                             \
            y[(((int64_t)b * p->oh + oy) * p->ow + ox) * pixel_stride + oc] = clampf(acc, p->act_min, p->act_max); \
          }                                                                                                \
  } while (0)

#define NHWC_DEPTHWISE_LOOPS(WEIGHT)                                                                       \
  do {                                                                                                     \
    const int64_t pixel_stride = p->out_pixel_stride > 0 ? p->out_pixel_stride : p->m;                     \
    int32_t b, oy, ox, ic, dm, fy, fx;                                                                     \
    for (b = 0; b < p->n; ++b)                                                                             \
      for (oy = 0; oy < p->oh; ++oy)                                                                       \
        for (ox = 0; ox < p->ow; ++ox)                                                                     \
          for (ic = 0; ic < p->c; ++ic)                                                                    \
            for (dm = 0; dm < p->depth_multiplier; ++dm) {                                                 \
              const int32_t oc = dm + ic * p->depth_multiplier;                                            \
              const int32_t iy0 = oy * p->stride_h - p->pad_top;                                           \
              const int32_t ix0 = ox * p->stride_w - p->pad_left;                                          \
              float acc = 0.0f;                                                                            \
              for (fy = 0; fy < p->kh; ++fy) {                                                             \
                const int32_t iy = iy0 + p->dil_h * fy;                                                    \
                if (iy < 0 || iy >= p->h) continue;                                                        \
                for (fx = 0; fx < p->kw; ++fx) {                                                           \
                  const int32_t ix = ix0 + p->dil_w * fx;                                                  \
                  if (ix < 0 || ix >= p->w) continue;                                                      \
                  acc += x[(((int64_t)b * p->h + iy) * p->w + ix) * p->c + ic] *                           \
                         WEIGHT(((int64_t)fy * p->kw + fx) * p->m + oc, oc);                               \
                }                                                                                          \
              }                                                                                            \
              if (bias != NULL) acc += bias[oc];                                                           \
              y[(((int64_t)b * p->oh + oy) * p->ow + ox) * pixel_stride + oc] = clampf(acc, p->act_min, p->act_max); \
            }                                                                                              \
  } while (0)

#define NHWC_W_F32(i, oc) w[i]
#define NHWC_W_S8(i, oc) (w_scale[oc] * (float)w[i])

void stowage_conv2d_nhwc_f32(const float* x, const float* w, const float* bias, float* y, const stowage_nhwc_conv_params* p) {
  NHWC_CONV_LOOPS(NHWC_W_F32);
}

void stowage_depthwise_conv2d_nhwc_f32(const float* x, const float* w, const float* bias, float* y,
                                       const stowage_nhwc_conv_params* p) {
  NHWC_DEPTHWISE_LOOPS(NHWC_W_F32);
}

void stowage_conv2d_nhwc_w8_f32(const float* x, const int8_t* w, const float* w_scale, const float* bias, float* y,
                                const stowage_nhwc_conv_params* p) {
  NHWC_CONV_LOOPS(NHWC_W_S8);
}

void stowage_depthwise_conv2d_nhwc_w8_f32(const float* x, const int8_t* w, const float* w_scale, const float* bias, float* y,
                                          const stowage_nhwc_conv_params* p) {
  NHWC_DEPTHWISE_LOOPS(NHWC_W_S8);
}

static void pool(const float* x, float* y, const stowage_nhwc_pool_params* p, int is_max) {
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
          float acc = is_max ? -3.402823466e+38f : 0.0f;
          int32_t count = 0;
          for (fy = fy0; fy < fy1; ++fy)
            for (fx = fx0; fx < fx1; ++fx) {
              const float v = x[(((int64_t)b * p->h + iy0 + fy) * p->w + ix0 + fx) * p->c + ch];
              if (is_max) acc = v > acc ? v : acc;
              else acc += v;
              ++count;
            }
          if (!is_max) acc = count > 0 ? acc / (float)count : 0.0f;
          y[(((int64_t)b * p->oh + oy) * p->ow + ox) * p->c + ch] = clampf(acc, p->act_min, p->act_max);
        }
      }
}

void stowage_avgpool2d_nhwc_f32(const float* x, float* y, const stowage_nhwc_pool_params* p) { pool(x, y, p, 0); }

void stowage_maxpool2d_nhwc_f32(const float* x, float* y, const stowage_nhwc_pool_params* p) { pool(x, y, p, 1); }
