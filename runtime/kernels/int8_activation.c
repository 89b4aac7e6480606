/* Int8 activations of TFLite models with TFLite Micro's reference integer arithmetic: LOGISTIC and TANH on
 * the gemmlowp fixed-point path (Q4.27 input, Q0.31 result), HARD_SWISH in 16-bit fixed point, and the
 * requantize-then-clamp RELU family (RELU, RELU6, RELU_N1_TO_1, LEAKY_RELU). Declared in stowage_kernels_int8.h. */
#include "stowage_kernels.h"

#include "int8_fixedpoint.h"

/* The input scaled into Q4.27, or a saturated output when it lies outside the representable radius:
 * returns 1 and sets *q4 when in range, else -1 (below) or +1 (above) via *saturated. */
static int scale_into_q4(int8_t v, const stowage_qsigmoid_params* p, int32_t* q4, int* saturated) {
  const int32_t input = (int32_t)v - p->input_zero_point;
  *saturated = 0;
  if (input <= -p->input_range_radius) {
    *saturated = -1;
    return 0;
  }
  if (input >= p->input_range_radius) {
    *saturated = 1;
    return 0;
  }
  *q4 = stowage_fx_requant(input, p->input_multiplier, p->input_left_shift);
  return 1;
}

void stowage_qlogistic_s8(const int8_t* x, int8_t* y, const stowage_qsigmoid_params* p) {
  int32_t i;
  for (i = 0; i < p->count; ++i) {
    int32_t q4 = 0;
    int saturated;
    if (!scale_into_q4(x[i], p, &q4, &saturated)) {
      y[i] = saturated < 0 ? (int8_t)-128 : (int8_t)127;
      continue;
    }
    /* Q0.31 -> steps of 1/256, then the fixed output zero point -128. */
    y[i] = (int8_t)stowage_fx_clamp(stowage_fx_rdivpot(stowage_fx_logistic_q4(q4), 23) - 128, -128, 127);
  }
}

void stowage_qtanh_s8(const int8_t* x, int8_t* y, const stowage_qsigmoid_params* p) {
  int32_t i;
  for (i = 0; i < p->count; ++i) {
    int32_t q4 = 0;
    int saturated;
    if (!scale_into_q4(x[i], p, &q4, &saturated)) {
      y[i] = saturated < 0 ? (int8_t)-128 : (int8_t)127;
      continue;
    }
    /* Q0.31 -> steps of 1/128, zero point 0. */
    y[i] = (int8_t)stowage_fx_clamp(stowage_fx_rdivpot(stowage_fx_tanh_q4(q4), 24), -128, 127);
  }
}

/* ---- 16-bit fixed point of HARD_SWISH ---- */

/* Two's-complement wrap to int16 (what storing an int into int16_t gives on TFLite's targets). */
static int32_t wrap16(int32_t v) {
  const uint32_t u = (uint32_t)v & 0xFFFFu;
  return u <= 0x7FFFu ? (int32_t)u : (int32_t)u - 65536;
}

/* round(a * b / 2^15), ties away from zero for positive products and toward zero for negative ones
 * (gemmlowp's nudge), saturating INT16_MIN^2. */
static int32_t srdhm16(int32_t a, int32_t b) {
  const int32_t ab = a * b;
  if (a == -32768 && b == -32768) return 32767;
  return wrap16((ab + (ab >= 0 ? (1 << 14) : (1 - (1 << 14)))) / (1 << 15));
}

/* a * b / 2^15 truncated toward zero (no rounding), saturating INT16_MIN^2. */
static int32_t sdhm16(int32_t a, int32_t b) {
  if (a == -32768 && b == -32768) return 32767;
  return wrap16((a * b) / (1 << 15));
}

static int32_t sat_shl16(int32_t v, int amount) {
  const int64_t r = (int64_t)v * ((int64_t)1 << amount);
  return r > 32767 ? 32767 : (r < -32768 ? -32768 : (int32_t)r);
}

void stowage_qhardswish_s8(const int8_t* x, int8_t* y, const stowage_qhardswish_params* p) {
  int32_t i;
  for (i = 0; i < p->count; ++i) {
    const int32_t input = wrap16((int32_t)x[i] - p->input_zero_point);
    const int32_t hires = wrap16(input * 128);
    const int32_t preshift_output = srdhm16(hires, p->output_multiplier);
    int32_t reluish = hires, out;
    /* Rescale so that 3.0 is 32768: all but the last bit of a left shift, the multiplier, then the last bit
     * (where any saturation that matters happens), or a rounding right shift. */
    if (p->reluish_shift > 0) reluish = sat_shl16(reluish, p->reluish_shift - 1);
    reluish = srdhm16(reluish, p->reluish_multiplier);
    if (p->reluish_shift > 0) reluish = sat_shl16(reluish, 1);
    if (p->reluish_shift < 0) reluish = stowage_fx_rdivpot(reluish, -p->reluish_shift);
    /* [-1, 1] -> [0, 1] in Q0.15. */
    reluish = (reluish + (1 << 15)) >> 1;
    out = stowage_fx_rdivpot(sdhm16(reluish, preshift_output), -p->output_shift);
    out = wrap16(out + p->output_zero_point);
    y[i] = (int8_t)stowage_fx_clamp(out, -128, 127);
  }
}

void stowage_qrelu_s8(const int8_t* x, int8_t* y, const stowage_qrelu_params* p) {
  int32_t i;
  for (i = 0; i < p->count; ++i) {
    const int32_t v = (int32_t)x[i] - p->input_zero_point;
    const int32_t scaled = v >= 0 ? stowage_fx_requant(v, p->multiplier, p->shift) : stowage_fx_requant(v, p->alpha_multiplier, p->alpha_shift);
    y[i] = (int8_t)stowage_fx_clamp(stowage_fx_wrap((int64_t)scaled + p->output_zero_point), p->act_min, p->act_max);
  }
}
