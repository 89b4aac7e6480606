/* Private helpers of the int8 kernels: the integer fixed-point arithmetic TFLite's reference kernels use
 * (rounding doubling high multiply, rounding shift, quantized-multiplier requantization, and the Q-format
 * exp / reciprocal of the int8 softmax), reimplemented in C99 so results match TFLite bit for bit. */
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

/* acc * multiplier * 2^shift, as TFLite's MultiplyByQuantizedMultiplier: a left shift (shift > 0) before the
 * doubling high multiply, a rounding right shift (shift < 0) after it. multiplier is Q0.31. */
static inline int32_t stowage_fx_requant(int32_t acc, int32_t multiplier, int32_t shift) {
  const int left = shift > 0 ? shift : 0;
  const int right = shift > 0 ? 0 : -shift;
  return stowage_fx_rdivpot(stowage_fx_srdhm(stowage_fx_wrap((int64_t)acc * ((int64_t)1 << left)), multiplier), right);
}

static inline int32_t stowage_fx_clamp(int32_t v, int32_t lo, int32_t hi) { return v < lo ? lo : (v > hi ? hi : v); }

#endif /* STOWAGE_INT8_FIXEDPOINT_H */
