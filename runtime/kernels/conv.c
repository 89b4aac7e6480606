/* Convolution kernels (ONNX Conv and ConvTranspose, 2-D and 1-D) for generated code: direct convolution
 * over register tiles of 4 output channels x 8 output columns, with a bounds-check-free interior path. */
#include <string.h>

#include "clamp_f32.h"
#include "stowage_kernels.h"

#define CONV_TW 8 /* output columns per tile */
#define CONV_MB 4 /* output channels per tile */

/* Geometry shared by the tile kernels for one (image, group). */
typedef struct {
  const float* xg;   /* first input channel of the group in this image */
  int64_t x_chan;    /* h * w */
  int64_t w_chan;    /* kh * kw: weight step between input channels */
  int64_t w_out;     /* cpg * kh * kw: weight step between output channels */
  int64_t y_chan;    /* oh * ow */
  int32_t cpg;       /* input channels per group */
  int32_t h, w, kw, dh, dw, sw;
} conv_geom;

/* First k in [0, k_count) with 0 <= start + k * d, and one past the last with start + k * d < limit. */
static void tap_range(int32_t start, int32_t d, int32_t limit, int32_t k_count, int32_t* lo, int32_t* hi) {
  int32_t a = 0, b = k_count;
  if (start < 0) a = (-start + d - 1) / d;
  if (start >= limit) {
    b = 0;
  } else {
    int32_t last = (limit - start + d - 1) / d; /* count of k with start + k*d < limit */
    if (last < b) b = last;
  }
  if (a > b) a = b;
  *lo = a;
  *hi = b;
}

/* 4 output channels x 8 columns, all taps in [ky_lo, ky_hi) x [0, kw) inside the row (no checks).
 * x0 points at input row iy0 (may be a virtual row), column ix0 of the group's first channel. */
static void tile_interior4(const conv_geom* g, const float* wb, const float* x0, int32_t ky_lo, int32_t ky_hi,
                           const float bias[CONV_MB], float* yp) {
  float a0[CONV_TW], a1[CONV_TW], a2[CONV_TW], a3[CONV_TW];
  const int64_t wo = g->w_out;
  const int32_t kw = g->kw, dw = g->dw, sw = g->sw, w = g->w, dh = g->dh;
  int32_t ci, ky, kx, j;
  for (j = 0; j < CONV_TW; ++j) {
    a0[j] = bias[0];
    a1[j] = bias[1];
    a2[j] = bias[2];
    a3[j] = bias[3];
  }
  for (ci = 0; ci < g->cpg; ++ci) {
    const float* xc = x0 + ci * g->x_chan;
    const float* wc = wb + ci * g->w_chan;
    for (ky = ky_lo; ky < ky_hi; ++ky) {
      const float* xr = xc + (int64_t)ky * dh * w;
      const float* wr = wc + (int64_t)ky * kw;
      for (kx = 0; kx < kw; ++kx) {
        const float* xp = xr + (int64_t)kx * dw;
        const float w0 = wr[kx], w1 = wr[kx + wo], w2 = wr[kx + 2 * wo], w3 = wr[kx + 3 * wo];
        if (sw == 1) {
          for (j = 0; j < CONV_TW; ++j) {
            const float v = xp[j];
            a0[j] += w0 * v;
            a1[j] += w1 * v;
            a2[j] += w2 * v;
            a3[j] += w3 * v;
          }
        } else {
          for (j = 0; j < CONV_TW; ++j) {
            const float v = xp[j * sw];
            a0[j] += w0 * v;
            a1[j] += w1 * v;
            a2[j] += w2 * v;
            a3[j] += w3 * v;
          }
        }
      }
    }
  }
  for (j = 0; j < CONV_TW; ++j) {
    yp[j] = a0[j];
    yp[j + g->y_chan] = a1[j];
    yp[j + 2 * g->y_chan] = a2[j];
    yp[j + 3 * g->y_chan] = a3[j];
  }
}

/* One output channel x 8 columns, interior (no checks). */
static void tile_interior1(const conv_geom* g, const float* wb, const float* x0, int32_t ky_lo, int32_t ky_hi,
                           float bias, float* yp) {
  float a0[CONV_TW];
  const int32_t kw = g->kw, dw = g->dw, sw = g->sw, w = g->w, dh = g->dh;
  int32_t ci, ky, kx, j;
  for (j = 0; j < CONV_TW; ++j) a0[j] = bias;
  for (ci = 0; ci < g->cpg; ++ci) {
    const float* xc = x0 + ci * g->x_chan;
    const float* wc = wb + ci * g->w_chan;
    for (ky = ky_lo; ky < ky_hi; ++ky) {
      const float* xr = xc + (int64_t)ky * dh * w;
      const float* wr = wc + (int64_t)ky * kw;
      for (kx = 0; kx < kw; ++kx) {
        const float* xp = xr + (int64_t)kx * dw;
        const float w0 = wr[kx];
        if (sw == 1) {
          for (j = 0; j < CONV_TW; ++j) a0[j] += w0 * xp[j];
        } else {
          for (j = 0; j < CONV_TW; ++j) a0[j] += w0 * xp[j * sw];
        }
      }
    }
  }
  for (j = 0; j < CONV_TW; ++j) yp[j] = a0[j];
}

/* General tile: nb (1..4) output channels x tw (1..8) columns starting at input column ix0; checks each tap. */
static void tile_edge(const conv_geom* g, const float* wb, const float* x0, int32_t ky_lo, int32_t ky_hi,
                      int32_t ix0, int32_t nb, int32_t tw, const float bias[CONV_MB], float* yp) {
  float acc[CONV_MB][CONV_TW];
  const int32_t kw = g->kw, dw = g->dw, sw = g->sw, w = g->w, dh = g->dh;
  int32_t b, ci, ky, kx, j;
  for (b = 0; b < nb; ++b)
    for (j = 0; j < tw; ++j) acc[b][j] = bias[b];
  for (ci = 0; ci < g->cpg; ++ci) {
    const float* xc = x0 + ci * g->x_chan;
    const float* wc = wb + ci * g->w_chan;
    for (ky = ky_lo; ky < ky_hi; ++ky) {
      const float* xr = xc + (int64_t)ky * dh * w;
      const float* wr = wc + (int64_t)ky * kw;
      for (kx = 0; kx < kw; ++kx) {
        /* columns j with 0 <= ix0 + kx*dw + j*sw < w */
        int32_t j_lo, j_hi;
        const int32_t start = ix0 + kx * dw;
        tap_range(start, sw, w, tw, &j_lo, &j_hi);
        for (b = 0; b < nb; ++b) {
          const float wv = wr[kx + b * g->w_out];
          for (j = j_lo; j < j_hi; ++j) acc[b][j] += wv * xr[start + j * sw];
        }
      }
    }
  }
  for (b = 0; b < nb; ++b)
    for (j = 0; j < tw; ++j) yp[j + b * g->y_chan] = acc[b][j];
}

void stowage_conv2d_f32(const float* x, const float* w, const float* bias, float* y,
                        const stowage_conv2d_params* p) {
  stowage_conv2d_params q = *p;
  int32_t n, grp, mo0, oy;
  int32_t mpg, cpg;
  conv_geom g;
  int32_t ox_int_lo, ox_int_hi; /* output columns whose taps are all inside the input row */

  /* A 1x1, stride-1, unpadded convolution is a GEMM over the flattened plane: treat it as one long row. */
  if (q.kh == 1 && q.kw == 1 && q.stride_h == 1 && q.stride_w == 1 && q.pad_top == 0 && q.pad_left == 0 &&
      q.oh == q.h && q.ow == q.w) {
    q.w = q.h * q.w;
    q.ow = q.w;
    q.h = 1;
    q.oh = 1;
  }
  mpg = q.m / q.group;
  cpg = q.c / q.group;
  g.x_chan = (int64_t)q.h * q.w;
  g.w_chan = (int64_t)q.kh * q.kw;
  g.w_out = (int64_t)cpg * q.kh * q.kw;
  g.y_chan = (int64_t)q.oh * q.ow;
  g.cpg = cpg;
  g.h = q.h;
  g.w = q.w;
  g.kw = q.kw;
  g.dh = q.dil_h;
  g.dw = q.dil_w;
  g.sw = q.stride_w;

  /* ox is interior when ox*sw - pad_left >= 0 and ox*sw - pad_left + (kw-1)*dw < w. */
  {
    const int32_t span = (q.kw - 1) * q.dil_w;
    ox_int_lo = (q.pad_left + q.stride_w - 1) / q.stride_w;
    if (q.w - span + q.pad_left <= 0)
      ox_int_hi = 0;
    else
      ox_int_hi = (q.w - span + q.pad_left - 1) / q.stride_w + 1;
    if (ox_int_hi > q.ow) ox_int_hi = q.ow;
    if (ox_int_lo > ox_int_hi) ox_int_lo = ox_int_hi;
  }

  for (n = 0; n < q.n; ++n) {
    for (grp = 0; grp < q.group; ++grp) {
      g.xg = x + ((int64_t)n * q.c + (int64_t)grp * cpg) * g.x_chan;
      for (mo0 = 0; mo0 < mpg; mo0 += CONV_MB) {
        const int32_t m_abs = grp * mpg + mo0;
        const int32_t nb = (mpg - mo0) < CONV_MB ? (mpg - mo0) : CONV_MB;
        const float* wb = w + (int64_t)m_abs * g.w_out;
        float* yb = y + ((int64_t)n * q.m + m_abs) * g.y_chan;
        float bv[CONV_MB];
        int32_t b;
        for (b = 0; b < CONV_MB; ++b) bv[b] = (bias != NULL && b < nb) ? bias[m_abs + b] : 0.0f;
        for (oy = 0; oy < q.oh; ++oy) {
          const int32_t iy0 = oy * q.stride_h - q.pad_top;
          int32_t ky_lo, ky_hi, ox;
          const float* xrow; /* virtual pointer to input row iy0, column 0 (only dereferenced in range) */
          float* yrow = yb + (int64_t)oy * q.ow;
          tap_range(iy0, q.dil_h, q.h, q.kh, &ky_lo, &ky_hi);
          if (ky_lo >= ky_hi) {
            for (b = 0; b < nb; ++b) {
              int32_t j;
              for (j = 0; j < q.ow; ++j) yrow[j + b * g.y_chan] = bv[b];
            }
            continue;
          }
          /* Offset by the first valid row so the pointer stays inside the array. */
          xrow = g.xg + (int64_t)(iy0 + ky_lo * q.dil_h) * q.w;
          ox = 0;
          while (ox < q.ow) {
            const int32_t ix0 = ox * q.stride_w - q.pad_left;
            if (ox >= ox_int_lo && ox + CONV_TW <= ox_int_hi) {
              if (nb == CONV_MB) {
                tile_interior4(&g, wb + (int64_t)ky_lo * q.kw, xrow + ix0, 0, ky_hi - ky_lo, bv, yrow + ox);
              } else {
                for (b = 0; b < nb; ++b)
                  tile_interior1(&g, wb + b * g.w_out + (int64_t)ky_lo * q.kw, xrow + ix0, 0, ky_hi - ky_lo, bv[b],
                                 yrow + ox + b * g.y_chan);
              }
              ox += CONV_TW;
            } else {
              /* Edge tile: up to the interior start, or 8 columns. */
              int32_t tw = q.ow - ox;
              if (tw > CONV_TW) tw = CONV_TW;
              if (ox < ox_int_lo && ox_int_lo - ox < tw) tw = ox_int_lo - ox;
              tile_edge(&g, wb + (int64_t)ky_lo * q.kw, xrow, 0, ky_hi - ky_lo, ix0, nb, tw, bv, yrow + ox);
              ox += tw;
            }
          }
        }
        /* A fused Relu / Clip, on the block's nb output planes while they are in cache. */
        if (q.clamp) stowage_clamp_f32(yb, (int64_t)nb * g.y_chan, q.clamp_min, q.clamp_max);
      }
    }
  }
}

void stowage_conv_transpose2d_f32(const float* x, const float* w, const float* bias, float* y,
                                  const stowage_conv2d_params* p) {
  const int32_t mpg = p->m / p->group, cpg = p->c / p->group;
  const int64_t x_chan = (int64_t)p->h * p->w, y_chan = (int64_t)p->oh * p->ow;
  const int64_t w_chan = (int64_t)p->kh * p->kw;
  int32_t n, grp, ci, mo, ky, kx, iy, ix;
  for (n = 0; n < p->n; ++n) {
    float* yn = y + (int64_t)n * p->m * y_chan;
    for (mo = 0; mo < p->m; ++mo) {
      const float bv = bias != NULL ? bias[mo] : 0.0f;
      int64_t i;
      for (i = 0; i < y_chan; ++i) yn[mo * y_chan + i] = bv;
    }
    for (grp = 0; grp < p->group; ++grp) {
      for (ci = 0; ci < cpg; ++ci) {
        const int32_t c_abs = grp * cpg + ci;
        const float* xc = x + ((int64_t)n * p->c + c_abs) * x_chan;
        const float* wc = w + (int64_t)c_abs * mpg * w_chan; /* w[c][m/group][kh][kw] */
        for (mo = 0; mo < mpg; ++mo) {
          float* yc = yn + (int64_t)(grp * mpg + mo) * y_chan;
          const float* wm = wc + (int64_t)mo * w_chan;
          for (ky = 0; ky < p->kh; ++ky) {
            /* oy = iy*sh - pad_top + ky*dh must lie in [0, oh) */
            int32_t iy_lo, iy_hi;
            tap_range(ky * p->dil_h - p->pad_top, p->stride_h, p->oh, p->h, &iy_lo, &iy_hi);
            for (kx = 0; kx < p->kw; ++kx) {
              const float wv = wm[ky * p->kw + kx];
              const int32_t ox_base = kx * p->dil_w - p->pad_left;
              int32_t ix_lo, ix_hi;
              tap_range(ox_base, p->stride_w, p->ow, p->w, &ix_lo, &ix_hi);
              if (ix_lo >= ix_hi) continue;
              for (iy = iy_lo; iy < iy_hi; ++iy) {
                const int32_t oy = iy * p->stride_h - p->pad_top + ky * p->dil_h;
                const float* xr = xc + (int64_t)iy * p->w;
                float* yr = yc + (int64_t)oy * p->ow;
                if (p->stride_w == 1) {
                  for (ix = ix_lo; ix < ix_hi; ++ix) yr[ix + ox_base] += wv * xr[ix];
                } else {
                  const int32_t sw = p->stride_w;
                  for (ix = ix_lo; ix < ix_hi; ++ix) yr[ix * sw + ox_base] += wv * xr[ix];
                }
              }
            }
          }
        }
      }
    }
  }
}
