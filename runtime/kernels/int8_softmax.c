/* Int8 softmax with TFLite's reference fixed-point arithmetic: differences to the row maximum scaled into
 * Q5.26, exp of negative values in Q0.31 (Taylor series around -1/8 plus a barrel shifter of exp(-2^k)
 * constants), sum in Q12.19, a Newton-Raphson reciprocal, output in 1/256 steps from -128.
 * Declared in stowage_kernels_int8.h. */
#include "stowage_kernels.h"

#include "int8_fixedpoint.h"

static int32_t add_wrap(int32_t a, int32_t b) { return stowage_fx_wrap((int64_t)a + b); }

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
        sum = add_wrap(sum, stowage_fx_rdivpot(stowage_fx_exp_on_negative(scaled, 5), 12)); /* Q0.31 -> Q12.19 */
      }
    }
    headroom = count_leading_zeros((uint32_t)sum);
    bits_over_unit = 12 - headroom;
    scale = stowage_fx_one_over_one_plus_x(stowage_fx_wrap((int64_t)(((uint64_t)(uint32_t)sum << headroom) & 0xFFFFFFFFu) - ((int64_t)1 << 31)));
    for (c = 0; c < p->depth; ++c) {
      const int32_t diff = in[c] - max_in;
      if (diff >= p->diff_min) {
        const int32_t scaled = stowage_fx_srdhm(stowage_fx_wrap((int64_t)diff * ((int64_t)1 << p->input_left_shift)), p->input_multiplier);
        const int32_t e = stowage_fx_exp_on_negative(scaled, 5);
        const int32_t unsat = stowage_fx_rdivpot(stowage_fx_srdhm(scale, e), bits_over_unit + 31 - 8);
        out[c] = (int8_t)stowage_fx_clamp(unsat - 128, -128, 127);
      } else {
        out[c] = -128;
      }
    }
  }
}
