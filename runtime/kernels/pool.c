/* Pooling kernels for generated code: MaxPool and AveragePool (pads, dilation, ceil-mode windows,
 * count_include_pad) and GlobalAveragePool / GlobalMaxPool, with ONNX semantics. */
#include <math.h>
#include <string.h>

#include "pool_taps.h"
#include "stowage_kernels.h"

void stowage_maxpool2d_f32(const float* x, float* y, const stowage_pool2d_params* p) {
  const int64_t planes = (int64_t)p->n * p->c;
  const int64_t x_plane = (int64_t)p->h * p->w, y_plane = (int64_t)p->oh * p->ow;
  int64_t pl;
  int32_t oy, ox, ky, kx;
  for (pl = 0; pl < planes; ++pl) {
    const float* xp = x + pl * x_plane;
    float* yp = y + pl * y_plane;
    for (oy = 0; oy < p->oh; ++oy) {
      const int32_t iy0 = oy * p->stride_h - p->pad_top;
      int32_t ky_lo, ky_hi;
      pool_taps(iy0, p->dil_h, 0, p->h, p->kh, &ky_lo, &ky_hi);
      for (ox = 0; ox < p->ow; ++ox) {
        const int32_t ix0 = ox * p->stride_w - p->pad_left;
        int32_t kx_lo, kx_hi;
        float mx = -INFINITY;
        pool_taps(ix0, p->dil_w, 0, p->w, p->kw, &kx_lo, &kx_hi);
        for (ky = ky_lo; ky < ky_hi; ++ky) {
          const float* xr = xp + (int64_t)(iy0 + ky * p->dil_h) * p->w;
          for (kx = kx_lo; kx < kx_hi; ++kx) {
            const float v = xr[ix0 + kx * p->dil_w];
            if (v > mx || v != v) mx = v;
          }
        }
        yp[(int64_t)oy * p->ow + ox] = mx;
      }
    }
  }
}

void stowage_avgpool2d_f32(const float* x, float* y, const stowage_pool2d_params* p) {
  const int64_t planes = (int64_t)p->n * p->c;
  const int64_t x_plane = (int64_t)p->h * p->w, y_plane = (int64_t)p->oh * p->ow;
  int64_t pl;
  int32_t oy, ox, ky, kx;
  for (pl = 0; pl < planes; ++pl) {
    const float* xp = x + pl * x_plane;
    float* yp = y + pl * y_plane;
    for (oy = 0; oy < p->oh; ++oy) {
      const int32_t iy0 = oy * p->stride_h - p->pad_top;
      int32_t ky_lo, ky_hi;
      pool_taps(iy0, p->dil_h, 0, p->h, p->kh, &ky_lo, &ky_hi);
      for (ox = 0; ox < p->ow; ++ox) {
        const int32_t ix0 = ox * p->stride_w - p->pad_left;
        int32_t kx_lo, kx_hi, count;
        float sum = 0.0f;
        pool_taps(ix0, p->dil_w, 0, p->w, p->kw, &kx_lo, &kx_hi);
        count = pool_divisor(p, iy0, ix0, (ky_hi - ky_lo) * (kx_hi - kx_lo));
        for (ky = ky_lo; ky < ky_hi; ++ky) {
          const float* xr = xp + (int64_t)(iy0 + ky * p->dil_h) * p->w;
          for (kx = kx_lo; kx < kx_hi; ++kx) sum += xr[ix0 + kx * p->dil_w];
        }
        yp[(int64_t)oy * p->ow + ox] = count > 0 ? sum / (float)count : 0.0f;
      }
    }
  }
}

/* Sums in double: a plane can hold thousands of elements. */
void stowage_global_avgpool_f32(const float* x, float* y, int64_t channels, int64_t spatial) {
  int64_t ch, i;
  for (ch = 0; ch < channels; ++ch) {
    const float* xp = x + ch * spatial;
    double sum = 0.0;
    for (i = 0; i < spatial; ++i) sum += (double)xp[i];
    y[ch] = spatial > 0 ? (float)(sum / (double)spatial) : 0.0f;
  }
}

void stowage_global_maxpool_f32(const float* x, float* y, int64_t channels, int64_t spatial) {
  int64_t ch, i;
  for (ch = 0; ch < channels; ++ch) {
    const float* xp = x + ch * spatial;
    float mx = -INFINITY;
    for (i = 0; i < spatial; ++i)
      if (xp[i] > mx || xp[i] != xp[i]) mx = xp[i];
    y[ch] = mx;
  }
}

void stowage_global_avgpool2d_f32(const float* x, float* y, const stowage_pool2d_params* p) {
  stowage_global_avgpool_f32(x, y, (int64_t)p->n * p->c, (int64_t)p->h * p->w);
}

void stowage_global_maxpool2d_f32(const float* x, float* y, const stowage_pool2d_params* p) {
  stowage_global_maxpool_f32(x, y, (int64_t)p->n * p->c, (int64_t)p->h * p->w);
}
