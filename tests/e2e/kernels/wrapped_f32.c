/* wrapped_f32.c: see wrapped_f32.h. */
#include "wrapped_f32.h"

void test_conv2d_f32(const float* x, const float* w, const float* bias, float* y, const stowage_conv2d_params* p) {
  stowage_conv2d_f32(x, w, bias, y, p);
}

void wrong_gemm_f32(const float* a, const float* b, const float* c, float* y, const stowage_gemm_params* p) {
  stowage_gemm_f32(a, b, c, y, p);
  y[p->m * p->n - 1] += 0.001f;
}
