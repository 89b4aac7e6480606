/* Int8 broadcasting ADD, SUB, MUL, MAXIMUM and MINIMUM with TFLite's reference arithmetic (ADD/SUB: both
 * operands rescaled to a common scale with a 20-bit left shift, added/subtracted, requantized; MUL: product of
 * offset operands requantized; MAXIMUM/MINIMUM: raw values compared, one shared quantization).
 * Declared in stowage_kernels_int8.h. */
#include "stowage_kernels.h"

#include "int8_fixedpoint.h"

enum binary_op { OP_ADD, OP_SUB, OP_MUL, OP_MAX, OP_MIN };

/* The 32-bit wrapping arithmetic of TFLite's int32 steps (requantization: stowage_rq, int8_fixedpoint.h). */
static inline int32_t wrap_add(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }

/* The three requantizations of a binary op, prepared once per call. */
typedef struct {
  stowage_rq a, b, out;
} binary_rq;

static inline int8_t add_one(int32_t a, int32_t b, const stowage_qbinary_params* p, const binary_rq* q, int subtract) {
  const int32_t sa = (int32_t)((uint32_t)(a + p->a_offset) << p->left_shift);
  const int32_t sb = (int32_t)((uint32_t)(b + p->b_offset) << p->left_shift);
  const int32_t ra = stowage_rq_apply(sa, &q->a);
  const int32_t rb = stowage_rq_apply(sb, &q->b);
  const int32_t sum = subtract ? (int32_t)((uint32_t)ra - (uint32_t)rb) : wrap_add(ra, rb);
  const int32_t out = wrap_add(stowage_rq_apply(sum, &q->out), p->output_offset);
  return (int8_t)stowage_fx_clamp(out, p->act_min, p->act_max);
}

/* add_one when binary_is_narrow holds: the three requantizations in their narrow form, the 20-bit left shift of the
 * operands folded into the one before the rounding high multiply. */
static inline int8_t add_one_narrow(int32_t a, int32_t b, const stowage_qbinary_params* p, const binary_rq* q, int subtract) {
  const int32_t xa = stowage_fx_smmulr((int32_t)((uint32_t)(a + p->a_offset) << (p->left_shift + q->a.left + 1)), q->a.multiplier);
  const int32_t xb = stowage_fx_smmulr((int32_t)((uint32_t)(b + p->b_offset) << (p->left_shift + q->b.left + 1)), q->b.multiplier);
  const int32_t ra = (int32_t)((uint32_t)xa + (uint32_t)q->a.half + (uint32_t)((xa >> 31) & q->a.neg)) >> q->a.right;
  const int32_t rb = (int32_t)((uint32_t)xb + (uint32_t)q->b.half + (uint32_t)((xb >> 31) & q->b.neg)) >> q->b.right;
  const int32_t out = stowage_rq_apply_narrow(subtract ? ra - rb : ra + rb, &q->out) + p->output_offset;
  return (int8_t)stowage_fx_clamp(out, p->act_min, p->act_max);
}

/* Elements from which a narrow ADD or SUB rescales its operands through tables (STOWAGE_QBINARY_TABLE_ELEMENTS, the
 * header): each operand's rescaled value depends on its int8 value alone, so 256 entries per operand, made once per call
 * by add_one_narrow's own steps, replace two requantizations per element. */
static int32_t rescale_narrow(int32_t v, int32_t offset, int32_t left_shift, const stowage_rq* q) {
  return stowage_rq_narrow_steps(v + offset, left_shift + q->left + 1, q->multiplier, (uint32_t)q->half, q->neg, q->right);
}

/* One row of n outputs of a narrow ADD (subtract: SUB) with the operands rescaled by tables ta, tb (indexed by value +
 * 128), operand steps as and bs, the constants in locals (through p every int8 store may alias them). */
static void add_row_tables(const int8_t* a, const int8_t* b, int8_t* y, int32_t n, int32_t as, int32_t bs, const int32_t* ta,
                           const int32_t* tb, const stowage_qbinary_params* p, const stowage_rq* q_out, int subtract) {
  const int32_t out_off = p->output_offset, lo = p->act_min, hi = p->act_max;
  const stowage_rq out = *q_out;
  int32_t i;
  if (as == 1 && bs == 1 && lo == -128 && hi == 127 && stowage_rq_offset_folds(out.right, out_off)) {
    /* Both operands contiguous, the full int8 range: the output offset in the rounding constant, one SSAT. */
    const int32_t *ta0 = ta + 128, *tb0 = tb + 128;
    const int32_t mult = out.multiplier, up = out.left + 1, right = out.right, neg = out.neg;
    const uint32_t add = (uint32_t)out.half + ((uint32_t)out_off << right);
    const int8_t* const end = a + n;
    if (subtract) {
      for (; a < end; ++a, ++b, ++y) *y = (int8_t)stowage_fx_ssat8(stowage_rq_narrow_steps(ta0[*a] - tb0[*b], up, mult, add, neg, right));
    } else {
      for (; a < end; ++a, ++b, ++y) *y = (int8_t)stowage_fx_ssat8(stowage_rq_narrow_steps(ta0[*a] + tb0[*b], up, mult, add, neg, right));
    }
    return;
  }
  for (i = 0; i < n; ++i, a += as, b += bs) {
    const int32_t ra = ta[*a + 128], rb = tb[*b + 128];
    const int32_t v = stowage_rq_apply_narrow(subtract ? ra - rb : ra + rb, &out) + out_off;
    y[i] = (int8_t)(v < lo ? lo : (v > hi ? hi : v));
  }
}

/* Whether every step of add_one stays in the narrow requantizations' range: |operand + offset| <= 128 + |offset|
 * shifted by left_shift within each input's bound, the rescaled operands (at most their input times 2^shift for a
 * positive shift, plus one for the rounding) summed within the output's. */
static int binary_is_narrow(const stowage_qbinary_params* p) {
  const int64_t ma = (int64_t)(128 + (p->a_offset < 0 ? -(int64_t)p->a_offset : p->a_offset)) << p->left_shift;
  const int64_t mb = (int64_t)(128 + (p->b_offset < 0 ? -(int64_t)p->b_offset : p->b_offset)) << p->left_shift;
  const int64_t ra = (ma << (p->a_shift > 0 ? p->a_shift : 0)) + 1, rb = (mb << (p->b_shift > 0 ? p->b_shift : 0)) + 1;
  if (p->left_shift < 0 || p->left_shift > 30 || p->a_shift > 30 || p->b_shift > 30) return 0;
  return ma <= stowage_rq_narrow_bound(p->a_shift) && mb <= stowage_rq_narrow_bound(p->b_shift) &&
         ra + rb <= stowage_rq_narrow_bound(p->output_shift);
}

static inline int8_t mul_one(int32_t a, int32_t b, const stowage_qbinary_params* p, const binary_rq* q) {
  const int32_t prod = (a + p->a_offset) * (b + p->b_offset);
  const int32_t out = wrap_add(stowage_rq_apply(prod, &q->out), p->output_offset);
  return (int8_t)stowage_fx_clamp(out, p->act_min, p->act_max);
}

/* The innermost dimension runs as a tight loop per operation (operand steps 0 or 1 in practice); the outer
 * dimensions advance a multi-index once per row. */
static void binary(const int8_t* a, const int8_t* b, int8_t* y, const stowage_qbinary_params* p, enum binary_op op) {
  int64_t idx[STOWAGE_QMAX_RANK];
  int64_t rows = 1, r;
  int32_t d;
  int64_t ao = 0, bo = 0;
  const int32_t last = p->rank - 1;
  const int32_t inner = p->rank > 0 ? p->shape[last] : 1;
  const int64_t as = p->rank > 0 ? p->a_stride[last] : 0, bs = p->rank > 0 ? p->b_stride[last] : 0;
  binary_rq q;
  int narrow;
  q.a = stowage_rq_make(p->a_multiplier, p->a_shift);
  q.b = stowage_rq_make(p->b_multiplier, p->b_shift);
  q.out = stowage_rq_make(p->output_multiplier, p->output_shift);
  narrow = (op == OP_ADD || op == OP_SUB) && binary_is_narrow(p);
  /* A narrow ADD or SUB of at least STOWAGE_QBINARY_TABLE_ELEMENTS with operand steps in 32 bits: rescaling tables. */
  const int tables = narrow && stowage_qadd_s8_stack_bytes(p) > 0 && as >= 0 && bs >= 0 && as <= INT32_MAX && bs <= INT32_MAX;
  int32_t ta[256], tb[256];
  if (tables)
    for (d = 0; d < 256; ++d) {
      ta[d] = rescale_narrow(d - 128, p->a_offset, p->left_shift, &q.a);
      tb[d] = rescale_narrow(d - 128, p->b_offset, p->left_shift, &q.b);
    }
  for (d = 0; d < last; ++d) {
    idx[d] = 0;
    rows *= p->shape[d];
  }
  if (inner <= 0) return;
  for (r = 0; r < rows; ++r) {
    const int8_t* ap = a + ao;
    const int8_t* bp = b + bo;
    int8_t* yp = y + r * inner;
    int32_t i;
    switch (op) {
      case OP_ADD:
        if (tables) add_row_tables(ap, bp, yp, inner, (int32_t)as, (int32_t)bs, ta, tb, p, &q.out, 0);
        else if (narrow)
          for (i = 0; i < inner; ++i) yp[i] = add_one_narrow(ap[i * as], bp[i * bs], p, &q, 0);
        else
          for (i = 0; i < inner; ++i) yp[i] = add_one(ap[i * as], bp[i * bs], p, &q, 0);
        break;
      case OP_SUB:
        if (tables) add_row_tables(ap, bp, yp, inner, (int32_t)as, (int32_t)bs, ta, tb, p, &q.out, 1);
        else if (narrow)
          for (i = 0; i < inner; ++i) yp[i] = add_one_narrow(ap[i * as], bp[i * bs], p, &q, 1);
        else
          for (i = 0; i < inner; ++i) yp[i] = add_one(ap[i * as], bp[i * bs], p, &q, 1);
        break;
      case OP_MUL:
        for (i = 0; i < inner; ++i) yp[i] = mul_one(ap[i * as], bp[i * bs], p, &q);
        break;
      case OP_MAX:
        for (i = 0; i < inner; ++i) yp[i] = ap[i * as] > bp[i * bs] ? ap[i * as] : bp[i * bs];
        break;
      case OP_MIN:
        for (i = 0; i < inner; ++i) yp[i] = ap[i * as] < bp[i * bs] ? ap[i * as] : bp[i * bs];
        break;
    }
    /* Advance the outer multi-index (last outer dim fastest) and both operand offsets. */
    for (d = last - 1; d >= 0; --d) {
      ao += p->a_stride[d];
      bo += p->b_stride[d];
      if (++idx[d] < p->shape[d]) break;
      ao -= p->a_stride[d] * p->shape[d];
      bo -= p->b_stride[d] * p->shape[d];
      idx[d] = 0;
    }
  }
}

int32_t stowage_qadd_s8_stack_bytes(const stowage_qbinary_params* p) {
  int64_t elements = 1;
  int32_t d;
  for (d = 0; d < p->rank; ++d) elements *= p->shape[d];
  return elements >= STOWAGE_QBINARY_TABLE_ELEMENTS && binary_is_narrow(p) ? STOWAGE_QBINARY_STACK_BYTES : 0;
}

void stowage_qadd_s8(const int8_t* a, const int8_t* b, int8_t* y, const stowage_qbinary_params* p) { binary(a, b, y, p, OP_ADD); }

void stowage_qsub_s8(const int8_t* a, const int8_t* b, int8_t* y, const stowage_qbinary_params* p) { binary(a, b, y, p, OP_SUB); }

void stowage_qmul_s8(const int8_t* a, const int8_t* b, int8_t* y, const stowage_qbinary_params* p) { binary(a, b, y, p, OP_MUL); }

void stowage_qmaximum_s8(const int8_t* a, const int8_t* b, int8_t* y, const stowage_qbinary_params* p) { binary(a, b, y, p, OP_MAX); }

void stowage_qminimum_s8(const int8_t* a, const int8_t* b, int8_t* y, const stowage_qbinary_params* p) { binary(a, b, y, p, OP_MIN); }
