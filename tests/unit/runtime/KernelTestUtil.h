// Shared helpers for the runtime kernel tests: seeded random tensors and a tolerance comparison that names
// the first mismatching element.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace stowage::kerneltest {

/// Uniform random floats in [lo, hi), seeded so failures reproduce.
inline std::vector<float> randomVec(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

/// |got - want| <= atol + rtol * |want| for every element (NaN must match NaN, inf must match exactly).
inline ::testing::AssertionResult allClose(const std::vector<float>& got, const std::vector<double>& want,
                                           double rtol = 1e-5, double atol = 1e-5) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << "size " << got.size() << " vs " << want.size();
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want[i];
    bool ok;
    if (std::isnan(w)) ok = std::isnan(g);
    else if (std::isinf(w)) ok = g == w;
    else ok = std::fabs(g - w) <= atol + rtol * std::fabs(w);
    if (!ok)
      return ::testing::AssertionFailure() << "element " << i << ": got " << g << ", want " << w;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace stowage::kerneltest
