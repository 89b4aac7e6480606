/* Int8 convolution, depthwise convolution and fully connected layers in NHWC with TFLite's reference
 * arithmetic: int32 accumulation of filter * (input + input_offset), bias, per-channel requantization,
 * output offset, clamp to the activation range. Declared in stowage_kernels_int8.h.
 * Fast paths give the same bytes: the input offset is folded into a per-channel correction
 * (bias + input_offset * sum of the filter) where the whole window is inside the input, border pixels add it per
 * tap over the clipped window, and the dot products run on the DSP extension or Helium where the core has them
 * (int8_dot.h). Shapes the fast paths do not cover (grouped convolution, dilated columns, depth multipliers) run the
 * reference loops, kept below. -DSTOWAGE_SMALL_KERNELS keeps only those: the smallest code, the slowest. */
#include "stowage_kernels.h"

#include "int8_dot.h"
#include "int8_fixedpoint.h"

/* ONNX Runtime's requantization (requant_f32 = 1, stowage_kernels_int8.h): the float32 m whose bits multiplier[q]
 * holds, and round_half_even((float)acc * m) + output_offset clamped to [lo, hi], in float32 as stowage_qlinear_conv's
 * requant_f32 (onnx_qlinear.c): adding and subtracting 1.5 * 2^23 leaves the nearest integer, ties to even, for
 * |v| < 2^22; larger values saturate every 8-bit result and are clamped first; NaN gives lo (ONNX Runtime: the type's
 * minimum, then the clamp). Compile without contracting the multiply into the add (-std=c99, or -ffp-contract=off).
 * The fast loops below get it when int8_conv_rqf32.c compiles this file a second time with STOWAGE_RQF32_VARIANT
 * (entry points stowage_*_rqf32): the TFLite kernels' code here is not touched by it (RQ_MAKE, REQUANT_ROW,
 * REQUANT_PAIR and FC_OUT are their own calls without the variant). */
static inline float rq_f32_of(int32_t bits) {
  float m;
  memcpy(&m, &bits, sizeof m);
  return m;
}

static inline int8_t out_f32(int32_t acc, float m, int32_t output_offset, int32_t lo, int32_t hi) {
  float v = (float)acc * m;
  int32_t q;
  if (v != v) return (int8_t)lo;
  if (v > 4194304.0f) v = 4194304.0f;
  if (v < -4194304.0f) v = -4194304.0f;
  {
    const float shifted = v + 12582912.0f; /* an assignment: rounded to float where sums carry excess precision */
    const float r = shifted - 12582912.0f;
    q = (int32_t)r + output_offset;
  }
  return (int8_t)(q < lo ? lo : (q > hi ? hi : q));
}

#if defined(STOWAGE_RQF32_VARIANT)
#define RQ_MAKE(m, s) stowage_rq_make((m), 0)
#define REQUANT_ROW(acc, n, q, y, stride, off, lo, hi) requant_row_f32(acc, n, rq_f32_of((q)->multiplier), y, stride, off, lo, hi)
#define REQUANT_PAIR(a, b, n, mult, sh, pc, oa, ob, off, lo, hi, fold) \
  ((void)(sh), (void)(fold), requant_pair_f32(a, b, n, mult, pc, oa, ob, off, lo, hi))
#define FC_OUT(acc, m, s, p, narrow) ((void)(s), (void)(narrow), out_f32(acc, rq_f32_of(m), (p)->output_offset, (p)->act_min, (p)->act_max))
#define POINTWISE_NARROW(expr) 1
#define REF_REQUANT_F32(p) ((p)->requant_f32)
#else
#define RQ_MAKE(m, s) stowage_rq_make((m), (s))
#define REQUANT_ROW requant_row
#define REQUANT_PAIR requant_pair
#define FC_OUT fc_out
#define POINTWISE_NARROW(expr) (expr)
/* The TFLite entry points never see a requant_f32 layer: every caller (lowering, tiled layers, the simulator's
 * engine) names the _rqf32 entry points for those, so their reference loops carry no float epilogue. */
#define REF_REQUANT_F32(p) 0
#endif

/* The reference loops: the only kernels with STOWAGE_SMALL_KERNELS; otherwise fallbacks for shapes the fast paths do
 * not take (grouped convolutions, dilated window rows, 2^31-element tensors), kept out of line and compiled for size. */
#if !defined(STOWAGE_SMALL_KERNELS) && defined(__GNUC__)
#define STOWAGE_FALLBACK __attribute__((cold, noinline))
#else
#define STOWAGE_FALLBACK
#endif

/* STOWAGE_INT8_FAST_PATHS_ONLY: the compiler's define for a firmware whose every int8 convolution, depthwise convolution
 * and fully connected call takes its fast path (it asks the *_is_fast functions below for each call): the reference
 * loops are left out (1.2 KB of code on a Cortex-M4), and a call that would need them stops the program
 * (STOWAGE_REFERENCE_MISSING) instead of computing anything. Ignored with STOWAGE_SMALL_KERNELS, which runs them only. */
#if defined(STOWAGE_INT8_FAST_PATHS_ONLY) && !defined(STOWAGE_SMALL_KERNELS)
#define STOWAGE_REFERENCE_LOOPS 0
#if defined(__GNUC__)
#define STOWAGE_REFERENCE_MISSING() __builtin_trap()
#else
#include <stdlib.h>
#define STOWAGE_REFERENCE_MISSING() abort()
#endif
#else
#define STOWAGE_REFERENCE_LOOPS 1
#endif

int32_t stowage_requantize_s32(int32_t acc, int32_t multiplier, int32_t shift) {
  return stowage_fx_requant(acc, multiplier, shift);
}

/* Output row `k` of `p->oh` in the kernel's row order: ascending, or descending with a negative row_band. */
static inline int32_t row_at(const stowage_qconv_params* p, int32_t k) { return p->row_band < 0 ? p->oh - 1 - k : k; }

#if STOWAGE_REFERENCE_LOOPS
STOWAGE_FALLBACK static int8_t finish(int32_t acc, const int32_t* bias, const int32_t* multiplier, const int32_t* shift, int32_t ch,
                     int32_t per_channel, int32_t output_offset, int32_t act_min, int32_t act_max, int32_t f32) {
  const int32_t q = per_channel ? ch : 0;
  if (bias != NULL) acc = stowage_fx_wrap((int64_t)acc + bias[ch]);
  if (f32) return out_f32(acc, rq_f32_of(multiplier[q]), output_offset, act_min, act_max);
  acc = stowage_fx_requant(acc, multiplier[q], shift[q]);
  acc = stowage_fx_wrap((int64_t)acc + output_offset);
  return (int8_t)stowage_fx_clamp(acc, act_min, act_max);
}

STOWAGE_FALLBACK static void qconv2d_ref(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
                        const int32_t* shift, int8_t* y, const stowage_qconv_params* p) {
  const int32_t groups = p->c / p->kc;
  const int32_t per_group = p->m / groups;
  const int64_t pixel_stride = p->out_pixel_stride > 0 ? p->out_pixel_stride : p->m;
  int32_t b, k, oy, ox, oc, fy, fx, ic;
  for (b = 0; b < p->n; ++b)
    for (k = 0; k < p->oh; ++k)
      for (ox = 0, oy = row_at(p, k); ox < p->ow; ++ox)
        for (oc = 0; oc < p->m; ++oc) {
          const int32_t iy0 = oy * p->stride_h - p->pad_top;
          const int32_t ix0 = ox * p->stride_w - p->pad_left;
          const int32_t c0 = (oc / per_group) * p->kc;
          int32_t acc = 0;
          for (fy = 0; fy < p->kh; ++fy) {
            const int32_t iy = iy0 + p->dil_h * fy;
            if (iy < 0 || iy >= p->h) continue;
            for (fx = 0; fx < p->kw; ++fx) {
              const int32_t ix = ix0 + p->dil_w * fx;
              const int8_t* xp;
              const int8_t* wp;
              if (ix < 0 || ix >= p->w) continue;
              xp = x + (((int64_t)b * p->h + iy) * p->w + ix) * p->c + c0;
              wp = w + (((int64_t)oc * p->kh + fy) * p->kw + fx) * p->kc;
              for (ic = 0; ic < p->kc; ++ic) acc += (int32_t)wp[ic] * ((int32_t)xp[ic] + p->input_offset);
            }
          }
          y[(((int64_t)b * p->oh + oy) * p->ow + ox) * pixel_stride + oc] =
              finish(acc, bias, multiplier, shift, oc, p->per_channel, p->output_offset, p->act_min, p->act_max, REF_REQUANT_F32(p));
        }
}

STOWAGE_FALLBACK static void qdepthwise_ref(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
                                  const int32_t* shift, int8_t* y, const stowage_qconv_params* p) {
  const int64_t pixel_stride = p->out_pixel_stride > 0 ? p->out_pixel_stride : p->m;
  int32_t b, k, oy, ox, ic, dm, fy, fx;
  for (b = 0; b < p->n; ++b)
    for (k = 0; k < p->oh; ++k)
      for (ox = 0, oy = row_at(p, k); ox < p->ow; ++ox)
        for (ic = 0; ic < p->c; ++ic)
          for (dm = 0; dm < p->depth_multiplier; ++dm) {
            const int32_t oc = dm + ic * p->depth_multiplier;
            const int32_t iy0 = oy * p->stride_h - p->pad_top;
            const int32_t ix0 = ox * p->stride_w - p->pad_left;
            int32_t acc = 0;
            for (fy = 0; fy < p->kh; ++fy) {
              const int32_t iy = iy0 + p->dil_h * fy;
              if (iy < 0 || iy >= p->h) continue;
              for (fx = 0; fx < p->kw; ++fx) {
                const int32_t ix = ix0 + p->dil_w * fx;
                if (ix < 0 || ix >= p->w) continue;
                acc += (int32_t)w[((int64_t)fy * p->kw + fx) * p->m + oc] *
                       ((int32_t)x[(((int64_t)b * p->h + iy) * p->w + ix) * p->c + ic] + p->input_offset);
              }
            }
            y[(((int64_t)b * p->oh + oy) * p->ow + ox) * pixel_stride + oc] =
                finish(acc, bias, multiplier, shift, oc, p->per_channel, p->output_offset, p->act_min, p->act_max, REF_REQUANT_F32(p));
          }
}

STOWAGE_FALLBACK static void qfully_connected_ref(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
                                 const int32_t* shift, int8_t* y, const stowage_qfc_params* p) {
  int32_t b, o, d;
  for (b = 0; b < p->batches; ++b)
    for (o = 0; o < p->m; ++o) {
      const int8_t* xp = x + (int64_t)b * p->k;
      const int8_t* wp = w + (int64_t)o * p->k;
      int32_t acc = 0;
      for (d = 0; d < p->k; ++d) acc += (int32_t)wp[d] * ((int32_t)xp[d] + p->input_offset);
      y[(int64_t)b * p->m + o] = finish(acc, bias, multiplier, shift, o, p->per_channel, p->output_offset, p->act_min, p->act_max, REF_REQUANT_F32(p));
    }
}
#endif


#if !defined(STOWAGE_SMALL_KERNELS)
/* ---- Fast paths ---- */

/* Requantizes an accumulator that holds the bias already, adds the output offset, clamps. */
static inline int8_t out_s8(int32_t acc, const stowage_rq* q, int32_t output_offset, int32_t lo, int32_t hi, int narrow) {
  const int32_t v =
      (int32_t)((uint32_t)(narrow ? stowage_rq_apply_narrow(acc, q) : stowage_rq_apply(acc, q)) + (uint32_t)output_offset);
  return (int8_t)(v < lo ? lo : (v > hi ? hi : v));
}

/* bias + input_offset * sum(w[0..n)), modulo 2^32 as the reference's int32 accumulation. */
static inline int32_t folded_bias(const int32_t* bias, int32_t ch, int32_t input_offset, const int8_t* w, int32_t n) {
  const uint32_t b = bias != NULL ? (uint32_t)bias[ch] : 0u;
  return (int32_t)(b + (uint32_t)input_offset * (uint32_t)stowage_sum_s8(w, n));
}

/* The largest |accumulator - bias| of a layer: (128 + |input_offset|) * 128 * taps (every |x + offset| <= 128 +
 * |offset|, every |w| <= 128). */
static int64_t acc_most_without_bias(int32_t input_offset, int64_t taps) {
  const int64_t off = input_offset < 0 ? -(int64_t)input_offset : input_offset;
  return (128 + off) * 128 * taps;
}

/* Whether every accumulator of a layer stays in stowage_rq_apply_narrow's range for every channel's requantization: an
 * accumulator is bias + sum over `taps` products (x + input_offset) * w, |x + input_offset| <= 128 + |input_offset| and
 * |w| <= 128. nbias channels of bias (NULL: none), nq of multiplier/shift (1 for one quantization). */
__attribute__((noinline)) static int acc_is_narrow(const int32_t* bias, int32_t nbias, const int32_t* shift, int32_t nq, int32_t input_offset, int64_t taps) {
  const int64_t most = acc_most_without_bias(input_offset, taps);
  int32_t i, left_shift = 0;
  int64_t room;
  for (i = 0; i < nq; ++i)
    if (shift[i] > left_shift) left_shift = shift[i]; /* the largest left shift has the smallest bound */
  room = stowage_rq_narrow_bound(left_shift) - most;  /* what |bias| may add */
  if (room < 0) return 0;
  if (bias != NULL && room < INT32_MAX) {
    /* |b| <= room as one unsigned compare: b + room in [0, 2 room]. */
    const uint32_t r = (uint32_t)room, span = 2u * r;
    for (i = 0; i < nbias; ++i)
      if ((uint32_t)bias[i] + r > span) return 0;
  }
  return 1;
}

/* Whether channel ch's accumulators (bias[ch] + at most `most`) stay in stowage_rq_apply_narrow's range for its
 * requantization's shift: decided per channel, so that one channel with a huge bias (a dead filter, its scale near
 * zero) does not take the whole layer off the narrow form. */
__attribute__((noinline, unused)) static int channel_is_narrow(const int32_t* bias, int32_t ch, int32_t shift, int64_t most) {
  const int64_t bv = bias != NULL ? bias[ch] : 0;
  return most + (bv < 0 ? -bv : bv) <= stowage_rq_narrow_bound(shift);
}

/* A channel's narrowness where the whole layer's (`narrow`) is not proven: checked per channel on cores without
 * Helium, whose requantization loops are scalar (Helium requantizes four outputs at a time exactly either way). */
#if defined(STOWAGE_DOT_MVE)
#define CHANNEL_NARROW(narrow, bias, ch, shift, most) ((void)(most), (narrow))
#else
#define CHANNEL_NARROW(narrow, bias, ch, shift, most) ((narrow) || channel_is_narrow((bias), (ch), (shift), (most)))
#endif

/* First output index >= 0 whose window starts inside the input, and one past the last whose window ends inside. */
static void interior_range(int32_t out, int32_t in, int32_t k, int32_t stride, int32_t dil, int32_t pad, int32_t* lo, int32_t* hi) {
  const int32_t span = dil * (k - 1);
  int32_t a = (pad + stride - 1) / stride;
  int32_t b = in - 1 - span + pad < 0 ? 0 : (in - 1 - span + pad) / stride + 1;
  if (a > out) a = out;
  if (b > out) b = out;
  if (b < a) b = a;
  *lo = a;
  *hi = b;
}

/* stowage_dot_2x2 over `rows` segments of n elements, the inputs' segments row_stride bytes apart, the filters' n. */
#if defined(STOWAGE_DOT_ASM)
#define dot_2x2_rows stowage_dot_2x2_rows_dsp
#else
static void dot_2x2_rows(const int8_t* xa, const int8_t* xb, const int8_t* w0, const int8_t* w1, int32_t n, int32_t rows,
                         int32_t row_stride, int32_t* acc) {
  int32_t r;
  for (r = 0; r < rows; ++r) {
    stowage_dot_2x2(xa, xb, w0, w1, n, acc);
    xa += row_stride;
    xb += row_stride;
    w0 += n;
    w1 += n;
  }
}
#endif

/* The 2x2 sums acc (pixels i and i + 1 of the first filter, then of the second) into a row chunk's accumulators. */
static inline void store_acc_2x2(int32_t* acc0, int32_t* acc1, int32_t i, const int32_t* acc) {
  acc0[i] = acc[0];
  acc0[i + 1] = acc[1];
  acc1[i] = acc[2];
  acc1[i + 1] = acc[3];
}

/* Output pixels per row chunk: their accumulators wait in a small buffer, then one channel's outputs are requantized
 * in one loop with that channel's constants in registers. */
#define STOWAGE_ROW_CHUNK 32

/* Output rows per band (stowage_qconv_params.row_band): the whole output when the layer asks for no band order. */
static int32_t row_band_of(const stowage_qconv_params* p) {
  if (p->row_band != 0) return p->row_band > 0 ? p->row_band : -p->row_band;
  return p->oh > 0 ? p->oh : 1;
}

/* First output row of the `k`-th band the kernel runs: bands in ascending order, or descending with a negative
 * row_band. */
static int32_t band_start(const stowage_qconv_params* p, int32_t band, int32_t k) {
  const int32_t bands = (p->oh + band - 1) / band;
  return (p->row_band < 0 ? bands - 1 - k : k) * band;
}

/* Filter rows and columns up to which a depthwise convolution takes the fast path (7x7): with the DSP extension its four
 * channels' filters are widened on the stack, 8 bytes a tap, beside the strip of STOWAGE_DW_STRIP_BYTES. */
#define STOWAGE_DW_STRIP_K 7
#define STOWAGE_DW_STRIP_TAPS (STOWAGE_DW_STRIP_K * STOWAGE_DW_STRIP_K)
#define STOWAGE_DW_STRIP_WORDS (STOWAGE_DW_STRIP_BYTES / 4)

/* Output columns a strip chunk of `p` covers (at most a requantized row chunk): 0 when the strip cannot hold the kh
 * window rows of one output column. */
static int32_t dw_strip_cols(const stowage_qconv_params* p) {
  const int32_t in_cols = STOWAGE_DW_STRIP_WORDS / (2 * p->kh), span = (p->kw - 1) * p->dil_w + 1;
  int32_t n;
  if (in_cols < span) return 0;
  n = (in_cols - span) / p->stride_w + 1;
  return n < STOWAGE_ROW_CHUNK ? n : STOWAGE_ROW_CHUNK;
}

/* The pixel path's buffers (qdepthwise_pixels): the widened filters of a group of channels (64 channels of a 3x3 window,
 * fewer of larger windows), their requantizations, and one gathered window of the group. */
#define STOWAGE_DW_PIXEL_CHANNELS 64
#define STOWAGE_DW_PIXEL_WEIGHT_WORDS 288
#define STOWAGE_DW_PIXEL_WINDOW_WORDS (STOWAGE_DW_PIXEL_WEIGHT_WORDS / 2)
#if STOWAGE_DW_PIXEL_BYTES != 20 * STOWAGE_DW_PIXEL_CHANNELS + 4 * (STOWAGE_DW_PIXEL_WEIGHT_WORDS + STOWAGE_DW_PIXEL_WINDOW_WORDS)
#error "STOWAGE_DW_PIXEL_BYTES names the pixel path's buffers"
#endif

/* Whether the pixel path takes `p`: its window's fill byte, -input_offset, is an int8 (every zero point is). */
static int dw_pixels_fit(const stowage_qconv_params* p) { return p->input_offset >= -127 && p->input_offset <= 128; }

/* Whether a fast-path depthwise layer takes the pixel path (qdepthwise_pixels) rather than the strip
 * (qdepthwise_strip) on the DSP extension: every layer the pixels take (not ONNX Runtime's float requantization, an
 * int8 fill byte). Measured on the Cortex-M4 (QEMU, instructions per layer, `--profile-layers`, fd85a78 / b7d7c6c), the pixels
 * cost 0.43x to 0.78x of the strip on short rows, many channels and layers run in bands of a row (KWS: 770,800 ->
 * 333,760 a layer; VWW's 6x6x128 layers 278,160 -> 216,040) and 1.11x on wide rows of eight channels (VWW's
 * 48x48x8: 770,360 -> 857,080);
 * choosing per layer gained 0.14% on VWW and cost both paths' code (3.4 KB, over the 24 KiB a model's firmware
 * code is held to), so one path serves all. Decided in every build from `p` alone, so that the compiler's stack
 * report names the buffers the device uses. */
static int dw_takes_pixels(const stowage_qconv_params* p) { return !p->requant_f32 && dw_pixels_fit(p); }

/* Whether the strip holds `p`'s window (what stowage_qdepthwise_conv2d_s8_is_fast asks in every build, so that the
 * compiler's answer, from its host build, holds on the device): at most 7x7 taps, one output column's window rows. */
static int dw_strip_fits(const stowage_qconv_params* p) {
  return p->kh <= STOWAGE_DW_STRIP_K && p->kw <= STOWAGE_DW_STRIP_K && dw_strip_cols(p) > 0;
}

#if !defined(STOWAGE_RQF32_VARIANT)
/* y[i * stride] = the requantized, offset, clamped acc[i] for i < n, all of one channel. */
static void requant_row(const int32_t* acc, int32_t n, const stowage_rq* q, int8_t* y, int32_t stride, int32_t output_offset,
                        int32_t lo, int32_t hi) {
  int32_t i;
#if defined(STOWAGE_DOT_MVE)
  /* Four outputs per step: VQRDMULH is the rounding doubling high multiply (saturating only INT32_MIN^2); the rounding
   * shift rounds ties away from zero by subtracting 1 from negative values first (gemmlowp's fixup) and then rounding
   * half up (VRSHL); the bytes go out with one scatter store. */
  if (n >= 4) {
    const uint32_t offsets_init[4] = {0u, (uint32_t)stride, 2u * (uint32_t)stride, 3u * (uint32_t)stride};
    const uint32x4_t offsets = vld1q_u32(offsets_init);
    const int32x4_t left = vdupq_n_s32(q->left), right = vdupq_n_s32(-q->right);
    const int32x4_t vlo = vdupq_n_s32(lo), vhi = vdupq_n_s32(hi);
    for (i = 0; i + 4 <= n; i += 4, y += 4 * stride) {
      int32x4_t v = vqrdmulhq_n_s32(vshlq_s32(vld1q_s32(acc + i), left), q->multiplier);
      v = vrshlq_s32(vqaddq_s32(v, vshrq_n_s32(vandq_s32(v, right), 31)), right);
      v = vminq_s32(vmaxq_s32(vaddq_n_s32(v, output_offset), vlo), vhi);
      vstrbq_scatter_offset_s32(y, offsets, v);
    }
    acc += i;
    n -= i;
  }
#endif
  if (q->narrow && q->right > 0) {
    /* stowage_rq_apply_narrow with its constants in registers, the rounding's -1 for negative values unconditional. */
    const int32_t mult = q->multiplier, up = q->left + 1, right = q->right;
    const uint32_t half = (uint32_t)q->half;
#if !defined(STOWAGE_DOT_MVE) /* with Helium at most 3 outputs are left: the set-up would cost more than it saves */
    if (stowage_rq_offset_folds(right, output_offset)) {
      /* The output offset joins the rounding constant before the shift; the full int8 range (no activation, or one the
       * output range holds) clamps with one saturating instruction. */
      const uint32_t add = half + ((uint32_t)output_offset << right);
      const int32_t* const end = acc + n;
      if (lo == -128 && hi == 127) {
        for (; acc < end; ++acc, y += stride) *y = (int8_t)stowage_fx_ssat8(stowage_rq_narrow_steps(*acc, up, mult, add, -1, right));
      } else {
        for (; acc < end; ++acc, y += stride)
          *y = (int8_t)stowage_fx_clamp(stowage_rq_narrow_steps(*acc, up, mult, add, -1, right), lo, hi);
      }
      return;
    }
#endif
    for (i = 0; i < n; ++i, y += stride) {
      int32_t v = stowage_rq_narrow_steps(acc[i], up, mult, half, -1, right);
      v = (int32_t)((uint32_t)v + (uint32_t)output_offset);
      *y = (int8_t)(v < lo ? lo : (v > hi ? hi : v));
    }
    return;
  }
  for (i = 0; i < n; ++i, y += stride) *y = out_s8(acc[i], q, output_offset, lo, hi, 0);
}
#endif

#if defined(STOWAGE_RQF32_VARIANT)
/* y[i * stride] = ONNX Runtime's requantization of acc[i] (out_f32) for i < n. */
static void requant_row_f32(const int32_t* acc, int32_t n, float m, int8_t* y, int32_t stride, int32_t output_offset,
                            int32_t lo, int32_t hi) {
  int32_t i;
  for (i = 0; i < n; ++i, y += stride) *y = out_f32(acc[i], m, output_offset, lo, hi);
}
#endif

/* Output channels whose zero-point correction a banded convolution computes once (the rest once per band): 256 bytes
 * of stack in the fast convolution and depthwise kernels. */
#define STOWAGE_CORR_CACHE 64

/* Filter rows up to which a convolution pairs the pixels of its border rows (their row sums on the stack). */
#define STOWAGE_CONV_PAIR_ROWS 8

/* Window elements (kernel height x the multiple-of-4 part of kernel width x channels) up to which a convolution widens
 * each filter pair once per band (4 bytes each on the stack: STOWAGE_CONV_FILTER_STACK_BYTES); larger windows take the
 * byte-wise loop. */
#define STOWAGE_CONV_WIDE_TAPS (STOWAGE_CONV_FILTER_STACK_BYTES / 4)

#define STOWAGE_IM2COL_WIDE_TAPS ((STOWAGE_IM2COL_STACK_BYTES - STOWAGE_IM2COL_BYTES) / 4)

#if defined(STOWAGE_DOT_WIDENED)
/* acc[0] += (x + offset).w0, acc[1] += (x + offset).w1 over n elements (a multiple of 4), the filters widened by
 * stowage_widen_pair (per 4 elements w0's even and odd halfword pairs, then w1's): a border pixel of a convolution
 * whose interior widened its filter pair, 13 instructions per 8 multiply-accumulates against 17 widening the filters
 * again (stowage_dot_1x2_offset). off2 = the offset in both halfwords. */
__attribute__((noinline)) static void dot_1x2_offset_wfilters(const int8_t* x, const int32_t* ww, int32_t n, int32_t off2,
                                                              int32_t* acc) {
  int32_t a0 = acc[0], a1 = acc[1], i;
  for (i = 0; i < n; i += 4, ww += 4) {
    const int32_t v = stowage_load4(x + i);
    const int32_t xe = __sadd16(__sxtb16(v), off2), xo = __sadd16(stowage_sxtb16_odd(v), off2);
    a0 = __smlad(xe, ww[0], a0);
    a0 = __smlad(xo, ww[1], a0);
    a1 = __smlad(xe, ww[2], a1);
    a1 = __smlad(xo, ww[3], a1);
  }
  acc[0] = a0;
  acc[1] = a1;
}
#endif

/* Whether qconv2d_fast widens `p`'s filters one window row at a time (conv_pair_by_filter_rows, with the DSP
 * extension): the whole window is too large to widen (more than STOWAGE_CONV_WIDE_TAPS elements in its rows'
 * multiple-of-4 parts), one row is not, and rows are whole pixels of four-channel groups (3x3 over 44 to 128 channels). */
static int conv_by_filter_rows(const stowage_qconv_params* p) {
  const int64_t seg = (int64_t)p->kw * p->c, seg4 = seg & ~(int64_t)3;
  return !(seg4 > 0 && p->kh * seg4 <= STOWAGE_CONV_WIDE_TAPS) && p->c % 4 == 0 && seg > 0 && seg <= STOWAGE_CONV_WIDE_TAPS;
}

/* Whether qconv2d_fast pairs pixels of `p`'s border rows (conv_border_row_pair, with the DSP extension): its filter
 * pair is widened whole, its rows are whole pixels of four-channel groups, at most STOWAGE_CONV_PAIR_ROWS window rows,
 * and some output row's window leaves the input while two neighbouring columns' windows stay inside it. */
static int conv_pairs_border_rows(const stowage_qconv_params* p) {
  const int64_t seg = (int64_t)p->kw * p->c;
  int32_t oy_lo, oy_hi, ox_lo, ox_hi;
  if (seg <= 0 || p->c % 4 != 0 || p->kh > STOWAGE_CONV_PAIR_ROWS || p->kh * seg > STOWAGE_CONV_WIDE_TAPS) return 0;
  interior_range(p->oh, p->h, p->kh, p->stride_h, p->dil_h, p->pad_top, &oy_lo, &oy_hi);
  interior_range(p->ow, p->w, p->kw, p->stride_w, 1, p->pad_left, &ox_lo, &ox_hi);
  return (oy_lo > 0 || oy_hi < p->oh) && ox_hi - ox_lo >= 2;
}

/* STOWAGE_NO_CONV_POINTWISE, STOWAGE_NO_CONV_IM2COL, STOWAGE_NO_CONV_BY_FILTER_ROWS, STOWAGE_NO_CONV_BORDER_PAIRS: the
 * compiler's defines for a firmware none of whose convolutions may take that path (stowage_qconv2d_s8_paths answers
 * per call): the path's code is left out (0.7 to 1.8 KB each on a Cortex-M4, docs/firmware.md), and a call that would
 * take it runs qconv2d_fast's general loops instead, slower and as exact. */
#if !defined(STOWAGE_NO_CONV_POINTWISE)
#define STOWAGE_CONV_POINTWISE 1
#else
#define STOWAGE_CONV_POINTWISE 0
#endif
#if !defined(STOWAGE_NO_CONV_IM2COL)
#define STOWAGE_CONV_IM2COL 1
#else
#define STOWAGE_CONV_IM2COL 0
#endif
#if defined(STOWAGE_DOT_WIDENED) && !defined(STOWAGE_NO_CONV_BY_FILTER_ROWS)
#define STOWAGE_CONV_BY_FILTER_ROWS 1
#else
#define STOWAGE_CONV_BY_FILTER_ROWS 0
#endif
#if defined(STOWAGE_DOT_WIDENED) && !defined(STOWAGE_NO_CONV_BORDER_PAIRS)
#define STOWAGE_CONV_BORDER_PAIRS 1
#else
#define STOWAGE_CONV_BORDER_PAIRS 0
#endif

/* STOWAGE_NO_DW_STRIP, STOWAGE_NO_DW_PIXELS: the same for the two depthwise paths of the DSP extension
 * (stowage_qdepthwise_conv2d_s8_paths): without the strip every fast-path layer takes the pixels, without the pixels
 * the strip (ONNX Runtime's float requantization, STOWAGE_RQF32_VARIANT, has only the strip). */
#if defined(STOWAGE_DOT_WIDENED) && !defined(STOWAGE_NO_DW_STRIP)
#define STOWAGE_DW_STRIP 1
#else
#define STOWAGE_DW_STRIP 0
#endif
#if defined(STOWAGE_DOT_WIDENED) && !defined(STOWAGE_RQF32_VARIANT) && !defined(STOWAGE_NO_DW_PIXELS)
#define STOWAGE_DW_PIXELS 1
#else
#define STOWAGE_DW_PIXELS 0
#endif

#if STOWAGE_CONV_BY_FILTER_ROWS
/* One pair of output channels of a convolution (oc and oc + 1, or oc twice when `two` is 0): filters, biases and
 * requantizations. */
typedef struct {
  const int8_t *w0, *w1;
  int32_t b0, b1, oc, two;
  const stowage_rq *r0, *r1;
} conv_pair;

/* Output columns whose window columns lie inside the input: [ox_lo, ox_hi). */
typedef struct {
  int32_t ox_lo, ox_hi;
} conv_interior;

/* Output rows [oy0, oy_end) of image b for one channel pair of qconv2d_fast when the whole window is too large to
 * widen but one window row is not: the rows' pixels in chunks of STOWAGE_ROW_CHUNK in raster order; per chunk, each
 * filter row is widened into ww once and passed over every pixel of the chunk whose input row it reads, the sums
 * waiting in acc0 / acc1 (from the bias); then each output row's part of the chunk is requantized. A pixel whose window
 * columns lie inside the input takes the row as x.w plus the offset times the row's filter sum (pixels of one output
 * row two at a time, border rows too); one on the left or right border takes its clipped row with the offset per tap. */
__attribute__((noinline)) static void conv_pair_by_filter_rows(const int8_t* x, int8_t* y, const stowage_qconv_params* p, int32_t b, int32_t oy0,
                                     int32_t oy_end, const conv_pair* cp, const conv_interior* in, int32_t* ww,
                                     int32_t* acc0, int32_t* acc1) {
  const int32_t c = p->c, kh = p->kh, kw = p->kw, seg = kw * c, ow = p->ow;
  const int32_t step_bytes = p->stride_w * c, total = (oy_end - oy0) * ow;
  const int32_t pix_stride = p->out_pixel_stride > 0 ? p->out_pixel_stride : p->m;
  const int32_t off2 = (int32_t)(((uint32_t)p->input_offset & 0xFFFFu) | ((uint32_t)p->input_offset << 16));
  int32_t j0;
  for (j0 = 0; j0 < total; j0 += STOWAGE_ROW_CHUNK) {
    const int32_t j1 = total - j0 < STOWAGE_ROW_CHUNK ? total : j0 + STOWAGE_ROW_CHUNK;
    int32_t j, fy;
    for (j = j0; j < j1; ++j) {
      acc0[j - j0] = cp->b0;
      acc1[j - j0] = cp->b1;
    }
    for (fy = 0; fy < kh; ++fy) {
      const int8_t *w0r = cp->w0 + fy * seg, *w1r = cp->w1 + fy * seg;
      /* The offset times each filter row's sum, modulo 2^32 as the reference's accumulation. */
      const uint32_t rs0 = (uint32_t)folded_bias(NULL, 0, p->input_offset, w0r, seg);
      const uint32_t rs1 = (uint32_t)folded_bias(NULL, 0, p->input_offset, w1r, seg);
      stowage_widen_pair(w0r, w1r, seg, ww);
      for (j = j0; j < j1;) {
        const int32_t oy = oy0 + j / ow, ox = j % ow, i = j - j0;
        const int32_t iy = oy * p->stride_h - p->pad_top + fy * p->dil_h, ix0 = ox * p->stride_w - p->pad_left;
        const int8_t* xr = x + (((int32_t)b * p->h + iy) * p->w + ix0) * c;
        const int cols_inside = ox >= in->ox_lo && ox < in->ox_hi;
        int32_t acc[4];
        if (iy < 0 || iy >= p->h) {
          ++j;
          continue;
        }
        if (cols_inside && ox + 1 < in->ox_hi && j + 1 < j1) {
          /* ox + 1 < ox_hi <= ow: both pixels in this output row. */
          acc[0] = (int32_t)((uint32_t)acc0[i] + rs0);
          acc[1] = (int32_t)((uint32_t)acc0[i + 1] + rs0);
          acc[2] = (int32_t)((uint32_t)acc1[i] + rs1);
          acc[3] = (int32_t)((uint32_t)acc1[i + 1] + rs1);
          stowage_dot_2x2_wfilters(xr, step_bytes, ww, seg, acc);
          store_acc_2x2(acc0, acc1, i, acc);
          j += 2;
          continue;
        }
        if (cols_inside) {
          acc[0] = (int32_t)((uint32_t)acc0[i] + rs0);
          acc[1] = (int32_t)((uint32_t)acc1[i] + rs1);
          dot_1x2_offset_wfilters(xr, ww, seg, 0, acc);
        } else {
          const int32_t fx0 = ix0 < 0 ? -ix0 : 0, fx1 = kw < p->w - ix0 ? kw : p->w - ix0;
          acc[0] = acc0[i];
          acc[1] = acc1[i];
          if (fx1 > fx0) dot_1x2_offset_wfilters(xr + fx0 * c, ww + fx0 * c, (fx1 - fx0) * c, off2, acc);
        }
        acc0[i] = acc[0];
        acc1[i] = acc[1];
        ++j;
      }
    }
    for (j = j0; j < j1;) {
      const int32_t oy = oy0 + j / ow, ox = j % ow, n = ow - ox < j1 - j ? ow - ox : j1 - j;
      int8_t* yp = y + (((int32_t)b * p->oh + oy) * ow + ox) * pix_stride + cp->oc;
      REQUANT_ROW(acc0 + (j - j0), n, cp->r0, yp, pix_stride, p->output_offset, p->act_min, p->act_max);
      if (cp->two) REQUANT_ROW(acc1 + (j - j0), n, cp->r1, yp + 1, pix_stride, p->output_offset, p->act_min, p->act_max);
      j += n;
    }
  }
}
#endif

#if STOWAGE_CONV_BORDER_PAIRS
/* rs0[fy], rs1[fy] = offset times the sum of row fy (seg elements) of filters w0, w1, modulo 2^32, for fy < kh. */
__attribute__((noinline)) static void conv_row_sums(const int8_t* w0, const int8_t* w1, int32_t kh, int32_t seg, int32_t offset,
                                                    int32_t* rs0, int32_t* rs1) {
  int32_t fy;
  for (fy = 0; fy < kh; ++fy) {
    rs0[fy] = folded_bias(NULL, 0, offset, w0 + fy * seg, seg);
    rs1[fy] = folded_bias(NULL, 0, offset, w1 + fy * seg, seg);
  }
}

/* acc = the 2x2 sums of output pixels at input columns ix0 and ix0 + stride (window columns inside the input) of a
 * border output row starting at input row iy0, for the filter pair widened whole in ww (rows of kw * c elements):
 * bias b0 / b1, then per window row inside the input the offset times its filter sums (rs0, rs1) and its products. */
__attribute__((noinline)) static void conv_border_row_pair(const int8_t* x, const stowage_qconv_params* p, int32_t b, int32_t iy0,
                                                           int32_t ix0, const int32_t* ww, const int32_t* rs0, const int32_t* rs1,
                                                           int32_t b0, int32_t b1, int32_t* acc) {
  const int32_t c = p->c, seg = p->kw * c;
  int32_t fy;
  acc[0] = acc[1] = b0;
  acc[2] = acc[3] = b1;
  for (fy = 0; fy < p->kh; ++fy) {
    const int32_t iy = iy0 + p->dil_h * fy;
    if (iy < 0 || iy >= p->h) continue;
    acc[0] = (int32_t)((uint32_t)acc[0] + (uint32_t)rs0[fy]);
    acc[1] = (int32_t)((uint32_t)acc[1] + (uint32_t)rs0[fy]);
    acc[2] = (int32_t)((uint32_t)acc[2] + (uint32_t)rs1[fy]);
    acc[3] = (int32_t)((uint32_t)acc[3] + (uint32_t)rs1[fy]);
    stowage_dot_2x2_wfilters(x + (((int32_t)b * p->h + iy) * p->w + ix0) * c, p->stride_w * c, ww + fy * seg, seg, acc);
  }
}
#endif

/* Convolution with groups == 1 and contiguous window rows (dil_w == 1): per band of output rows (row_band; the whole
 * output by default), output channels two at a time (the filter rows stay in place while the band's pixels pass), interior pixels two at a time with the folded correction, border
 * pixels one at a time over their clipped window with the offset added per tap; outputs requantized a row chunk at a
 * time. */
static void qconv2d_fast(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
                         const int32_t* shift, int8_t* y, const stowage_qconv_params* p) {
  const int32_t c = p->c, kh = p->kh, kw = p->kw, seg = kw * c, K = kh * seg;
  const int32_t pix_stride = p->out_pixel_stride > 0 ? p->out_pixel_stride : p->m;
  const int32_t row_bytes = p->w * c, krow_bytes = p->dil_h * row_bytes, step_bytes = p->stride_w * c;
  int32_t oy_lo, oy_hi, ox_lo, ox_hi, oc;
  int32_t acc0[STOWAGE_ROW_CHUNK], acc1[STOWAGE_ROW_CHUNK];
  const int32_t band = row_band_of(p);
  /* Narrow requantization: for the whole layer at once, else channel by channel. */
  const int narrow = acc_is_narrow(bias, p->m, shift, p->per_channel ? p->m : 1, p->input_offset, K);
  const int64_t most = acc_most_without_bias(p->input_offset, K);
#if defined(STOWAGE_DOT_WIDENED)
  /* A filter pair widened once per band (every window row's multiple-of-4 part), for every interior pixel pair. */
  int32_t ww[STOWAGE_CONV_WIDE_TAPS];
  const int32_t seg4 = seg & ~3, widened = seg4 > 0 && kh * seg4 <= STOWAGE_CONV_WIDE_TAPS;
  const int32_t off2 = (int32_t)(((uint32_t)p->input_offset & 0xFFFFu) | ((uint32_t)p->input_offset << 16));
#endif
  /* One filter row widened at a time (conv_pair_by_filter_rows, no folded correction). */
  const int32_t by_rows = STOWAGE_CONV_BY_FILTER_ROWS && conv_by_filter_rows(p);
#if STOWAGE_CONV_BORDER_PAIRS
  /* Pixel pairs of the border rows whose window columns lie inside also take the widened pair, row by row, each
   * inside row adding the offset times its filter sums (rs0, rs1: made at the first such pair of a band). */
  const int32_t pair_border_rows = conv_pairs_border_rows(p);
#endif
  /* Bands visit every output channel once per band: the first channels' corrections are computed once. */
  const int32_t cached = band < p->oh && !by_rows ? (p->m < STOWAGE_CORR_CACHE ? p->m : STOWAGE_CORR_CACHE) : 0;
  int32_t corr_cache[STOWAGE_CORR_CACHE];
  int32_t b, kb;
  for (oc = 0; oc < cached; ++oc) corr_cache[oc] = folded_bias(bias, oc, p->input_offset, w + (int32_t)oc * K, K);
  interior_range(p->oh, p->h, kh, p->stride_h, p->dil_h, p->pad_top, &oy_lo, &oy_hi);
  interior_range(p->ow, p->w, kw, p->stride_w, 1, p->pad_left, &ox_lo, &ox_hi);
  for (b = 0; b < p->n; ++b)
    for (kb = 0; kb * band < p->oh; ++kb)
      for (oc = 0; oc < p->m; oc += 2) {
        const int32_t oy0 = band_start(p, band, kb);
        const int32_t oy_end = p->oh - oy0 < band ? p->oh : oy0 + band;
        const int32_t two = oc + 1 < p->m;
        const int32_t oc1 = two ? oc + 1 : oc;
        const int8_t* w0 = w + (int32_t)oc * K;
        const int8_t* w1 = w + (int32_t)oc1 * K;
        const int32_t q0 = p->per_channel ? oc : 0, q1 = p->per_channel ? oc1 : 0;
        stowage_rq r0 = RQ_MAKE(multiplier[q0], shift[q0]), r1 = RQ_MAKE(multiplier[q1], shift[q1]);
        r0.narrow = CHANNEL_NARROW(narrow, bias, oc, shift[q0], most);
        r1.narrow = CHANNEL_NARROW(narrow, bias, oc1, shift[q1], most);
        const int32_t b0 = bias != NULL ? bias[oc] : 0, b1 = bias != NULL ? bias[oc1] : 0;
        const int32_t corr0 = by_rows ? 0 : oc < cached ? corr_cache[oc] : folded_bias(bias, oc, p->input_offset, w0, K);
        const int32_t corr1 = by_rows ? 0 : oc1 < cached ? corr_cache[oc1] : folded_bias(bias, oc1, p->input_offset, w1, K);
        int32_t oy, ox0;
#if STOWAGE_CONV_BORDER_PAIRS
        int32_t rs0[STOWAGE_CONV_PAIR_ROWS], rs1[STOWAGE_CONV_PAIR_ROWS];
        int rs_ready = 0;
#endif
#if defined(STOWAGE_DOT_WIDENED)
        if (widened) {
          int32_t fy;
          for (fy = 0; fy < kh; ++fy) stowage_widen_pair(w0 + fy * seg, w1 + fy * seg, seg4, ww + fy * seg4);
        }
#endif
#if STOWAGE_CONV_BY_FILTER_ROWS
        if (by_rows) {
          const conv_pair pair = {w0, w1, b0, b1, oc, two, &r0, &r1};
          const conv_interior in = {ox_lo, ox_hi};
          conv_pair_by_filter_rows(x, y, p, b, oy0, oy_end, &pair, &in, ww, acc0, acc1);
          continue;
        }
#endif
        for (oy = oy0; oy < oy_end; ++oy) {
          const int32_t iy0 = oy * p->stride_h - p->pad_top;
          const int32_t row_inside = oy >= oy_lo && oy < oy_hi;
          const int8_t* x_row = x + ((int32_t)b * p->h + iy0) * row_bytes;
          int8_t* y_row = y + (((int32_t)b * p->oh + oy) * p->ow) * pix_stride + oc;
          for (ox0 = 0; ox0 < p->ow; ox0 += STOWAGE_ROW_CHUNK) {
            const int32_t ox_end = p->ow - ox0 < STOWAGE_ROW_CHUNK ? p->ow : ox0 + STOWAGE_ROW_CHUNK;
            int32_t ox;
            for (ox = ox0; ox < ox_end;) {
              const int32_t ix0 = ox * p->stride_w - p->pad_left;
              const int32_t i = ox - ox0;
              int32_t acc[4];
              if (row_inside && ox >= ox_lo && ox + 1 < ox_hi && ox + 1 < ox_end) {
                const int8_t* xa = x_row + ix0 * c;
                acc[0] = acc[1] = corr0;
                acc[2] = acc[3] = corr1;
#if defined(STOWAGE_DOT_WIDENED)
                if (widened && seg4 == seg) {
                  stowage_dot_2x2_wfilters_rows(xa, step_bytes, ww, seg4, kh, krow_bytes, acc);
                } else if (widened) {
                  int32_t fy, e;
                  for (fy = 0; fy < kh; ++fy) {
                    const int8_t* xr = xa + fy * krow_bytes;
                    const int8_t* w0r = w0 + fy * seg;
                    const int8_t* w1r = w1 + fy * seg;
                    stowage_dot_2x2_wfilters(xr, step_bytes, ww + fy * seg4, seg4, acc);
                    for (e = seg4; e < seg; ++e) {
                      acc[0] += xr[e] * w0r[e];
                      acc[1] += xr[step_bytes + e] * w0r[e];
                      acc[2] += xr[e] * w1r[e];
                      acc[3] += xr[step_bytes + e] * w1r[e];
                    }
                  }
                } else
#endif
                  dot_2x2_rows(xa, xa + step_bytes, w0, w1, seg, kh, krow_bytes, acc);
                store_acc_2x2(acc0, acc1, i, acc);
                ox += 2;
                continue;
              }
#if STOWAGE_CONV_BORDER_PAIRS
              if (pair_border_rows && !row_inside && ox >= ox_lo && ox + 1 < ox_hi && ox + 1 < ox_end) {
                if (!rs_ready) conv_row_sums(w0, w1, kh, seg, p->input_offset, rs0, rs1);
                rs_ready = 1;
                conv_border_row_pair(x, p, b, iy0, ix0, ww, rs0, rs1, b0, b1, acc);
                store_acc_2x2(acc0, acc1, i, acc);
                ox += 2;
                continue;
              }
#endif
              if (row_inside && ox >= ox_lo && ox < ox_hi) {
                const int8_t* xa = x_row + ix0 * c;
                int32_t fy;
                acc[0] = corr0;
                acc[1] = corr1;
                for (fy = 0; fy < kh; ++fy) stowage_dot_1x2(xa + fy * krow_bytes, w0 + fy * seg, w1 + fy * seg, seg, acc);
              } else {
                /* Border: only the taps inside the input, each with the input offset. */
                const int32_t fx0 = ix0 < 0 ? -ix0 : 0;
                const int32_t fx1 = kw < p->w - ix0 ? kw : p->w - ix0;
                int32_t fy;
                acc[0] = b0;
                acc[1] = b1;
#if defined(STOWAGE_DOT_WIDENED)
                if (widened && c % 4 == 0) {
                  /* Whole pixels of four-channel groups: the filter pair widened for the interior serves the clipped
                   * window too (element e of row fy is word fy * seg4 + e). */
                  if (fx1 > fx0)
                    for (fy = 0; fy < kh; ++fy) {
                      const int32_t iy = iy0 + p->dil_h * fy;
                      if (iy < 0 || iy >= p->h) continue;
                      dot_1x2_offset_wfilters(x + (((int32_t)b * p->h + iy) * p->w + ix0 + fx0) * c, ww + fy * seg4 + fx0 * c,
                                              (fx1 - fx0) * c, off2, acc);
                    }
                } else
#endif
                if (fx1 > fx0)
                  for (fy = 0; fy < kh; ++fy) {
                    const int32_t iy = iy0 + p->dil_h * fy;
                    if (iy < 0 || iy >= p->h) continue;
                    stowage_dot_1x2_offset(x + (((int32_t)b * p->h + iy) * p->w + ix0 + fx0) * c, w0 + fy * seg + fx0 * c,
                                           w1 + fy * seg + fx0 * c, (fx1 - fx0) * c, p->input_offset, acc);
                  }
              }
              acc0[i] = acc[0];
              acc1[i] = acc[1];
              ++ox;
            }
            REQUANT_ROW(acc0, ox_end - ox0, &r0, y_row + ox0 * pix_stride, pix_stride, p->output_offset, p->act_min, p->act_max);
            if (two)
              REQUANT_ROW(acc1, ox_end - ox0, &r1, y_row + ox0 * pix_stride + 1, pix_stride, p->output_offset, p->act_min,
                          p->act_max);
          }
        }
      }
}

#if STOWAGE_CONV_IM2COL
/* Convolution with short window rows (kw * c below 16 bytes, as first layers on images or spectrograms have): a chunk
 * of output pixels' windows is copied into one contiguous buffer (im2col, outside taps filled with the input zero
 * point, which adds nothing once the offset is folded), then every pair of filters runs over pairs of those windows. */
static void qconv2d_im2col(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
                           const int32_t* shift, int8_t* y, const stowage_qconv_params* p) {
  const int32_t c = p->c, kh = p->kh, kw = p->kw, seg = kw * c, K = kh * seg;
  const int32_t pix_stride = p->out_pixel_stride > 0 ? p->out_pixel_stride : p->m;
  const int8_t zp = (int8_t)(-p->input_offset);
#if defined(STOWAGE_DOT_WIDENED)
  /* Windows of first layers are short (27 for 3x3x3, 40 for 10x4x1): up to 128 elements are widened, 512 bytes beside
   * the im2col buffer, the window and the filter pair padded with zeros to a multiple of four (Kp), so that the loop
   * over widened filters takes the whole window (3x3x3: 28, no byte-wise tail of 3). */
  int32_t ww[STOWAGE_IM2COL_WIDE_TAPS];
  const int widened = ((K + 3) & ~3) <= STOWAGE_IM2COL_WIDE_TAPS;
  const int32_t Kp = widened ? (K + 3) & ~3 : K;
#else
  const int32_t Kp = K;
#endif
  const int32_t per_chunk0 = STOWAGE_IM2COL_BYTES / Kp;
  const int32_t per_chunk = per_chunk0 < STOWAGE_ROW_CHUNK ? per_chunk0 : STOWAGE_ROW_CHUNK;
  int8_t cols[STOWAGE_IM2COL_BYTES];
  int32_t acc0[STOWAGE_ROW_CHUNK], acc1[STOWAGE_ROW_CHUNK];
  const int narrow = acc_is_narrow(bias, p->m, shift, p->per_channel ? p->m : 1, p->input_offset, K);
  /* Chunks of output pixels in the rows' order (row_at): across rows where the rows run in ascending order (no band,
   * or ascending bands: the chunk's pixels are contiguous in the output), so that short rows (KWS's five columns)
   * share each filter pair's set-up; within a row for descending bands. Reading a chunk's windows before writing any
   * of its outputs reads inputs no later than the row-by-row order, so an overlapping layer's band order holds. */
  const int32_t total = p->oh * p->ow;
  int32_t b, j0;
  for (b = 0; b < p->n; ++b)
    for (j0 = 0; j0 < total;) {
      const int32_t k = j0 / p->ow, ox0 = j0 - k * p->ow, oy = row_at(p, k);
      const int32_t left = p->row_band < 0 ? p->ow - ox0 : total - j0;
      const int32_t n = left < per_chunk ? left : per_chunk;
      int8_t* y_row = y + (((int32_t)b * p->oh + oy) * p->ow) * pix_stride;
      int32_t i, oc, ox = ox0, iy0 = oy * p->stride_h - p->pad_top;
      for (i = 0; i < n; ++i, ++ox) {
        int8_t* col = cols + i * Kp;
        int32_t ix0, fy, fx;
        if (Kp > K) memset(col + K, 0, (size_t)(Kp - K)); /* the padding, against zero filter taps */
        if (ox == p->ow) ox = 0, iy0 += p->stride_h; /* the next row (only ascending rows cross) */
        ix0 = ox * p->stride_w - p->pad_left;
        for (fy = 0; fy < kh; ++fy, col += seg) {
          const int32_t iy = iy0 + p->dil_h * fy;
          if (iy < 0 || iy >= p->h) {
            memset(col, zp, (size_t)seg);
            continue;
          }
          if (ix0 >= 0 && ix0 + kw <= p->w) {
            memcpy(col, x + (((int32_t)b * p->h + iy) * p->w + ix0) * c, (size_t)seg);
            continue;
          }
          for (fx = 0; fx < kw; ++fx) {
            const int32_t ix = ix0 + fx;
            if (ix < 0 || ix >= p->w) memset(col + fx * c, zp, (size_t)c);
            else memcpy(col + fx * c, x + (((int32_t)b * p->h + iy) * p->w + ix) * c, (size_t)c);
          }
        }
      }
      for (oc = 0; oc < p->m; oc += 2) {
        const int32_t two = oc + 1 < p->m;
        const int32_t oc1 = two ? oc + 1 : oc;
        const int8_t* w0 = w + (int32_t)oc * K;
        const int8_t* w1 = w + (int32_t)oc1 * K;
        const int32_t q0 = p->per_channel ? oc : 0, q1 = p->per_channel ? oc1 : 0;
        stowage_rq r0 = RQ_MAKE(multiplier[q0], shift[q0]), r1 = RQ_MAKE(multiplier[q1], shift[q1]);
        r0.narrow = r1.narrow = narrow;
        const int32_t corr0 = folded_bias(bias, oc, p->input_offset, w0, K);
        const int32_t corr1 = folded_bias(bias, oc1, p->input_offset, w1, K);
        int8_t* yp = y_row + ox0 * pix_stride + oc;
#if defined(STOWAGE_DOT_WIDENED)
        /* The filter pair widened once per chunk for every pair of windows (Kp <= the buffer), its last group of
         * four from a copy padded with zeros. */
        if (widened) {
          const int32_t K4 = K & ~3;
          stowage_widen_pair(w0, w1, K4, ww);
          if (K4 < K) {
            int8_t t0[4] = {0, 0, 0, 0}, t1[4] = {0, 0, 0, 0};
            memcpy(t0, w0 + K4, (size_t)(K - K4));
            memcpy(t1, w1 + K4, (size_t)(K - K4));
            stowage_widen_pair(t0, t1, 4, ww + K4);
          }
        }
#endif
        for (i = 0; i + 1 < n; i += 2) {
          int32_t acc[4];
          acc[0] = acc[1] = corr0;
          acc[2] = acc[3] = corr1;
#if defined(STOWAGE_DOT_WIDENED)
          if (widened)
            stowage_dot_2x2_wfilters(cols + i * Kp, Kp, ww, Kp, acc);
          else
#endif
            dot_2x2_rows(cols + i * Kp, cols + (i + 1) * Kp, w0, w1, K, 1, 0, acc);
          store_acc_2x2(acc0, acc1, i, acc);
        }
        if (i < n) {
          int32_t acc[2];
          acc[0] = corr0;
          acc[1] = corr1;
          stowage_dot_1x2(cols + i * Kp, w0, w1, K, acc);
          acc0[i] = acc[0];
          acc1[i] = acc[1];
        }
        REQUANT_ROW(acc0, n, &r0, yp, pix_stride, p->output_offset, p->act_min, p->act_max);
        if (two) REQUANT_ROW(acc1, n, &r1, yp + 1, pix_stride, p->output_offset, p->act_min, p->act_max);
      }
      j0 += n;
    }
}

#endif

/* Output channels a pointwise convolution requantizes at a time (the accumulators of two pixels wait on the stack). */
#define STOWAGE_PW_CHUNK 32

/* Input channels up to which a pointwise convolution widens each pixel pair's inputs once (stowage_widen_pair: 4 bytes
 * per channel on the stack) for every filter pair; more take the byte-wise loop. */
#define STOWAGE_PW_WIDE_K 128

/* Output channels up to which a pointwise convolution keeps every channel's folded correction and two pixels' outputs
 * on the stack (STOWAGE_POINTWISE_STACK_BYTES) and runs pixel pair after pixel pair (qconv2d_pointwise); wider layers
 * take qconv2d_fast. */
#define STOWAGE_PW_CHANNELS ((STOWAGE_POINTWISE_STACK_BYTES - 8 * STOWAGE_PW_CHUNK - 4 * STOWAGE_PW_WIDE_K - 4) / 6)

#if STOWAGE_CONV_POINTWISE
#if !defined(STOWAGE_RQF32_VARIANT)
/* Whether requant_pair may fold the output offset into its rounding constant and clamp by saturation: per-channel
 * quantization, the full int8 output range, an int8 offset and every shift (the nq channels') a right shift of 1 to 22,
 * so that |x| <= 2^30, half < 2^21 and |offset| * 2^right <= 2^29 add up without overflow (a left shift, a scale ratio
 * above 1, and one quantization for all channels take the general loop, whose constants are made once). Once per
 * layer. */
static int requant_pair_folds(const int32_t* shift, int32_t nq, const stowage_qconv_params* p) {
  int32_t i;
  if (!p->per_channel || p->act_min != -128 || p->act_max != 127 || !stowage_rq_offset_folds(0, p->output_offset)) return 0;
  for (i = 0; i < nq; ++i) /* right = -shift, at least 1: the rounding's -1 for negative values always applies */
    if (shift[i] >= 0 || !stowage_rq_offset_folds(-shift[i], p->output_offset)) return 0;
  return 1;
}

/* out_a[i], out_b[i] = the two pixels' accumulators acc_a[i], acc_b[i] requantized (narrow range) with channel i's
 * multiplier and shift (one quantization when per_channel is 0), offset and clamped, for i < n. The constants of
 * stowage_rq_make / stowage_rq_apply_narrow derived inline per channel: through stowage_rq_make, KWS and VWW took 0.2%
 * more instructions on the M4. */
static void requant_pair(const int32_t* acc_a, const int32_t* acc_b, int32_t n, const int32_t* multiplier,
                         const int32_t* shift, int per_channel, int8_t* out_a, int8_t* out_b, int32_t output_offset,
                         int32_t lo, int32_t hi, int fold) {
  int32_t i, mult = multiplier[0], up = 0, right = 0, half = 0, neg = 0;
  if (fold) {
    /* requant_pair_folds (per channel): the output offset joins the rounding constant before the shift (exact, as in
     * requant_row) and the full int8 range clamps with one saturating instruction; each channel's constants in four
     * instructions. */
    for (i = 0; i < n; ++i) {
      const int32_t r = -shift[i];
      const uint32_t add = (((uint32_t)1 << r) >> 1) + ((uint32_t)output_offset << r);
      out_a[i] = (int8_t)stowage_fx_ssat8(stowage_rq_narrow_steps(acc_a[i], 1, multiplier[i], add, -1, r));
      out_b[i] = (int8_t)stowage_fx_ssat8(stowage_rq_narrow_steps(acc_b[i], 1, multiplier[i], add, -1, r));
    }
    return;
  }
  for (i = 0; i < n; ++i) {
    int32_t v;
    if (per_channel || i == 0) {
      const int32_t s = shift[per_channel ? i : 0];
      mult = multiplier[per_channel ? i : 0];
      up = (s > 0 ? s : 0) + 1;
      right = s < 0 ? -s : 0;
      half = (int32_t)(((uint32_t)1 << right) >> 1);
      neg = right > 0 ? -1 : 0;
    }
    v = stowage_rq_narrow_steps(acc_a[i], up, mult, (uint32_t)half, neg, right) + output_offset;
    out_a[i] = (int8_t)(v < lo ? lo : (v > hi ? hi : v));
    v = stowage_rq_narrow_steps(acc_b[i], up, mult, (uint32_t)half, neg, right) + output_offset;
    out_b[i] = (int8_t)(v < lo ? lo : (v > hi ? hi : v));
  }
}
#endif

#if defined(STOWAGE_RQF32_VARIANT)
/* requant_pair with ONNX Runtime's requantization (out_f32): multiplier holds the float32 bits. */
static void requant_pair_f32(const int32_t* acc_a, const int32_t* acc_b, int32_t n, const int32_t* multiplier, int per_channel,
                             int8_t* out_a, int8_t* out_b, int32_t output_offset, int32_t lo, int32_t hi) {
  int32_t i;
  float m = rq_f32_of(multiplier[0]);
  for (i = 0; i < n; ++i) {
    if (per_channel) m = rq_f32_of(multiplier[i]);
    out_a[i] = out_f32(acc_a[i], m, output_offset, lo, hi);
    out_b[i] = out_f32(acc_b[i], m, output_offset, lo, hi);
  }
}
#endif

/* Pointwise convolution (1x1, stride 1, unpadded) whose accumulators stay in the narrow requantization's range and
 * whose output channels fit STOWAGE_PW_CHANNELS: every pixel of the batch is one long row, run two pixels at a time
 * (ascending, or descending with a negative row_band), each pair through every pair of filters; the sums of
 * STOWAGE_PW_CHUNK channels are requantized at a time into a two-pixel buffer that is copied out after the pair's last
 * filter. Each pair's input is read in full before its outputs are written, in pixel order: finer than any band
 * order, so an output placed over its input (plan/analysis/RowOverlap.h) is safe in every band, also for a pair
 * whose pixels lie in two bands. */
static void qconv2d_pointwise(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
                              const int32_t* shift, int8_t* y, const stowage_qconv_params* p) {
  const int32_t K = p->c, M = p->m, pixels = p->n * p->h * p->w;
  const int32_t pix_stride = p->out_pixel_stride > 0 ? p->out_pixel_stride : M;
  const int descending = p->row_band < 0, per_channel = p->per_channel;
  /* One more correction than channels: a chunk with an odd number of filters pairs its last one with itself and the
   * DSP loop loads (then drops) the word after its correction (stowage_dot_2x2_widened_filters); the accumulators have
   * room for the dropped sums. */
  int32_t corr[STOWAGE_PW_CHANNELS + 1];
  int32_t acc_a[STOWAGE_PW_CHUNK], acc_b[STOWAGE_PW_CHUNK];
  int8_t out[2][STOWAGE_PW_CHANNELS];
#if defined(STOWAGE_DOT_WIDENED)
  int32_t xw[STOWAGE_PW_WIDE_K];
  const int32_t K4 = K & ~3; /* at least 4, at most STOWAGE_PW_WIDE_K (pointwise_fits) */
#endif
  int32_t oc, k;
  int fold;
  if (M <= 0 || M > STOWAGE_PW_CHANNELS) return;
  for (oc = 0; oc < M; ++oc) corr[oc] = folded_bias(bias, oc, p->input_offset, w + oc * K, K);
#if defined(STOWAGE_RQF32_VARIANT)
  fold = 0;
#else
  fold = requant_pair_folds(shift, per_channel ? M : 1, p);
#endif
  for (k = 0; k < pixels; k += 2) {
    const int32_t two_pixels = k + 1 < pixels;
    /* The pair (pa, pa + 1): from the first pixels up, or from the last down; a lone last pixel is paired with itself
     * and only its first copy is stored. */
    const int32_t pa = descending ? (two_pixels ? pixels - 2 - k : 0) : k;
    const int8_t* xa = x + pa * K;
    const int32_t ystep = two_pixels ? K : 0;
    int32_t oc0;
#if defined(STOWAGE_DOT_WIDENED)
    stowage_widen_pair(xa, xa + ystep, K4, xw);
#endif
    for (oc0 = 0; oc0 < M; oc0 += STOWAGE_PW_CHUNK) {
      const int32_t n = M - oc0 < STOWAGE_PW_CHUNK ? M - oc0 : STOWAGE_PW_CHUNK;
      const int8_t* w0 = w + oc0 * K;
      int32_t i;
#if defined(STOWAGE_DOT_WIDENED)
      /* Every filter pair of the chunk in one call, then the inputs past the last multiple of four. */
      stowage_dot_2x2_widened_filters(xw, w0, K, K4, n, corr + oc0, acc_a, acc_b);
      for (i = 0; K4 < K && i < n; ++i, w0 += K) {
        int32_t e;
        for (e = K4; e < K; ++e) {
          acc_a[i] += xa[e] * w0[e];
          acc_b[i] += xa[ystep + e] * w0[e];
        }
      }
#else
      for (i = 0; i < n; i += 2, w0 += 2 * K) {
        const int32_t two = i + 1 < n;
        const int8_t* w1 = two ? w0 + K : w0;
        int32_t acc[4];
        acc[0] = acc[1] = corr[oc0 + i];
        acc[2] = acc[3] = corr[oc0 + i + two];
        dot_2x2_rows(xa, xa + ystep, w0, w1, K, 1, 0, acc);
        acc_a[i] = acc[0];
        acc_b[i] = acc[1];
        acc_a[i + 1] = acc[2];
        acc_b[i + 1] = acc[3];
      }
#endif
      REQUANT_PAIR(acc_a, acc_b, n, multiplier + (per_channel ? oc0 : 0), shift + (per_channel ? oc0 : 0), per_channel,
                   out[0] + oc0, out[1] + oc0, p->output_offset, p->act_min, p->act_max, fold);
    }
    memcpy(y + pa * pix_stride, out[0], (size_t)M);
    if (two_pixels) memcpy(y + (pa + 1) * pix_stride, out[1], (size_t)M);
  }
}
#endif

#if defined(__GNUC__)
#define STOWAGE_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define STOWAGE_ALWAYS_INLINE inline
#endif

/* First tap index in [0, k) whose input coordinate i0 + dil * t is >= 0, and one past the last below n. */
static inline void tap_range(int32_t i0, int32_t n, int32_t k, int32_t dil, int32_t* t0, int32_t* t1) {
  int32_t a = i0 < 0 ? (-i0 + dil - 1) / dil : 0;
  int32_t b = n - i0 <= 0 ? 0 : (n - i0 + dil - 1) / dil;
  if (b > k) b = k;
  if (a > b) a = b;
  *t0 = a;
  *t1 = b;
}

#if !defined(STOWAGE_DOT_WIDENED)
/* a[0..nb) += sum over the taps fy in [fy0, fy1), fx in [fx0, fx1) of w * (x + offset) for nb <= 4 consecutive channels.
 * xp and wp point at tap (0, 0) of the window and of the filter for the first channel; with_offset is a constant at
 * every call (0 where the offset is folded into the correction), as are the tap ranges of the 3x3 interior, so the
 * compiler unrolls that case. */
static STOWAGE_ALWAYS_INLINE void dw_taps(const int8_t* xp, const int8_t* wp, int32_t fy0, int32_t fy1, int32_t fx0,
                                          int32_t fx1, int32_t tap_dx, int32_t tap_dy, int32_t wtap_dx, int32_t wtap_dy, int32_t nb,
                                          int32_t offset, int with_offset, int32_t* a) {
  int32_t a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3], fy, fx;
#if defined(STOWAGE_DOT_MVE)
  if (nb == 4) {
    /* Four channels as four 32-bit lanes: widening byte loads, multiply, add. */
    const int32x4_t voff = vdupq_n_s32(offset);
    int32x4_t va = vld1q_s32(a);
    for (fy = fy0; fy < fy1; ++fy)
      for (fx = fx0; fx < fx1; ++fx) {
        int32x4_t xv = vldrbq_s32(xp + fy * tap_dy + fx * tap_dx);
        if (with_offset) xv = vaddq_s32(xv, voff);
        va = vaddq_s32(va, vmulq_s32(xv, vldrbq_s32(wp + fy * wtap_dy + fx * wtap_dx)));
      }
    vst1q_s32(a, va);
    return;
  }
#endif
  for (fy = fy0; fy < fy1; ++fy)
    for (fx = fx0; fx < fx1; ++fx) {
      const int8_t* x1 = xp + fy * tap_dy + fx * tap_dx;
      const int8_t* w1 = wp + fy * wtap_dy + fx * wtap_dx;
      a0 += ((int32_t)x1[0] + (with_offset ? offset : 0)) * w1[0];
      if (nb > 1) a1 += ((int32_t)x1[1] + (with_offset ? offset : 0)) * w1[1];
      if (nb > 2) a2 += ((int32_t)x1[2] + (with_offset ? offset : 0)) * w1[2];
      if (nb > 3) a3 += ((int32_t)x1[3] + (with_offset ? offset : 0)) * w1[3];
    }
  a[0] = a0;
  a[1] = a1;
  a[2] = a2;
  a[3] = a3;
}
#endif

#if defined(STOWAGE_DOT_WIDENED)
/* The int8 values of channels [0, nb) at q as one word, zero above them: the last block of a channel count that is not
 * a multiple of four reads no byte past its pixel. */
static inline int32_t dw_load_block(const int8_t* q, int32_t nb) {
  uint32_t v = 0;
  int32_t k;
  if (nb == 4) return stowage_load4(q);
  for (k = 0; k < nb; ++k) v |= (uint32_t)(uint8_t)q[k] << (8 * k);
  return (int32_t)v;
}

/* Two words at p (one LDRD: the strip and the widened filters are word arrays). */
static inline void dw_load_pair(const int32_t* p, int32_t* lo, int32_t* hi) {
  uint64_t v;
  memcpy(&v, p, 8);
  *lo = (int32_t)(uint32_t)v;
  *hi = (int32_t)(uint32_t)(v >> 32);
}

#if STOWAGE_DW_STRIP
/* Input row `xrow` (channel block start; NULL for a row outside the input) at columns [ix0, ix0 + n) of w, widened
 * for the block's nb <= 4 channels (zero for the others) to halfword pairs with the offset added, two words a pixel (channels 0 and 2, then 1 and 3); zero
 * outside the input, where TFLite skips the tap. */
static STOWAGE_ALWAYS_INLINE void dw_widen_row(const int8_t* xrow, int32_t c, int32_t nb, int32_t w, int32_t ix0, int32_t n, int32_t off2,
                         int32_t* dst) {
  int32_t lo = ix0 < 0 ? -ix0 : 0, hi = w - ix0 < n ? w - ix0 : n, j;
  if (xrow == NULL || hi < lo) lo = hi = n;
  for (j = 0; j < lo; ++j, dst += 2) dst[0] = dst[1] = 0;
  for (xrow += (ix0 + lo) * c; j < hi; ++j, dst += 2, xrow += c) {
    const int32_t v = dw_load_block(xrow, nb);
    dst[0] = __sadd16(__sxtb16(v), off2);
    dst[1] = __sadd16(stowage_sxtb16_odd(v), off2);
  }
  for (; j < n; ++j, dst += 2) dst[0] = dst[1] = 0;
}

/* One tap of the strip: the input pair words at rp, the filter pair words at wq. */
#define DW_STRIP_TAP(rp, wq)                  \
  do {                                        \
    int32_t xe_, xo_, we_, wo_;               \
    dw_load_pair(rp, &xe_, &xo_);             \
    dw_load_pair(wq, &we_, &wo_);             \
    a0 = __smlabb(xe_, we_, a0);              \
    a2 = __smlatt(xe_, we_, a2);              \
    a1 = __smlabb(xo_, wo_, a1);              \
    a3 = __smlatt(xo_, wo_, a3);              \
  } while (0)

/* accs[j][i] = bs[j] + the 3x3 window of output pixel i over strip rows r0, r1, r2 (taps one pixel apart, pixels `step`
 * words apart), for i < n and the block's four channels. */
static STOWAGE_ALWAYS_INLINE void dw_strip_3x3(const int32_t* r0, const int32_t* r1, const int32_t* r2, const int32_t* ww,
                                               const int32_t* bs, int32_t n, int32_t step, int32_t (*accs)[STOWAGE_ROW_CHUNK]) {
  int32_t i;
  for (i = 0; i < n; ++i, r0 += step, r1 += step, r2 += step) {
    int32_t a0, a1, a2, a3;
    dw_load_pair(bs, &a0, &a1);
    dw_load_pair(bs + 2, &a2, &a3);
    DW_STRIP_TAP(r0, ww);
    DW_STRIP_TAP(r0 + 2, ww + 2);
    DW_STRIP_TAP(r0 + 4, ww + 4);
    DW_STRIP_TAP(r1, ww + 6);
    DW_STRIP_TAP(r1 + 2, ww + 8);
    DW_STRIP_TAP(r1 + 4, ww + 10);
    DW_STRIP_TAP(r2, ww + 12);
    DW_STRIP_TAP(r2 + 2, ww + 14);
    DW_STRIP_TAP(r2 + 4, ww + 16);
    accs[0][i] = a0;
    accs[1][i] = a1;
    accs[2][i] = a2;
    accs[3][i] = a3;
  }
}

/* dw_strip_3x3 with the pixel step a constant (stride 1 and 2), out of line: the loop has the registers to itself. */
__attribute__((noinline)) static void dw_strip_3x3_s1(const int32_t* r0, const int32_t* r1, const int32_t* r2, const int32_t* ww,
                                                      const int32_t* bs, int32_t n, int32_t (*accs)[STOWAGE_ROW_CHUNK]) {
  dw_strip_3x3(r0, r1, r2, ww, bs, n, 2, accs);
}
__attribute__((noinline)) static void dw_strip_3x3_s2(const int32_t* r0, const int32_t* r1, const int32_t* r2, const int32_t* ww,
                                                      const int32_t* bs, int32_t n, int32_t (*accs)[STOWAGE_ROW_CHUNK]) {
  dw_strip_3x3(r0, r1, r2, ww, bs, n, 4, accs);
}

/* Depthwise convolution (depth multiplier 1, stowage_qdepthwise_conv2d_s8_is_fast) on the DSP extension through a strip: per band
 * of output rows, block of four channels and chunk of output columns, the kh input rows an output row reads are held
 * widened (dw_widen_row) in a ring of kh strip rows, each widened once for all the output rows that read it, so every
 * output pixel, border or not, is its bias plus kh x kw taps of one input pair load, one filter pair load and four
 * multiply-accumulates, with no bounds checks and no zero-point correction. Input rows are read no later than the
 * direct loops read them (the band order of an overlapping layer holds). STOWAGE_DW_STRIP_BYTES on the stack. */
static void qdepthwise_strip(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
                             const int32_t* shift, int8_t* y, const stowage_qconv_params* p) {
  const int32_t c = p->c, kh = p->kh, kw = p->kw, taps = kh * kw;
  const int32_t pix_stride = p->out_pixel_stride > 0 ? p->out_pixel_stride : p->m;
  const int32_t band = row_band_of(p), cols = dw_strip_cols(p), span = (kw - 1) * p->dil_w + 1;
  const int32_t off2 = (int32_t)(((uint32_t)p->input_offset & 0xFFFFu) | ((uint32_t)p->input_offset << 16));
  const int32_t tap_dx = 2 * p->dil_w, pix_dx = 2 * p->stride_w;
  const int narrow = acc_is_narrow(bias, c, shift, p->per_channel ? c : 1, p->input_offset, taps);
  const int64_t most = acc_most_without_bias(p->input_offset, taps);
  int32_t strip[STOWAGE_DW_STRIP_WORDS], ww[2 * STOWAGE_DW_STRIP_TAPS], accs[4][STOWAGE_ROW_CHUNK];
  int32_t b, kb, ch0;
  for (b = 0; b < p->n; ++b)
    for (kb = 0; kb * band < p->oh; ++kb)
      for (ch0 = 0; ch0 < c; ch0 += 4) {
        const int32_t oy0 = band_start(p, band, kb);
        const int32_t oy_end = p->oh - oy0 < band ? p->oh : oy0 + band;
        const int32_t nb = c - ch0 < 4 ? c - ch0 : 4;
        int32_t bs[4], j, t, ox0;
        stowage_rq rq[4];
        for (t = 0; t < taps; ++t) {
          const int32_t v = dw_load_block(w + t * c + ch0, nb);
          ww[2 * t] = __sxtb16(v);
          ww[2 * t + 1] = stowage_sxtb16_odd(v);
        }
        for (j = 0; j < 4; ++j) {
          const int32_t ch = ch0 + (j < nb ? j : 0), q = p->per_channel ? ch : 0;
          bs[j] = bias != NULL ? bias[ch] : 0;
          rq[j] = RQ_MAKE(multiplier[q], shift[q]);
          rq[j].narrow = CHANNEL_NARROW(narrow, bias, ch, shift[q], most);
        }
        for (ox0 = 0; ox0 < p->ow; ox0 += cols) {
          const int32_t n = p->ow - ox0 < cols ? p->ow - ox0 : cols;
          const int32_t ix0 = ox0 * p->stride_w - p->pad_left, in_cols = (n - 1) * p->stride_w + span;
          int32_t oy, fy, held = 0, have = 0;
          int32_t* ring[STOWAGE_DW_STRIP_K];
          for (fy = 0; fy < kh; ++fy) ring[fy] = strip + fy * 2 * in_cols;
          for (oy = oy0; oy < oy_end; ++oy) {
            const int32_t iy0 = oy * p->stride_h - p->pad_top;
            int8_t* yp = y + (((int32_t)b * p->oh + oy) * p->ow + ox0) * pix_stride + ch0;
            int32_t i, keep = 0, first_new;
            /* ring[fy] holds input row iy0 + fy * dil_h. With unit row dilation, rows the last output row widened move
             * up (the ring turns by the row step) and only the new ones are widened. */
            if (have && p->dil_h == 1 && iy0 >= held && iy0 - held < kh) {
              const int32_t turn = iy0 - held;
              int32_t* moved[STOWAGE_DW_STRIP_K];
              keep = kh - turn;
              for (fy = 0; fy < kh; ++fy) moved[fy] = ring[(fy + turn) % kh];
              for (fy = 0; fy < kh; ++fy) ring[fy] = moved[fy];
            }
            for (first_new = keep, fy = first_new; fy < kh; ++fy) {
              const int32_t iy = iy0 + fy * p->dil_h;
              dw_widen_row(iy >= 0 && iy < p->h ? x + (((int32_t)b * p->h + iy) * p->w) * c + ch0 : NULL, c, nb, p->w, ix0,
                           in_cols, off2, ring[fy]);
            }
            held = iy0;
            have = 1;
            if (kh == 3 && kw == 3 && p->dil_w == 1 && p->stride_w <= 2) {
              if (p->stride_w == 1) dw_strip_3x3_s1(ring[0], ring[1], ring[2], ww, bs, n, accs);
              else dw_strip_3x3_s2(ring[0], ring[1], ring[2], ww, bs, n, accs);
            } else {
              for (i = 0; i < n; ++i) {
                int32_t a0 = bs[0], a1 = bs[1], a2 = bs[2], a3 = bs[3], fx;
                const int32_t* wq = ww;
                for (fy = 0; fy < kh; ++fy)
                  for (fx = 0; fx < kw; ++fx, wq += 2) DW_STRIP_TAP(ring[fy] + i * pix_dx + fx * tap_dx, wq);
                accs[0][i] = a0;
                accs[1][i] = a1;
                accs[2][i] = a2;
                accs[3][i] = a3;
              }
            }
            for (j = 0; j < nb; ++j) REQUANT_ROW(accs[j], n, &rq[j], yp + j, pix_stride, p->output_offset, p->act_min, p->act_max);
          }
        }
      }
}
#undef DW_STRIP_TAP
#endif

#if STOWAGE_DW_PIXELS
/* Channels per group of the pixel path: as many as STOWAGE_DW_PIXEL_WEIGHT_WORDS holds the widened filters of (a
 * multiple of four), at most STOWAGE_DW_PIXEL_CHANNELS. */
static int32_t dw_pixel_group(const stowage_qconv_params* p) {
  const int32_t by_weights = STOWAGE_DW_PIXEL_WEIGHT_WORDS / (2 * p->kh * p->kw) * 4;
  return by_weights < STOWAGE_DW_PIXEL_CHANNELS ? by_weights : STOWAGE_DW_PIXEL_CHANNELS;
}

/* The requantization of one channel as the pixel path applies it output by output (dw_pixel_requant): kind 0, narrow
 * with the output offset folded into `add` (stowage_rq_offset_folds); kind 1, narrow (add = half, then the offset);
 * kind 2, the full steps (mult and shift are the channel's multiplier and shift). folded: the channel's bias plus the
 * input offset times its filter sum, where every pixel starts. */
typedef struct {
  int32_t mult;
  uint32_t add;
  int32_t folded, shift;
  uint8_t up, right, kind;
} dw_pixel_rq;

static int8_t dw_pixel_requant(int32_t acc, const dw_pixel_rq* r, int32_t offset, int32_t lo, int32_t hi) {
  int32_t v;
  if (r->kind == 0) {
    v = stowage_rq_narrow_steps(acc, r->up, r->mult, r->add, -1, r->right);
  } else if (r->kind == 1) {
    v = (int32_t)((uint32_t)stowage_rq_narrow_steps(acc, r->up, r->mult, r->add, r->right > 0 ? -1 : 0, r->right) + (uint32_t)offset);
  } else {
    const stowage_rq q = stowage_rq_make(r->mult, r->shift);
    v = (int32_t)((uint32_t)stowage_rq_apply(acc, &q) + (uint32_t)offset);
  }
  return (int8_t)stowage_fx_clamp(v, lo, hi);
}

/* The nine taps of a 3x3 window for the four channels of a block, unrolled: q is the input at the block's first channel
 * and the window's first tap, taps dx apart in a row and rows dy apart; wq the block's widened filters. */
static STOWAGE_ALWAYS_INLINE void dw_pixel_3x3(const int8_t* q, int32_t dx, int32_t dy, const int32_t* wq, int32_t* a) {
  const int32_t row_skip = dy - 2 * dx;
  int32_t a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
#if defined(STOWAGE_DOT_ASM)
  /* One asm statement: in C, GCC 12 hoists the 18 loads to the top and spills. 12 registers. */
  int32_t v, xe, we, wo;
  /* One tap: the input word at q (then q += the step), its two halfword pairs against the filter pair at `off`. */
#define DW_PIXEL_TAP_MACS(off)                                                                         \
  "sxtb16 %[xe], %[v]\n\t"                                                                             \
  "sxtb16 %[v], %[v], ror #8\n\t"                                                                      \
  "ldrd   %[we], %[wo], [%[w], #" off "]\n\t"                                                        \
  "smlabb %[a0], %[xe], %[we], %[a0]\n\t"                                                             \
  "smlatt %[a2], %[xe], %[we], %[a2]\n\t"                                                             \
  "smlabb %[a1], %[v], %[wo], %[a1]\n\t"                                                              \
  "smlatt %[a3], %[v], %[wo], %[a3]\n\t"
#define DW_PIXEL_TAP_ASM(off, step) "ldr    %[v], [%[q]]\n\t" "add    %[q], %[q], %[" step "]\n\t" DW_PIXEL_TAP_MACS(off)
  __asm__(DW_PIXEL_TAP_ASM("0", "dx") DW_PIXEL_TAP_ASM("8", "dx") DW_PIXEL_TAP_ASM("16", "skip")
          DW_PIXEL_TAP_ASM("24", "dx") DW_PIXEL_TAP_ASM("32", "dx") DW_PIXEL_TAP_ASM("40", "skip")
          DW_PIXEL_TAP_ASM("48", "dx") DW_PIXEL_TAP_ASM("56", "dx") "ldr    %[v], [%[q]]\n\t" DW_PIXEL_TAP_MACS("64")
      : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [q] "+r"(q), [v] "=&r"(v), [xe] "=&r"(xe),
        [we] "=&r"(we), [wo] "=&r"(wo)
      : [dx] "r"(dx), [skip] "r"(row_skip), [w] "r"(wq)
      : "memory");
#undef DW_PIXEL_TAP_ASM
#undef DW_PIXEL_TAP_MACS
#else
  int32_t k;
  for (k = 0; k < 9; ++k) {
    const int32_t v = stowage_load4(q), xe = __sxtb16(v), xo = stowage_sxtb16_odd(v);
    int32_t we, wo;
    q += k == 8 ? 0 : (k % 3 == 2 ? row_skip : dx);
    dw_load_pair(wq + 2 * k, &we, &wo);
    a0 = __smlabb(xe, we, a0);
    a2 = __smlatt(xe, we, a2);
    a1 = __smlabb(xo, wo, a1);
    a3 = __smlatt(xo, wo, a3);
  }
#endif
  a[0] = a0;
  a[1] = a1;
  a[2] = a2;
  a[3] = a3;
}

/* An output of a channel that requantizes in the narrow form with no left shift and the output offset folded, clamped
 * to the full int8 range (kind 0, up 1). */
#define DW_PIXEL_OUT_FAST(acc, r) ((int8_t)stowage_fx_ssat8(stowage_rq_narrow_steps((acc), 1, (r).mult, (r).add, -1, (r).right)))

/* The channel blocks of one pixel of a 3x3 window in a group whose channels all take DW_PIXEL_OUT_FAST: the window at
 * xp (taps dx apart in a row, rows dy apart), the group's widened filters at wq. Out of line, so that the loop has the
 * registers to itself. */
__attribute__((noinline)) static void dw_pixel_blocks_3x3(const int8_t* xp, int32_t dx, int32_t dy, const int32_t* wq,
                                                          const dw_pixel_rq* rq, int8_t* yp, int32_t channels) {
  const dw_pixel_rq* const end = rq + channels;
  for (; rq < end; xp += 4, wq += 18, rq += 4, yp += 4) {
    int32_t a[4];
    a[0] = rq[0].folded, a[1] = rq[1].folded, a[2] = rq[2].folded, a[3] = rq[3].folded;
    dw_pixel_3x3(xp, dx, dy, wq, a);
    yp[0] = DW_PIXEL_OUT_FAST(a[0], rq[0]);
    yp[1] = DW_PIXEL_OUT_FAST(a[1], rq[1]);
    yp[2] = DW_PIXEL_OUT_FAST(a[2], rq[2]);
    yp[3] = DW_PIXEL_OUT_FAST(a[3], rq[3]);
  }
}

/* The same for any window and requantization: kh x kw taps a block, the outputs requantized one by one (the last
 * block of a channel count that is not a multiple of four stores only its channels; its other lanes read the window's
 * padding, whose filters are 0). */
__attribute__((noinline)) static void dw_pixel_blocks(const int8_t* xp, int32_t dx, int32_t dy, const int32_t* wq,
                                                      const dw_pixel_rq* rq, int8_t* yp, int32_t channels,
                                                      const stowage_qconv_params* p) {
  int32_t j, fy, fx, i;
  for (j = 0; j < channels; j += 4, xp += 4, rq += 4, yp += 4) {
    int32_t a0 = rq[0].folded, a1 = rq[1].folded, a2 = rq[2].folded, a3 = rq[3].folded;
    int8_t out[4];
    for (fy = 0; fy < p->kh; ++fy)
      for (fx = 0; fx < p->kw; ++fx, wq += 2) {
        const int32_t v = stowage_load4(xp + fy * dy + fx * dx), xe = __sxtb16(v), xo = stowage_sxtb16_odd(v);
        int32_t we, wo;
        dw_load_pair(wq, &we, &wo);
        a0 = __smlabb(xe, we, a0);
        a2 = __smlatt(xe, we, a2);
        a1 = __smlabb(xo, wo, a1);
        a3 = __smlatt(xo, wo, a3);
      }
    out[0] = dw_pixel_requant(a0, &rq[0], p->output_offset, p->act_min, p->act_max);
    out[1] = dw_pixel_requant(a1, &rq[1], p->output_offset, p->act_min, p->act_max);
    out[2] = dw_pixel_requant(a2, &rq[2], p->output_offset, p->act_min, p->act_max);
    out[3] = dw_pixel_requant(a3, &rq[3], p->output_offset, p->act_min, p->act_max);
    for (i = 0; i < 4 && j + i < channels; ++i) yp[i] = out[i];
  }
}

/* The window of output pixel (iy0, ix0: its first tap's input row and column) for channels [g0, g0 + ng), tap after
 * tap (`stride` >= ng bytes a tap, the bytes past ng padding), taps outside the input and the padding filled with the
 * byte -input_offset (`fill`): an input whose offset-added value is 0, so the window goes through the blocks from the
 * folded biases with the result of TFLite's skipped taps. Whole words when ng is a multiple of four. */
static void dw_gather_window(const int8_t* x, const stowage_qconv_params* p, int32_t b, int32_t iy0, int32_t ix0,
                             int32_t g0, int32_t ng, int32_t stride, int8_t fill, int8_t* win) {
  int32_t fy, fx;
  for (fy = 0; fy < p->kh; ++fy) {
    const int32_t iy = iy0 + fy * p->dil_h;
    for (fx = 0; fx < p->kw; ++fx, win += stride) {
      const int32_t ix = ix0 + fx * p->dil_w;
      if (iy >= 0 && iy < p->h && ix >= 0 && ix < p->w) {
        memcpy(win, x + (((int32_t)b * p->h + iy) * p->w + ix) * p->c + g0, (size_t)ng);
        memset(win + ng, fill, (size_t)(stride - ng));
      } else {
        memset(win, fill, (size_t)stride);
      }
    }
  }
}

/* Depthwise convolution (depth multiplier 1) on the DSP extension pixel after pixel: per group of channels
 * (dw_pixel_group) the filters are widened once (two words a tap per four channels), the biases folded with the input
 * offset and the requantizations prepared; then each output pixel goes through its group's channel blocks
 * (dw_pixel_blocks_3x3, dw_pixel_blocks), the taps read straight from the int8 input (one load and two sign
 * extensions a tap), or for a border pixel (and a group whose channels are not a multiple of four) from its window
 * gathered with the fill byte of dw_gather_window. No strip to widen and no per-row set-up: the path for layers whose
 * rows are short or that run in bands of a row (an overlapping layer, stowage_qconv_params.row_band), where
 * qdepthwise_strip widens every input row for every band and block. Input rows are read no later than the direct
 * loops read them: a banded layer whose channels take more than one group runs every group band by band.
 * STOWAGE_DW_PIXEL_BYTES on the stack. */
static void qdepthwise_pixels(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
                              const int32_t* shift, int8_t* y, const stowage_qconv_params* p) {
  const int32_t c = p->c, kh = p->kh, kw = p->kw, taps = kh * kw, group = dw_pixel_group(p);
  const int32_t pix_stride = p->out_pixel_stride > 0 ? p->out_pixel_stride : p->m;
  const int32_t band = row_band_of(p), bands = (p->oh + band - 1) / band;
  const int32_t tap_dx = p->dil_w * c, tap_dy = p->dil_h * p->w * c, out_off = p->output_offset;
  const int is3x3 = kh == 3 && kw == 3, full_range = p->act_min == -128 && p->act_max == 127;
  const int narrow = acc_is_narrow(bias, c, shift, p->per_channel ? c : 1, p->input_offset, taps);
  const int64_t most = acc_most_without_bias(p->input_offset, taps);
  /* A banded layer with more than one group: every band runs through all groups before the next band starts. */
  const int32_t bands_per_setup = p->row_band != 0 && group < c ? 1 : bands;
  int32_t ww[STOWAGE_DW_PIXEL_WEIGHT_WORDS], win[STOWAGE_DW_PIXEL_WINDOW_WORDS];
  dw_pixel_rq rq[STOWAGE_DW_PIXEL_CHANNELS];
  int32_t col_lo, col_hi, b, kb0, g0;
  interior_range(p->ow, p->w, kw, p->stride_w, p->dil_w, p->pad_left, &col_lo, &col_hi);
  for (b = 0; b < p->n; ++b)
    for (kb0 = 0; kb0 < bands; kb0 += bands_per_setup)
      for (g0 = 0; g0 < c; g0 += group) {
        const int32_t ng = c - g0 < group ? c - g0 : group, padded = (ng + 3) & ~3;
        int32_t j, t, kb, fast = full_range && (ng & 3) == 0 && is3x3;
        for (j = 0; j < ng; j += 4) {
          const int32_t nb = ng - j < 4 ? ng - j : 4;
          int32_t* wb = ww + (j / 4) * taps * 2;
          for (t = 0; t < taps; ++t) {
            const int32_t v = dw_load_block(w + t * c + g0 + j, nb);
            wb[2 * t] = __sxtb16(v);
            wb[2 * t + 1] = stowage_sxtb16_odd(v);
          }
        }
        for (j = 0; j < padded; ++j) {
          const int32_t ch = g0 + (j < ng ? j : 0), q = p->per_channel ? ch : 0, s = shift[q];
          const int32_t right = s < 0 ? -s : 0;
          int32_t sum = 0;
          dw_pixel_rq* r = &rq[j];
          for (t = 0; t < taps; ++t) sum += w[t * c + ch];
          r->folded = (int32_t)((bias != NULL ? (uint32_t)bias[ch] : 0u) + (uint32_t)p->input_offset * (uint32_t)sum);
          r->mult = multiplier[q];
          r->shift = s;
          r->up = (uint8_t)((s > 0 ? s : 0) + 1);
          r->right = (uint8_t)right;
          r->add = right > 0 ? (uint32_t)1 << (right - 1) : 0u;
          if (!CHANNEL_NARROW(narrow, bias, ch, s, most)) {
            r->kind = 2;
          } else if (right > 0 && stowage_rq_offset_folds(right, out_off)) {
            r->kind = 0;
            r->add += (uint32_t)out_off << right;
          } else {
            r->kind = 1;
          }
          if (r->kind != 0) fast = 0; /* kind 0 has a right shift: no left one, up is 1 */
        }
        for (kb = kb0; kb < kb0 + bands_per_setup; ++kb) {
          const int32_t oy0 = band_start(p, band, kb), oy_end = p->oh - oy0 < band ? p->oh : oy0 + band;
          int32_t oy, ox;
          for (oy = oy0; oy < oy_end; ++oy) {
            const int32_t iy0 = oy * p->stride_h - p->pad_top;
            const int rows_inside = iy0 >= 0 && iy0 + (kh - 1) * p->dil_h < p->h;
            int8_t* yp = y + (((int32_t)b * p->oh + oy) * p->ow) * pix_stride + g0;
            for (ox = 0; ox < p->ow; ++ox, yp += pix_stride) {
              const int32_t ix0 = ox * p->stride_w - p->pad_left;
              const int8_t* xp;
              int32_t dx = tap_dx, dy = tap_dy;
              if (rows_inside && ox >= col_lo && ox < col_hi && (ng & 3) == 0) {
                xp = x + (((int32_t)b * p->h + iy0) * p->w + ix0) * c + g0;
              } else {
                dw_gather_window(x, p, b, iy0, ix0, g0, ng, padded, (int8_t)-p->input_offset, (int8_t*)win);
                xp = (const int8_t*)win, dx = padded, dy = kw * padded;
              }
              if (fast) dw_pixel_blocks_3x3(xp, dx, dy, ww, rq, yp, ng);
              else dw_pixel_blocks(xp, dx, dy, ww, rq, yp, ng, p);
            }
          }
        }
      }
}
#endif
#endif

#if !defined(STOWAGE_DOT_WIDENED)
/* Depthwise convolution with depth multiplier 1: per band of output rows (row_band; the whole output by default),
 * channels four at a time (contiguous in input, filter and output), every pixel of the band; interior pixels start from the folded correction and read every tap (3x3 unrolled),
 * border pixels start from the bias and read the taps inside the input with the offset added. */
static void qdepthwise_fast(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
                            const int32_t* shift, int8_t* y, const stowage_qconv_params* p) {
  const int32_t c = p->c, kh = p->kh, kw = p->kw, taps = kh * kw;
  const int32_t pix_stride = p->out_pixel_stride > 0 ? p->out_pixel_stride : p->m;
  const int32_t tap_dx = p->dil_w * c, tap_dy = p->dil_h * p->w * c;
  const int is3x3 = kh == 3 && kw == 3;
  int32_t oy_lo, oy_hi, ox_lo, ox_hi, ch0;
  const int32_t band = row_band_of(p);
  /* Bands visit every channel block once per band: the first channels' tap sums are computed once. */
  const int32_t cached = band < p->oh ? (c < STOWAGE_CORR_CACHE ? c : STOWAGE_CORR_CACHE) : 0;
  uint32_t sum_cache[STOWAGE_CORR_CACHE];
  const int narrow = acc_is_narrow(bias, c, shift, p->per_channel ? c : 1, p->input_offset, taps);
  const int64_t most = acc_most_without_bias(p->input_offset, taps);
  int32_t b, kb;
  for (ch0 = 0; ch0 < cached; ++ch0) {
    uint32_t s = 0;
    int32_t t;
    for (t = 0; t < taps; ++t) s += (uint32_t)w[t * c + ch0];
    sum_cache[ch0] = s;
  }
  interior_range(p->oh, p->h, kh, p->stride_h, p->dil_h, p->pad_top, &oy_lo, &oy_hi);
  interior_range(p->ow, p->w, kw, p->stride_w, p->dil_w, p->pad_left, &ox_lo, &ox_hi);
  for (b = 0; b < p->n; ++b)
    for (kb = 0; kb * band < p->oh; ++kb)
      for (ch0 = 0; ch0 < c; ch0 += 4) {
        const int32_t oy0 = band_start(p, band, kb);
        const int32_t oy_end = p->oh - oy0 < band ? p->oh : oy0 + band;
        const int32_t nb = c - ch0 < 4 ? c - ch0 : 4;
        const int8_t* wb = w + ch0;
        int32_t corr[4], bs[4], j, t, oy, ox;
        int32_t accs[4][STOWAGE_ROW_CHUNK];
        stowage_rq rq[4];
        for (j = 0; j < 4; ++j) {
          const int32_t ch = ch0 + (j < nb ? j : 0);
          const int32_t q = p->per_channel ? ch : 0;
          uint32_t s = 0;
          if (ch < cached) s = sum_cache[ch];
          else
            for (t = 0; t < taps; ++t) s += (uint32_t)w[t * c + ch];
          bs[j] = bias != NULL ? bias[ch] : 0;
          corr[j] = (int32_t)((uint32_t)bs[j] + (uint32_t)p->input_offset * s);
          rq[j] = RQ_MAKE(multiplier[q], shift[q]);
          rq[j].narrow = CHANNEL_NARROW(narrow, bias, ch, shift[q], most);
        }
        for (oy = oy0; oy < oy_end; ++oy) {
          const int32_t iy0 = oy * p->stride_h - p->pad_top;
          const int32_t row_inside = oy >= oy_lo && oy < oy_hi;
          int32_t fy0, fy1;
          tap_range(iy0, p->h, kh, p->dil_h, &fy0, &fy1);
          int32_t ox0;
          for (ox0 = 0; ox0 < p->ow; ox0 += STOWAGE_ROW_CHUNK) {
            const int32_t ox_end = p->ow - ox0 < STOWAGE_ROW_CHUNK ? p->ow : ox0 + STOWAGE_ROW_CHUNK;
            int8_t* yp = y + (((int32_t)b * p->oh + oy) * p->ow + ox0) * pix_stride + ch0;
            for (ox = ox0; ox < ox_end; ++ox) {
              const int32_t ix0 = ox * p->stride_w - p->pad_left;
              const int8_t* xb = x + (((int32_t)b * p->h + iy0) * p->w + ix0) * c + ch0;
              const int32_t i = ox - ox0;
              int32_t a[4];
              if (row_inside && ox >= ox_lo && ox < ox_hi) {
                a[0] = corr[0];
                a[1] = corr[1];
                a[2] = corr[2];
                a[3] = corr[3];
                if (is3x3) dw_taps(xb, wb, 0, 3, 0, 3, tap_dx, tap_dy, c, 3 * c, nb, 0, 0, a);
                else dw_taps(xb, wb, 0, kh, 0, kw, tap_dx, tap_dy, c, kw * c, nb, 0, 0, a);
              } else {
                int32_t fx0, fx1;
                tap_range(ix0, p->w, kw, p->dil_w, &fx0, &fx1);
                a[0] = bs[0];
                a[1] = bs[1];
                a[2] = bs[2];
                a[3] = bs[3];
                dw_taps(xb, wb, fy0, fy1, fx0, fx1, tap_dx, tap_dy, c, kw * c, nb, p->input_offset, 1, a);
              }
              accs[0][i] = a[0];
              accs[1][i] = a[1];
              accs[2][i] = a[2];
              accs[3][i] = a[3];
            }
            for (j = 0; j < nb; ++j)
              REQUANT_ROW(accs[j], ox_end - ox0, &rq[j], yp + j, pix_stride, p->output_offset, p->act_min, p->act_max);
          }
        }
      }
}
#endif

#if defined(STOWAGE_DOT_WIDENED)
/* Input elements up to which a fully connected layer widens a batch row once, its offset added, for every pair of
 * outputs: 2 bytes each on the stack (STOWAGE_FC_STACK_BYTES). A longer row is widened a chunk at a time per pair. */
#define STOWAGE_FC_WIDE_K (STOWAGE_FC_STACK_BYTES / 2)

/* (x[0..n4) + offset) as halfword pairs, per 4 elements bytes 0 and 2 (SXTB16) then bytes 1 and 3 (SXTB16 ROR 8), the
 * offset added to each (SADD16: |x + offset| <= 255 fits a halfword). */
__attribute__((noinline)) static void fc_widen_row(const int8_t* x, int32_t n4, int32_t offset, int32_t* xw) {
  const int32_t off2 = (int32_t)(((uint32_t)offset & 0xFFFFu) | ((uint32_t)offset << 16));
  int32_t i;
  for (i = 0; i < n4; i += 4, xw += 2) {
    const int32_t v = stowage_load4(x + i);
    xw[0] = __sadd16(__sxtb16(v), off2);
    xw[1] = __sadd16(stowage_sxtb16_odd(v), off2);
  }
}

/* One step of fc_dot_quad_widened's loop: four widened input elements (x0: even, x1: odd halfwords) against four
 * bytes of each of the four filter rows (w0 at wp, the others k1, k2, k3 bytes after it): 1 LDRD, 4 LDR, 8 SXTB16,
 * 8 SMLAD for 16 multiply-accumulates. */
#define FC_QUAD_STEP_ASM                      \
  "ldrd   %[x0], %[x1], [%[xp]], #8\n\t"     \
  "ldr    %[t0], [%[wp], %[k1]]\n\t"         \
  "sxtb16 %[te], %[t0]\n\t"                  \
  "sxtb16 %[t0], %[t0], ror #8\n\t"          \
  "smlad  %[a1], %[x0], %[te], %[a1]\n\t"    \
  "smlad  %[a1], %[x1], %[t0], %[a1]\n\t"    \
  "ldr    %[t0], [%[wp], %[k2]]\n\t"         \
  "sxtb16 %[te], %[t0]\n\t"                  \
  "sxtb16 %[t0], %[t0], ror #8\n\t"          \
  "smlad  %[a2], %[x0], %[te], %[a2]\n\t"    \
  "smlad  %[a2], %[x1], %[t0], %[a2]\n\t"    \
  "ldr    %[t0], [%[wp], %[k3]]\n\t"         \
  "sxtb16 %[te], %[t0]\n\t"                  \
  "sxtb16 %[t0], %[t0], ror #8\n\t"          \
  "smlad  %[a3], %[x0], %[te], %[a3]\n\t"    \
  "smlad  %[a3], %[x1], %[t0], %[a3]\n\t"    \
  "ldr    %[t0], [%[wp]], #4\n\t"            \
  "sxtb16 %[te], %[t0]\n\t"                  \
  "sxtb16 %[t0], %[t0], ror #8\n\t"          \
  "smlad  %[a0], %[x0], %[te], %[a0]\n\t"    \
  "smlad  %[a0], %[x1], %[t0], %[a0]\n\t"

/* acc[j] += (x + offset).w_j for the four filter rows w_j = w0 + j * stride (j < rows; a missing row repeats the last,
 * its sums thrown away by the caller) over n elements: the first n4 (a multiple of 4) from the row widened by
 * fc_widen_row, so that only the filters are widened in the loop (22 instructions per 16 multiply-accumulates, two
 * steps a loop; the pair of rows before took 24), the rest from x. Four rows share each widened input word and one
 * call. */
__attribute__((noinline)) static void fc_dot_quad_widened(const int32_t* xw, const int8_t* x, const int8_t* w0, int32_t stride,
                                                          int32_t rows, int32_t n4, int32_t n, int32_t offset, int32_t* acc) {
  const int32_t k1 = rows > 1 ? stride : 0, k2 = rows > 2 ? 2 * stride : k1, k3 = rows > 3 ? 3 * stride : k2;
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3], i;
#if defined(__ARM_FEATURE_DSP) && defined(__GNUC__) && defined(__OPTIMIZE__)
  const int32_t* xp = xw;
  const int8_t* wp = w0;
  const int8_t* end = w0 + n4;
  int32_t x0, x1, t0, te;
  /* Two steps a loop; an odd number of steps enters at the second. */
  if (n4 > 0)
    __asm__ volatile("sub    %[te], %[end], %[wp]\n\t"
                     "tst    %[te], #4\n\t"
                     "bne    2f\n\t"
                     "1:\n\t" FC_QUAD_STEP_ASM "2:\n\t" FC_QUAD_STEP_ASM
                     "cmp    %[wp], %[end]\n\t"
                     "bne    1b\n\t"
                     : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [xp] "+r"(xp), [wp] "+r"(wp),
                       [x0] "=&r"(x0), [x1] "=&r"(x1), [t0] "=&r"(t0), [te] "=&r"(te)
                     : [k1] "r"(k1), [k2] "r"(k2), [k3] "r"(k3), [end] "r"(end)
                     : "cc", "memory");
#else
  for (i = 0; i < n4; i += 4, xw += 2) {
    int32_t v = stowage_load4(w0 + i);
    a0 = __smlad(xw[1], stowage_sxtb16_odd(v), __smlad(xw[0], __sxtb16(v), a0));
    v = stowage_load4(w0 + k1 + i);
    a1 = __smlad(xw[1], stowage_sxtb16_odd(v), __smlad(xw[0], __sxtb16(v), a1));
    v = stowage_load4(w0 + k2 + i);
    a2 = __smlad(xw[1], stowage_sxtb16_odd(v), __smlad(xw[0], __sxtb16(v), a2));
    v = stowage_load4(w0 + k3 + i);
    a3 = __smlad(xw[1], stowage_sxtb16_odd(v), __smlad(xw[0], __sxtb16(v), a3));
  }
#endif
  for (i = n4; i < n; ++i) {
    const int32_t xi = x[i] + offset;
    a0 += xi * w0[i];
    a1 += xi * w0[k1 + i];
    a2 += xi * w0[k2 + i];
    a3 += xi * w0[k3 + i];
  }
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
}
#else
/* stowage_dot_1x2_offset out of line: inlined into the fully connected kernel, its loop found too few registers (Helium's
 * version ran 23% more instructions inline on ToyCar). */
__attribute__((noinline)) static void fc_dot_pair(const int8_t* x, const int8_t* w0, const int8_t* w1, int32_t k, int32_t offset, int32_t* acc) {
  stowage_dot_1x2_offset(x, w0, w1, k, offset, acc);
}
#endif

#if defined(STOWAGE_DOT_WIDENED)
/* Outputs computed together by one call: four filter rows share each widened input word (fc_dot_quad_widened). */
#define FC_GROUP 4

/* fc_group for a row longer than the buffer `xw`: widened a chunk at a time for this group of outputs. */
__attribute__((noinline)) static void fc_group_chunked(const int8_t* x, int32_t* xw, const int8_t* w, int32_t rows, int32_t k,
                                                       int32_t offset, int32_t* acc) {
  int32_t k0;
  for (k0 = 0; k0 < k; k0 += STOWAGE_FC_WIDE_K) {
    const int32_t n = k - k0 < STOWAGE_FC_WIDE_K ? k - k0 : STOWAGE_FC_WIDE_K;
    fc_widen_row(x + k0, n & ~3, offset, xw);
    fc_dot_quad_widened(xw, x + k0, w + k0, k, rows, n & ~3, n, offset, acc);
  }
}
#else
#define FC_GROUP 2
#endif

/* acc[j] += the dot product of batch row x (k elements, with its offset) and filter row w + j * k, for j < rows
 * (rows <= FC_GROUP; the entries past rows are left undefined). With the DSP extension through `xw`: the row widened
 * there by fc_widen_row when it fits (`whole`), else a chunk at a time (fc_group_chunked). */
static inline void fc_group(const int8_t* x, int32_t* xw, int whole, const int8_t* w, int32_t rows, int32_t k, int32_t offset,
                            int32_t* acc) {
#if defined(STOWAGE_DOT_WIDENED)
  if (whole) fc_dot_quad_widened(xw, x, w, k, rows, k & ~3, k, offset, acc);
  else fc_group_chunked(x, xw, w, rows, k, offset, acc);
#else
  (void)xw;
  (void)whole;
  fc_dot_pair(x, w, rows > 1 ? w + k : w, k, offset, acc);
#endif
}

/* Before the output pairs of batch row x: with the DSP extension, the row widened into `xw` once when it fits (`whole`;
 * fc_group widens a longer one per group of outputs). */
static inline void fc_begin_row(const int8_t* x, int32_t* xw, int whole, int32_t k, int32_t offset) {
#if defined(STOWAGE_DOT_WIDENED)
  if (whole) fc_widen_row(x, k & ~3, offset, xw);
#else
  (void)x;
  (void)xw;
  (void)whole;
  (void)k;
  (void)offset;
#endif
}

/* One output of a fully connected layer quantized per channel: out of line, one copy (code size; TFLite writes
 * these layers per tensor, which requantize a row chunk at a time). */
#if !defined(STOWAGE_RQF32_VARIANT)
__attribute__((noinline)) static int8_t fc_out(int32_t acc, int32_t multiplier, int32_t shift, const stowage_qfc_params* p,
                                               int narrow) {
  const stowage_rq r = stowage_rq_make(multiplier, shift);
  return out_s8(acc, &r, p->output_offset, p->act_min, p->act_max, narrow);
}
#endif

/* Fully connected: FC_GROUP output rows at a time, the input offset added as the input is read (with the DSP extension
 * once per batch row, as it is widened: fc_begin_row), a chunk of outputs at a time. */
static void qfully_connected_fast(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
                                  const int32_t* shift, int8_t* y, const stowage_qfc_params* p) {
  const int32_t k = p->k;
  int32_t b;
#if defined(STOWAGE_DOT_WIDENED)
  /* With the DSP extension each batch row is widened once (offset added) when it fits the buffer. */
  int32_t xw_buf[STOWAGE_FC_WIDE_K / 2];
  int32_t* xw = xw_buf;
  const int whole = (k & ~3) <= STOWAGE_FC_WIDE_K;
#else
  int32_t* xw = NULL;
  const int whole = 0;
#endif
  /* One quantization for every output (the narrow flag travels in r: one more register live across the dot products
   * made GCC spill their pointers): a chunk of outputs is requantized in one loop; per channel, one at a time. */
  stowage_rq r = RQ_MAKE(multiplier[0], shift[0]);
  int32_t accs[STOWAGE_ROW_CHUNK];
  r.narrow = acc_is_narrow(bias, p->m, shift, p->per_channel ? p->m : 1, p->input_offset, k);
  for (b = 0; b < p->batches; ++b) {
    int32_t o0;
    fc_begin_row(x + b * k, xw, whole, k, p->input_offset);
    for (o0 = 0; o0 < p->m; o0 += STOWAGE_ROW_CHUNK) {
      const int32_t n = p->m - o0 < STOWAGE_ROW_CHUNK ? p->m - o0 : STOWAGE_ROW_CHUNK;
      int32_t i, j;
      for (i = 0; i < n; i += FC_GROUP) {
        const int32_t rows = n - i < FC_GROUP ? n - i : FC_GROUP;
        int32_t acc[FC_GROUP];
        for (j = 0; j < FC_GROUP; ++j) acc[j] = bias != NULL && j < rows ? bias[o0 + i + j] : 0;
        fc_group(x + b * k, xw, whole, w + (o0 + i) * k, rows, k, p->input_offset, acc);
        for (j = 0; j < rows; ++j) accs[i + j] = acc[j];
      }
      if (!p->per_channel)
        REQUANT_ROW(accs, n, &r, y + b * p->m + o0, 1, p->output_offset, p->act_min, p->act_max);
      else
        for (j = 0; j < n; ++j)
          y[b * p->m + o0 + j] = FC_OUT(accs[j], multiplier[o0 + j], shift[o0 + j], p, r.narrow);
    }
  }
}

/* The fast paths index with 32-bit arithmetic: tensors must stay below 2^31 elements. Without the reference loops the
 * compiler has asked this of every call already (the *_is_fast functions on the host), so the firmware does not again
 * (about 180 bytes of 64-bit products on the M4). */
static int fits_32bit(int64_t elements) {
#if STOWAGE_REFERENCE_LOOPS
  return elements < ((int64_t)1 << 31);
#else
  (void)elements;
  return 1;
#endif
}

static int conv_fits_32bit(const stowage_qconv_params* p) {
  return fits_32bit((int64_t)p->n * p->h * p->w * p->c) &&
         fits_32bit((int64_t)p->n * p->oh * p->ow * (p->out_pixel_stride > 0 ? p->out_pixel_stride : p->m)) &&
         fits_32bit((int64_t)p->m * p->kh * p->kw * p->c);
}

/* Whether the fast paths take `p` at all: groups 1, contiguous window rows, 32-bit indices. */
static int qconv_is_fast(const stowage_qconv_params* p) { return p->kc == p->c && p->dil_w == 1 && conv_fits_32bit(p); }

/* A 1x1, stride 1, unpadded convolution: every pixel of the batch is one long row. */
static int qconv_is_pointwise(const stowage_qconv_params* p) {
  return p->kh == 1 && p->kw == 1 && p->stride_h == 1 && p->stride_w == 1 && p->pad_top == 0 && p->pad_left == 0 &&
         p->oh == p->h && p->ow == p->w;
}

#if STOWAGE_CONV_POINTWISE
/* Whether a pointwise `p` runs through qconv2d_pointwise: its output channels fit the buffers, with the DSP extension
 * its input channels too (4 to STOWAGE_PW_WIDE_K, widened per pixel pair). */
static int pointwise_fits(const stowage_qconv_params* p) {
#if defined(STOWAGE_DOT_WIDENED)
  if (p->c < 4 || p->c > STOWAGE_PW_WIDE_K) return 0;
#elif defined(STOWAGE_DOT_MVE)
  /* Helium requantizes a whole row chunk of one channel four outputs at a time in qconv2d_fast; pixel pairs only paid
   * where a band order cut the rows short and the dot products were long (on mps3-an547: KWS, 64-channel layers, 15%
   * fewer instructions in all; VWW's 8- and 32-channel layers 45% and 26% more). */
  if (p->row_band == 0 || p->c < 64) return 0;
#endif
  return p->m <= STOWAGE_PW_CHANNELS;
}
#endif

/* Whether stowage_qconv2d_s8 runs `p` through the im2col buffer: a fast-path conv, not pointwise, whose window rows
 * are shorter than 16 bytes and whose two windows fit the buffer. */
static int qconv_uses_im2col(const stowage_qconv_params* p) {
  return qconv_is_fast(p) && !qconv_is_pointwise(p) && (int64_t)p->kw * p->c < 16 &&
         2 * (int64_t)p->kh * p->kw * p->c <= STOWAGE_IM2COL_BYTES;
}
#endif

/* Whether each kernel takes its fast path (the loops with DSP and Helium variants) for `p`: what the dispatchers below
 * test, also asked by the compiler (lower/KernelVariant) to name each layer's variant. */
int stowage_qconv2d_s8_is_fast(const stowage_qconv_params* p) {
#if defined(STOWAGE_SMALL_KERNELS)
  (void)p;
  return 0;
#else
  return qconv_is_fast(p);
#endif
}

int stowage_qconv2d_s8_paths(const stowage_qconv_params* p) {
#if defined(STOWAGE_SMALL_KERNELS)
  (void)p;
  return 0;
#else
  if (!qconv_is_fast(p)) return 0;
  if (qconv_is_pointwise(p)) return STOWAGE_QCONV_PATH_POINTWISE;
  if (qconv_uses_im2col(p)) return STOWAGE_QCONV_PATH_IM2COL;
  return (conv_by_filter_rows(p) ? STOWAGE_QCONV_PATH_BY_FILTER_ROWS : 0) |
         (conv_pairs_border_rows(p) ? STOWAGE_QCONV_PATH_BORDER_PAIRS : 0);
#endif
}

int stowage_qdepthwise_conv2d_s8_is_fast(const stowage_qconv_params* p) {
#if defined(STOWAGE_SMALL_KERNELS)
  (void)p;
  return 0;
#else
  return p->depth_multiplier == 1 && p->m == p->c && conv_fits_32bit(p) && dw_strip_fits(p);
#endif
}

int stowage_qdepthwise_conv2d_s8_paths(const stowage_qconv_params* p) {
#if defined(STOWAGE_SMALL_KERNELS)
  (void)p;
  return 0;
#else
  if (!stowage_qdepthwise_conv2d_s8_is_fast(p)) return 0;
  return dw_takes_pixels(p) ? STOWAGE_QDW_PATH_PIXELS : STOWAGE_QDW_PATH_STRIP;
#endif
}

int stowage_qfully_connected_s8_is_fast(const stowage_qfc_params* p) {
#if defined(STOWAGE_SMALL_KERNELS)
  (void)p;
  return 0;
#else
  return fits_32bit((int64_t)p->batches * p->k) && fits_32bit((int64_t)p->m * p->k) && fits_32bit((int64_t)p->batches * p->m);
#endif
}

int32_t stowage_qfully_connected_s8_stack_bytes(const stowage_qfc_params* p) {
#if defined(STOWAGE_SMALL_KERNELS)
  (void)p;
  return 0;
#else
  return stowage_qfully_connected_s8_is_fast(p) ? STOWAGE_FC_STACK_BYTES : 0;
#endif
}

int32_t stowage_qdepthwise_conv2d_s8_stack_bytes(const stowage_qconv_params* p) {
#if defined(STOWAGE_SMALL_KERNELS)
  (void)p;
  return 0;
#else
  /* What the DSP build takes (the pixels or the strip, dw_takes_pixels), whichever build asks: the compiler's, on the
   * host, reports for the target. */
  if (!stowage_qdepthwise_conv2d_s8_is_fast(p)) return 0;
  return dw_takes_pixels(p) ? STOWAGE_DW_PIXEL_BYTES : STOWAGE_DW_STRIP_BYTES + 8 * p->kh * p->kw;
#endif
}

int32_t stowage_qconv2d_s8_stack_bytes(const stowage_qconv_params* p) {
#if defined(STOWAGE_SMALL_KERNELS)
  (void)p;
  return 0;
#else
  if (!qconv_is_fast(p)) return 0;
  /* A pointwise layer the pointwise kernel does not take runs qconv2d_fast over one long row: a widened filter pair. */
  if (qconv_is_pointwise(p))
    return p->m <= STOWAGE_PW_CHANNELS && p->c <= STOWAGE_PW_WIDE_K ? STOWAGE_POINTWISE_STACK_BYTES : STOWAGE_CONV_FILTER_STACK_BYTES;
  if (qconv_uses_im2col(p)) return STOWAGE_IM2COL_STACK_BYTES;
  /* qconv2d_fast: its widened filter pair is in its frame whichever loop runs (the DSP build's; reported for all). */
  return STOWAGE_CONV_FILTER_STACK_BYTES;
#endif
}

void stowage_qconv2d_s8(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
                        const int32_t* shift, int8_t* y, const stowage_qconv_params* p) {
#if !defined(STOWAGE_SMALL_KERNELS)
  if (qconv_is_fast(p)) {
    if (qconv_is_pointwise(p)) {
#if STOWAGE_CONV_POINTWISE
      if (pointwise_fits(p) && POINTWISE_NARROW(acc_is_narrow(bias, p->m, shift, p->per_channel ? p->m : 1, p->input_offset, p->c))) {
        qconv2d_pointwise(x, w, bias, multiplier, shift, y, p);
        return;
      }
#endif
      /* Inputs and outputs are both pixel after pixel: the batch is one row, or with a band order each band is one
       * row (a band that does not divide the rows keeps the rows as they are). */
      stowage_qconv_params flat = *p;
      if (p->row_band == 0) {
        flat.n = flat.h = flat.oh = 1;
        flat.w = flat.ow = p->n * p->h * p->w;
      } else if (p->n == 1 && p->h % row_band_of(p) == 0) {
        flat.h = flat.oh = p->h / row_band_of(p);
        flat.w = flat.ow = p->w * row_band_of(p);
        flat.row_band = p->row_band > 0 ? 1 : -1;
      }
      qconv2d_fast(x, w, bias, multiplier, shift, y, &flat);
      return;
    }
#if STOWAGE_CONV_IM2COL
    if (qconv_uses_im2col(p)) {
      qconv2d_im2col(x, w, bias, multiplier, shift, y, p);
      return;
    }
#endif
    qconv2d_fast(x, w, bias, multiplier, shift, y, p);
    return;
  }
#endif
#if STOWAGE_REFERENCE_LOOPS
  qconv2d_ref(x, w, bias, multiplier, shift, y, p);
#else
  STOWAGE_REFERENCE_MISSING();
#endif
}

void stowage_qdepthwise_conv2d_s8(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
                                  const int32_t* shift, int8_t* y, const stowage_qconv_params* p) {
#if !defined(STOWAGE_SMALL_KERNELS)
  if (stowage_qdepthwise_conv2d_s8_is_fast(p)) {
#if STOWAGE_DW_PIXELS
    if (STOWAGE_DW_STRIP ? dw_takes_pixels(p) : dw_pixels_fit(p)) { /* without the strip, every layer that fits */
      qdepthwise_pixels(x, w, bias, multiplier, shift, y, p);
      return;
    }
#endif
#if STOWAGE_DW_STRIP
    qdepthwise_strip(x, w, bias, multiplier, shift, y, p);
    return;
#endif
#if !defined(STOWAGE_DOT_WIDENED)
    qdepthwise_fast(x, w, bias, multiplier, shift, y, p);
    return;
#endif
  }
#endif
#if STOWAGE_REFERENCE_LOOPS
  qdepthwise_ref(x, w, bias, multiplier, shift, y, p);
#else
  (void)x, (void)w, (void)bias, (void)multiplier, (void)shift, (void)y; /* a build with neither DSP path */
  STOWAGE_REFERENCE_MISSING();
#endif
}

void stowage_qfully_connected_s8(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
                                 const int32_t* shift, int8_t* y, const stowage_qfc_params* p) {
#if !defined(STOWAGE_SMALL_KERNELS)
  if (stowage_qfully_connected_s8_is_fast(p)) {
    qfully_connected_fast(x, w, bias, multiplier, shift, y, p);
    return;
  }
#endif
#if STOWAGE_REFERENCE_LOOPS
  qfully_connected_ref(x, w, bias, multiplier, shift, y, p);
#else
  STOWAGE_REFERENCE_MISSING();
#endif
}
