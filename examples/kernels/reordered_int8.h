/* reordered_int8.h: an example of a board's own int8 kernels ("bring your own kernel", docs/kernels.md). Each has
 * the signature of the portable kernel it replaces (runtime/include/stowage_kernels_int8.h) and computes the same
 * bytes with its loops arranged differently. examples/boards/cortex-m7-kernels.toml names them in [[kernels]]. */
#ifndef REORDERED_INT8_H
#define REORDERED_INT8_H

#include <stdint.h>

#include "stowage_kernels.h"

/* Replaces stowage_qconv2d_s8: filter taps outside, blocks of 8 output channels inside (one input pixel is read
 * once per block instead of once per output channel). */
void board_qconv2d_s8(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
                      const int32_t* shift, int8_t* y, const stowage_qconv_params* p);

/* Replaces stowage_qdepthwise_conv2d_s8: the filter taps inside the input are found once per output row and
 * column, so the inner loops have no bounds checks. */
void board_qdepthwise_conv2d_s8(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
                                const int32_t* shift, int8_t* y, const stowage_qconv_params* p);

/* Replaces stowage_qfully_connected_s8: the input offset is folded out of the inner loop,
 * sum(w * (x + offset)) = sum(w * x) + offset * sum(w). */
void board_qfully_connected_s8(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
                               const int32_t* shift, int8_t* y, const stowage_qfc_params* p);

#endif /* REORDERED_INT8_H */
