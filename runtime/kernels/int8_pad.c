/* Int8 constant padding (TFLite PAD on quantized tensors: the pad value is the zero point, passed as
 * p->value). N-d, any rank up to STOWAGE_MAX_RANK; reflect/edge modes are float-only. Declared in
 * stowage_kernels_int8.h. */
#include "stowage_kernels.h"

void stowage_pad_s8(const int8_t* x, int8_t* y, const stowage_pad_params* p) {
  int64_t idx[STOWAGE_MAX_RANK];
  int64_t in_stride[STOWAGE_MAX_RANK];
  int64_t total = 1, i;
  int32_t d;
  const int8_t value = (int8_t)(p->value < -128.0f ? -128 : (p->value > 127.0f ? 127 : (int32_t)p->value));
  for (d = p->rank - 1; d >= 0; --d) {
    in_stride[d] = d == p->rank - 1 ? 1 : in_stride[d + 1] * p->in_shape[d + 1];
    idx[d] = 0;
    total *= p->out_shape[d];
  }
  for (i = 0; i < total; ++i) {
    int64_t src = 0;
    int inside = 1;
    for (d = 0; d < p->rank; ++d) {
      const int64_t s = idx[d] - p->pad_begin[d];
      if (s < 0 || s >= p->in_shape[d]) {
        inside = 0;
        break;
      }
      src += s * in_stride[d];
    }
    y[i] = inside ? x[src] : value;
    for (d = p->rank - 1; d >= 0; --d) {
      if (++idx[d] < p->out_shape[d]) break;
      idx[d] = 0;
    }
  }
}
