/* Private helpers of the fast int8 kernels: dot products of int8 vectors without the input offset (which the
 * kernels fold into a per-channel correction), blocked over two inputs and two filters, in three variants chosen at
 * compile time: Arm DSP extension (SXTB16 + SMLAD, Cortex-M4/M7/M33/M55), Helium (MVE, Cortex-M55) and portable C.
 * The integer results are identical in every variant (sums of exact products, wrapping modulo 2^32). */
#ifndef STOWAGE_INT8_DOT_H
#define STOWAGE_INT8_DOT_H

#include <stdint.h>
#include <string.h>

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1) && !defined(STOWAGE_NO_SIMD)
#include <arm_mve.h>
#define STOWAGE_DOT_MVE 1
#endif
#if defined(__ARM_FEATURE_DSP) && !defined(STOWAGE_NO_SIMD)
/* Cores with Helium have the DSP extension too: the paths without a vector variant use it. */
#include <arm_acle.h>
#define STOWAGE_DOT_DSP 1
#elif defined(STOWAGE_EMULATE_DSP)
/* Host emulation of the DSP instructions, so that tests run the DSP code path on any machine. */
#define STOWAGE_DOT_DSP 1
static inline int32_t __sxtb16(int32_t v) {
  const uint32_t u = (uint32_t)v;
  const uint32_t lo = (uint32_t)(int32_t)(int8_t)(u & 0xFFu) & 0xFFFFu;
  const uint32_t hi = (uint32_t)(int32_t)(int8_t)((u >> 16) & 0xFFu) & 0xFFFFu;
  return (int32_t)(lo | (hi << 16));
}
static inline int32_t stowage_emu_lo16(int32_t v) { return (int32_t)(int16_t)((uint32_t)v & 0xFFFFu); }
static inline int32_t stowage_emu_hi16(int32_t v) { return (int32_t)(int16_t)(((uint32_t)v >> 16) & 0xFFFFu); }
static inline int32_t __smlad(int32_t a, int32_t b, int32_t acc) {
  return (int32_t)((uint32_t)acc + (uint32_t)(stowage_emu_lo16(a) * stowage_emu_lo16(b)) +
                   (uint32_t)(stowage_emu_hi16(a) * stowage_emu_hi16(b)));
}
static inline int32_t __smlabb(int32_t a, int32_t b, int32_t acc) {
  return (int32_t)((uint32_t)acc + (uint32_t)(stowage_emu_lo16(a) * stowage_emu_lo16(b)));
}
static inline int32_t __smlatt(int32_t a, int32_t b, int32_t acc) {
  return (int32_t)((uint32_t)acc + (uint32_t)(stowage_emu_hi16(a) * stowage_emu_hi16(b)));
}
static inline int32_t __sadd16(int32_t a, int32_t b) {
  const uint32_t lo = ((uint32_t)a + (uint32_t)b) & 0xFFFFu;
  const uint32_t hi = (((uint32_t)a >> 16) + ((uint32_t)b >> 16)) & 0xFFFFu;
  return (int32_t)(lo | (hi << 16));
}
#endif

/* Four int8 values as one word (unaligned loads are allowed on every core with the DSP extension). */
static inline int32_t stowage_load4(const int8_t* p) {
  int32_t v;
  memcpy(&v, p, 4);
  return v;
}

#if defined(STOWAGE_DOT_DSP)
/* Bytes 1 and 3 of v sign-extended into two halfwords (one SXTB16 with ROR #8; GCC 12 does not fold the rotate). */
static inline int32_t stowage_sxtb16_odd(int32_t v) {
#if defined(__ARM_FEATURE_DSP) && defined(__GNUC__)
  int32_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(v));
  return r;
#else
  const uint32_t u = (uint32_t)v;
  return __sxtb16((int32_t)((u >> 8) | (u << 24)));
#endif
}
#endif

#if defined(STOWAGE_DOT_DSP) && defined(__ARM_FEATURE_DSP) && defined(__GNUC__) && !defined(STOWAGE_DOT_MVE)
#define STOWAGE_DOT_ASM 1
/* acc[0..3] += the 2x2 dot products (xa.w0, xb.w0, xa.w1, xb.w1) over `rows` segments of n elements: the inputs'
 * segments are row_stride bytes apart, the filters' follow each other. The multiple-of-4 part of each segment runs in a
 * loop register-allocated by hand (4 accumulators, 5 pointers/strides, 4 temporaries: in C, GCC 12 spills, and inlined
 * the asm finds no registers); the second filter's widened halves serve both inputs, the first filter's word is loaded
 * again for the second input. One call per pair of outputs and filters keeps the per-row cost to a few instructions. */
__attribute__((noinline, unused)) static void stowage_dot_2x2_rows_dsp(const int8_t* xa, const int8_t* xb, const int8_t* w0,
                                                               const int8_t* w1, int32_t n, int32_t rows,
                                                               int32_t row_stride, int32_t* acc) {
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3], r, i;
  const int32_t n4 = n & ~3, ystep = (int32_t)(xb - xa) - 4, wstep = (int32_t)(w1 - w0);
  for (r = 0; r < rows; ++r, xa += row_stride, xb += row_stride, w0 += n, w1 += n) {
    if (n4 > 0) {
      const int8_t* xp = xa;
      const int8_t* wp = w0;
      const int8_t* end = xa + n4;
      int32_t t1, t2, t3, t4;
    __asm__ volatile(
        "1:\n\t"
        "ldr    %[t3], [%[xp]], #4\n\t"
        "ldr    %[t1], [%[wp]]\n\t"
        "sxtb16 %[t4], %[t3]\n\t"
        "sxtb16 %[t3], %[t3], ror #8\n\t"
        "sxtb16 %[t2], %[t1]\n\t"
        "sxtb16 %[t1], %[t1], ror #8\n\t"
        "smlad  %[a0], %[t4], %[t2], %[a0]\n\t"
        "smlad  %[a0], %[t3], %[t1], %[a0]\n\t"
        "ldr    %[t1], [%[wp], %[wstep]]\n\t"
        "sxtb16 %[t2], %[t1]\n\t"
        "sxtb16 %[t1], %[t1], ror #8\n\t"
        "smlad  %[a2], %[t4], %[t2], %[a2]\n\t"
        "smlad  %[a2], %[t3], %[t1], %[a2]\n\t"
        "ldr    %[t3], [%[xp], %[ystep]]\n\t"
        "sxtb16 %[t4], %[t3]\n\t"
        "sxtb16 %[t3], %[t3], ror #8\n\t"
        "smlad  %[a3], %[t4], %[t2], %[a3]\n\t"
        "smlad  %[a3], %[t3], %[t1], %[a3]\n\t"
        "ldr    %[t1], [%[wp]], #4\n\t"
        "sxtb16 %[t2], %[t1]\n\t"
        "sxtb16 %[t1], %[t1], ror #8\n\t"
        "smlad  %[a1], %[t4], %[t2], %[a1]\n\t"
        "smlad  %[a1], %[t3], %[t1], %[a1]\n\t"
        "cmp    %[xp], %[end]\n\t"
        "bne    1b\n\t"
        : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [xp] "+r"(xp), [wp] "+r"(wp), [t1] "=&r"(t1),
          [t2] "=&r"(t2), [t3] "=&r"(t3), [t4] "=&r"(t4)
        : [ystep] "r"(ystep), [wstep] "r"(wstep), [end] "r"(end)
        : "cc", "memory");
    }
    for (i = n4; i < n; ++i) {
      const int32_t x = xa[i], y = xb[i], p = w0[i], q = w1[i];
      a0 = (int32_t)((uint32_t)a0 + (uint32_t)(x * p));
      a1 = (int32_t)((uint32_t)a1 + (uint32_t)(y * p));
      a2 = (int32_t)((uint32_t)a2 + (uint32_t)(x * q));
      a3 = (int32_t)((uint32_t)a3 + (uint32_t)(y * q));
    }
  }
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
}
#endif

#if defined(STOWAGE_DOT_DSP) && !defined(STOWAGE_DOT_MVE)
#define STOWAGE_DOT_WIDENED 1
/* Two inputs' first n4 elements (n4 a multiple of 4) widened once for stowage_dot_2x2_widened: per 4 elements, four
 * words: xa's bytes 0 and 2 as two halfwords (SXTB16), xa's bytes 1 and 3 (SXTB16 ROR 8), the same two of xb. A
 * kernel widens a pair of output pixels' inputs once and runs every filter pair over them, so that only the filters
 * are widened in the inner loop (CMSIS-NN's im2col to int16, interleaved for two pixels). */
static inline void stowage_widen_pair(const int8_t* xa, const int8_t* xb, int32_t n4, int32_t* xw) {
  int32_t i;
  for (i = 0; i < n4; i += 4, xw += 4) {
    const int32_t va = stowage_load4(xa + i), vb = stowage_load4(xb + i);
    xw[0] = __sxtb16(va);
    xw[1] = stowage_sxtb16_odd(va);
    xw[2] = __sxtb16(vb);
    xw[3] = stowage_sxtb16_odd(vb);
  }
}

#if defined(__ARM_FEATURE_DSP) && defined(__GNUC__) && defined(__OPTIMIZE__)
/* acc[0] += xa.w0, acc[1] += xb.w0, acc[2] += xa.w1, acc[3] += xb.w1 over n4 elements (a multiple of 4, at least 4),
 * xb = xa + ystep, the filters widened beforehand (stowage_widen_pair(w0, w1, ...): per 4 elements, w0's even and odd
 * halfword pairs, then w1's): the filter pair is widened once and serves every pixel pair of a row. 18 instructions
 * per 16 multiply-accumulates (2 input words, 4 SXTB16, 2 LDRD of the widened filters, 8 SMLAD, 2 loop). */
__attribute__((noinline, unused)) static void stowage_dot_2x2_wfilters(const int8_t* xa, int32_t ystep, const int32_t* ww,
                                                               int32_t n4, int32_t* acc) {
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3], xe, xo, ye, yo, we, wo;
  const int8_t* xp = xa;
  const int32_t* wp = ww;
  const int8_t* end = xa + n4;
  __asm__ volatile(
      "1:\n\t"
      "ldr    %[yo], [%[xp], %[ys]]\n\t"
      "ldr    %[xo], [%[xp]], #4\n\t"
      "sxtb16 %[ye], %[yo]\n\t"
      "sxtb16 %[yo], %[yo], ror #8\n\t"
      "sxtb16 %[xe], %[xo]\n\t"
      "sxtb16 %[xo], %[xo], ror #8\n\t"
      "ldrd   %[we], %[wo], [%[wp]], #8\n\t"
      "smlad  %[a0], %[xe], %[we], %[a0]\n\t"
      "smlad  %[a0], %[xo], %[wo], %[a0]\n\t"
      "smlad  %[a1], %[ye], %[we], %[a1]\n\t"
      "smlad  %[a1], %[yo], %[wo], %[a1]\n\t"
      "ldrd   %[we], %[wo], [%[wp]], #8\n\t"
      "smlad  %[a2], %[xe], %[we], %[a2]\n\t"
      "smlad  %[a2], %[xo], %[wo], %[a2]\n\t"
      "smlad  %[a3], %[ye], %[we], %[a3]\n\t"
      "smlad  %[a3], %[yo], %[wo], %[a3]\n\t"
      "cmp    %[xp], %[end]\n\t"
      "bne    1b\n\t"
      : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [xp] "+r"(xp), [wp] "+r"(wp), [xe] "=&r"(xe),
        [xo] "=&r"(xo), [ye] "=&r"(ye), [yo] "=&r"(yo), [we] "=&r"(we), [wo] "=&r"(wo)
      : [ys] "r"(ystep), [end] "r"(end)
      : "cc", "memory");
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
}

/* stowage_dot_2x2_wfilters over `rows` window rows of n4 elements each, row_step bytes apart in the input (the filters'
 * rows one after another in ww): one call per pixel pair instead of one per row; the row loop keeps its counters in
 * memory (every register holds the inner loop), 7 instructions a row. */
__attribute__((noinline, unused)) static void stowage_dot_2x2_wfilters_rows(const int8_t* xa, int32_t ystep, const int32_t* ww,
                                                                    int32_t n4, int32_t rows, int32_t row_step, int32_t* acc) {
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3], xe, xo, ye, yo, we, wo;
  const int8_t* xp = xa;
  const int32_t* wp = ww;
  const int8_t* end;
  int32_t left = rows;
  const int32_t n4m = n4, adv = row_step - n4;
  __asm__ volatile(
      "2:\n\t"
      "ldr    %[we], %[n4m]\n\t"
      "add    %[end], %[xp], %[we]\n\t"
      "1:\n\t"
      "ldr    %[yo], [%[xp], %[ys]]\n\t"
      "ldr    %[xo], [%[xp]], #4\n\t"
      "sxtb16 %[ye], %[yo]\n\t"
      "sxtb16 %[yo], %[yo], ror #8\n\t"
      "sxtb16 %[xe], %[xo]\n\t"
      "sxtb16 %[xo], %[xo], ror #8\n\t"
      "ldrd   %[we], %[wo], [%[wp]], #8\n\t"
      "smlad  %[a0], %[xe], %[we], %[a0]\n\t"
      "smlad  %[a0], %[xo], %[wo], %[a0]\n\t"
      "smlad  %[a1], %[ye], %[we], %[a1]\n\t"
      "smlad  %[a1], %[yo], %[wo], %[a1]\n\t"
      "ldrd   %[we], %[wo], [%[wp]], #8\n\t"
      "smlad  %[a2], %[xe], %[we], %[a2]\n\t"
      "smlad  %[a2], %[xo], %[wo], %[a2]\n\t"
      "smlad  %[a3], %[ye], %[we], %[a3]\n\t"
      "smlad  %[a3], %[yo], %[wo], %[a3]\n\t"
      "cmp    %[xp], %[end]\n\t"
      "bne    1b\n\t"
      "ldr    %[we], %[adv]\n\t"
      "add    %[xp], %[xp], %[we]\n\t"
      "ldr    %[we], %[left]\n\t"
      "subs   %[we], %[we], #1\n\t"
      "str    %[we], %[left]\n\t"
      "bne    2b\n\t"
      : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [xp] "+r"(xp), [wp] "+r"(wp), [xe] "=&r"(xe),
        [xo] "=&r"(xo), [ye] "=&r"(ye), [yo] "=&r"(yo), [we] "=&r"(we), [wo] "=&r"(wo), [end] "=&r"(end), [left] "+m"(left)
      : [ys] "r"(ystep), [n4m] "m"(n4m), [adv] "m"(adv)
      : "cc", "memory");
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
}
#else
/* acc[0] += xa.w0, acc[1] += xb.w0, acc[2] += xa.w1, acc[3] += xb.w1 over n4 elements (a multiple of 4), the inputs
 * widened by stowage_widen_pair, w1 = w0 + wstep (with the DSP instructions: stowage_dot_2x2_widened_pairs' asm). */
static inline void stowage_dot_2x2_widened(const int32_t* xw, const int8_t* w0, int32_t wstep, int32_t n4, int32_t* acc) {
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3], i;
  for (i = 0; i < n4; i += 4, xw += 4) {
    int32_t w = stowage_load4(w0 + i), we = __sxtb16(w), wo = stowage_sxtb16_odd(w);
    a0 = __smlad(xw[0], we, a0);
    a0 = __smlad(xw[1], wo, a0);
    a1 = __smlad(xw[2], we, a1);
    a1 = __smlad(xw[3], wo, a1);
    w = stowage_load4(w0 + wstep + i);
    we = __sxtb16(w);
    wo = stowage_sxtb16_odd(w);
    a2 = __smlad(xw[0], we, a2);
    a2 = __smlad(xw[1], wo, a2);
    a3 = __smlad(xw[2], we, a3);
    a3 = __smlad(xw[3], wo, a3);
  }
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
}

static inline void stowage_dot_2x2_wfilters(const int8_t* xa, int32_t ystep, const int32_t* ww, int32_t n4, int32_t* acc) {
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3], i;
  for (i = 0; i < n4; i += 4, ww += 4) {
    const int32_t x = stowage_load4(xa + i), y = stowage_load4(xa + ystep + i);
    const int32_t xe = __sxtb16(x), xo = stowage_sxtb16_odd(x), ye = __sxtb16(y), yo = stowage_sxtb16_odd(y);
    a0 = __smlad(xe, ww[0], a0);
    a0 = __smlad(xo, ww[1], a0);
    a1 = __smlad(ye, ww[0], a1);
    a1 = __smlad(yo, ww[1], a1);
    a2 = __smlad(xe, ww[2], a2);
    a2 = __smlad(xo, ww[3], a2);
    a3 = __smlad(ye, ww[2], a3);
    a3 = __smlad(yo, ww[3], a3);
  }
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
}

static inline void stowage_dot_2x2_wfilters_rows(const int8_t* xa, int32_t ystep, const int32_t* ww, int32_t n4, int32_t rows,
                                                 int32_t row_step, int32_t* acc) {
  int32_t r;
  for (r = 0; r < rows; ++r) stowage_dot_2x2_wfilters(xa + r * row_step, ystep, ww + r * n4, n4, acc);
}
#endif

/* stowage_dot_2x2_widened over the first n4 elements of the n filter rows at w (wstride apart), two filters at a time
 * (a lone last one paired with itself), each pair's accumulators starting from corr: acc_a[i] and acc_b[i] are the two
 * pixels' sums for filter i. One call per chunk of filters rather than one per pair (measured on the M4: KWS's
 * 8,064 filter pairs 110,880 instructions fewer, about 14 a pair); with the DSP instructions the loop over the pairs is
 * in the same hand-allocated asm as the loop over the elements, its counters and pointers in memory (every register
 * holds the inner loop): 20 instructions a pair around the inner loop, where the compiled loop took 61 (it spilled
 * everything), which outweighed the 36 of the inner loop itself on 8-element filters (VWW's 8->16 pointwise layer). */
#if defined(__ARM_FEATURE_DSP) && defined(__GNUC__) && defined(__OPTIMIZE__)
/* `pairs` filter pairs (w + 2j wstride and the row after it) over the widened inputs xw, wstride 0 pairing a filter with
 * itself. Per 4 elements, 18 instructions for 16 multiply-accumulates (2 LDRD of the widened inputs, 2 filter words,
 * 4 SXTB16, 8 SMLAD, 2 loop); per pair 20 around it. */
__attribute__((noinline, unused)) static void stowage_dot_2x2_widened_pairs(const int32_t* xw, const int8_t* w, int32_t wstride,
                                                                    int32_t n4, int32_t pairs, const int32_t* corr,
                                                                    int32_t* acc_a, int32_t* acc_b) {
  int32_t a0, a1, a2, a3, x0, x1, x2, x3, t0, te;
  const int32_t* xp = xw;
  const int8_t* wp = w;
  const int8_t* end;
  const int32_t* corrp = corr;
  int32_t* accap = acc_a;
  int32_t* accbp = acc_b;
  int32_t left = pairs;
  const int32_t* xw0 = xw;
  const int32_t n4m = n4, adv = 2 * wstride - n4, ws = wstride - 4;
  __asm__ volatile(
      "2:\n\t"
      "ldr    %[te], %[corrp]\n\t"
      "ldrd   %[a0], %[a2], [%[te]], #8\n\t"
      "str    %[te], %[corrp]\n\t"
      "mov    %[a1], %[a0]\n\t"
      "mov    %[a3], %[a2]\n\t"
      "ldr    %[xp], %[xw0]\n\t"
      "ldr    %[te], %[n4m]\n\t"
      "add    %[end], %[wp], %[te]\n\t"
      "1:\n\t"
      "ldrd   %[x0], %[x1], [%[xp]], #8\n\t"
      "ldrd   %[x2], %[x3], [%[xp]], #8\n\t"
      "ldr    %[t0], [%[wp]], #4\n\t"
      "sxtb16 %[te], %[t0]\n\t"
      "sxtb16 %[t0], %[t0], ror #8\n\t"
      "smlad  %[a0], %[x0], %[te], %[a0]\n\t"
      "smlad  %[a0], %[x1], %[t0], %[a0]\n\t"
      "smlad  %[a1], %[x2], %[te], %[a1]\n\t"
      "smlad  %[a1], %[x3], %[t0], %[a1]\n\t"
      "ldr    %[t0], [%[wp], %[ws]]\n\t"
      "sxtb16 %[te], %[t0]\n\t"
      "sxtb16 %[t0], %[t0], ror #8\n\t"
      "smlad  %[a2], %[x0], %[te], %[a2]\n\t"
      "smlad  %[a2], %[x1], %[t0], %[a2]\n\t"
      "smlad  %[a3], %[x2], %[te], %[a3]\n\t"
      "smlad  %[a3], %[x3], %[t0], %[a3]\n\t"
      "cmp    %[wp], %[end]\n\t"
      "bne    1b\n\t"
      "ldr    %[te], %[accap]\n\t"
      "strd   %[a0], %[a2], [%[te]], #8\n\t"
      "str    %[te], %[accap]\n\t"
      "ldr    %[te], %[accbp]\n\t"
      "strd   %[a1], %[a3], [%[te]], #8\n\t"
      "str    %[te], %[accbp]\n\t"
      "ldr    %[te], %[adv]\n\t"
      "add    %[wp], %[wp], %[te]\n\t"
      "ldr    %[te], %[left]\n\t"
      "subs   %[te], %[te], #1\n\t"
      "str    %[te], %[left]\n\t"
      "bne    2b\n\t"
      : [a0] "=&r"(a0), [a1] "=&r"(a1), [a2] "=&r"(a2), [a3] "=&r"(a3), [xp] "+r"(xp), [wp] "+r"(wp), [x0] "=&r"(x0),
        [x1] "=&r"(x1), [x2] "=&r"(x2), [x3] "=&r"(x3), [t0] "=&r"(t0), [te] "=&r"(te), [end] "=&r"(end),
        [corrp] "+m"(corrp), [accap] "+m"(accap), [accbp] "+m"(accbp), [left] "+m"(left)
      : [ws] "r"(ws), [xw0] "m"(xw0), [n4m] "m"(n4m), [adv] "m"(adv)
      : "cc", "memory");
}

__attribute__((always_inline, unused)) static inline void stowage_dot_2x2_widened_filters(const int32_t* xw, const int8_t* w,
                                                                                   int32_t wstride, int32_t n4, int32_t n,
                                                                                   const int32_t* corr, int32_t* acc_a,
                                                                                   int32_t* acc_b) {
  if (n >= 2) stowage_dot_2x2_widened_pairs(xw, w, wstride, n4, n / 2, corr, acc_a, acc_b);
  if (n & 1) { /* a lone last filter, paired with itself: its sums land in acc_a[n - 1] and acc_a[n] (n < the chunk) */
    stowage_dot_2x2_widened_pairs(xw, w + (n - 1) * wstride, 0, n4, 1, corr + n - 1, acc_a + n - 1, acc_b + n - 1);
  }
}
#else
__attribute__((noinline, unused)) static void stowage_dot_2x2_widened_filters(const int32_t* xw, const int8_t* w, int32_t wstride,
                                                                      int32_t n4, int32_t n, const int32_t* corr,
                                                                      int32_t* acc_a, int32_t* acc_b) {
  int32_t i;
  for (i = 0; i < n; i += 2, w += 2 * wstride) {
    const int32_t two = i + 1 < n;
    int32_t acc[4];
    acc[0] = acc[1] = corr[i];
    acc[2] = acc[3] = corr[i + two];
    stowage_dot_2x2_widened(xw, w, two ? wstride : 0, n4, acc);
    acc_a[i] = acc[0];
    acc_b[i] = acc[1];
    acc_a[i + 1] = acc[2];
    acc_b[i + 1] = acc[3];
  }
}
#endif
#endif

/* acc[0] += xa.w0, acc[1] += xb.w0, acc[2] += xa.w1, acc[3] += xb.w1 over n elements (Helium, C, or the DSP
 * extension in C; where the hand-allocated loop exists, int8_conv.c calls stowage_dot_2x2_rows_dsp instead). */
static inline void stowage_dot_2x2(const int8_t* xa, const int8_t* xb, const int8_t* w0, const int8_t* w1, int32_t n,
                                   int32_t* acc) {
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
  int32_t i = 0;
#if defined(STOWAGE_DOT_MVE)
  for (; i < n; i += 16) {
    const mve_pred16_t pr = vctp8q((uint32_t)(n - i));
    const int8x16_t va = vldrbq_z_s8(xa + i, pr), vb = vldrbq_z_s8(xb + i, pr);
    const int8x16_t v0 = vldrbq_z_s8(w0 + i, pr), v1 = vldrbq_z_s8(w1 + i, pr);
    a0 = vmladavaq_s8(a0, va, v0);
    a1 = vmladavaq_s8(a1, vb, v0);
    a2 = vmladavaq_s8(a2, va, v1);
    a3 = vmladavaq_s8(a3, vb, v1);
  }
#else
#if defined(STOWAGE_DOT_DSP)
  for (; i + 4 <= n; i += 4) {
    const int32_t x = stowage_load4(xa + i), y = stowage_load4(xb + i);
    const int32_t xe = __sxtb16(x), xo = stowage_sxtb16_odd(x);
    const int32_t ye = __sxtb16(y), yo = stowage_sxtb16_odd(y);
    int32_t w = stowage_load4(w0 + i);
    int32_t we = __sxtb16(w), wo = stowage_sxtb16_odd(w);
    a0 = __smlad(xe, we, a0);
    a0 = __smlad(xo, wo, a0);
    a1 = __smlad(ye, we, a1);
    a1 = __smlad(yo, wo, a1);
    w = stowage_load4(w1 + i);
    we = __sxtb16(w);
    wo = stowage_sxtb16_odd(w);
    a2 = __smlad(xe, we, a2);
    a2 = __smlad(xo, wo, a2);
    a3 = __smlad(ye, we, a3);
    a3 = __smlad(yo, wo, a3);
  }
#endif
  for (; i < n; ++i) {
    const int32_t x = xa[i], y = xb[i], p = w0[i], q = w1[i];
    a0 = (int32_t)((uint32_t)a0 + (uint32_t)(x * p));
    a1 = (int32_t)((uint32_t)a1 + (uint32_t)(y * p));
    a2 = (int32_t)((uint32_t)a2 + (uint32_t)(x * q));
    a3 = (int32_t)((uint32_t)a3 + (uint32_t)(y * q));
  }
#endif
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
}

/* acc[0] += x.w0, acc[1] += x.w1 over n elements. */
static inline void stowage_dot_1x2(const int8_t* x, const int8_t* w0, const int8_t* w1, int32_t n, int32_t* acc) {
  int32_t a0 = acc[0], a1 = acc[1];
  int32_t i = 0;
#if defined(STOWAGE_DOT_MVE)
  for (; i < n; i += 16) {
    const mve_pred16_t pr = vctp8q((uint32_t)(n - i));
    const int8x16_t vx = vldrbq_z_s8(x + i, pr);
    a0 = vmladavaq_s8(a0, vx, vldrbq_z_s8(w0 + i, pr));
    a1 = vmladavaq_s8(a1, vx, vldrbq_z_s8(w1 + i, pr));
  }
#else
#if defined(STOWAGE_DOT_DSP)
  for (; i + 4 <= n; i += 4) {
    const int32_t v = stowage_load4(x + i);
    const int32_t xe = __sxtb16(v), xo = stowage_sxtb16_odd(v);
    int32_t w = stowage_load4(w0 + i);
    a0 = __smlad(xe, __sxtb16(w), a0);
    a0 = __smlad(xo, stowage_sxtb16_odd(w), a0);
    w = stowage_load4(w1 + i);
    a1 = __smlad(xe, __sxtb16(w), a1);
    a1 = __smlad(xo, stowage_sxtb16_odd(w), a1);
  }
#endif
  for (; i < n; ++i) {
    const int32_t v = x[i];
    a0 = (int32_t)((uint32_t)a0 + (uint32_t)(v * w0[i]));
    a1 = (int32_t)((uint32_t)a1 + (uint32_t)(v * w1[i]));
  }
#endif
  acc[0] = a0;
  acc[1] = a1;
}

/* acc[0] += x'.w0, acc[1] += x'.w1 over n elements, where x' = x + offset (offset in [-255, 255]): for layers
 * whose input offset is not folded into a correction (fully connected, border pixels). */
static inline void stowage_dot_1x2_offset(const int8_t* x, const int8_t* w0, const int8_t* w1, int32_t n, int32_t offset,
                                          int32_t* acc) {
  int32_t a0 = acc[0], a1 = acc[1];
  int32_t i = 0;
#if defined(STOWAGE_DOT_MVE)
  const int16x8_t off = vdupq_n_s16((int16_t)offset);
  for (; i < n; i += 8) {
    const mve_pred16_t pr = vctp16q((uint32_t)(n - i));
    const int16x8_t vx = vaddq_s16(vldrbq_z_s16(x + i, pr), off);
    a0 = vmladavaq_p_s16(a0, vx, vldrbq_z_s16(w0 + i, pr), pr);
    a1 = vmladavaq_p_s16(a1, vx, vldrbq_z_s16(w1 + i, pr), pr);
  }
#else
#if defined(STOWAGE_DOT_DSP)
  const int32_t off2 = (int32_t)(((uint32_t)offset & 0xFFFFu) | ((uint32_t)offset << 16));
  for (; i + 4 <= n; i += 4) {
    const int32_t v = stowage_load4(x + i);
    const int32_t xe = __sadd16(__sxtb16(v), off2), xo = __sadd16(stowage_sxtb16_odd(v), off2);
    int32_t w = stowage_load4(w0 + i);
    a0 = __smlad(xe, __sxtb16(w), a0);
    a0 = __smlad(xo, stowage_sxtb16_odd(w), a0);
    w = stowage_load4(w1 + i);
    a1 = __smlad(xe, __sxtb16(w), a1);
    a1 = __smlad(xo, stowage_sxtb16_odd(w), a1);
  }
#endif
  for (; i < n; ++i) {
    const int32_t v = x[i] + offset;
    a0 = (int32_t)((uint32_t)a0 + (uint32_t)(v * w0[i]));
    a1 = (int32_t)((uint32_t)a1 + (uint32_t)(v * w1[i]));
  }
#endif
  acc[0] = a0;
  acc[1] = a1;
}

/* Returns acc + x.w over n elements. */
static inline int32_t stowage_dot_1x1(const int8_t* x, const int8_t* w, int32_t n, int32_t acc) {
  int32_t i = 0;
#if defined(STOWAGE_DOT_MVE)
  for (; i < n; i += 16) {
    const mve_pred16_t pr = vctp8q((uint32_t)(n - i));
    acc = vmladavaq_s8(acc, vldrbq_z_s8(x + i, pr), vldrbq_z_s8(w + i, pr));
  }
#else
#if defined(STOWAGE_DOT_DSP)
  for (; i + 4 <= n; i += 4) {
    const int32_t v = stowage_load4(x + i), q = stowage_load4(w + i);
    acc = __smlad(__sxtb16(v), __sxtb16(q), acc);
    acc = __smlad(stowage_sxtb16_odd(v), stowage_sxtb16_odd(q), acc);
  }
#endif
  for (; i < n; ++i) acc = (int32_t)((uint32_t)acc + (uint32_t)(x[i] * w[i]));
#endif
  return acc;
}

/* Returns the sum of n int8 values. */
static inline int32_t stowage_sum_s8(const int8_t* w, int32_t n) {
  int32_t s = 0, i;
  for (i = 0; i < n; ++i) s += w[i];
  return s;
}

#endif
