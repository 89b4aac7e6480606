/* Table-driven QLinear kernels made by the QDQ pass from Sigmoid and Softmax between DequantizeLinear and QuantizeLinear
 * (ONNX Runtime's QLinearSigmoid and QLinearSoftmax): a byte-indexed lookup, and the softmax of exponentials read from a
 * table. The compiler computes both tables; the kernels only read them. Declared in stowage_kernels_qlinear.h. */
#include "stowage_kernels.h"

void stowage_qlinear_lookup(const void* x, const void* table, void* y, const stowage_qlinear_lookup_params* p) {
  const uint8_t* xb = (const uint8_t*)x;
  const uint8_t* t = (const uint8_t*)table;
  uint8_t* yb = (uint8_t*)y;
  int64_t i;
  for (i = 0; i < p->count; ++i) yb[i] = t[xb[i]];
}

/* Round half to even of 0 <= v < 2^22 in float32 arithmetic: adding and subtracting 1.5 * 2^23 leaves the nearest
 * integer under the default rounding mode (each step an assignment, rounded to float). */
static float qtable_round_half_even(float v) {
  const float magic = 12582912.0f; /* 1.5 * 2^23 */
  const float shifted = v + magic;
  return shifted - magic;
}

static int32_t qtable_load(const void* x, int32_t type, int64_t i) {
  return type == STOWAGE_ELEM_U8 ? (int32_t)((const uint8_t*)x)[i] : (int32_t)((const int8_t*)x)[i];
}

void stowage_qlinear_softmax(const void* x, const float* exp_table, void* y, const stowage_qlinear_softmax_params* p) {
  const int64_t len = p->len, inner = p->inner;
  const int32_t lo = p->y_type == STOWAGE_ELEM_U8 ? 0 : -128, hi = p->y_type == STOWAGE_ELEM_U8 ? 255 : 127;
  int64_t o, i, j;
  for (o = 0; o < p->outer; ++o)
    for (i = 0; i < inner; ++i) {
      const int64_t base = o * len * inner + i;
      int32_t xmax = qtable_load(x, p->x_type, base);
      float sum = 0.0f;
      for (j = 1; j < len; ++j) {
        const int32_t v = qtable_load(x, p->x_type, base + j * inner);
        if (v > xmax) xmax = v;
      }
      /* In order along the axis, in float32, as ONNX Runtime adds them. */
      for (j = 0; j < len; ++j) sum += exp_table[xmax - qtable_load(x, p->x_type, base + j * inner)];
      for (j = 0; j < len; ++j) {
        const int64_t at = base + j * inner;
        const float e = exp_table[xmax - qtable_load(x, p->x_type, at)];
        const float scaled = e * p->y_factor;
        const float ratio = scaled / sum;
        int32_t q = (int32_t)qtable_round_half_even(ratio) + p->y_zero_point;
        q = q < lo ? lo : (q > hi ? hi : q);
        if (p->y_type == STOWAGE_ELEM_U8) ((uint8_t*)y)[at] = (uint8_t)q;
        else ((int8_t*)y)[at] = (int8_t)q;
      }
    }
}
