// Random valid ONNX models for differential testing (issue 27): a seeded recipe of layers (Conv with random
// kernels, strides, dilations, paddings and groups, pools, activations, residual and concatenated branches, views,
// a fully connected head) built into a float32 NCHW model, or quantized to QDQ int8 with random ranges and options.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

#include "stowage/support/Diagnostic.h"

namespace stowage::zoo {

/// What one step of a random recipe adds to the graph. Steps that do not fit the shape they meet (a kernel larger
/// than the padded input, a join without a partner of the same shape, a group count that does not divide the
/// channels) adapt or are skipped by buildRandomModel, so every recipe (also one a shrinker edited) builds.
enum class RandomStepKind {
  Conv,           ///< Conv: outChannels, kernel, stride, dilation, pads; groups: 1, depthwise, or `groups`
  MaxPool,
  AveragePool,    ///< countIncludePad chooses ONNX's count_include_pad
  GlobalAveragePool,
  Activation,     ///< `activation`: Relu, Clip, Sigmoid, Tanh, LeakyRelu, HardSwish
  ResidualAdd,    ///< x + conv(x) (same shape: stride 1, centred pads, outChannels = C)
  ResidualMul,    ///< x * sigmoid(conv(x)) (a gate)
  JoinEarlier,    ///< Add with the latest earlier tensor of the same shape (skipped when there is none)
  ConcatBranch,   ///< Concat(x, conv(x)) along the channels (the branch has outChannels channels)
  Transpose,      ///< perm (0, 1, 3, 2) or (0, 2, 3, 1) by `variant`
  Reshape,        ///< [N, C, H, W] -> [N, C, H * W, 1] or [N, C * H, W, 1] by `variant`
  ExtraOutput,    ///< the current tensor becomes a graph output too
  Head,           ///< Flatten (variant 0) or Reshape (1) to [N, K], then Gemm (0) or MatMul (1) by `variant2`,
                  ///< outChannels features, optional Softmax; ends the recipe
};

struct RandomStep {
  RandomStepKind kind = RandomStepKind::Activation;
  int64_t outChannels = 1;
  int64_t kernelH = 1, kernelW = 1, strideH = 1, strideW = 1, dilationH = 1, dilationW = 1;
  int64_t pads[4] = {0, 0, 0, 0};  ///< top, left, bottom, right
  int groupMode = 0;               ///< 0: group 1; 1: depthwise (group = C, outChannels a multiple of C); 2: `groups`
  int64_t groups = 1;
  bool bias = true;
  bool countIncludePad = false;
  std::string activation = "Relu";
  float alpha = 0.1f, clipMin = 0.0f, clipMax = 6.0f;
  int variant = 0, variant2 = 0;
  bool softmax = false;
};

/// A random model before it is built: shrinkers edit it (drop steps, smaller input, fewer channels).
struct RandomRecipe {
  uint64_t seed = 0;           ///< weights and quantisation ranges are drawn from it
  bool quantized = false;      ///< int8 QDQ (zoo/QdqQuantizer.h) rather than float32
  bool tflite = false;         ///< a .tflite file instead (zoo/RandomTflite.h): int8 when quantized, else float32
  int64_t channels = 3, height = 8, width = 8;  ///< the input [1, channels, height, width]
  std::vector<RandomStep> steps;
  // QDQ options (quantized only)
  bool uint8Activations = false;
  bool perChannel = true;
  bool symmetric = false;
  bool reduceRange = false;
  bool keepActivations = false;
  bool quantizeSoftmax = false;
  /// One line naming the steps, e.g. "3x9x7: conv3x3/s2/g3 relu add ... head(gemm,10)".
  std::string describe() const;
};

struct RandomModelOptions {
  bool quantized = false;
  int maxSteps = 8;            ///< steps before the head (at least 1)
  int64_t maxChannels = 12;
  int64_t maxSpatial = 16;     ///< input height and width in [3, maxSpatial]
  int tflitePercent = 0;       ///< quantized recipes written as .tflite instead of QDQ ONNX, in percent (drawn last:
                               ///< the rest of a seed's recipe does not depend on it)
  int floatTflitePercent = 0;  ///< float recipes written as float .tflite instead of ONNX, in percent (drawn last too)
};

/// The recipe of seed `seed` (the same seed and options give the same recipe everywhere).
RandomRecipe randomRecipe(uint64_t seed, const RandomModelOptions& options);

/// A built model: float32 (input and outputs float32), or QDQ int8 whose input and outputs are float32 too.
struct RandomModel {
  onnx::ModelProto model;
  onnx::ModelProto floatModel;  ///< the float model it was quantized from (== model when not quantized)
  int nodes = 0;                ///< nodes of `floatModel`
};

/// Builds `recipe` (opset 13, or 14 when it has a HardSwish; IR version 7); errors only for a recipe whose input is empty or a quantizer error.
Result<RandomModel> buildRandomModel(const RandomRecipe& recipe);

}  // namespace stowage::zoo
