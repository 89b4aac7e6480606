/* Elementwise kernels for generated code: binary ops with ONNX (numpy) broadcasting over strided inputs,
 * and unary activation/math functions. Both allow y to alias an input of the same shape. */
#include <math.h>
#include <string.h>

#include "clamp_f32.h"
#include "stowage_kernels.h"

/* One innermost run of n elements; a and b advance by sa and sb (0 = broadcast). The switch sits outside the
 * loops so each loop body is branch-free for its op. Inputs are read before y is written at each index. */
#define BIN_LOOP(EXPR)                                          \
  do {                                                          \
    int64_t i_;                                                 \
    if (sa == 1 && sb == 1) {                                   \
      for (i_ = 0; i_ < n; ++i_) {                              \
        const float av = a[i_], bv = b[i_];                     \
        y[i_] = (EXPR);                                         \
      }                                                         \
    } else if (sa == 1 && sb == 0) {                            \
      const float bv = b[0];                                    \
      for (i_ = 0; i_ < n; ++i_) {                              \
        const float av = a[i_];                                 \
        y[i_] = (EXPR);                                         \
      }                                                         \
    } else if (sa == 0 && sb == 1) {                            \
      const float av = a[0];                                    \
      for (i_ = 0; i_ < n; ++i_) {                              \
        const float bv = b[i_];                                 \
        y[i_] = (EXPR);                                         \
      }                                                         \
    } else {                                                    \
      for (i_ = 0; i_ < n; ++i_) {                              \
        const float av = a[i_ * sa], bv = b[i_ * sb];           \
        y[i_] = (EXPR);                                         \
      }                                                         \
    }                                                           \
  } while (0)

static void binary_run(stowage_binary_op op, const float* a, int64_t sa, const float* b, int64_t sb, float* y,
                       int64_t n) {
  switch (op) {
    case STOWAGE_BINARY_ADD: BIN_LOOP(av + bv); break;
    case STOWAGE_BINARY_SUB: BIN_LOOP(av - bv); break;
    case STOWAGE_BINARY_MUL: BIN_LOOP(av * bv); break;
    case STOWAGE_BINARY_DIV: BIN_LOOP(av / bv); break;
    case STOWAGE_BINARY_POW: BIN_LOOP(powf(av, bv)); break;
    /* NaN in a propagates like numpy.maximum/minimum (NaN in b propagates through the comparison). */
    case STOWAGE_BINARY_MAX: BIN_LOOP((av > bv || av != av) ? av : bv); break;
    case STOWAGE_BINARY_MIN: BIN_LOOP((av < bv || av != av) ? av : bv); break;
    case STOWAGE_BINARY_PRELU: BIN_LOOP(av >= 0.0f ? av : av * bv); break;
    default: break;
  }
}

static void binary_broadcast(stowage_binary_op op, const float* a, const float* b, float* y,
                             const stowage_broadcast_params* p) {
  int32_t shape[STOWAGE_MAX_RANK], idx[STOWAGE_MAX_RANK];
  int64_t as[STOWAGE_MAX_RANK], bs[STOWAGE_MAX_RANK];
  int32_t r = 0, d;
  int64_t outer = 1, t, n, a_off = 0, b_off = 0;

  /* Drop unit dims and merge each dim into the next inner one when both inputs step through them as one
   * (a dense pair, or a pair both inputs broadcast), so dense and scalar cases become one flat run. */
  for (d = 0; d < p->rank; ++d) {
    if (p->shape[d] == 0) return;
    if (p->shape[d] == 1) continue;
    if (r > 0 && as[r - 1] == p->a_stride[d] * p->shape[d] && bs[r - 1] == p->b_stride[d] * p->shape[d]) {
      shape[r - 1] *= p->shape[d];
      as[r - 1] = p->a_stride[d];
      bs[r - 1] = p->b_stride[d];
      continue;
    }
    shape[r] = p->shape[d];
    as[r] = p->a_stride[d];
    bs[r] = p->b_stride[d];
    ++r;
  }
  if (r == 0) {
    binary_run(op, a, 0, b, 0, y, 1);
    return;
  }
  n = shape[r - 1];
  for (d = 0; d < r - 1; ++d) {
    idx[d] = 0;
    outer *= shape[d];
  }
  for (t = 0; t < outer; ++t) {
    binary_run(op, a + a_off, as[r - 1], b + b_off, bs[r - 1], y + t * n, n);
    for (d = r - 2; d >= 0; --d) {
      a_off += as[d];
      b_off += bs[d];
      if (++idx[d] < shape[d]) break;
      a_off -= as[d] * shape[d];
      b_off -= bs[d] * shape[d];
      idx[d] = 0;
    }
  }
}

void stowage_binary_f32(stowage_binary_op op, const float* a, const float* b, float* y,
                        const stowage_broadcast_params* p) {
  binary_broadcast(op, a, b, y, p);
  if (p->clamp) {
    /* A fused Relu / Clip over the dense output. */
    int64_t count = 1;
    int32_t d;
    for (d = 0; d < p->rank; ++d) count *= p->shape[d];
    stowage_clamp_f32(y, count, p->clamp_min, p->clamp_max);
  }
}

void stowage_add_f32(const float* a, const float* b, float* y, const stowage_broadcast_params* p) {
  stowage_binary_f32(STOWAGE_BINARY_ADD, a, b, y, p);
}

#define UN_LOOP(EXPR)                   \
  do {                                  \
    int64_t i_;                         \
    for (i_ = 0; i_ < count; ++i_) {    \
      const float v = x[i_];            \
      y[i_] = (EXPR);                   \
    }                                   \
  } while (0)

static float sigmoidf_(float v) {
  if (v >= 0.0f) return 1.0f / (1.0f + expf(-v));
  {
    const float e = expf(v);
    return e / (1.0f + e);
  }
}

/* log(exp(v) + 1) without overflow for large v. */
static float softplusf_(float v) { return v > 0.0f ? v + log1pf(expf(-v)) : log1pf(expf(v)); }

void stowage_unary_f32(stowage_unary_op op, const float* x, float* y, int64_t count, float alpha, float beta) {
  switch (op) {
    case STOWAGE_UNARY_RELU: UN_LOOP(v < 0.0f ? 0.0f : v); break;
    case STOWAGE_UNARY_LEAKY_RELU: UN_LOOP(v < 0.0f ? alpha * v : v); break;
    case STOWAGE_UNARY_CLIP: UN_LOOP(v < alpha ? alpha : (v > beta ? beta : v)); break;
    case STOWAGE_UNARY_SIGMOID: UN_LOOP(sigmoidf_(v)); break;
    case STOWAGE_UNARY_TANH: UN_LOOP(tanhf(v)); break;
    case STOWAGE_UNARY_ABS: UN_LOOP(fabsf(v)); break;
    case STOWAGE_UNARY_NEG: UN_LOOP(-v); break;
    case STOWAGE_UNARY_EXP: UN_LOOP(expf(v)); break;
    case STOWAGE_UNARY_LOG: UN_LOOP(logf(v)); break;
    case STOWAGE_UNARY_SQRT: UN_LOOP(sqrtf(v)); break;
    case STOWAGE_UNARY_RECIPROCAL: UN_LOOP(1.0f / v); break;
    case STOWAGE_UNARY_FLOOR: UN_LOOP(floorf(v)); break;
    case STOWAGE_UNARY_CEIL: UN_LOOP(ceilf(v)); break;
    case STOWAGE_UNARY_ELU: UN_LOOP(v < 0.0f ? alpha * expm1f(v) : v); break;
    case STOWAGE_UNARY_SELU: UN_LOOP(v > 0.0f ? beta * v : beta * alpha * expm1f(v)); break;
    case STOWAGE_UNARY_HARD_SIGMOID: {
      UN_LOOP(fmaxf(0.0f, fminf(1.0f, alpha * v + beta)));
      break;
    }
    case STOWAGE_UNARY_HARD_SWISH: {
      UN_LOOP(v * fmaxf(0.0f, fminf(1.0f, v * (1.0f / 6.0f) + 0.5f)));
      break;
    }
    case STOWAGE_UNARY_SOFTPLUS: UN_LOOP(softplusf_(v)); break;
    case STOWAGE_UNARY_SOFTSIGN: UN_LOOP(v / (1.0f + fabsf(v))); break;
    case STOWAGE_UNARY_SIGN: UN_LOOP(v > 0.0f ? 1.0f : (v < 0.0f ? -1.0f : v)); break;
    case STOWAGE_UNARY_ERF: UN_LOOP(erff(v)); break;
    case STOWAGE_UNARY_SIN: UN_LOOP(sinf(v)); break;
    case STOWAGE_UNARY_COS: UN_LOOP(cosf(v)); break;
    default: break;
  }
}
