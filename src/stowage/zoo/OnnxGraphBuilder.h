// Builds float32 NCHW ONNX models (opset 13, IR version 7) layer by layer with seeded weights, for the
// example architectures of zoo/ZooModels. Tracks static shapes so each layer knows its fan-in and MACs.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

#include "stowage/ir/Tensor.h"

namespace stowage::zoo {

/// splitmix64: a tiny deterministic PRNG; the same seed gives the same sequence on every platform
/// (integer arithmetic only).
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next();
  /// Uniform in [-1, 1), 24 bits of resolution, exactly representable as float.
  float uniform();

 private:
  uint64_t state_;
};

/// A tensor of the graph under construction: its ONNX name and static shape.
struct Value {
  std::string name;
  Shape shape;
};

/// Padding of a convolution or pool.
enum class Padding {
  Valid,  ///< no padding
  Same,   ///< TensorFlow "SAME": output = ceil(input / stride), the odd pixel of padding at the end
};

struct ConvSpec {
  int64_t outChannels = 0;
  int64_t kernelH = 3, kernelW = 3;
  int64_t strideH = 1, strideW = 1;
  Padding padding = Padding::Same;
  int64_t group = 1;  ///< == input channels == outChannels for depthwise
  bool bias = true;   ///< add a bias input (Keras' use_bias)
};

/// Builds one model. Every layer helper adds its node named `name`, whose output tensor is also called
/// `name` unless `outName` is given, and its parameters as initializers "<name>.weight", "<name>.bias",
/// ... Weights are He-uniform (variance 2 / fan_in) so activations keep their scale through ReLU stacks;
/// BatchNormalization gets realistic parameters (scale near 1, small bias and mean, variance in [0.75, 1.25]).
class OnnxGraphBuilder {
 public:
  OnnxGraphBuilder(std::string modelName, uint64_t seed);

  /// Declares a float32 graph input.
  Value input(const std::string& name, const Shape& shape);
  /// Declares `v` as a graph output.
  void output(const Value& v);

  Value conv(const Value& x, const std::string& name, const ConvSpec& spec, const std::string& outName = {});
  /// BatchNormalization (inference form), epsilon 1e-3; works on [N, C, ...] including [N, C].
  Value batchNorm(const Value& x, const std::string& name, const std::string& outName = {});
  Value relu(const Value& x, const std::string& name, const std::string& outName = {});
  /// Clip to [0, 6] with shared scalar initializers "relu6.min" and "relu6.max".
  Value relu6(const Value& x, const std::string& name, const std::string& outName = {});
  Value add(const Value& a, const Value& b, const std::string& name, const std::string& outName = {});
  /// AveragePool with kernel == stride == the given window, no padding.
  Value averagePool(const Value& x, const std::string& name, int64_t kernelH, int64_t kernelW,
                    const std::string& outName = {});
  Value globalAveragePool(const Value& x, const std::string& name, const std::string& outName = {});
  /// Flatten with axis 1: [N, ...] -> [N, rest].
  Value flatten(const Value& x, const std::string& name, const std::string& outName = {});
  /// Fully connected: Gemm(x [N, K], weight [outFeatures, K], transB = 1) + bias. `heInit` scales the weights
  /// for a following ReLU (variance 2 / K); otherwise variance 1 / K (classifier and output layers).
  Value gemm(const Value& x, const std::string& name, int64_t outFeatures, bool heInit,
             const std::string& outName = {});
  /// Softmax over the last axis.
  Value softmax(const Value& x, const std::string& name, const std::string& outName = {});

  /// Multiply-accumulates of the Conv and Gemm nodes added so far (for batch 1 as declared).
  int64_t macs() const { return macs_; }

  /// The finished model: IR version 7, opset 13, producer "stowage-zoo", `docString` as its doc string.
  onnx::ModelProto finish(const std::string& docString);

 private:
  onnx::NodeProto& addNode(const std::string& opType, const std::string& name, const std::vector<std::string>& inputs,
                           const std::string& output);
  std::string addInitializer(const std::string& name, const Shape& shape, const std::vector<float>& values);
  std::vector<float> uniformValues(int64_t count, float center, float halfWidth);

  std::string modelName_;
  SplitMix64 rng_;
  onnx::GraphProto graph_;
  bool haveRelu6Bounds_ = false;
  int64_t macs_ = 0;
};

/// Elements of the initializers of rank >= 1 (weights, biases, BatchNorm statistics); scalar constants
/// such as Clip bounds are not counted.
int64_t countParameters(const onnx::ModelProto& model);

}  // namespace stowage::zoo
