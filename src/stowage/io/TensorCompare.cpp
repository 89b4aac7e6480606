// Tensor comparison with tolerances (see TensorCompare.h).
#include "stowage/io/TensorCompare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace stowage {

std::string compareTensors(const Tensor& got, const Tensor& want, Tolerance tol) {
  if (got.dtype != want.dtype)
    return fmt::format("dtype {} differs from the expected {}", dtypeName(got.dtype), dtypeName(want.dtype));
  if (got.shape != want.shape)
    return fmt::format("shape {} differs from the expected {}", shapeToString(got.shape), shapeToString(want.shape));
  if (got.data.size() != want.data.size())
    return fmt::format("holds {} bytes, the expected tensor {}", got.data.size(), want.data.size());
  if (got.dtype != DType::Float32) {
    auto mismatch = std::mismatch(got.data.begin(), got.data.end(), want.data.begin());
    if (mismatch.first == got.data.end()) return {};
    size_t byte = static_cast<size_t>(mismatch.first - got.data.begin());
    return fmt::format("values differ (exact comparison); first at element {}", byte / dtypeSize(got.dtype));
  }
  const float* g = got.dataAs<float>();
  const float* w = want.dataAs<float>();
  const size_t n = got.data.size() / sizeof(float);
  size_t bad = 0, first = 0;
  double worst = 0;
  for (size_t i = 0; i < n; ++i) {
    if (std::isnan(w[i]) && std::isnan(g[i])) continue;
    if (std::isinf(w[i]) && g[i] == w[i]) continue;
    double err = std::fabs(static_cast<double>(g[i]) - static_cast<double>(w[i]));
    if (!(err <= tol.atol + tol.rtol * std::fabs(static_cast<double>(w[i])))) {
      if (bad++ == 0) first = i;
      worst = std::max(worst, std::isnan(err) ? INFINITY : err);
    }
  }
  if (bad == 0) return {};
  return fmt::format("{} of {} values differ beyond rtol {:g} atol {:g}; first at {}: got {:.9g}, want {:.9g}; "
                     "max abs error {:.3g}",
                     bad, n, tol.rtol, tol.atol, first, g[first], w[first], worst);
}

}  // namespace stowage
