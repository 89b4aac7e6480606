/* ONNX QuantizeLinear / DequantizeLinear and the integer convolution and matrix product kernels shared by
 * ConvInteger / QLinearConv and MatMulInteger / QLinearMatMul: one int32 accumulation loop per layout, the
 * QLinear variants then requantize with ONNX's round-half-to-even. Declared in stowage_kernels_qlinear.h. */
#include <math.h>

#include "pool_taps.h"
#include "stowage_kernels.h"

double stowage_round_half_even(double v) {
  double r = floor(v);
  const double d = v - r;
  if (d > 0.5 || (d == 0.5 && fmod(r, 2.0) != 0.0)) r += 1.0;
  return r;
}

/* Element i of an integer operand of type `type`. */
static int32_t load_int(const void* p, int32_t type, int64_t i) {
  switch (type) {
    case STOWAGE_ELEM_S8: return ((const int8_t*)p)[i];
    case STOWAGE_ELEM_U8: return ((const uint8_t*)p)[i];
    default: return ((const int32_t*)p)[i];
  }
}

static int32_t zero_point_at(const void* zp, int32_t type, int64_t i) { return zp == NULL ? 0 : load_int(zp, type, i); }

/* Converts a rounded value to the range of `type` (saturating; NaN gives the minimum) and stores it. */
static void store_saturated(void* y, int32_t type, int64_t i, double v) {
  const double lo = type == STOWAGE_ELEM_U8 ? 0.0 : -128.0;
  const double hi = type == STOWAGE_ELEM_U8 ? 255.0 : 127.0;
  const double c = !(v >= lo) ? lo : (v > hi ? hi : v);
  if (type == STOWAGE_ELEM_U8) ((uint8_t*)y)[i] = (uint8_t)c;
  else ((int8_t*)y)[i] = (int8_t)c;
}

/* Two's-complement wrap of a 32-bit accumulator sum (ONNX's int32 accumulation), without signed overflow. */
static int32_t wrap_s32(uint32_t u) { return u <= 0x7FFFFFFFu ? (int32_t)u : (int32_t)(-(int64_t)(0xFFFFFFFFu - u) - 1); }

/* The requantization choices of a QLinear kernel's parameters (STOWAGE_QLINEAR_REQUANT_FIELDS). */
typedef struct {
  int32_t f32, clamp, y_min, y_max;
} requant_mode;

/* A rounded value plus nothing more: clamped as `mode` says, saturated to `type`, stored at y[i]. */
static void store_requantized(void* y, int32_t type, int64_t i, double v, const requant_mode* mode) {
  if (mode->clamp) v = v < (double)mode->y_min ? (double)mode->y_min : (v > (double)mode->y_max ? (double)mode->y_max : v);
  store_saturated(y, type, i, v);
}

/* Round half to even of a float32 in float32 arithmetic (no double, which a Cortex-M4F emulates in software):
 * adding and subtracting 1.5 * 2^23 leaves the integer nearest to v under the default rounding mode, for |v| < 2^22;
 * larger values saturate any 8-bit result, so they are clamped first. NaN gives the type's minimum later. */
static float round_half_even_f32(float v) {
  const float magic = 12582912.0f; /* 1.5 * 2^23 */
  if (v != v) return v;
  if (v > 4194304.0f) v = 4194304.0f;
  if (v < -4194304.0f) v = -4194304.0f;
  {
    const float shifted = v + magic; /* an assignment: rounded to float even where float sums carry excess precision */
    return shifted - magic;
  }
}

/* round_half_even(v) + zero_point as an int32 (v rounded in float32; NaN gives INT32_MIN, which saturates to the
 * type's minimum), then clamped as `mode` says, saturated to `type` and stored at y[i]: all in integers. */
static void store_rounded_f32(void* y, int32_t type, int64_t i, float v, int32_t zero_point, const requant_mode* mode) {
  const int32_t lo = type == STOWAGE_ELEM_U8 ? 0 : -128, hi = type == STOWAGE_ELEM_U8 ? 255 : 127;
  const float r = round_half_even_f32(v);
  int32_t q = r != r ? INT32_MIN : (int32_t)r + zero_point;
  if (mode->clamp) q = q < mode->y_min ? mode->y_min : (q > mode->y_max ? mode->y_max : q);
  q = q < lo ? lo : (q > hi ? hi : q);
  if (type == STOWAGE_ELEM_U8) ((uint8_t*)y)[i] = (uint8_t)q;
  else ((int8_t*)y)[i] = (int8_t)q;
}

/* round_half_even(acc * multiplier) + zero_point, saturated to `type` (and clamped as `mode` says), stored at y[i]. */
static void requantize_store(void* y, int32_t type, int64_t i, int32_t acc, float multiplier, int32_t zero_point,
                             const requant_mode* mode) {
  if (mode->f32) {
    store_rounded_f32(y, type, i, (float)acc * multiplier, zero_point, mode);
    return;
  }
  store_requantized(y, type, i, stowage_round_half_even((double)acc * (double)multiplier) + (double)zero_point, mode);
}

/* x_scale * w_scale / y_scale, each step rounded to float as ONNX's reference computes it. */
static float requant_multiplier(float x_scale, float w_scale, float y_scale) {
  const float xw = x_scale * w_scale;
  const float m = xw / y_scale;
  return m;
}

/* ---- QuantizeLinear / DequantizeLinear ---- */

void stowage_quantize_linear_f32(const float* x, const float* scale, const void* zero_point, void* y,
                                 const stowage_qlinear_quant_params* p) {
  int64_t o, in, i = 0;
  int32_t a;
  for (o = 0; o < p->outer; ++o)
    for (a = 0; a < p->axis_len; ++a) {
      const float s = scale[a];
      const int32_t zp = zero_point_at(zero_point, p->q_type, a);
      /* In float32 only (a Cortex-M4F emulates double in software): store_rounded_f32 rounds half to even exactly
       * as stowage_round_half_even((double)q) for every float, and saturates alike (NaN to the type's minimum). */
      const requant_mode plain = {1, 0, 0, 0};
      for (in = 0; in < p->inner; ++in, ++i) {
        const float q = x[i] / s;
        store_rounded_f32(y, p->q_type, i, q, zp, &plain);
      }
    }
}

void stowage_dequantize_linear_f32(const void* x, const float* scale, const void* zero_point, float* y,
                                   const stowage_qlinear_quant_params* p) {
  int64_t o, in, i = 0;
  int32_t a;
  for (o = 0; o < p->outer; ++o)
    for (a = 0; a < p->axis_len; ++a) {
      const float s = scale[a];
      const float zp = (float)zero_point_at(zero_point, p->q_type, a);
      for (in = 0; in < p->inner; ++in, ++i) {
        const float d = (float)load_int(x, p->q_type, i) - zp;
        y[i] = d * s;
      }
    }
}

/* ---- convolution (ConvInteger, QLinearConv) ---- */

/* The int32 accumulator of output (b, oc, oy, ox): sum over the group's input channels and the kernel window
 * of (x - x_zp) * (w - w_zp); taps in the padding hold x_zp and add nothing, so only the taps inside the input
 * (their range computed once per output, pool_taps) are summed. One function per operand type pair, so the inner
 * loop loads typed bytes without a type switch or a bounds check per tap. */
#define STOWAGE_CONV_ACCUMULATE(NAME, XT, WT)                                                                       \
  static int32_t NAME(const XT* x, const WT* w, int32_t x_zp, int32_t w_zp, const stowage_qlinear_conv_params* p, \
                      int32_t b, int32_t oc, int32_t oy, int32_t ox) {                                             \
    const int32_t cpg = p->c / p->group;                                                                           \
    const int32_t c0 = (oc / (p->m / p->group)) * cpg;                                                             \
    const int32_t iy0 = oy * p->stride_h - p->pad_top;                                                             \
    const int32_t ix0 = ox * p->stride_w - p->pad_left;                                                            \
    const size_t x_step = (size_t)p->h * (size_t)p->w, w_step = (size_t)p->kh * (size_t)p->kw;                     \
    const XT* xb = x + ((size_t)b * (size_t)p->c + (size_t)c0) * x_step;                                           \
    const WT* wb = w + (size_t)oc * (size_t)cpg * w_step;                                                          \
    int32_t fy_lo, fy_hi, fx_lo, fx_hi, ic, fy, fx;                                                                \
    uint32_t acc = 0;                                                                                              \
    pool_taps(iy0, p->dil_h, 0, p->h, p->kh, &fy_lo, &fy_hi);                                                      \
    pool_taps(ix0, p->dil_w, 0, p->w, p->kw, &fx_lo, &fx_hi);                                                      \
    /* Tap by tap, the group's channels innermost: the longest loop, constant strides (NCHW: a plane apart). */    \
    for (fy = fy_lo; fy < fy_hi; ++fy)                                                                             \
      for (fx = fx_lo; fx < fx_hi; ++fx) {                                                                         \
        const XT* xp = xb + (size_t)(iy0 + p->dil_h * fy) * (size_t)p->w + (size_t)(ix0 + p->dil_w * fx);          \
        const WT* wp = wb + (size_t)fy * (size_t)p->kw + (size_t)fx;                                               \
        for (ic = 0; ic < cpg; ++ic, xp += x_step, wp += w_step)                                                   \
          acc += (uint32_t)(((int32_t)*xp - x_zp) * ((int32_t)*wp - w_zp));                                        \
      }                                                                                                            \
    return wrap_s32(acc);                                                                                          \
  }

STOWAGE_CONV_ACCUMULATE(conv_accumulate_s8s8, int8_t, int8_t)
STOWAGE_CONV_ACCUMULATE(conv_accumulate_u8s8, uint8_t, int8_t)
STOWAGE_CONV_ACCUMULATE(conv_accumulate_s8u8, int8_t, uint8_t)
STOWAGE_CONV_ACCUMULATE(conv_accumulate_u8u8, uint8_t, uint8_t)

static int32_t conv_accumulate(const void* x, const void* w, int32_t x_zp, int32_t w_zp, const stowage_qlinear_conv_params* p,
                               int32_t b, int32_t oc, int32_t oy, int32_t ox) {
  if (p->x_type == STOWAGE_ELEM_U8) {
    if (p->w_type == STOWAGE_ELEM_U8) return conv_accumulate_u8u8((const uint8_t*)x, (const uint8_t*)w, x_zp, w_zp, p, b, oc, oy, ox);
    return conv_accumulate_u8s8((const uint8_t*)x, (const int8_t*)w, x_zp, w_zp, p, b, oc, oy, ox);
  }
  if (p->w_type == STOWAGE_ELEM_U8) return conv_accumulate_s8u8((const int8_t*)x, (const uint8_t*)w, x_zp, w_zp, p, b, oc, oy, ox);
  return conv_accumulate_s8s8((const int8_t*)x, (const int8_t*)w, x_zp, w_zp, p, b, oc, oy, ox);
}

void stowage_conv_integer(const void* x, const void* w, const void* x_zero_point, const void* w_zero_point, int32_t* y,
                          const stowage_qlinear_conv_params* p) {
  const int32_t x_zp = zero_point_at(x_zero_point, p->x_type, 0);
  int32_t b, oc, oy, ox;
  int64_t i = 0;
  for (b = 0; b < p->n; ++b)
    for (oc = 0; oc < p->m; ++oc) {
      const int32_t w_zp = zero_point_at(w_zero_point, p->w_type, p->w_quant_count > 1 ? oc : 0);
      for (oy = 0; oy < p->oh; ++oy)
        for (ox = 0; ox < p->ow; ++ox) y[i++] = conv_accumulate(x, w, x_zp, w_zp, p, b, oc, oy, ox);
    }
}

void stowage_qlinear_conv(const void* x, const void* w, const float* x_scale, const void* x_zero_point, const float* w_scale,
                          const void* w_zero_point, const float* y_scale, const void* y_zero_point, const int32_t* bias,
                          void* y, const stowage_qlinear_conv_params* p) {
  const int32_t x_zp = zero_point_at(x_zero_point, p->x_type, 0);
  const int32_t y_zp = zero_point_at(y_zero_point, p->y_type, 0);
  const requant_mode mode = {p->requant_f32, p->clamp, p->y_min, p->y_max};
  int32_t b, oc, oy, ox;
  int64_t i = 0;
  for (b = 0; b < p->n; ++b)
    for (oc = 0; oc < p->m; ++oc) {
      const int32_t q = p->w_quant_count > 1 ? oc : 0;
      const int32_t w_zp = zero_point_at(w_zero_point, p->w_type, q);
      const float multiplier = requant_multiplier(x_scale[0], w_scale[q], y_scale[0]);
      const uint32_t bv = bias != NULL ? (uint32_t)bias[oc] : 0u;
      for (oy = 0; oy < p->oh; ++oy)
        for (ox = 0; ox < p->ow; ++ox, ++i) {
          const int32_t acc = wrap_s32((uint32_t)conv_accumulate(x, w, x_zp, w_zp, p, b, oc, oy, ox) + bv);
          requantize_store(y, p->y_type, i, acc, multiplier, y_zp, &mode);
        }
    }
}

/* ---- matrix product (MatMulInteger, QLinearMatMul) ---- */

/* The int32 accumulator of row i, column j of one matrix pair: sum over k of (a - a_zp) * (b - b_zp). */
static int32_t matmul_accumulate(const void* a, int64_t a_off, const void* b, int64_t b_off, int32_t a_zp, int32_t b_zp,
                                 const stowage_qlinear_matmul_params* p, int32_t i, int32_t j) {
  uint32_t acc = 0;
  int32_t t;
  for (t = 0; t < p->k; ++t) {
    const int32_t av = load_int(a, p->a_type, a_off + (int64_t)i * p->k + t) - a_zp;
    const int32_t bv = load_int(b, p->b_type, b_off + (int64_t)t * p->n + j) - b_zp;
    acc += (uint32_t)(av * bv);
  }
  return wrap_s32(acc);
}

/* Walks the batch (stowage_matmul_f32's order, last batch dim fastest) and calls matmul_accumulate for every
 * output element; `requant` selects QLinearMatMul's output (else int32 accumulators). */
static void matmul_run(const void* a, const void* b, const float* a_scale, const void* a_zero_point, const float* b_scale,
                       const void* b_zero_point, const float* y_scale, const void* y_zero_point, void* y, int requant,
                       const stowage_qlinear_matmul_params* p) {
  int32_t idx[STOWAGE_MAX_RANK];
  int64_t a_off = 0, b_off = 0, batch = 1, t, o = 0;
  int32_t d, i, j;
  const requant_mode mode = {p->requant_f32, p->clamp, p->y_min, p->y_max};
  for (d = 0; d < p->batch_rank; ++d) {
    idx[d] = 0;
    batch *= p->batch_shape[d];
  }
  for (t = 0; t < batch; ++t) {
    for (i = 0; i < p->m; ++i) {
      const int32_t qa = p->a_quant_count > 1 ? i : 0;
      const int32_t qy = p->y_quant_count > 1 ? i : 0;
      const int32_t a_zp = zero_point_at(a_zero_point, p->a_type, qa);
      for (j = 0; j < p->n; ++j, ++o) {
        const int32_t qb = p->b_quant_count > 1 ? j : 0;
        const int32_t acc = matmul_accumulate(a, a_off, b, b_off, a_zp, zero_point_at(b_zero_point, p->b_type, qb), p, i, j);
        if (requant)
          requantize_store(y, p->y_type, o, acc, requant_multiplier(a_scale[qa], b_scale[qb], y_scale[qy]),
                           zero_point_at(y_zero_point, p->y_type, qy), &mode);
        else
          ((int32_t*)y)[o] = acc;
      }
    }
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

void stowage_matmul_integer(const void* a, const void* b, const void* a_zero_point, const void* b_zero_point, int32_t* y,
                            const stowage_qlinear_matmul_params* p) {
  matmul_run(a, b, NULL, a_zero_point, NULL, b_zero_point, NULL, NULL, y, 0, p);
}

void stowage_qlinear_matmul(const void* a, const void* b, const float* a_scale, const void* a_zero_point,
                            const float* b_scale, const void* b_zero_point, const float* y_scale, const void* y_zero_point,
                            void* y, const stowage_qlinear_matmul_params* p) {
  matmul_run(a, b, a_scale, a_zero_point, b_scale, b_zero_point, y_scale, y_zero_point, y, 1, p);
}

/* ---- QLinearAdd / QLinearMul, QLinearAveragePool (the QDQ pass's element-wise and pooling operators) ---- */

/* QuantizeLinear of v (float32 division, round half to even, zero point, saturation), clamped as `mode` says. */
static void quantize_store(void* y, int32_t type, int64_t i, float v, float scale, int32_t zero_point, const requant_mode* mode) {
  store_rounded_f32(y, type, i, v / scale, zero_point, mode);
}

void stowage_qlinear_binary(const void* a, const void* b, const float* a_scale, const void* a_zero_point, const float* b_scale,
                            const void* b_zero_point, const float* y_scale, const void* y_zero_point, void* y,
                            const stowage_qlinear_binary_params* p) {
  const int32_t a_zp = zero_point_at(a_zero_point, p->a_type, 0), b_zp = zero_point_at(b_zero_point, p->b_type, 0);
  const int32_t y_zp = zero_point_at(y_zero_point, p->y_type, 0);
  const float sa = a_scale[0], sb = b_scale[0], sy = y_scale[0];
  const requant_mode mode = {0, p->clamp, p->y_min, p->y_max};
  int32_t idx[STOWAGE_MAX_RANK];
  int64_t count = 1, i, a_off = 0, b_off = 0;
  int32_t d;
  int64_t dense = 1;
  int contiguous = p->a_type == STOWAGE_ELEM_S8 && p->b_type == STOWAGE_ELEM_S8 && p->y_type == STOWAGE_ELEM_S8;
  for (d = 0; d < p->rank; ++d) {
    idx[d] = 0;
    count *= p->shape[d];
  }
  for (d = p->rank - 1; d >= 0; --d) {
    if (p->shape[d] > 1 && (p->a_stride[d] != dense || p->b_stride[d] != dense)) contiguous = 0;
    dense *= p->shape[d];
  }
  if (contiguous) {
    /* Both int8 operands dense, no broadcasting (the residual additions of the QDQ networks): the same float32 steps
     * without the index walk. */
    const int8_t* pa = (const int8_t*)a;
    const int8_t* pb = (const int8_t*)b;
    for (i = 0; i < count; ++i) {
      const float da = (float)(pa[i] - a_zp) * sa;
      const float db = (float)(pb[i] - b_zp) * sb;
      const float v = p->mul ? da * db : da + db;
      quantize_store(y, STOWAGE_ELEM_S8, i, v, sy, y_zp, &mode);
    }
    return;
  }
  for (i = 0; i < count; ++i) {
    /* DequantizeLinear of each operand, the float op, QuantizeLinear: each a float32 step of its own. */
    const float da = (float)(load_int(a, p->a_type, a_off) - a_zp) * sa;
    const float db = (float)(load_int(b, p->b_type, b_off) - b_zp) * sb;
    const float v = p->mul ? da * db : da + db;
    quantize_store(y, p->y_type, i, v, sy, y_zp, &mode);
    for (d = p->rank - 1; d >= 0; --d) {
      a_off += p->a_stride[d];
      b_off += p->b_stride[d];
      if (++idx[d] < p->shape[d]) break;
      a_off -= p->a_stride[d] * p->shape[d];
      b_off -= p->b_stride[d] * p->shape[d];
      idx[d] = 0;
    }
  }
}

/* The pooling windows of stowage_qlinear_avgpool2d and stowage_qlinear_maxpool2d: per window the int32 sum of
 * (x - x_zp) over the taps inside the input, or their largest value, then the output as each function documents. */
static void qlinear_pool2d(const void* x, const float* x_scale, const void* x_zero_point, const float* y_scale,
                           const void* y_zero_point, void* y, const stowage_qlinear_pool_params* qp, int max) {
  const stowage_pool2d_params* p = &qp->pool;
  const int32_t x_zp = zero_point_at(x_zero_point, qp->x_type, 0), y_zp = zero_point_at(y_zero_point, qp->y_type, 0);
  const requant_mode mode = {1, qp->clamp, qp->y_min, qp->y_max};
  const int64_t planes = (int64_t)p->n * p->c;
  const int64_t x_plane = (int64_t)p->h * p->w, y_plane = (int64_t)p->oh * p->ow;
  int64_t pl;
  int32_t oy, ox, ky, kx;
  for (pl = 0; pl < planes; ++pl) {
    for (oy = 0; oy < p->oh; ++oy) {
      const int32_t iy0 = oy * p->stride_h - p->pad_top;
      int32_t ky_lo, ky_hi;
      pool_taps(iy0, p->dil_h, 0, p->h, p->kh, &ky_lo, &ky_hi);
      for (ox = 0; ox < p->ow; ++ox) {
        const int32_t ix0 = ox * p->stride_w - p->pad_left;
        int32_t kx_lo, kx_hi, count, best = INT32_MIN;
        uint32_t sum = 0;
        const int64_t o = pl * y_plane + (int64_t)oy * p->ow + ox;
        pool_taps(ix0, p->dil_w, 0, p->w, p->kw, &kx_lo, &kx_hi);
        count = pool_divisor(p, iy0, ix0, (ky_hi - ky_lo) * (kx_hi - kx_lo));
        for (ky = ky_lo; ky < ky_hi; ++ky) {
          const int64_t row = pl * x_plane + (int64_t)(iy0 + ky * p->dil_h) * p->w;
          for (kx = kx_lo; kx < kx_hi; ++kx) {
            const int32_t v = load_int(x, qp->x_type, row + ix0 + kx * p->dil_w);
            sum += (uint32_t)(v - x_zp);
            if (v > best) best = v;
          }
        }
        if (max) {
          /* DequantizeLinear, then QuantizeLinear: each a float32 step of the float graph. A window with no tap inside
           * the input cannot happen with ONNX's pads; it would give the dequantized zero. */
          const float dequantized = best == INT32_MIN ? 0.0f : (float)(best - x_zp) * x_scale[0];
          store_rounded_f32(y, qp->y_type, o, dequantized / y_scale[0], y_zp, &mode);
        } else if (count <= 0) {
          requantize_store(y, qp->y_type, o, 0, 0.0f, y_zp, &mode);
        } else {
          /* ONNX Runtime's QLinearGlobalAveragePool (MLAS): x_scale / count / y_scale, each step in float32. */
          const float multiplier = x_scale[0] / (float)count / y_scale[0];
          requantize_store(y, qp->y_type, o, wrap_s32(sum), multiplier, y_zp, &mode);
        }
      }
    }
  }
}

void stowage_qlinear_avgpool2d(const void* x, const float* x_scale, const void* x_zero_point, const float* y_scale,
                               const void* y_zero_point, void* y, const stowage_qlinear_pool_params* p) {
  qlinear_pool2d(x, x_scale, x_zero_point, y_scale, y_zero_point, y, p, 0);
}

void stowage_qlinear_maxpool2d(const void* x, const float* x_scale, const void* x_zero_point, const float* y_scale,
                               const void* y_zero_point, void* y, const stowage_qlinear_pool_params* p) {
  qlinear_pool2d(x, x_scale, x_zero_point, y_scale, y_zero_point, y, p, 1);
}
