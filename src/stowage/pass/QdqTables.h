// The tables of the QDQ pass's table-driven integer operators (pass/FuseQdq.h), computed at compile time as ONNX
// Runtime 1.30 computes them for its QLinearSigmoid and QLinearSoftmax (docs/quantized-onnx.md, "Sigmoid and Softmax").
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "stowage/ir/Tensor.h"

namespace stowage::qdq {

/// ONNX Runtime's logistic (MLAS's MlasComputeLogistic): the input clamped to [-18, 18], then a rational polynomial
/// p(x) / q(x) + 0.5 clamped to [0, 1], in float32 with every multiply-add fused (fmaf), as its vector kernels compute it on
/// x86-64 with FMA3 and on Arm64 (its scalar SSE2 fallback rounds each step and may differ in the last bit).
float mlasLogistic(float x);

/// The 256 bytes of QLinearSigmoid's table, indexed by the input's byte (for int8, entry 128 is x = -128): each input
/// value dequantized in float32 (x_scale * (x - x_zero_point)), mlasLogistic, quantized as QuantizeLinear (round half to
/// even of v / y_scale in float32, plus y_zero_point, saturated to `yType`), then clamped to [yMin, yMax] when given (an
/// absorbed Relu or Clip). xType and yType are Int8 or UInt8.
std::vector<uint8_t> sigmoidTable(DType xType, float xScale, int64_t xZero, DType yType, float yScale, int64_t yZero,
                                  std::optional<int64_t> yMin = std::nullopt, std::optional<int64_t> yMax = std::nullopt);

/// QLinearSoftmax's exponential table, indexed by d = row max - x (0..255): (float)exp((-d + s) * x_scale) in double, with
/// s = max(0, log(FLT_MAX / reduceLen) - 5) / x_scale (the log in float32, as ONNX Runtime's build evaluates it), which
/// keeps the sum of a row's reduceLen entries finite. reduceLen > 0.
std::vector<float> softmaxExpTable(float xScale, int64_t reduceLen);

/// QLinearSoftmax's output multiplier: floor(1 / y_scale) in float32 (ONNX Runtime rounds the output scale's reciprocal
/// down to an integer).
float softmaxYFactor(float yScale);

}  // namespace stowage::qdq
