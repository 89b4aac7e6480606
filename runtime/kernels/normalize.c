/* Normalisation kernels for generated code: Softmax/LogSoftmax over one axis, inference BatchNormalization
 * and LRN across channels, with ONNX semantics. */
#include <math.h>
#include <string.h>

#include "stowage_kernels.h"

/* Each (outer, inner) line along len is handled on its own: max, then the exp sum (in double), then the
 * output. Softmax writes exp values to y before scaling and log-softmax reads x only, so y may alias x. */
void stowage_softmax_f32(const float* x, float* y, int64_t outer, int64_t len, int64_t inner, int32_t log) {
  int64_t o, j, i;
  if (len <= 0) return;
  for (o = 0; o < outer; ++o) {
    const float* xo = x + o * len * inner;
    float* yo = y + o * len * inner;
    for (j = 0; j < inner; ++j) {
      const float* xl = xo + j;
      float* yl = yo + j;
      float mx = xl[0];
      double sum = 0.0;
      for (i = 1; i < len; ++i)
        if (xl[i * inner] > mx) mx = xl[i * inner];
      if (log) {
        float lse;
        for (i = 0; i < len; ++i) sum += (double)expf(xl[i * inner] - mx);
        lse = logf((float)sum);
        for (i = 0; i < len; ++i) yl[i * inner] = (xl[i * inner] - mx) - lse;
      } else {
        float inv;
        for (i = 0; i < len; ++i) {
          const float e = expf(xl[i * inner] - mx);
          yl[i * inner] = e;
          sum += (double)e;
        }
        inv = (float)(1.0 / sum);
        for (i = 0; i < len; ++i) yl[i * inner] *= inv;
      }
    }
  }
}

void stowage_batchnorm_f32(const float* x, const float* scale, const float* bias, const float* mean,
                           const float* var, float* y, int64_t n, int64_t c, int64_t spatial, float epsilon) {
  int64_t b, ch, i;
  for (ch = 0; ch < c; ++ch) {
    const float s = scale[ch] / sqrtf(var[ch] + epsilon);
    const float mu = mean[ch], bi = bias[ch];
    for (b = 0; b < n; ++b) {
      const float* xp = x + (b * c + ch) * spatial;
      float* yp = y + (b * c + ch) * spatial;
      for (i = 0; i < spatial; ++i) yp[i] = (xp[i] - mu) * s + bi;
    }
  }
}

/* square_sum over channels [c - floor((size-1)/2), c + ceil((size-1)/2)] clipped to [0, C);
 * y = x / (bias + alpha / size * square_sum)^beta. y must not alias x. */
void stowage_lrn_f32(const float* x, float* y, int64_t n, int64_t c, int64_t spatial, int32_t size, float alpha,
                     float beta, float bias) {
  const int64_t before = (size - 1) / 2, after = size - 1 - (size - 1) / 2;
  const float a_over_n = alpha / (float)size;
  int64_t b, ch, k, i;
  for (b = 0; b < n; ++b) {
    const float* xb = x + b * c * spatial;
    float* yb = y + b * c * spatial;
    for (ch = 0; ch < c; ++ch) {
      const int64_t lo = ch - before < 0 ? 0 : ch - before;
      const int64_t hi = ch + after > c - 1 ? c - 1 : ch + after;
      float* yp = yb + ch * spatial;
      for (i = 0; i < spatial; ++i) yp[i] = 0.0f;
      for (k = lo; k <= hi; ++k) {
        const float* xk = xb + k * spatial;
        for (i = 0; i < spatial; ++i) yp[i] += xk[i] * xk[i];
      }
      {
        const float* xp = xb + ch * spatial;
        for (i = 0; i < spatial; ++i) yp[i] = xp[i] / powf(bias + a_over_n * yp[i], beta);
      }
    }
  }
}
