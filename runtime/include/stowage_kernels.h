/* Portable C99 kernels called by Stowage-generated code. No malloc, no libc beyond string.h and math.h.
 * Float32 unless stated; spatial ops take NCHW (1-D spatial ops pass h = 1); all sizes are in elements. */
#ifndef STOWAGE_KERNELS_H
#define STOWAGE_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Largest tensor rank the generic (broadcast, strided, reduce, pad) kernels accept. */
#define STOWAGE_MAX_RANK 8

/* ---------------------------------------------------------------- convolution */

/** 2-D convolution (ONNX Conv), also 1-D with h = kh = oh = 1. x[n][c][h][w], w[m][c/group][kh][kw],
 *  bias[m] or NULL, y[n][m][oh][ow]. pad_top/pad_left are the leading pads; the trailing pads are implied
 *  by oh/ow. Used for ConvTranspose too, where w is [c][m/group][kh][kw]. */
typedef struct {
  int32_t n, c, h, w;   /* input */
  int32_t m, kh, kw;    /* output channels, kernel size */
  int32_t oh, ow;       /* output size */
  int32_t stride_h, stride_w;
  int32_t pad_top, pad_left;
  int32_t dil_h, dil_w;
  int32_t group;
  /* A Relu or Clip the compiler fused (not for ConvTranspose): when clamp is 1, every output after the sum becomes
   * y < clamp_min ? clamp_min : (y > clamp_max ? clamp_max : y), the Clip kernel's test (Relu: 0 and +inf). */
  int32_t clamp;
  float clamp_min, clamp_max;
} stowage_conv2d_params;

void stowage_conv2d_f32(const float* x, const float* w, const float* bias, float* y,
                        const stowage_conv2d_params* p);
void stowage_conv_transpose2d_f32(const float* x, const float* w, const float* bias, float* y,
                                  const stowage_conv2d_params* p);

/* ---------------------------------------------------------------- matrix products */

/** y[m][n] = alpha * op(a) * op(b) + beta * c. op(a) is [m][k] (a stored [k][m] when trans_a), op(b) is
 *  [k][n] (b stored [n][k] when trans_b). c is NULL or broadcasts: c_rows in {1, m}, c_cols in {1, n}. */
typedef struct {
  int32_t m, n, k;
  int32_t trans_a, trans_b;
  float alpha, beta;
  int32_t c_rows, c_cols;
  /* A fused Relu or Clip, as in stowage_conv2d_params: when clamp is 1, y is clamped after adding c. */
  int32_t clamp;
  float clamp_min, clamp_max;
} stowage_gemm_params;

void stowage_gemm_f32(const float* a, const float* b, const float* c, float* y, const stowage_gemm_params* p);

/** stowage_gemm_f32 with int8 B and float A (TFLite dynamic-range FULLY_CONNECTED): element (kk, j) of op(b) is
 *  b_scale[j] * (float)b[...] (one scale per output column j, computed in the kernel). Each output sums over kk
 *  in ascending order from 0.0f, then alpha / beta / c and the clamp as stowage_gemm_f32, so the result is
 *  bit-identical to stowage_gemm_f32 on the dequantized B. */
void stowage_gemm_w8_f32(const float* a, const int8_t* b, const float* b_scale, const float* c, float* y,
                         const stowage_gemm_params* p);

/** Batched y[batch][m][n] = a[.][m][k] * b[.][k][n]. The batch index space is batch_shape (batch_rank
 *  dims, 0 means one matrix); a_stride/b_stride give each batch dim's step in elements (0 = broadcast). */
typedef struct {
  int32_t batch_rank;
  int32_t batch_shape[STOWAGE_MAX_RANK];
  int64_t a_stride[STOWAGE_MAX_RANK];
  int64_t b_stride[STOWAGE_MAX_RANK];
  int32_t m, n, k;
} stowage_matmul_params;

void stowage_matmul_f32(const float* a, const float* b, float* y, const stowage_matmul_params* p);

/* ---------------------------------------------------------------- elementwise */

/** Broadcast iteration space: y is dense with `shape` (rank dims); a_stride/b_stride give each dim's step
 *  in elements for the inputs (0 where that input broadcasts). rank 0 is one element. */
typedef struct {
  int32_t rank;
  int32_t shape[STOWAGE_MAX_RANK];
  int64_t a_stride[STOWAGE_MAX_RANK];
  int64_t b_stride[STOWAGE_MAX_RANK];
  /* A Relu or Clip the compiler fused (stowage_binary_f32 only): when clamp is 1, every output becomes
   * y < clamp_min ? clamp_min : (y > clamp_max ? clamp_max : y), the Clip kernel's test (Relu: 0 and +inf). */
  int32_t clamp;
  float clamp_min, clamp_max;
} stowage_broadcast_params;

typedef enum {
  STOWAGE_BINARY_ADD,
  STOWAGE_BINARY_SUB,
  STOWAGE_BINARY_MUL,
  STOWAGE_BINARY_DIV,
  STOWAGE_BINARY_POW,
  STOWAGE_BINARY_MAX,
  STOWAGE_BINARY_MIN,
  STOWAGE_BINARY_PRELU /* a >= 0 ? a : a * b */
} stowage_binary_op;

/** y may alias a or b when that input is not broadcast. */
void stowage_binary_f32(stowage_binary_op op, const float* a, const float* b, float* y,
                        const stowage_broadcast_params* p);
/** stowage_binary_f32(STOWAGE_BINARY_ADD, ...): the compute call of an Add tiled for a target's cores. */
void stowage_add_f32(const float* a, const float* b, float* y, const stowage_broadcast_params* p);

typedef enum {
  STOWAGE_UNARY_RELU,
  STOWAGE_UNARY_LEAKY_RELU,   /* alpha */
  STOWAGE_UNARY_CLIP,         /* alpha = min, beta = max */
  STOWAGE_UNARY_SIGMOID,
  STOWAGE_UNARY_TANH,
  STOWAGE_UNARY_ABS,
  STOWAGE_UNARY_NEG,
  STOWAGE_UNARY_EXP,
  STOWAGE_UNARY_LOG,
  STOWAGE_UNARY_SQRT,
  STOWAGE_UNARY_RECIPROCAL,
  STOWAGE_UNARY_FLOOR,
  STOWAGE_UNARY_CEIL,
  STOWAGE_UNARY_ELU,          /* alpha */
  STOWAGE_UNARY_SELU,         /* alpha, beta = gamma */
  STOWAGE_UNARY_HARD_SIGMOID, /* alpha, beta */
  STOWAGE_UNARY_HARD_SWISH,
  STOWAGE_UNARY_SOFTPLUS,
  STOWAGE_UNARY_SOFTSIGN,
  STOWAGE_UNARY_SIGN,
  STOWAGE_UNARY_ERF,
  STOWAGE_UNARY_SIN,
  STOWAGE_UNARY_COS
} stowage_unary_op;

/** y[i] = f(x[i]) for i < count; y may alias x. */
void stowage_unary_f32(stowage_unary_op op, const float* x, float* y, int64_t count, float alpha, float beta);

/* ---------------------------------------------------------------- normalisation */

/** Softmax (or log-softmax when `log` is non-zero) over the middle dim of x viewed as [outer][len][inner]. */
void stowage_softmax_f32(const float* x, float* y, int64_t outer, int64_t len, int64_t inner, int32_t log);

/** Inference batch norm over x[n][c][spatial]: y = scale * (x - mean) / sqrt(var + epsilon) + bias. */
void stowage_batchnorm_f32(const float* x, const float* scale, const float* bias, const float* mean,
                           const float* var, float* y, int64_t n, int64_t c, int64_t spatial, float epsilon);

/** Local response normalisation across channels (ONNX LRN) over x[n][c][spatial]. */
void stowage_lrn_f32(const float* x, float* y, int64_t n, int64_t c, int64_t spatial, int32_t size, float alpha,
                     float beta, float bias);

/* ---------------------------------------------------------------- pooling */

/** 2-D pooling (1-D with h = kh = oh = 1) over x[n][c][h][w] -> y[n][c][oh][ow]. Windows start at
 *  o * stride - pad_begin; taps outside [0, h) x [0, w) are skipped. Average pooling divides by the number
 *  of taps inside the input, or, with count_include_pad, inside the input plus its pads (a window running
 *  past the trailing pad, as ceil_mode allows, is clipped there). */
typedef struct {
  int32_t n, c, h, w;
  int32_t oh, ow;
  int32_t kh, kw;
  int32_t stride_h, stride_w;
  int32_t pad_top, pad_left, pad_bottom, pad_right;
  int32_t dil_h, dil_w;
  int32_t count_include_pad;
} stowage_pool2d_params;

void stowage_maxpool2d_f32(const float* x, float* y, const stowage_pool2d_params* p);
void stowage_avgpool2d_f32(const float* x, float* y, const stowage_pool2d_params* p);

/** y[i] = mean (or max) of x[i][0..spatial) for i < channels (channels = n * c). */
void stowage_global_avgpool_f32(const float* x, float* y, int64_t channels, int64_t spatial);
void stowage_global_maxpool_f32(const float* x, float* y, int64_t channels, int64_t spatial);
/** The same over the p->n * p->c planes of p->h x p->w (a tile of channels; the other fields are unused): what the
 *  tiled global pools call, bit-identical to the two above. */
void stowage_global_avgpool2d_f32(const float* x, float* y, const stowage_pool2d_params* p);
void stowage_global_maxpool2d_f32(const float* x, float* y, const stowage_pool2d_params* p);

/* ---------------------------------------------------------------- data movement (any element type) */

/** Strided gather: y is dense with out_shape; element (i0..ir-1) is read from
 *  x[in_offset + sum_d i_d * in_stride[d]] (strides in elements, may be 0 or negative). Covers Transpose,
 *  Slice and Expand. elem_size is the element size in bytes. */
typedef struct {
  int32_t rank;
  int32_t out_shape[STOWAGE_MAX_RANK];
  int64_t in_stride[STOWAGE_MAX_RANK];
  int64_t in_offset;
} stowage_strided_params;

void stowage_gather_strided(const void* x, void* y, size_t elem_size, const stowage_strided_params* p);

/** One input of a Concat: for o < outer, copies x[o * in_block .. + in_block) to
 *  y[o * out_block + out_offset ..]. Blocks and offsets in elements. */
void stowage_concat_part(const void* x, void* y, size_t elem_size, int64_t outer, int64_t in_block,
                         int64_t out_block, int64_t out_offset);

typedef enum { STOWAGE_PAD_CONSTANT, STOWAGE_PAD_REFLECT, STOWAGE_PAD_EDGE } stowage_pad_mode;

/** N-d pad: y has out_shape = in_shape + pad_begin + pad_end per dim. */
typedef struct {
  int32_t rank;
  int32_t in_shape[STOWAGE_MAX_RANK];
  int32_t out_shape[STOWAGE_MAX_RANK];
  int32_t pad_begin[STOWAGE_MAX_RANK];
  stowage_pad_mode mode;
  float value;
} stowage_pad_params;

void stowage_pad_f32(const float* x, float* y, const stowage_pad_params* p);

/* ---------------------------------------------------------------- reductions */

typedef enum {
  STOWAGE_REDUCE_MEAN,
  STOWAGE_REDUCE_SUM,
  STOWAGE_REDUCE_MAX,
  STOWAGE_REDUCE_MIN,
  STOWAGE_REDUCE_PROD,
  STOWAGE_REDUCE_SUM_SQUARE,
  STOWAGE_REDUCE_L1,
  STOWAGE_REDUCE_L2
} stowage_reduce_op;

/** Reduces x (in_shape) over the dims with reduce[d] != 0; y holds the kept dims in order (keepdims does
 *  not change the layout). */
typedef struct {
  int32_t rank;
  int32_t in_shape[STOWAGE_MAX_RANK];
  uint8_t reduce[STOWAGE_MAX_RANK];
} stowage_reduce_params;

void stowage_reduce_f32(stowage_reduce_op op, const float* x, float* y, const stowage_reduce_params* p);

#ifdef __cplusplus
}
#endif

/* Int8 (TFLite-arithmetic) kernels. */
#include "stowage_kernels_int8.h"
/* Float32 NHWC kernels (TFLite float models). */
#include "stowage_kernels_nhwc.h"
/* ONNX integer / quantized-linear kernels (QLinearConv, QLinearMatMul, ...). */
#include "stowage_kernels_qlinear.h"

#endif /* STOWAGE_KERNELS_H */
