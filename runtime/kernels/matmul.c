/* Matrix product kernels for generated code: ONNX Gemm (transposes, alpha/beta, broadcast C) and batched
 * MatMul with broadcast batch dims, both on one register-tiled core (4 rows x 8 columns per tile). */
#include <string.h>

#include "clamp_f32.h"
#include "stowage_kernels.h"

#define MM_MR 4 /* rows per tile */
#define MM_NR 8 /* columns per tile */

/* Operand views: element (i, kk) of A is a[i * as_i + kk * as_k]; element (kk, j) of B is b[kk * bs_k + j * bs_j]. */
typedef struct {
  const float* a;
  const float* b;
  int64_t as_i, as_k, bs_k, bs_j;
  int32_t m, n, k;
} mm_view;

/* Full 4 x 8 tile with B rows contiguous in j. */
static void mm_tile_fast(const mm_view* v, int32_t i0, int32_t j0, float* y, int64_t ldy) {
  float a0[MM_NR], a1[MM_NR], a2[MM_NR], a3[MM_NR];
  const float* ap = v->a + (int64_t)i0 * v->as_i;
  const float* bp = v->b + j0;
  const int64_t as_i = v->as_i, as_k = v->as_k, bs_k = v->bs_k;
  int32_t kk, j;
  for (j = 0; j < MM_NR; ++j) a0[j] = a1[j] = a2[j] = a3[j] = 0.0f;
  for (kk = 0; kk < v->k; ++kk) {
    const float* br = bp + (int64_t)kk * bs_k;
    const float* ac = ap + (int64_t)kk * as_k;
    const float x0 = ac[0], x1 = ac[as_i], x2 = ac[2 * as_i], x3 = ac[3 * as_i];
    for (j = 0; j < MM_NR; ++j) {
      const float bv = br[j];
      a0[j] += x0 * bv;
      a1[j] += x1 * bv;
      a2[j] += x2 * bv;
      a3[j] += x3 * bv;
    }
  }
  y += (int64_t)i0 * ldy + j0;
  for (j = 0; j < MM_NR; ++j) {
    y[j] = a0[j];
    y[j + ldy] = a1[j];
    y[j + 2 * ldy] = a2[j];
    y[j + 3 * ldy] = a3[j];
  }
}

/* Any tile up to 4 x 8, any strides. */
static void mm_tile_generic(const mm_view* v, int32_t i0, int32_t j0, int32_t mr, int32_t nr, float* y,
                            int64_t ldy) {
  float acc[MM_MR][MM_NR];
  int32_t r, kk, j;
  for (r = 0; r < mr; ++r)
    for (j = 0; j < nr; ++j) acc[r][j] = 0.0f;
  for (kk = 0; kk < v->k; ++kk) {
    const float* br = v->b + (int64_t)kk * v->bs_k + (int64_t)j0 * v->bs_j;
    const float* ac = v->a + (int64_t)i0 * v->as_i + (int64_t)kk * v->as_k;
    for (r = 0; r < mr; ++r) {
      const float av = ac[r * v->as_i];
      for (j = 0; j < nr; ++j) acc[r][j] += av * br[j * v->bs_j];
    }
  }
  for (r = 0; r < mr; ++r)
    for (j = 0; j < nr; ++j) y[(int64_t)(i0 + r) * ldy + j0 + j] = acc[r][j];
}

/* y[m][n] (dense, row step ldy) = A * B. */
static void mm_run(const mm_view* v, float* y, int64_t ldy) {
  int32_t i0, j0;
  for (i0 = 0; i0 < v->m; i0 += MM_MR) {
    const int32_t mr = (v->m - i0) < MM_MR ? (v->m - i0) : MM_MR;
    for (j0 = 0; j0 < v->n; j0 += MM_NR) {
      const int32_t nr = (v->n - j0) < MM_NR ? (v->n - j0) : MM_NR;
      if (mr == MM_MR && nr == MM_NR && v->bs_j == 1)
        mm_tile_fast(v, i0, j0, y, ldy);
      else
        mm_tile_generic(v, i0, j0, mr, nr, y, ldy);
    }
  }
}

/* y = alpha * y + beta * c (when they change anything), then the fused clamp: Gemm's epilogue. */
static void gemm_epilogue(const float* c, float* y, const stowage_gemm_params* p) {
  int32_t i, j;
  if (p->alpha != 1.0f || (c != NULL && p->beta != 0.0f)) {
    const int use_c = c != NULL && p->beta != 0.0f;
    for (i = 0; i < p->m; ++i) {
      float* yr = y + (int64_t)i * p->n;
      const float* cr = use_c ? c + (p->c_rows == 1 ? 0 : (int64_t)i * p->c_cols) : NULL;
      if (!use_c) {
        for (j = 0; j < p->n; ++j) yr[j] = p->alpha * yr[j];
      } else if (p->c_cols == 1) {
        const float cv = p->beta * cr[0];
        for (j = 0; j < p->n; ++j) yr[j] = p->alpha * yr[j] + cv;
      } else {
        for (j = 0; j < p->n; ++j) yr[j] = p->alpha * yr[j] + p->beta * cr[j];
      }
    }
  }
  if (p->clamp) stowage_clamp_f32(y, (int64_t)p->m * p->n, p->clamp_min, p->clamp_max); /* a fused Relu / Clip */
}

void stowage_gemm_f32(const float* a, const float* b, const float* c, float* y, const stowage_gemm_params* p) {
  mm_view v;
  v.a = a;
  v.b = b;
  v.m = p->m;
  v.n = p->n;
  v.k = p->k;
  if (p->trans_a) { /* a stored [k][m] */
    v.as_i = 1;
    v.as_k = p->m;
  } else {
    v.as_i = p->k;
    v.as_k = 1;
  }
  if (p->trans_b) { /* b stored [n][k] */
    v.bs_k = 1;
    v.bs_j = p->k;
  } else {
    v.bs_k = p->n;
    v.bs_j = 1;
  }
  mm_run(&v, y, p->n);
  gemm_epilogue(c, y, p);
}

/* Dequantizes inside the loop: B element (kk, j) is b_scale[j] * (float)b[...], as the TFLite importer once
 * expanded it at compile time; the sum over kk runs in the same order as mm_run's tiles (ascending, from 0.0f). */
void stowage_gemm_w8_f32(const float* a, const int8_t* b, const float* b_scale, const float* c, float* y,
                         const stowage_gemm_params* p) {
  const int64_t as_i = p->trans_a ? 1 : p->k, as_k = p->trans_a ? p->m : 1;
  const int64_t bs_k = p->trans_b ? 1 : p->n, bs_j = p->trans_b ? p->k : 1;
  int32_t i, j, kk;
  for (i = 0; i < p->m; ++i)
    for (j = 0; j < p->n; ++j) {
      const float* ar = a + (int64_t)i * as_i;
      const int8_t* bc = b + (int64_t)j * bs_j;
      const float s = b_scale[j];
      float acc = 0.0f;
      for (kk = 0; kk < p->k; ++kk) acc += ar[(int64_t)kk * as_k] * (s * (float)bc[(int64_t)kk * bs_k]);
      y[(int64_t)i * p->n + j] = acc;
    }
  gemm_epilogue(c, y, p);
}

void stowage_matmul_f32(const float* a, const float* b, float* y, const stowage_matmul_params* p) {
  int32_t idx[STOWAGE_MAX_RANK];
  int64_t a_off = 0, b_off = 0;
  const int64_t y_mat = (int64_t)p->m * p->n;
  int64_t batch = 1, t;
  int32_t d;
  mm_view v;
  for (d = 0; d < p->batch_rank; ++d) {
    idx[d] = 0;
    batch *= p->batch_shape[d];
  }
  v.m = p->m;
  v.n = p->n;
  v.k = p->k;
  v.as_i = p->k;
  v.as_k = 1;
  v.bs_k = p->n;
  v.bs_j = 1;
  for (t = 0; t < batch; ++t) {
    v.a = a + a_off;
    v.b = b + b_off;
    mm_run(&v, y + t * y_mat, p->n);
    /* advance the batch counter (last dim fastest) */
    for (d = p->batch_rank - 1; d >= 0; --d) {
      a_off += p->a_stride[d];
      b_off += p->b_stride[d];
      if (++idx[d] < p->batch_shape[d]) break;
      a_off -= p->a_stride[d] * p->batch_shape[d];
      b_off -= p->b_stride[d] * p->batch_shape[d];
      idx[d] = 0;
    }
  }
}
