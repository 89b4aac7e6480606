// Compares a computed tensor with a reference one (ONNX test data, TFLite Micro outputs), the way test
// suites and `stowage run` checks do: float within tolerances, everything else exact.
#pragma once

#include <string>

#include "stowage/ir/Tensor.h"

namespace stowage {

struct Tolerance {
  double rtol = 1e-4;  ///< relative, times |expected|
  double atol = 1e-5;  ///< absolute
};

/// Empty when `got` matches `want` (same dtype and shape; float32: |got - want| <= atol + rtol * |want|,
/// NaN matches NaN, infinities must be equal; other dtypes: identical bytes). Otherwise one line saying
/// how many values differ, the first differing index and the largest absolute error.
std::string compareTensors(const Tensor& got, const Tensor& want, Tolerance tol = {});

}  // namespace stowage
