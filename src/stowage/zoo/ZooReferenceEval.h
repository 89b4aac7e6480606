// Float32 interpreter for the handful of ONNX ops the zoo models use: zoo tests check that seeded weights keep
// activations in a sane range without depending on the compiler under test, and the QDQ quantizer calibrates
// activation ranges with it (QdqQuantizer.h).
#pragma once

#include <onnx/onnx_pb.h>

#include <map>
#include <string>
#include <vector>

#include "stowage/ir/Tensor.h"

namespace stowage::zoo::refeval {

struct FloatTensor {
  Shape shape;
  std::vector<float> v;
};

/// Runs `model` on `input` (bound to the first graph input) and returns every tensor by name: node
/// outputs, the input and the initializers. Supports Conv, BatchNormalization, Relu, Clip, Add, AveragePool
/// (no padding), GlobalAveragePool, Flatten (axis 1), Gemm (transB 1) and Softmax (last axis); any other
/// op makes the result empty.
std::map<std::string, FloatTensor> evaluate(const onnx::ModelProto& model, const FloatTensor& input);

}  // namespace stowage::zoo::refeval
