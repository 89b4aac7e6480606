// Quantization arithmetic of the TFLite frontend: how TFLite turns float scales into the integer parameters
// its int8 kernels use (Q0.31 multiplier + power-of-two shift, activation clamp ranges, softmax input
// scaling). Computed once at import; the kernels in runtime/kernels/int8_*.c only see the integers.
#pragma once

#include <cstdint>
#include <utility>

namespace stowage::tflite {

/// A real multiplier m as (multiplier, shift) with m ~= multiplier * 2^(shift - 31), multiplier in
/// [2^30, 2^31) (or 0 for m == 0): frexp, then round-half-away of the fraction to 31 bits, as TFLite's
/// QuantizeMultiplier (including its fix-up when rounding reaches 2^31 and its flush of shifts below -31).
struct QuantizedMultiplier {
  int32_t multiplier = 0;
  int32_t shift = 0;  ///< positive = left shift
};
QuantizedMultiplier quantizeMultiplier(double realMultiplier);

/// Fused activation (TFLite ActivationFunctionType) as a clamp range in output quantized units, as TFLite's
/// CalculateActivationRangeQuantized for int8: NONE -> [-128, 127]; RELU, RELU6, RELU_N1_TO_1 quantize their
/// bounds with round(bound / scale) + zero_point (float division) and intersect. Other activations: nullopt
/// semantics via `ok = false`.
struct ActivationRange {
  int32_t min = -128, max = 127;
  bool ok = true;
};
ActivationRange activationRangeInt8(int8_t activation, float outputScale, int64_t outputZeroPoint);

/// Softmax input scaling as TFLite's PreprocessSoftmaxScaling with 5 integer bits: beta * input_scale
/// scaled into Q5.26 as a multiplier >= 1 (left shift), and diff_min = -floor(input radius).
struct SoftmaxScaling {
  int32_t multiplier = 0;
  int32_t leftShift = 0;
  int32_t diffMin = 0;
};
SoftmaxScaling softmaxScalingInt8(double beta, double inputScale);

/// Input scaling of int8 LOGISTIC and TANH as TFLite Micro prepares it: input_scale * 2^27 (4 integer bits)
/// split by frexp into a Q0.31 multiplier and a left shift, and the radius (in input steps) beyond which the
/// output saturates: floor(15 * 2^27 / 2^leftShift). ok = false when the shift does not fit [0, 30].
struct SigmoidInputScaling {
  int32_t multiplier = 0;
  int32_t leftShift = 0;
  int32_t rangeRadius = 0;
  bool ok = true;
};
SigmoidInputScaling sigmoidInputScalingInt8(float inputScale);

/// A Q0.31 multiplier rounded to Q0.15 (TFLite's DownScaleInt32ToInt16Multiplier: add 2^15, shift right 16,
/// saturate at 32767).
int32_t downscaleMultiplierToInt16(int32_t multiplier);

/// HARD_SWISH int8 parameters as TFLite computes them (scales combined in float): output multiplier from
/// (input_scale / 128) / output_scale, "reluish" multiplier from (input_scale / 128) / (3 / 32768), each as a
/// Q0.15 multiplier and a power-of-two exponent.
struct HardSwishScaling {
  int32_t outputMultiplier = 0, outputShift = 0;
  int32_t reluishMultiplier = 0, reluishShift = 0;
};
HardSwishScaling hardSwishScalingInt8(float inputScale, float outputScale);

}  // namespace stowage::tflite
