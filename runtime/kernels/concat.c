/* Concat kernel: copies one input of a concatenation into its slice of the output (any element type). */
#include <string.h>

#include "stowage_kernels.h"

void stowage_concat_part(const void* x, void* y, size_t elem_size, int64_t outer, int64_t in_block,
                         int64_t out_block, int64_t out_offset) {
  const unsigned char* src = (const unsigned char*)x;
  unsigned char* dst = (unsigned char*)y;
  const size_t bytes = (size_t)in_block * elem_size;
  int64_t o;
  for (o = 0; o < outer; ++o)
    memcpy(dst + (size_t)(o * out_block + out_offset) * elem_size, src + (size_t)(o * in_block) * elem_size, bytes);
}
