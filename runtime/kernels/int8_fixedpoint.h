/* Private helpers of the int8 kernels: the integer fixed-point arithmetic TFLite's reference kernels use
 * (rounding doubling high multiply, rounding shift, quantized-multiplier requantization, and the Q-format
 * exp / reciprocal / logistic / tanh of the int8 softmax and activations), reimplemented in C99 so results match TFLite bit for bit.
 * Right shifts of negative values are arithmetic, as on GCC and Clang for every target. */
#ifndef STOWAGE_INT8_FIXEDPOINT_H
#define STOWAGE_INT8_FIXEDPOINT_H

#include <stdint.h>

/* Arithmetic shift right of a signed value (floor division by 2^e), portable for negative x. */
static inline int32_t stowage_fx_shr(int32_t x, int e) {
  return x < 0 ? -(int32_t)(~(uint32_t)x >> e) - 1 : (int32_t)((uint32_t)x >> e);
}

/* Two's-complement wrap of a 64-bit value to 32 bits (what int32 arithmetic overflow gives on every
 * target TFLite runs on), without implementation-defined conversions. */
static inline int32_t stowage_fx_wrap(int64_t v) {
  uint32_t u = (uint32_t)((uint64_t)v & 0xFFFFFFFFu);
  return u <= 0x7FFFFFFFu ? (int32_t)u : (int32_t)(-(int64_t)(0xFFFFFFFFu - u) - 1);
}

/* round(a * b / 2^31) with ties away from zero, saturating the single overflow case (INT32_MIN^2). */
static inline int32_t stowage_fx_srdhm(int32_t a, int32_t b) {
  int64_t ab, nudge;
  if (a == INT32_MIN && b == INT32_MIN) return INT32_MAX;
  ab = (int64_t)a * (int64_t)b;
  nudge = ab >= 0 ? ((int64_t)1 << 30) : (1 - ((int64_t)1 << 30));
  /* C99 division truncates toward zero, as TFLite's does. */
  return (int32_t)((ab + nudge) / ((int64_t)1 << 31));
}

/* x / 2^e rounded to nearest, ties away from zero; 0 <= e <= 31. */
static inline int32_t stowage_fx_rdivpot(int32_t x, int e) {
  const int32_t mask = (int32_t)(((int64_t)1 << e) - 1);
  const int32_t remainder = (int32_t)((uint32_t)x & (uint32_t)mask);
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return stowage_fx_shr(x, e) + (remainder > threshold ? 1 : 0);
}

/* x * 2^e saturated to int32 (gemmlowp's SaturatingRoundingMultiplyByPOT for e > 0). */
static inline int32_t stowage_fx_sat_shl(int32_t x, int e) {
  const int32_t threshold = (int32_t)(((int64_t)1 << (31 - e)) - 1);
  if (x > threshold) return INT32_MAX;
  if (x < -threshold) return INT32_MIN;
  return stowage_fx_wrap((int64_t)x * ((int64_t)1 << e));
}

/* A requantization prepared once per channel (stowage_rq_make), applied per output with a handful of instructions:
 * the same results as gemmlowp's steps (stowage_fx_srdhm, then stowage_fx_rdivpot): the rounding doubling high
 * multiply as (a * b + 2^30) >> 31 equals gemmlowp's sign-dependent nudge with truncating division for every input
 * but INT32_MIN * INT32_MIN (a Q0.31 multiplier in [2^30, 2^31) or 0 never is INT32_MIN). The rounding shift by e >= 1 is (x >> e) + (((x & mask) + half + (x >> 31))
 * >> e) with half = 2^(e-1): the second term is 1 exactly when the remainder exceeds gemmlowp's threshold (half for
 * negative x, half - 1 for the others); summed as unsigned, it stays below 2^32 for every e <= 31. */
typedef struct {
  int32_t multiplier, left, right, mask, half, neg; /* neg: -1 with a right shift (stowage_rq_apply_narrow), else 0 */
  int32_t narrow; /* set by a kernel that proved its accumulators within stowage_rq_narrow_bound: 0 from stowage_rq_make */
} stowage_rq;

static inline stowage_rq stowage_rq_make(int32_t multiplier, int32_t shift) {
  stowage_rq q;
  q.multiplier = multiplier;
  q.left = shift > 0 ? shift : 0;
  q.right = shift < 0 ? -shift : 0;
  q.mask = (int32_t)(((uint32_t)1 << q.right) - 1u);
  q.half = q.right > 0 ? (int32_t)((uint32_t)1 << (q.right - 1)) : 0;
  q.neg = q.right > 0 ? -1 : 0;
  q.narrow = 0;
  return q;
}

static inline int32_t stowage_rq_apply(int32_t acc, const stowage_rq* q) {
  int32_t x;
  if (q->left > 0) acc = (int32_t)((uint32_t)acc << q->left);
  x = (int32_t)(((int64_t)acc * q->multiplier + ((int64_t)1 << 30)) >> 31);
  if (q->right == 0) return x;
  return (x >> q->right) + (int32_t)(((uint32_t)(x & q->mask) + (uint32_t)q->half + (uint32_t)(x >> 31)) >> q->right);
}

/* round(a * b / 2^32), ties up: one SMMULR on cores with the DSP extension, the 64-bit product elsewhere. */
static inline int32_t stowage_fx_smmulr(int32_t a, int32_t b) {
#if defined(__ARM_FEATURE_DSP) && defined(__GNUC__)
  int32_t r;
  __asm__("smmulr %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));
  return r;
#else
  return (int32_t)(((int64_t)a * b + ((int64_t)1 << 31)) >> 32);
#endif
}

/* The steps of stowage_rq_apply_narrow with its constants as arguments, for loops that keep them in registers:
 * (x + add + (x < 0 ? neg : 0)) >> right with x = the rounding high multiply of acc * 2^up by mult. add is the
 * requantization's half, or half + offset * 2^right where the output offset folds in (stowage_rq_offset_folds). */
static inline int32_t stowage_rq_narrow_steps(int32_t acc, int32_t up, int32_t mult, uint32_t add, int32_t neg, int32_t right) {
  const int32_t x = stowage_fx_smmulr((int32_t)((uint32_t)acc << up), mult);
  return (int32_t)((uint32_t)x + add + (uint32_t)((x >> 31) & neg)) >> right;
}

/* stowage_rq_apply for an accumulator with |acc| < 2^(30 - left) (stowage_rq_narrow_bound), in about six instructions:
 * with acc * 2^(left + 1) exact in 32 bits, the doubling high multiply (acc * 2^left * m + 2^30) >> 31 is the rounding
 * high multiply of acc * 2^(left + 1) by m; with |x| < 2^30, the rounding shift is (x + half - (x < 0)) >> right, with
 * no overflow (ties away from zero as gemmlowp's RoundingDivideByPOT; `neg` is 0 when right is 0). Loops should pass
 * a local copy of q: through a pointer, every int8 store may alias it and its fields are loaded again. */
static inline int32_t stowage_rq_apply_narrow(int32_t acc, const stowage_rq* q) {
  return stowage_rq_narrow_steps(acc, q->left + 1, q->multiplier, (uint32_t)q->half, q->neg, q->right);
}

/* The largest |acc| stowage_rq_apply_narrow takes for a requantization with this shift: 2^(30 - left) - 1 (0 when the
 * left shift is 30 or more). */
static inline int64_t stowage_rq_narrow_bound(int32_t shift) {
  const int32_t left = shift > 0 ? shift : 0;
  return left >= 30 ? 0 : ((int64_t)1 << (30 - left)) - 1;
}

/* acc * multiplier * 2^shift, as TFLite's MultiplyByQuantizedMultiplier: a left shift (shift > 0) before the
 * doubling high multiply, a rounding right shift (shift < 0) after it. multiplier is Q0.31; the one saturating
 * case of gemmlowp's steps (a multiplier of INT32_MIN) takes them literally. */
static inline int32_t stowage_fx_requant(int32_t acc, int32_t multiplier, int32_t shift) {
  stowage_rq q;
  if (multiplier == INT32_MIN) {
    const int left = shift > 0 ? shift : 0;
    const int right = shift > 0 ? 0 : -shift;
    return stowage_fx_rdivpot(stowage_fx_srdhm(stowage_fx_wrap((int64_t)acc * ((int64_t)1 << left)), multiplier), right);
  }
  q = stowage_rq_make(multiplier, shift);
  return stowage_rq_apply(acc, &q);
}

static inline int32_t stowage_fx_clamp(int32_t v, int32_t lo, int32_t hi) { return v < lo ? lo : (v > hi ? hi : v); }

/* v clamped to [-128, 127]: one SSAT where the target has it (GCC does not find it for this clamp). */
static inline int32_t stowage_fx_ssat8(int32_t v) {
#if defined(__ARM_FEATURE_SAT) && defined(__GNUC__)
  int32_t r;
  __asm__("ssat %0, #8, %1" : "=r"(r) : "r"(v));
  return r;
#else
  return v < -128 ? -128 : (v > 127 ? 127 : v);
#endif
}

/* Whether a narrow requantization (stowage_rq_apply_narrow: |x| <= 2^30 after the high multiply) with `right` may
 * take `offset` into its rounding constant: (a + offset * 2^right) >> right is (a >> right) + offset exactly, and
 * with an int8 offset and right <= 22 (half < 2^21, |offset| * 2^right <= 2^29) no sum overflows. */
static inline int stowage_rq_offset_folds(int32_t right, int32_t offset) {
  return right <= 22 && (uint32_t)(offset + 128) <= 255u;
}

/* ---- gemmlowp-style transcendental functions (softmax, logistic, tanh) ---- */

static inline int32_t stowage_fx_add(int32_t a, int32_t b) { return stowage_fx_wrap((int64_t)a + b); }

/* exp(a) for a in [-1/4, 0), a and result in Q0.31: Taylor series around -1/8 to the 4th power. */
static inline int32_t stowage_fx_exp_quarter_interval(int32_t a) {
  const int32_t exp_m1_8 = 1895147668; /* round(exp(-1/8) * 2^31) */
  const int32_t one_third = 715827883; /* round(2^31 / 3) */
  const int32_t x = stowage_fx_add(a, 1 << 28); /* x = a + 1/8 */
  const int32_t x2 = stowage_fx_srdhm(x, x);
  const int32_t x3 = stowage_fx_srdhm(x2, x);
  const int32_t x4 = stowage_fx_srdhm(x2, x2);
  const int32_t x4_over_4 = stowage_fx_rdivpot(x4, 2);
  const int32_t poly = stowage_fx_rdivpot(stowage_fx_add(stowage_fx_srdhm(stowage_fx_add(x4_over_4, x3), one_third), x2), 1);
  return stowage_fx_add(exp_m1_8, stowage_fx_srdhm(exp_m1_8, stowage_fx_add(x, poly)));
}

/* exp(a) for a <= 0, a with `integer_bits` integer bits (1..5: Q4.27 for logistic/tanh, Q5.26 for softmax),
 * result in Q0.31: exp of (a mod 1/4) - 1/4 by the series, times exp(-2^k) for every set bit k of the rest. */
static inline int32_t stowage_fx_exp_on_negative(int32_t a, int integer_bits) {
  /* exp(-2^k) in Q0.31 for k = -2 .. 4. */
  static const int32_t kMul[7] = {1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242};
  const int frac = 31 - integer_bits;
  const int32_t quarter = (int32_t)1 << (frac - 2);
  const int32_t mod_minus_quarter = (int32_t)((uint32_t)a & (uint32_t)(quarter - 1)) - quarter;
  int32_t result = stowage_fx_exp_quarter_interval(stowage_fx_sat_shl(mod_minus_quarter, integer_bits));
  const int32_t remainder = stowage_fx_wrap((int64_t)mod_minus_quarter - a);
  int k;
  for (k = 0; k < 7 && k < integer_bits + 2; ++k)
    if ((uint32_t)remainder & ((uint32_t)1 << (frac - 2 + k))) result = stowage_fx_srdhm(result, kMul[k]);
  return a == 0 ? INT32_MAX : result;
}

/* Newton-Raphson estimate of 1 / half_denominator (three steps from 48/17 - 32/17 * d), in Q2.29;
 * half_denominator = (1 + a) / 2 rounded half away, a in Q0.31. */
static inline int32_t stowage_fx_reciprocal_half_q2(int32_t a) {
  const int64_t sum = (int64_t)a + INT32_MAX;
  const int32_t half_denominator = (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
  int32_t x = stowage_fx_add(1515870810 /* 48/17 in Q2.29 */, stowage_fx_srdhm(half_denominator, -1010580540 /* -32/17 */));
  int i;
  for (i = 0; i < 3; ++i) {
    const int32_t hdx = stowage_fx_srdhm(half_denominator, x);
    const int32_t one_minus = stowage_fx_add(1 << 29, -hdx);
    x = stowage_fx_add(x, stowage_fx_sat_shl(stowage_fx_srdhm(x, one_minus), 2));
  }
  return x;
}

/* 1 / (1 + a) for a in [0, 1), Q0.31 in and out. */
static inline int32_t stowage_fx_one_over_one_plus_x(int32_t a) { return stowage_fx_sat_shl(stowage_fx_reciprocal_half_q2(a), 1); }

/* (1 - a) / (1 + a) for a in [0, 1), Q0.31 in and out. */
static inline int32_t stowage_fx_one_minus_x_over_one_plus_x(int32_t a) {
  return stowage_fx_sat_shl(stowage_fx_add(stowage_fx_reciprocal_half_q2(a), -(1 << 29)), 2);
}

/* logistic(a) = 1 / (1 + exp(-a)), a in Q4.27, result in Q0.31 (1.0 saturates to INT32_MAX). */
static inline int32_t stowage_fx_logistic_q4(int32_t a) {
  const int32_t abs_a = a > 0 ? a : stowage_fx_wrap(-(int64_t)a);
  const int32_t positive = stowage_fx_one_over_one_plus_x(stowage_fx_exp_on_negative(stowage_fx_wrap(-(int64_t)abs_a), 4));
  if (a == 0) return 1 << 30;
  return a > 0 ? positive : stowage_fx_add(INT32_MAX, -positive);
}

/* tanh(a), a in Q4.27, result in Q0.31: (1 - e) / (1 + e) with e = exp(-2|a|) (|a| doubled by reading the
 * same raw value as Q5.26). */
static inline int32_t stowage_fx_tanh_q4(int32_t a) {
  const int32_t neg_abs = a < 0 ? a : stowage_fx_wrap(-(int64_t)a);
  const int32_t t = stowage_fx_one_minus_x_over_one_plus_x(stowage_fx_exp_on_negative(neg_abs, 5));
  if (a == 0) return 0;
  return a < 0 ? stowage_fx_wrap(-(int64_t)t) : t;
}

#endif /* STOWAGE_INT8_FIXEDPOINT_H */
