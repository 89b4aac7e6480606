/* The int8 convolution kernels compiled a second time with the Arm DSP instructions emulated in C
 * (STOWAGE_EMULATE_DSP in int8_dot.h), under other names, so that host tests run the DSP code path. */
#define STOWAGE_EMULATE_DSP 1
#define stowage_qconv2d_s8 stowage_emu_dsp_qconv2d_s8
#define stowage_qconv2d_s8_stack_bytes stowage_emu_dsp_qconv2d_s8_stack_bytes
#define stowage_qdepthwise_conv2d_s8_stack_bytes stowage_emu_dsp_qdepthwise_conv2d_s8_stack_bytes
#define stowage_qconv2d_s8_is_fast stowage_emu_dsp_qconv2d_s8_is_fast
#define stowage_qconv2d_s8_paths stowage_emu_dsp_qconv2d_s8_paths
#define stowage_qdepthwise_conv2d_s8_is_fast stowage_emu_dsp_qdepthwise_conv2d_s8_is_fast
#define stowage_qdepthwise_conv2d_s8_paths stowage_emu_dsp_qdepthwise_conv2d_s8_paths
#define stowage_qfully_connected_s8_is_fast stowage_emu_dsp_qfully_connected_s8_is_fast
#define stowage_qfully_connected_s8_stack_bytes stowage_emu_dsp_qfully_connected_s8_stack_bytes
#define stowage_qdepthwise_conv2d_s8 stowage_emu_dsp_qdepthwise_conv2d_s8
#define stowage_qfully_connected_s8 stowage_emu_dsp_qfully_connected_s8
#define stowage_requantize_s32 stowage_emu_dsp_requantize_s32
#include "../../../runtime/kernels/int8_conv.c"

/* gemmlowp's requantization steps taken literally (what stowage_fx_requant computed before it used stowage_rq). */
int32_t stowage_emu_requant_gemmlowp(int32_t acc, int32_t multiplier, int32_t shift);
int32_t stowage_emu_requant_gemmlowp(int32_t acc, int32_t multiplier, int32_t shift) {
  const int left = shift > 0 ? shift : 0;
  const int right = shift > 0 ? 0 : -shift;
  return stowage_fx_rdivpot(stowage_fx_srdhm(stowage_fx_wrap((int64_t)acc * ((int64_t)1 << left)), multiplier), right);
}

int32_t stowage_emu_rq_apply(int32_t acc, int32_t multiplier, int32_t shift);
int32_t stowage_emu_rq_apply(int32_t acc, int32_t multiplier, int32_t shift) {
  const stowage_rq q = stowage_rq_make(multiplier, shift);
  return stowage_rq_apply(acc, &q);
}

int32_t stowage_emu_rq_apply_narrow(int32_t acc, int32_t multiplier, int32_t shift);
int32_t stowage_emu_rq_apply_narrow(int32_t acc, int32_t multiplier, int32_t shift) {
  const stowage_rq q = stowage_rq_make(multiplier, shift);
  return stowage_rq_apply_narrow(acc, &q);
}

int64_t stowage_emu_rq_narrow_bound(int32_t shift);
int64_t stowage_emu_rq_narrow_bound(int32_t shift) { return stowage_rq_narrow_bound(shift); }
