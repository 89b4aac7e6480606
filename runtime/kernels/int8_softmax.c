/* Int8 softmax with TFLite's reference fixed-point arithmetic: differences to the row maximum scaled into
 * Q5.26, exp of negative values in Q0.31 (Taylor series around -1/8 plus a barrel shifter of exp(-2^k)
 * constants), sum in Q12.19, a Newton-Raphson reciprocal, output in 1/256 steps from -128.
 * Declared in stowage_kernels_int8.h. */
#include "stowage_kernels.h"

#include "int8_fixedpoint.h"

/* Q0.31 constants: round(v * 2^31) for the v named; Q2.29 ones: round(v * 2^29). */
#define FX_ONE_Q0 INT32_MAX              /* 1.0 saturated in Q0.31 */
#define FX_EXP_M1_8 1895147668           /* exp(-1/8) */
#define FX_ONE_THIRD 715827883           /* 1/3 */
#define FX_48_17_Q2 1515870810           /* 48/17 in Q2.29 */
#define FX_NEG_32_17_Q2 (-1010580540)    /* -32/17 in Q2.29 */

static int32_t add_wrap(int32_t a, int32_t b) { return stowage_fx_wrap((int64_t)a + b); }

/* exp(a) for a in [-1/4, 0), a and result in Q0.31. */
static int32_t exp_quarter_interval(int32_t a) {
  const int32_t x = add_wrap(a, 1 << 28); /* x = a + 1/8 */
  const int32_t x2 = stowage_fx_srdhm(x, x);
  const int32_t x3 = stowage_fx_srdhm(x2, x);
  const int32_t x4 = stowage_fx_srdhm(x2, x2);
  const int32_t x4_over_4 = stowage_fx_rdivpot(x4, 2);
  const int32_t poly = stowage_fx_rdivpot(add_wrap(stowage_fx_srdhm(add_wrap(x4_over_4, x3), FX_ONE_THIRD), x2), 1);
  return add_wrap(FX_EXP_M1_8, stowage_fx_srdhm(FX_EXP_M1_8, add_wrap(x, poly)));
}

/* exp(a) for a <= 0; a in Q5.26, result in Q0.31. */
static int32_t exp_negative(int32_t a) {
  /* Multipliers exp(-2^k) in Q0.31 for k = -2 .. 4, applied for each set bit 24 + (k + 2) of the remainder. */
  static const int32_t kMul[7] = {1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242};
  const int32_t quarter = 1 << 24;
  const int32_t mod_minus_quarter = (int32_t)((uint32_t)a & (uint32_t)(quarter - 1)) - quarter;
  int32_t result = exp_quarter_interval(stowage_fx_sat_shl(mod_minus_quarter, 5));
  const int32_t remainder = stowage_fx_wrap((int64_t)mod_minus_quarter - a);
  int k;
  for (k = 0; k < 7; ++k)
    if ((uint32_t)remainder & ((uint32_t)1 << (24 + k))) result = stowage_fx_srdhm(result, kMul[k]);
  return a == 0 ? FX_ONE_Q0 : result;
}

/* 1 / (1 + x) for x in [0, 1) in Q0.31; result in Q0.31 (Newton-Raphson in Q2.29). */
static int32_t one_over_one_plus_x(int32_t a) {
  const int64_t sum = (int64_t)a + FX_ONE_Q0;
  const int32_t half_denominator = (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
  int32_t x = add_wrap(FX_48_17_Q2, stowage_fx_srdhm(half_denominator, FX_NEG_32_17_Q2));
  int i;
  for (i = 0; i < 3; ++i) {
    const int32_t hdx = stowage_fx_srdhm(half_denominator, x);
    const int32_t one_minus = add_wrap(1 << 29, -hdx);
    x = add_wrap(x, stowage_fx_sat_shl(stowage_fx_srdhm(x, one_minus), 2));
  }
  return stowage_fx_sat_shl(x, 1);
}

static int count_leading_zeros(uint32_t v) {
  int n = 0;
  if (v == 0) return 32;
  while (!(v & 0x80000000u)) {
    v <<= 1;
    ++n;
  }
  return n;
}

void stowage_qsoftmax_s8(const int8_t* x, int8_t* y, const stowage_qsoftmax_params* p) {
  int32_t row, c;
  for (row = 0; row < p->outer; ++row) {
    const int8_t* in = x + (int64_t)row * p->depth;
    int8_t* out = y + (int64_t)row * p->depth;
    int32_t max_in = -128, sum = 0, headroom, bits_over_unit, scale;
    for (c = 0; c < p->depth; ++c) max_in = in[c] > max_in ? in[c] : max_in;
    for (c = 0; c < p->depth; ++c) {
      const int32_t diff = in[c] - max_in;
      if (diff >= p->diff_min) {
        const int32_t scaled = stowage_fx_srdhm(stowage_fx_wrap((int64_t)diff * ((int64_t)1 << p->input_left_shift)), p->input_multiplier);
        sum = add_wrap(sum, stowage_fx_rdivpot(exp_negative(scaled), 12)); /* Q0.31 -> Q12.19 */
      }
    }
    headroom = count_leading_zeros((uint32_t)sum);
    bits_over_unit = 12 - headroom;
    scale = one_over_one_plus_x(stowage_fx_wrap((int64_t)(((uint64_t)(uint32_t)sum << headroom) & 0xFFFFFFFFu) - ((int64_t)1 << 31)));
    for (c = 0; c < p->depth; ++c) {
      const int32_t diff = in[c] - max_in;
      if (diff >= p->diff_min) {
        const int32_t scaled = stowage_fx_srdhm(stowage_fx_wrap((int64_t)diff * ((int64_t)1 << p->input_left_shift)), p->input_multiplier);
        const int32_t e = exp_negative(scaled);
        const int32_t unsat = stowage_fx_rdivpot(stowage_fx_srdhm(scale, e), bits_over_unit + 31 - 8);
        out[c] = (int8_t)stowage_fx_clamp(unsat - 128, -128, 127);
      } else {
        out[c] = -128;
      }
    }
  }
}
