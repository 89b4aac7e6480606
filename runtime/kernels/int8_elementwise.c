/* Int8 broadcasting ADD and MUL with TFLite's reference arithmetic (ADD: both operands rescaled to a common
 * scale with a 20-bit left shift, summed, requantized; MUL: product of offset operands requantized).
 * Declared in stowage_kernels_int8.h. */
#include "stowage_kernels.h"

#include "int8_fixedpoint.h"

static int8_t add_one(int32_t a, int32_t b, const stowage_qbinary_params* p) {
  const int32_t sa = stowage_fx_wrap(((int64_t)a + p->a_offset) * ((int64_t)1 << p->left_shift));
  const int32_t sb = stowage_fx_wrap(((int64_t)b + p->b_offset) * ((int64_t)1 << p->left_shift));
  const int32_t ra = stowage_fx_requant(sa, p->a_multiplier, p->a_shift);
  const int32_t rb = stowage_fx_requant(sb, p->b_multiplier, p->b_shift);
  const int32_t sum = stowage_fx_wrap((int64_t)ra + rb);
  const int32_t out = stowage_fx_wrap((int64_t)stowage_fx_requant(sum, p->output_multiplier, p->output_shift) + p->output_offset);
  return (int8_t)stowage_fx_clamp(out, p->act_min, p->act_max);
}

static int8_t mul_one(int32_t a, int32_t b, const stowage_qbinary_params* p) {
  const int32_t prod = (a + p->a_offset) * (b + p->b_offset);
  const int32_t out = stowage_fx_wrap((int64_t)stowage_fx_requant(prod, p->output_multiplier, p->output_shift) + p->output_offset);
  return (int8_t)stowage_fx_clamp(out, p->act_min, p->act_max);
}

static void binary(const int8_t* a, const int8_t* b, int8_t* y, const stowage_qbinary_params* p, int is_mul) {
  int64_t idx[STOWAGE_QMAX_RANK];
  int64_t total = 1, i;
  int32_t d;
  int64_t ao = 0, bo = 0;
  for (d = 0; d < p->rank; ++d) {
    idx[d] = 0;
    total *= p->shape[d];
  }
  for (i = 0; i < total; ++i) {
    y[i] = is_mul ? mul_one(a[ao], b[bo], p) : add_one(a[ao], b[bo], p);
    /* Advance the multi-index (last dim fastest) and both operand offsets. */
    for (d = p->rank - 1; d >= 0; --d) {
      ao += p->a_stride[d];
      bo += p->b_stride[d];
      if (++idx[d] < p->shape[d]) break;
      ao -= p->a_stride[d] * p->shape[d];
      bo -= p->b_stride[d] * p->shape[d];
      idx[d] = 0;
    }
  }
}

void stowage_qadd_s8(const int8_t* a, const int8_t* b, int8_t* y, const stowage_qbinary_params* p) { binary(a, b, y, p, 0); }

void stowage_qmul_s8(const int8_t* a, const int8_t* b, int8_t* y, const stowage_qbinary_params* p) { binary(a, b, y, p, 1); }
