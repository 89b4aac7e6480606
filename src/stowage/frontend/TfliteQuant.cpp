// TFLite quantization arithmetic (see TfliteQuant.h).
#include "stowage/frontend/TfliteQuant.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace stowage::tflite {

QuantizedMultiplier quantizeMultiplier(double m) {
  QuantizedMultiplier q;
  if (m == 0.0 || !std::isfinite(m)) return q;
  int shift = 0;
  const double fraction = std::frexp(m, &shift);  // m = fraction * 2^shift, |fraction| in [0.5, 1)
  auto fixed = static_cast<int64_t>(std::round(fraction * static_cast<double>(int64_t{1} << 31)));
  if (fixed == (int64_t{1} << 31)) {
    fixed /= 2;
    ++shift;
  }
  if (shift < -31) {
    shift = 0;
    fixed = 0;
  }
  // Multipliers >= 2^31 cannot be represented; TFLite never produces them for valid scales. Saturate.
  if (shift > 30) {
    shift = 30;
    fixed = (int64_t{1} << 31) - 1;
  }
  q.multiplier = static_cast<int32_t>(fixed);
  q.shift = shift;
  return q;
}

ActivationRange activationRangeInt8(int8_t activation, float scale, int64_t zeroPoint) {
  ActivationRange r;
  // Saturated before the conversion: a scale near zero (or zero, NaN) in a malformed file puts f / scale beyond int64,
  // whose conversion is undefined (found by the tflite fuzz target); the range is clamped to [-128, 127] anyway.
  auto quantize = [&](float f) -> int64_t {
    double v = std::round(f / scale);  // in float, as TFLite computes it
    if (std::isnan(v)) v = 0.0;
    v = std::max(-1e15, std::min(1e15, v));
    return zeroPoint + static_cast<int64_t>(v);
  };
  switch (activation) {
    case 0: break;  // NONE
    case 1: r.min = static_cast<int32_t>(std::max<int64_t>(-128, quantize(0.0f))); break;  // RELU
    case 2:  // RELU_N1_TO_1
      r.min = static_cast<int32_t>(std::max<int64_t>(-128, quantize(-1.0f)));
      r.max = static_cast<int32_t>(std::min<int64_t>(127, quantize(1.0f)));
      break;
    case 3:  // RELU6
      r.min = static_cast<int32_t>(std::max<int64_t>(-128, quantize(0.0f)));
      r.max = static_cast<int32_t>(std::min<int64_t>(127, quantize(6.0f)));
      break;
    default: r.ok = false; break;
  }
  return r;
}

SoftmaxScaling softmaxScalingInt8(double beta, double inputScale) {
  constexpr int kIntegerBits = 5;
  SoftmaxScaling s;
  const double maxReal = static_cast<double>((int64_t{1} << 31) - 1);
  const double real = std::min(beta * inputScale * static_cast<double>(int64_t{1} << (31 - kIntegerBits)), maxReal);
  QuantizedMultiplier q = quantizeMultiplier(real);
  s.multiplier = q.multiplier;
  s.leftShift = std::max(0, q.shift);
  // Largest |x - max| (in input units after the left shift) whose exp still matters: the Q5.26 range.
  const double radius = static_cast<double>((int64_t{1} << kIntegerBits) - 1) *
                        static_cast<double>(int64_t{1} << (31 - kIntegerBits)) / static_cast<double>(int64_t{1} << s.leftShift);
  s.diffMin = -static_cast<int32_t>(std::floor(radius));
  return s;
}

SigmoidInputScaling sigmoidInputScalingInt8(float inputScale) {
  constexpr int kInputIntegerBits = 4;
  SigmoidInputScaling s;
  const double real = static_cast<double>(inputScale) * static_cast<double>(1 << (31 - kInputIntegerBits));
  int shift = 0;
  const double fraction = std::frexp(real, &shift);
  const auto fixed = static_cast<int64_t>(std::round(fraction * static_cast<double>(int64_t{1} << 31)));
  if (!(real > 0.0) || !std::isfinite(real) || shift < 0 || shift > 30 || fixed >= (int64_t{1} << 31)) {
    s.ok = false;
    return s;
  }
  s.multiplier = static_cast<int32_t>(fixed);
  s.leftShift = shift;
  const double radius = static_cast<double>((1 << kInputIntegerBits) - 1) * static_cast<double>(int64_t{1} << (31 - kInputIntegerBits)) /
                        static_cast<double>(int64_t{1} << shift);
  s.rangeRadius = static_cast<int32_t>(std::floor(radius));
  return s;
}

int32_t downscaleMultiplierToInt16(int32_t multiplier) {
  constexpr int32_t kRoundingOffset = 1 << 15;
  if (multiplier >= std::numeric_limits<int32_t>::max() - kRoundingOffset) return std::numeric_limits<int16_t>::max();
  return (multiplier + kRoundingOffset) >> 16;
}

HardSwishScaling hardSwishScalingInt8(float inputScale, float outputScale) {
  HardSwishScaling h;
  const float hiresInputScale = (1.0f / 128.0f) * inputScale;
  const float reluishScale = 3.0f / 32768.0f;
  const QuantizedMultiplier out = quantizeMultiplier(static_cast<double>(hiresInputScale / outputScale));
  const QuantizedMultiplier reluish = quantizeMultiplier(static_cast<double>(hiresInputScale / reluishScale));
  h.outputMultiplier = downscaleMultiplierToInt16(out.multiplier);
  h.outputShift = out.shift;
  h.reluishMultiplier = downscaleMultiplierToInt16(reluish.multiplier);
  h.reluishShift = reluish.shift;
  return h;
}

}  // namespace stowage::tflite
