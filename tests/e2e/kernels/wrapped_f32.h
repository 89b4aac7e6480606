/* wrapped_f32.h: float32 board kernels for tests/e2e/BoardKernelsTest.cpp on the bundled zoo models. test_conv2d_f32
 * calls the portable kernel (right by construction: the test is about the plumbing); wrong_gemm_f32 adds a small
 * error to one output, which `stowage check-kernels` must catch. */
#ifndef WRAPPED_F32_H
#define WRAPPED_F32_H

#include "stowage_kernels.h"

void test_conv2d_f32(const float* x, const float* w, const float* bias, float* y, const stowage_conv2d_params* p);
void wrong_gemm_f32(const float* a, const float* b, const float* c, float* y, const stowage_gemm_params* p);

#endif /* WRAPPED_F32_H */
