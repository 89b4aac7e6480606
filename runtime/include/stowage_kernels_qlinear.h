/* ONNX integer and quantized-linear kernels (QuantizeLinear, DequantizeLinear, ConvInteger, MatMulInteger,
 * QLinearConv, QLinearMatMul) with the arithmetic of ONNX's reference: int32 accumulation of
 * (x - x_zero_point) * (w - w_zero_point); requantization as round-half-to-even of
 * acc * (x_scale * w_scale / y_scale) (the multiplier in float32, the product in double) plus the output zero
 * point, saturated. Layout NCHW as ONNX defines. Operands are int8 or uint8 (STOWAGE_ELEM_*); scales (float)
 * and zero points (the operand's type) are tensors read at run time, so they may be constants or inputs; a
 * NULL zero point means 0. Included from stowage_kernels.h; implemented in runtime/kernels/onnx_qlinear.c
 * (C99, no malloc). */
#ifndef STOWAGE_KERNELS_QLINEAR_H
#define STOWAGE_KERNELS_QLINEAR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Element type codes of integer operands. */
#define STOWAGE_ELEM_S8 0
#define STOWAGE_ELEM_U8 1
#define STOWAGE_ELEM_S32 2

/* Round half to even (ONNX's rounding for QuantizeLinear, QLinearConv, QLinearMatMul). */
double stowage_round_half_even(double v);

/* QuantizeLinear: y = saturate(round_half_even(x / scale) + zero_point), the division in float32.
 * DequantizeLinear: y = ((float)x - (float)zero_point) * scale, in float32.
 * The tensor is [outer, axis_len, inner]; scale and zero_point hold axis_len entries (1: per tensor).
 * q_type is the quantized side's type: S8 or U8 (quantize), S8, U8 or S32 (dequantize). NaN quantizes to the
 * type's minimum, +-infinity saturates. */
typedef struct {
  int64_t outer;
  int32_t axis_len;
  int64_t inner;
  int32_t q_type;
} stowage_qlinear_quant_params;

void stowage_quantize_linear_f32(const float* x, const float* scale, const void* zero_point, void* y,
                                 const stowage_qlinear_quant_params* p);
void stowage_dequantize_linear_f32(const void* x, const float* scale, const void* zero_point, float* y,
                                   const stowage_qlinear_quant_params* p);

/* How QLinearConv and QLinearMatMul requantize (fields of both parameter structs; all 0 is ONNX's reference):
 * requant_f32 = 0: round_half_even(acc * multiplier) with the product in double (ONNX's reference arithmetic);
 *   1: the product in float32, (float)acc * multiplier, as ONNX Runtime's integer kernels compute it (the
 *   operators that the QDQ pass makes from QuantizeLinear / DequantizeLinear pairs).
 * clamp = 1: the stored value is also clamped to [y_min, y_max] (output units): a Relu or Clip between the float
 *   operator and its QuantizeLinear, absorbed exactly (quantization is monotonic). */
#define STOWAGE_QLINEAR_REQUANT_FIELDS \
  int32_t requant_f32;                 \
  int32_t clamp, y_min, y_max;

/* 2-D (or, with h = kh = 1, 1-D) convolution, NCHW. x is [n, c, h, w]; w is [m, c / group, kh, kw]; y is
 * [n, m, oh, ow]. Pads (top, left) in pixels; padded taps read x_zero_point (they contribute 0).
 * x_zero_point is per tensor; w_scale and w_zero_point hold w_quant_count entries (1, or m: per output
 * channel). ConvInteger writes the int32 accumulators; QLinearConv adds bias (int32 [m] or NULL) and
 * requantizes to y_type (S8 or U8). */
typedef struct {
  int32_t n, c, h, w;
  int32_t m, oh, ow;
  int32_t kh, kw, group;
  int32_t stride_h, stride_w, dil_h, dil_w, pad_top, pad_left;
  int32_t x_type, w_type, y_type;
  int32_t w_quant_count;
  STOWAGE_QLINEAR_REQUANT_FIELDS
} stowage_qlinear_conv_params;

void stowage_conv_integer(const void* x, const void* w, const void* x_zero_point, const void* w_zero_point, int32_t* y,
                          const stowage_qlinear_conv_params* p);
void stowage_qlinear_conv(const void* x, const void* w, const float* x_scale, const void* x_zero_point, const float* w_scale,
                          const void* w_zero_point, const float* y_scale, const void* y_zero_point, const int32_t* bias,
                          void* y, const stowage_qlinear_conv_params* p);

/* Batched matrix product y[batch][m][n] = a[.][m][k] * b[.][k][n] with the batch walk of stowage_matmul_f32
 * (batch_shape over batch_rank dims, element strides per dim, 0 = broadcast). a's scale / zero point hold
 * a_quant_count entries (1, or m: per row), b's b_quant_count (1, or n: per column), y's y_quant_count
 * (1, or m: per row). MatMulInteger writes int32; QLinearMatMul requantizes to y_type (S8 or U8). */
typedef struct {
  int32_t batch_rank;
  int32_t batch_shape[STOWAGE_MAX_RANK];
  int64_t a_stride[STOWAGE_MAX_RANK];
  int64_t b_stride[STOWAGE_MAX_RANK];
  int32_t m, n, k;
  int32_t a_type, b_type, y_type;
  int32_t a_quant_count, b_quant_count, y_quant_count;
  STOWAGE_QLINEAR_REQUANT_FIELDS
} stowage_qlinear_matmul_params;

void stowage_matmul_integer(const void* a, const void* b, const void* a_zero_point, const void* b_zero_point, int32_t* y,
                            const stowage_qlinear_matmul_params* p);
void stowage_qlinear_matmul(const void* a, const void* b, const float* a_scale, const void* a_zero_point,
                            const float* b_scale, const void* b_zero_point, const float* y_scale, const void* y_zero_point,
                            void* y, const stowage_qlinear_matmul_params* p);

/* QLinearAdd / QLinearMul (what the QDQ pass makes of Add and Mul between DequantizeLinear and QuantizeLinear):
 * y = QuantizeLinear(DequantizeLinear(a) op DequantizeLinear(b)) with every step in float32 as the QDQ graph
 * defines it (DequantizeLinear, the float op, division by y_scale, round half to even, + y_zero_point,
 * saturation), so the bytes equal those of the float graph run operator by operator. Compile with
 * -ffp-contract=off (GCC's default with -std=c99) so no step is fused into another. Numpy broadcasting: y is
 * dense with shape[rank]; a_stride / b_stride in elements, 0 where that operand broadcasts. Scales and zero
 * points per tensor. clamp / y_min / y_max as STOWAGE_QLINEAR_REQUANT_FIELDS (requant_f32 is unused). */
typedef struct {
  int32_t rank;
  int32_t shape[STOWAGE_MAX_RANK];
  int64_t a_stride[STOWAGE_MAX_RANK];
  int64_t b_stride[STOWAGE_MAX_RANK];
  int32_t mul;
  int32_t a_type, b_type, y_type;
  STOWAGE_QLINEAR_REQUANT_FIELDS
} stowage_qlinear_binary_params;

void stowage_qlinear_binary(const void* a, const void* b, const float* a_scale, const void* a_zero_point, const float* b_scale,
                            const void* b_zero_point, const float* y_scale, const void* y_zero_point, void* y,
                            const stowage_qlinear_binary_params* p);

/* QLinearAveragePool (AveragePool and GlobalAveragePool between DequantizeLinear and QuantizeLinear): per window
 * the int32 sum of (x - x_zero_point) over its taps inside the input, requantized as ONNX Runtime's
 * QLinearGlobalAveragePool does: round_half_even((float)sum * (x_scale / count / y_scale)) + y_zero_point,
 * saturated, in float32 (the float graph may round an exact .5 mean the other way: ONNX Runtime's own
 * QLinearAveragePool tests allow 1 step). count as stowage_avgpool2d_f32 (count_include_pad). pool holds the geometry (NCHW).
 * clamp / y_min / y_max as STOWAGE_QLINEAR_REQUANT_FIELDS. */
typedef struct {
  stowage_pool2d_params pool;
  int32_t x_type, y_type;
  STOWAGE_QLINEAR_REQUANT_FIELDS
} stowage_qlinear_pool_params;

void stowage_qlinear_avgpool2d(const void* x, const float* x_scale, const void* x_zero_point, const float* y_scale,
                               const void* y_zero_point, void* y, const stowage_qlinear_pool_params* p);
/* QLinearMaxPool (MaxPool between DequantizeLinear and QuantizeLinear): the largest x of each window (taps in the
 * padding take no part), then QuantizeLinear(DequantizeLinear(max)) in float32 steps as the float graph computes it
 * (the value itself when both sides share scale and zero point). Same parameters as stowage_qlinear_avgpool2d. */
void stowage_qlinear_maxpool2d(const void* x, const float* x_scale, const void* x_zero_point, const float* y_scale,
                               const void* y_zero_point, void* y, const stowage_qlinear_pool_params* p);

/* QLinearLookup (an elementwise function between DequantizeLinear and QuantizeLinear, e.g. Sigmoid, as ONNX Runtime's
 * QLinearSigmoid): y[i] = table[x[i]'s byte], count elements. x and y are int8 or uint8 (one byte each); the 256-entry
 * table (y's type, indexed by the input's byte: for int8, entry 128 is x = -128) is computed by the compiler. */
typedef struct {
  int64_t count;
} stowage_qlinear_lookup_params;

void stowage_qlinear_lookup(const void* x, const void* table, void* y, const stowage_qlinear_lookup_params* p);

/* QLinearSoftmax (Softmax between DequantizeLinear and QuantizeLinear, as ONNX Runtime's QLinearSoftmax computes it):
 * x viewed as [outer][len][inner], softmax along len. Per row, with m the row's largest x: sum = the float32 sum, in
 * order, of exp_table[m - x_j]; y_j = saturate(round_half_even((exp_table[m - x_j] * y_factor) / sum) + y_zero_point),
 * each step in float32. exp_table (256 floats, indexed by m - x) and y_factor (floor(1 / y_scale), below 2^22) are
 * computed by the compiler; x_type and y_type are S8 or U8. */
typedef struct {
  int64_t outer;
  int64_t len;
  int64_t inner;
  int32_t x_type, y_type;
  float y_factor;
  int32_t y_zero_point;
} stowage_qlinear_softmax_params;

void stowage_qlinear_softmax(const void* x, const float* exp_table, void* y, const stowage_qlinear_softmax_params* p);

#ifdef __cplusplus
}
#endif

#endif /* STOWAGE_KERNELS_QLINEAR_H */
