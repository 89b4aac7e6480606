// Tables of the QDQ pass's table-driven operators (see QdqTables.h).
#include "stowage/pass/QdqTables.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace stowage::qdq {

namespace {

/// MLAS's logistic coefficients (onnxruntime/core/mlas/lib/logistic.cpp, the same as Eigen's): p(x) = x * (a1 + a3 x^2 +
/// ... + a9 x^8), q(x) = b0 + b2 x^2 + ... + b10 x^10.
constexpr float kLogisticLower = -18.0f, kLogisticUpper = 18.0f;
constexpr float kAlpha9 = 4.37031012579801e-11f, kAlpha7 = 1.15627324459942e-07f, kAlpha5 = 6.08574864600143e-05f,
                kAlpha3 = 8.51377133304701e-03f, kAlpha1 = 2.48287947061529e-01f;
constexpr float kBeta10 = 6.10247389755681e-13f, kBeta8 = 5.76102136993427e-09f, kBeta6 = 6.29106785017040e-06f,
                kBeta4 = 1.70198817374094e-03f, kBeta2 = 1.16817656904453e-01f, kBeta0 = 9.93151921023180e-01f;

int64_t typeMin(DType t) { return t == DType::UInt8 ? 0 : -128; }
int64_t typeMax(DType t) { return t == DType::UInt8 ? 255 : 127; }

}  // namespace

float mlasLogistic(float x) {
  // NaN passes through as MLAS's scalar path keeps it (the tables never see one).
  x = x < kLogisticLower ? kLogisticLower : x;
  x = x > kLogisticUpper ? kLogisticUpper : x;
  const float x2 = x * x;
  float p = std::fmaf(x2, kAlpha9, kAlpha7);
  p = std::fmaf(p, x2, kAlpha5);
  p = std::fmaf(p, x2, kAlpha3);
  p = std::fmaf(p, x2, kAlpha1);
  p = p * x;
  float q = std::fmaf(x2, kBeta10, kBeta8);
  q = std::fmaf(q, x2, kBeta6);
  q = std::fmaf(q, x2, kBeta4);
  q = std::fmaf(q, x2, kBeta2);
  q = std::fmaf(q, x2, kBeta0);
  const float r = p / q + 0.5f;
  return std::clamp(r, 0.0f, 1.0f);
}

std::vector<uint8_t> sigmoidTable(DType xType, float xScale, int64_t xZero, DType yType, float yScale, int64_t yZero,
                                  std::optional<int64_t> yMin, std::optional<int64_t> yMax) {
  std::vector<uint8_t> table(256);
  const int64_t lo = std::max(typeMin(yType), yMin.value_or(typeMin(yType)));
  const int64_t hi = std::min(typeMax(yType), yMax.value_or(typeMax(yType)));
  for (int b = 0; b < 256; ++b) {
    const int64_t x = xType == DType::Int8 ? static_cast<int8_t>(static_cast<uint8_t>(b)) : b;
    const float v = xScale * static_cast<float>(x - xZero);
    const float r = std::nearbyint(mlasLogistic(v) / yScale);
    const int64_t q = std::clamp(static_cast<int64_t>(std::clamp(r, -1.0e6f, 1.0e6f)) + yZero, lo, hi);
    table[static_cast<size_t>(b)] = static_cast<uint8_t>(q & 0xFF);
  }
  return table;
}

std::vector<float> softmaxExpTable(float xScale, int64_t reduceLen) {
  // ONNX Runtime: log(std::numeric_limits<float>::max() / reduce_len), a float, so log's float overload.
  const float headroom = std::log(std::numeric_limits<float>::max() / static_cast<float>(reduceLen));
  const double shift = std::max(0.0, static_cast<double>(headroom) - 5.0) / static_cast<double>(xScale);
  std::vector<float> table(256);
  for (int d = 0; d < 256; ++d) {
    // ONNX Runtime's entry i = 255 - d: exp((i - 255 + shift) * x_scale) in double.
    const double i = static_cast<double>(255 - d);
    table[static_cast<size_t>(d)] = static_cast<float>(std::exp((i - 255.0 + shift) * static_cast<double>(xScale)));
  }
  return table;
}

float softmaxYFactor(float yScale) { return std::floor(1.0f / yScale); }

}  // namespace stowage::qdq
