// Small single-op QDQ models (issue 28) for tests and benchmarks of the QDQ -> integer lowering: each is a float
// model of one pattern (Conv variants, Gemm, MatMul, Add, Mul, pools, Concat, Reshape/Flatten/Transpose between
// layers, Sigmoid, Softmax) quantized by zoo::quantizeToQdq with analytically chosen activation ranges, so that
// random float inputs in [-1, 1] saturate few values. Model inputs and outputs are float32.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "stowage/ir/Tensor.h"

namespace stowage::e2e {

struct QdqPatternInput {
  std::string name;
  Shape shape;  ///< float32; the ranges assume values in about [-1, 1]
};

struct QdqPatternModel {
  /// "<pattern>_<s8|u8>[_<pc|pt>]_<asym|sym>[_rr]": activation type, per-channel or per-tensor weights (only
  /// patterns with weights), asymmetric (ORT's default) or symmetric activation ranges (zero point 0 / 128), and
  /// "_rr" for 7-bit weights (ORT's reduce_range; per-channel asymmetric variants of patterns with weights).
  std::string name;
  onnx::ModelProto model;
  std::vector<QdqPatternInput> inputs;
  /// The float model it was quantized from (same inputs and outputs), for reference results.
  onnx::ModelProto floatModel;
};

/// Every pattern in every variant, in a fixed order; the same models (byte for byte) on every call.
std::vector<QdqPatternModel> qdqPatternModels();

}  // namespace stowage::e2e
