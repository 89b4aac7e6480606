/* Int8 kernels with TFLite's reference arithmetic (per-channel requantization by a Q0.31 multiplier and a
 * power-of-two shift, fixed-point softmax), NHWC layout, for models imported from .tflite. Included from
 * stowage_kernels.h; implemented in runtime/kernels/int8_*.c and quantize.c. C99, no malloc. */
#ifndef STOWAGE_KERNELS_INT8_H
#define STOWAGE_KERNELS_INT8_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Requantizes a 32-bit accumulator: round(acc * multiplier * 2^(shift - 31)) with TFLite's double rounding
 * (MultiplyByQuantizedMultiplier). multiplier is Q0.31 in [2^30, 2^31) or 0; shift in [-31, 30]. */
int32_t stowage_requantize_s32(int32_t acc, int32_t multiplier, int32_t shift);

/* 2-D convolution (and depthwise convolution), NHWC. x is [n, h, w, c]; y is [n, oh, ow, m].
 * Conv filter w is [m, kh, kw, kc] with c a multiple of kc (groups = c / kc); depthwise filter is
 * [1, kh, kw, m] with m = c * depth_multiplier. bias (int32, may be NULL) is [m]; multiplier and shift
 * (int32) hold one entry per output channel when per_channel, else one. Padding in pixels (top, left;
 * bottom/right follow from the output size). Offsets: input_offset = -input zero point, output_offset =
 * output zero point. Results are clamped to [act_min, act_max] (the fused activation's range).
 * out_pixel_stride: elements between consecutive output pixels of y; 0 (or m) = packed [n, oh, ow, m]. A
 * larger stride writes the output as a channel slice of a wider NHWC tensor (a Concat on the channel axis):
 * pixel i's m channels go to y[i * out_pixel_stride ...], the bytes between them are not touched.
 * row_band: 0 = the output in any order. B > 0 (with n == 1) = the output rows in bands of B rows ([j*B, j*B + B)),
 * band after band in increasing order; -B = the same bands in decreasing order. While it works on band j the kernel
 * reads only the input rows that band's windows cover and writes only band j's rows. That order lets the planner
 * place y over the part of x that no band still to run reads (an overlapping layer: y below x for increasing
 * order, above it for decreasing); every path of both kernels keeps it.
 * requant_f32: 0 = TFLite's requantization (multiplier Q0.31, shift a power of two, as above). 1 = ONNX Runtime's
 * (the QDQ ONNX layers, pass/QdqNhwc.h): multiplier[q] holds the bits of a float32 m (x_scale * w_scale / y_scale) and
 * shift is not read; an output is round_half_even((float)acc * m) + output_offset, the product and the rounding in
 * float32, then clamped to [act_min, act_max] (stowage_qlinear_conv's requant_f32 = 1, byte for byte). */
typedef struct {
  int32_t n, h, w, c;
  int32_t oh, ow, m;
  int32_t kh, kw, kc;
  int32_t stride_h, stride_w, dil_h, dil_w, pad_top, pad_left;
  int32_t depth_multiplier;
  int32_t per_channel;
  int32_t input_offset, output_offset;
  int32_t act_min, act_max;
  int32_t out_pixel_stride;
  int32_t row_band;
  int32_t requant_f32;
} stowage_qconv_params;

void stowage_qconv2d_s8(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
                        const int32_t* shift, int8_t* y, const stowage_qconv_params* p);

/* Bytes of the stack buffers stowage_qconv2d_s8 uses for `p` at most (0: none). Convolutions whose window rows are
 * shorter than 16 bytes (first layers with few input channels) copy two output pixels' windows, zero point outside the
 * input, into one buffer of STOWAGE_IM2COL_BYTES on the stack; pointwise convolutions with at most 213 output channels
 * keep every channel's folded bias, two pixels' outputs, the accumulators of 32 channels and, with the DSP extension,
 * two pixels' inputs widened to 16 bits there (STOWAGE_POINTWISE_STACK_BYTES); other fast-path convolutions keep a
 * widened pair of filters (or one row of each) there (STOWAGE_CONV_FILTER_STACK_BYTES, used with the DSP extension).
 * Not with STOWAGE_SMALL_KERNELS. The compiler reports it per layer (report.json "kernel_stack_bytes"). */
#define STOWAGE_IM2COL_BYTES 1024
#define STOWAGE_IM2COL_STACK_BYTES 1536 /* the im2col buffer and, with the DSP extension, a widened filter pair */
#define STOWAGE_POINTWISE_STACK_BYTES 2048
#define STOWAGE_CONV_FILTER_STACK_BYTES 1536
int32_t stowage_qconv2d_s8_stack_bytes(const stowage_qconv_params* p);
/* 1 when the kernel runs its fast path for `p` (the loops with Arm DSP and Helium variants), 0 for the reference loops
 * (grouped convolutions, dilated window rows, tensors of 2^31 elements or more, STOWAGE_SMALL_KERNELS). */
int stowage_qconv2d_s8_is_fast(const stowage_qconv_params* p);
/* The optional code paths stowage_qconv2d_s8 may take for `p` (bits; 0: only its general loops or the reference ones),
 * answered the same in every build: a pointwise convolution's pixel-pair kernel, the im2col buffer of short window
 * rows, and with the DSP extension filters widened one window row at a time (windows of more than 384 elements whose
 * rows have at most 384, in whole pixels of four-channel groups) and pixel pairs in border rows. The compiler asks it
 * per call and builds a firmware without the paths none of its calls may take (STOWAGE_NO_CONV_POINTWISE,
 * STOWAGE_NO_CONV_IM2COL, STOWAGE_NO_CONV_BY_FILTER_ROWS, STOWAGE_NO_CONV_BORDER_PAIRS); a call would then take the
 * general loops, slower and as exact. */
#define STOWAGE_QCONV_PATH_POINTWISE 1
#define STOWAGE_QCONV_PATH_IM2COL 2
#define STOWAGE_QCONV_PATH_BY_FILTER_ROWS 4
#define STOWAGE_QCONV_PATH_BORDER_PAIRS 8
int stowage_qconv2d_s8_paths(const stowage_qconv_params* p);
int stowage_qdepthwise_conv2d_s8_is_fast(const stowage_qconv_params* p);
/* The path stowage_qdepthwise_conv2d_s8 takes for `p` with the DSP extension (and not Helium), answered the same in
 * every build (0: not the fast path): the pixels (each output pixel through every channel block from the int8 input)
 * for every layer they take, the strip (input rows widened once into a strip) for ONNX Runtime's float requantization
 * (requant_f32) and an input offset outside -127..128. The compiler builds a firmware without the path none of its
 * calls takes (STOWAGE_NO_DW_STRIP, STOWAGE_NO_DW_PIXELS); a call then takes the other, as exact. */
#define STOWAGE_QDW_PATH_STRIP 1
#define STOWAGE_QDW_PATH_PIXELS 2
int stowage_qdepthwise_conv2d_s8_paths(const stowage_qconv_params* p);
/* Bytes of the stack buffers stowage_qdepthwise_conv2d_s8 uses for `p` at most (0: none): with the DSP extension (and
 * not Helium) a fast-path depthwise layer (depth multiplier 1, at most 7x7 taps) on the strip holds its window rows,
 * widened, in a strip of STOWAGE_DW_STRIP_BYTES, and its filters for four channels, 8 bytes a tap; on the pixels
 * STOWAGE_DW_PIXEL_BYTES: a group of up to 64 channels' widened filters, requantizations and one border window.
 * Reported as for stowage_qconv2d_s8_stack_bytes. */
#define STOWAGE_DW_STRIP_BYTES 768
#define STOWAGE_DW_PIXEL_BYTES 3008
int32_t stowage_qdepthwise_conv2d_s8_stack_bytes(const stowage_qconv_params* p);
void stowage_qdepthwise_conv2d_s8(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
                                  const int32_t* shift, int8_t* y, const stowage_qconv_params* p);

/* Fully connected: x is [batches, k] (row-major), w is [m, k], bias [m] or NULL, y is [batches, m].
 * multiplier/shift as for convolution. */
typedef struct {
  int32_t batches, k, m;
  int32_t per_channel;
  int32_t input_offset, output_offset;
  int32_t act_min, act_max;
  int32_t requant_f32; /* as stowage_qconv_params.requant_f32 */
} stowage_qfc_params;

/* 1 when stowage_qfully_connected_s8 runs its fast path for `p` (see stowage_qconv2d_s8_is_fast). */
int stowage_qfully_connected_s8_is_fast(const stowage_qfc_params* p);
/* Bytes of the stack buffer stowage_qfully_connected_s8 uses for `p` at most (0: none): with the DSP extension a batch
 * row is widened to 16 bits there, its offset added: once for every output when its multiple-of-4 part has at most
 * 1,024 elements, else 1,024 at a time per pair of outputs. */
#define STOWAGE_FC_STACK_BYTES 2048
int32_t stowage_qfully_connected_s8_stack_bytes(const stowage_qfc_params* p);
void stowage_qfully_connected_s8(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
                                 const int32_t* shift, int8_t* y, const stowage_qfc_params* p);

/* The same three kernels for layers with requant_f32 = 1 (ONNX Runtime's requantization, the QDQ layers of
 * pass/QdqNhwc): their fast paths in a float32-epilogue copy, so that the TFLite kernels above keep their code (and a
 * firmware without QDQ layers links none of it). The entry points above take requant_f32 layers too, on their
 * reference loops. */
void stowage_qconv2d_s8_rqf32(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
                              const int32_t* shift, int8_t* y, const stowage_qconv_params* p);
void stowage_qdepthwise_conv2d_s8_rqf32(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
                                        const int32_t* shift, int8_t* y, const stowage_qconv_params* p);
void stowage_qfully_connected_s8_rqf32(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
                                       const int32_t* shift, int8_t* y, const stowage_qfc_params* p);

/* 2-D pooling, NHWC; input and output share scale and zero point. Windows are clipped to the input;
 * average divides the sum by the number of taps inside the input, rounding half away from zero. */
typedef struct {
  int32_t n, h, w, c, oh, ow, kh, kw;
  int32_t stride_h, stride_w, pad_top, pad_left;
  int32_t act_min, act_max;
} stowage_qpool_params;

void stowage_qavgpool2d_s8(const int8_t* x, int8_t* y, const stowage_qpool_params* p);
void stowage_qmaxpool2d_s8(const int8_t* x, int8_t* y, const stowage_qpool_params* p);

/* Broadcasting binary op: y[i] over an output of `shape` (rank <= STOWAGE_QMAX_RANK), operands read at
 * element strides a_stride / b_stride (0 = broadcast). ADD: each operand (q + offset) is shifted left by
 * left_shift and requantized by its multiplier/shift, the sum by output_multiplier/shift. MUL:
 * (qa + a_offset) * (qb + b_offset) requantized by output_multiplier/shift (a_/b_multiplier unused). */
#define STOWAGE_QMAX_RANK 6
typedef struct {
  int32_t rank;
  int32_t shape[STOWAGE_QMAX_RANK];
  int64_t a_stride[STOWAGE_QMAX_RANK];
  int64_t b_stride[STOWAGE_QMAX_RANK];
  int32_t a_offset, b_offset, output_offset;
  int32_t left_shift;
  int32_t a_multiplier, a_shift, b_multiplier, b_shift;
  int32_t output_multiplier, output_shift;
  int32_t act_min, act_max;
} stowage_qbinary_params;

void stowage_qadd_s8(const int8_t* a, const int8_t* b, int8_t* y, const stowage_qbinary_params* p);
/* Bytes of stack stowage_qadd_s8 and stowage_qsub_s8 use for `p` at most (0: none): from STOWAGE_QBINARY_TABLE_ELEMENTS
 * output elements (and when the sums stay in the narrow requantization's range), each operand's rescaled value per int8
 * value in a table of 256 int32 (two: STOWAGE_QBINARY_STACK_BYTES), made once per call. */
#define STOWAGE_QBINARY_TABLE_ELEMENTS 1024
#define STOWAGE_QBINARY_STACK_BYTES 2048
int32_t stowage_qadd_s8_stack_bytes(const stowage_qbinary_params* p);
void stowage_qmul_s8(const int8_t* a, const int8_t* b, int8_t* y, const stowage_qbinary_params* p);

/* Softmax over the last axis (outer rows of `depth` elements), int8 in and out (output scale 1/256, zero
 * point -128), TFLite's fixed-point exp path: input_multiplier / input_left_shift scale (x - max) by
 * beta * input_scale into Q5.26; differences below diff_min give exp = 0. */
typedef struct {
  int32_t outer, depth;
  int32_t input_multiplier, input_left_shift, diff_min;
} stowage_qsoftmax_params;

void stowage_qsoftmax_s8(const int8_t* x, int8_t* y, const stowage_qsoftmax_params* p);

/* float32 -> int8: q = clamp(round_half_away(x / scale) + zero_point, -128, 127), division in float. */
typedef struct {
  int32_t count;
  float scale;
  int32_t zero_point;
} stowage_quant_params;

void stowage_quantize_f32_s8(const float* x, int8_t* y, const stowage_quant_params* p);
/* int8 -> float32: y = (float)((double)scale * (q - zero_point)). */
void stowage_dequantize_s8_f32(const int8_t* x, float* y, const stowage_quant_params* p);

/* int8 -> int8 with new quantization (TFLite QUANTIZE between int8 tensors): y = clamp(requantize(q -
 * input_zero_point, multiplier, shift) + output_zero_point); multiplier/shift encode input_scale / output_scale. */
typedef struct {
  int32_t count;
  int32_t input_zero_point, output_zero_point;
  int32_t multiplier, shift;
} stowage_requant_params;

void stowage_requantize_s8(const int8_t* x, int8_t* y, const stowage_requant_params* p);

/* Int8 constant padding with the stowage_pad_params of stowage_pad_f32 (mode must be STOWAGE_PAD_CONSTANT;
 * value holds the int8 pad value, normally the zero point). */
void stowage_pad_s8(const int8_t* x, int8_t* y, const stowage_pad_params* p);

/* Int8 mean over H and W of an NHWC tensor [n, h, w, c] -> [n, c] (TFLite's 4-D MEAN on axes 1, 2):
 * sum of (q - input_zero_point), requantized by multiplier/shift (input_scale / output_scale), divided by
 * h * w rounding half away from zero, plus output_zero_point, clamped to int8. */
typedef struct {
  int32_t n, h, w, c;
  int32_t input_zero_point, output_zero_point;
  int32_t multiplier, shift;
} stowage_qmean_params;

void stowage_qmean_hw_s8(const int8_t* x, int8_t* y, const stowage_qmean_params* p);

/* ---- Activations and more elementwise ops of TFLite int8 models (runtime/kernels/int8_activation.c,
 * int8_elementwise.c) ---- */

/* LOGISTIC / TANH with TFLite Micro's reference integer path (gemmlowp fixed point, no lookup table):
 * q - input_zero_point at or beyond +-input_range_radius saturates; otherwise it is scaled into Q4.27 by
 * input_multiplier / input_left_shift (input_scale * 2^27 as frexp), the fixed-point function is evaluated in
 * Q0.31 and rounded to the output: logistic scale 1/256 zero point -128, tanh scale 1/128 zero point 0. */
typedef struct {
  int32_t count;
  int32_t input_zero_point;
  int32_t input_multiplier, input_left_shift, input_range_radius;
} stowage_qsigmoid_params;

void stowage_qlogistic_s8(const int8_t* x, int8_t* y, const stowage_qsigmoid_params* p);
void stowage_qtanh_s8(const int8_t* x, int8_t* y, const stowage_qsigmoid_params* p);

/* HARD_SWISH, TFLite's 16-bit fixed-point reference: x on a "hires" scale (input_scale / 128), a "reluish"
 * factor in [0, 1] from x rescaled so that 3.0 is 32768 (reluish_multiplier: Q0.15, reluish_shift: power of
 * two, either sign), times x on the output scale (output_multiplier: Q0.15, output_shift <= 0). */
typedef struct {
  int32_t count;
  int32_t input_zero_point, output_zero_point;
  int32_t output_multiplier, output_shift;
  int32_t reluish_multiplier, reluish_shift;
} stowage_qhardswish_params;

void stowage_qhardswish_s8(const int8_t* x, int8_t* y, const stowage_qhardswish_params* p);

/* RELU, RELU6, RELU_N1_TO_1 and LEAKY_RELU: v = q - input_zero_point is requantized by multiplier/shift when
 * v >= 0, else by alpha_multiplier/alpha_shift (RELU*: the same pair; LEAKY_RELU: input_scale * alpha /
 * output_scale), output_zero_point added, clamped to [act_min, act_max]. */
typedef struct {
  int32_t count;
  int32_t input_zero_point, output_zero_point;
  int32_t multiplier, shift, alpha_multiplier, alpha_shift;
  int32_t act_min, act_max;
} stowage_qrelu_params;

void stowage_qrelu_s8(const int8_t* x, int8_t* y, const stowage_qrelu_params* p);

/* SUB: as stowage_qadd_s8 with the rescaled second operand subtracted. MAXIMUM / MINIMUM: the larger / smaller
 * raw int8 value (all three tensors share one quantization; offsets and multipliers unused). */
void stowage_qsub_s8(const int8_t* a, const int8_t* b, int8_t* y, const stowage_qbinary_params* p);
void stowage_qmaximum_s8(const int8_t* a, const int8_t* b, int8_t* y, const stowage_qbinary_params* p);
void stowage_qminimum_s8(const int8_t* a, const int8_t* b, int8_t* y, const stowage_qbinary_params* p);

#ifdef __cplusplus
}
#endif

#endif /* STOWAGE_KERNELS_INT8_H */
