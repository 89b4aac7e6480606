/* wrong_qfc.h: a deliberately wrong fully connected kernel, used only by tests/e2e/BoardKernelsTest.cpp to show
 * that `stowage check-kernels` catches a board kernel that differs from the portable one. Do not use it. */
#ifndef WRONG_QFC_H
#define WRONG_QFC_H

#include <stdint.h>

#include "stowage_kernels.h"

/* stowage_qfully_connected_s8's signature, but requantizes by truncating (a plain shift) instead of TFLite's
 * rounding: most outputs are right, some are off by one. */
void wrong_qfully_connected_s8(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
                               const int32_t* shift, int8_t* y, const stowage_qfc_params* p);

#endif /* WRONG_QFC_H */
