/* wrong_qfc.c: see wrong_qfc.h. The bug: (acc * multiplier) >> (31 - shift) truncates where TFLite rounds. */
#include "wrong_qfc.h"

#include <stddef.h>

void wrong_qfully_connected_s8(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
                               const int32_t* shift, int8_t* y, const stowage_qfc_params* p) {
  int32_t b, o, d;
  for (b = 0; b < p->batches; ++b)
    for (o = 0; o < p->m; ++o) {
      const int32_t q = p->per_channel ? o : 0;
      int64_t acc = 0;
      int32_t out;
      for (d = 0; d < p->k; ++d) acc += (int32_t)w[(ptrdiff_t)o * p->k + d] * ((int32_t)x[(ptrdiff_t)b * p->k + d] + p->input_offset);
      if (bias != NULL) acc += bias[o];
      acc = acc * multiplier[q];
      acc = 31 - shift[q] >= 0 ? acc / ((int64_t)1 << (31 - shift[q])) : acc * ((int64_t)1 << (shift[q] - 31));
      out = (int32_t)acc + p->output_offset;
      if (out < p->act_min) out = p->act_min;
      if (out > p->act_max) out = p->act_max;
      y[(ptrdiff_t)b * p->m + o] = (int8_t)out;
    }
}
