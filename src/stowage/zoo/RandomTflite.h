// Random int8 and float32 TFLite models for differential testing (issue 27): the steps of a random recipe
// (RandomModel.h) written as a real .tflite file (TfliteWriter.h) in TFLite's own form, NHWC, so that the campaign
// reads them through frontend/TfliteReader and TfliteImporter as users' files are read.
#pragma once

#include <cstdint>
#include <vector>

#include "stowage/support/Diagnostic.h"
#include "stowage/zoo/RandomModel.h"

namespace stowage::zoo {

/// Builds `recipe` (RandomRecipe::tflite) as a .tflite file (flatbuffer bytes): int8 when the recipe is quantized,
/// else float32 (the same operators and weights before quantisation, no quantization tables; the TFLite
/// interpreter is then an oracle for it, tests/e2e/TfliteOracle.h). The int8 form follows TFLite's quantisation rules:
/// per-tensor int8 activations (zero point 0 when `symmetric`), symmetric int8 weights per output channel (axis 0
/// for CONV_2D and FULLY_CONNECTED, 3 for DEPTHWISE_CONV_2D) or per tensor (`perChannel`), int32 biases at
/// input_scale * weight_scale; pools, reshapes, transposes, pads and concatenations keep their input's
/// parameters; LOGISTIC and SOFTMAX write scale 1/256 zero point -128, TANH 1/128 and 0. The input is int8 [1, H, W,
/// C] and every output int8 (float32 in the float form).
///
/// Steps map to builtins: Conv -> CONV_2D or DEPTHWISE_CONV_2D (SAME or VALID; other paddings as a PAD before a
/// VALID conv; grouped convs as group 1), sometimes with a fused RELU / RELU6; pools -> MAX_POOL_2D /
/// AVERAGE_POOL_2D (VALID without pads, else SAME); GlobalAveragePool -> MEAN over H and W; Relu -> RELU, Clip ->
/// RELU6 or RELU_N1_TO_1, Sigmoid -> LOGISTIC, Tanh -> TANH, LeakyRelu -> LEAKY_RELU, HardSwish -> HARD_SWISH;
/// residual branches -> ADD / MUL (the gate through LOGISTIC); ConcatBranch -> CONCATENATION on the channels;
/// Transpose -> TRANSPOSE (0, 2, 1, 3) or (0, 3, 1, 2); Reshape -> RESHAPE to [N, H * W, 1, C] or [N, H, W * C, 1];
/// Head -> RESHAPE to [N, K] (variant 0; variant 1 feeds the 4-D tensor to FULLY_CONNECTED directly),
/// FULLY_CONNECTED, optional SOFTMAX. Errors only for an empty input.
Result<std::vector<uint8_t>> buildRandomTflite(const RandomRecipe& recipe);

}  // namespace stowage::zoo
