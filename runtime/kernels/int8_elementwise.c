/* Int8 broadcasting ADD, SUB, MUL, MAXIMUM and MINIMUM with TFLite's reference arithmetic (ADD/SUB: both
 * operands rescaled to a common scale with a 20-bit left shift, added/subtracted, requantized; MUL: product of
 * offset operands requantized; MAXIMUM/MINIMUM: raw values compared, one shared quantization).
 * Declared in stowage_kernels_int8.h. */
#include "stowage_kernels.h"

#include "int8_fixedpoint.h"

enum binary_op { OP_ADD, OP_SUB, OP_MUL, OP_MAX, OP_MIN };

static int8_t add_one(int32_t a, int32_t b, const stowage_qbinary_params* p, int subtract) {
  const int32_t sa = stowage_fx_wrap(((int64_t)a + p->a_offset) * ((int64_t)1 << p->left_shift));
  const int32_t sb = stowage_fx_wrap(((int64_t)b + p->b_offset) * ((int64_t)1 << p->left_shift));
  const int32_t ra = stowage_fx_requant(sa, p->a_multiplier, p->a_shift);
  const int32_t rb = stowage_fx_requant(sb, p->b_multiplier, p->b_shift);
  const int32_t sum = stowage_fx_wrap(subtract ? (int64_t)ra - rb : (int64_t)ra + rb);
  const int32_t out = stowage_fx_wrap((int64_t)stowage_fx_requant(sum, p->output_multiplier, p->output_shift) + p->output_offset);
  return (int8_t)stowage_fx_clamp(out, p->act_min, p->act_max);
}

static int8_t mul_one(int32_t a, int32_t b, const stowage_qbinary_params* p) {
  const int32_t prod = (a + p->a_offset) * (b + p->b_offset);
  const int32_t out = stowage_fx_wrap((int64_t)stowage_fx_requant(prod, p->output_multiplier, p->output_shift) + p->output_offset);
  return (int8_t)stowage_fx_clamp(out, p->act_min, p->act_max);
}

static int8_t apply(enum binary_op op, int32_t a, int32_t b, const stowage_qbinary_params* p) {
  switch (op) {
    case OP_ADD: return add_one(a, b, p, 0);
    case OP_SUB: return add_one(a, b, p, 1);
    case OP_MUL: return mul_one(a, b, p);
    case OP_MAX: return (int8_t)(a > b ? a : b);
    case OP_MIN: return (int8_t)(a < b ? a : b);
  }
  return 0;
}

static void binary(const int8_t* a, const int8_t* b, int8_t* y, const stowage_qbinary_params* p, enum binary_op op) {
  int64_t idx[STOWAGE_QMAX_RANK];
  int64_t total = 1, i;
  int32_t d;
  int64_t ao = 0, bo = 0;
  for (d = 0; d < p->rank; ++d) {
    idx[d] = 0;
    total *= p->shape[d];
  }
  for (i = 0; i < total; ++i) {
    y[i] = apply(op, a[ao], b[bo], p);
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

void stowage_qadd_s8(const int8_t* a, const int8_t* b, int8_t* y, const stowage_qbinary_params* p) { binary(a, b, y, p, OP_ADD); }

void stowage_qsub_s8(const int8_t* a, const int8_t* b, int8_t* y, const stowage_qbinary_params* p) { binary(a, b, y, p, OP_SUB); }

void stowage_qmul_s8(const int8_t* a, const int8_t* b, int8_t* y, const stowage_qbinary_params* p) { binary(a, b, y, p, OP_MUL); }

void stowage_qmaximum_s8(const int8_t* a, const int8_t* b, int8_t* y, const stowage_qbinary_params* p) { binary(a, b, y, p, OP_MAX); }

void stowage_qminimum_s8(const int8_t* a, const int8_t* b, int8_t* y, const stowage_qbinary_params* p) { binary(a, b, y, p, OP_MIN); }
