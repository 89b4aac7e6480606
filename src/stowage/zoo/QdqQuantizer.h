// Static post-training quantization of a float ONNX model into "QDQ" form, the way ONNX Runtime's
// quantize_static (QuantFormat.QDQ) writes it: float operators between QuantizeLinear/DequantizeLinear pairs,
// int8 weights and int32 biases behind a DequantizeLinear. Used to make the QDQ models of tests and benchmarks
// (issue 28); the compiler pass that turns these patterns into integer operators lives elsewhere.
//
// What is mirrored from ORT (onnxruntime/python/tools/quantization, 1.16 and later):
//  - activation parameters: range widened to include 0, scale = (max - min) / (qmax - qmin) computed in double
//    and stored as float32, zero point = round-half-even(qmin - min / scale); symmetric activations use
//    [-127, 127] for int8 (zero point 0) and zero point 128 for uint8;
//  - weights: symmetric int8, scale = max|w| / 127 (per output channel or per tensor), zero point 0,
//    q = round-half-even(w / scale) in float32, clamped to [-127, 127];
//  - biases: int32 = round-half-even(b / (x_scale * w_scale)) in float32, scale = x_scale * w_scale, zero point 0,
//    per channel (axis 0) when the weights are;
//  - a Relu or Clip right after its producer is removed (the producer writes the activation's output, whose range,
//    min 0, gives the Q of the producer) unless options say to keep it or activations are symmetric;
//  - MaxPool, AveragePool, Reshape and Transpose outputs reuse their input's scale and zero point (ORT's
//    "direct 8-bit" ops), and are quantized only when their input is (unless forceQuantizeAllInputs);
//  - Flatten is not in ORT's list of quantized ops: it stays float between a DQ and the next Q;
//  - model inputs stay float (QuantizeLinear then DequantizeLinear), quantized graph outputs are DequantizeLinear'd
//    back to float under their original name (the producer writes "<name>_QuantizeLinear_Input");
//  - names: "<t>_QuantizeLinear" / "<t>_DequantizeLinear" nodes with outputs "<t>_QuantizeLinear_Output" /
//    "<t>_DequantizeLinear_Output", "<t>_scale" and "<t>_zero_point" initializers, "<w>_quantized" weights, bias
//    scale "<b>_quantized_scale" and zero point "<b>_quantized_zero_point".
// BatchNormalization after a Conv (or after a Gemm, which ORT would leave unfused) is folded into the weights and
// bias first, as ORT's pre-processing does for Conv.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "stowage/support/Diagnostic.h"
#include "stowage/zoo/ZooReferenceEval.h"

namespace stowage::zoo {

/// Calibrated float range of one tensor (min <= max; need not include 0).
struct TensorRange {
  float min = 0.0f;
  float max = 0.0f;
};

enum class QdqActivationType { Int8, UInt8 };

struct QdqOptions {
  QdqActivationType activations = QdqActivationType::Int8;
  /// Weights per output channel (Conv axis 0; Gemm axis 0 with transB = 1, else 1; MatMul the last axis).
  /// false: one scale per weight tensor (ORT's default).
  bool perChannel = true;
  /// Keep Relu/Clip as nodes with their own Q/DQ on input and output; the producer's output then gets its own
  /// calibrated range. false (ORT's default): remove them as described above.
  bool keepActivations = false;
  /// Quantize Softmax (input and output; the output range is fixed to [0, 1] as ORT's adjust_tensor_ranges does,
  /// i.e. scale 1/255 with zero point -128 for int8, 0 for uint8). false: Softmax reads a DQ'd input and its output
  /// stays float.
  bool quantizeSoftmax = false;
  /// ORT's ActivationSymmetric: int8 activations in [-127, 127] with zero point 0, uint8 with zero point 128.
  /// Relu/Clip are then kept (ORT never removes them with symmetric activations).
  bool symmetricActivations = false;
  /// ORT's ForceQuantizeNoInputCheck: pooling, Reshape and Transpose quantize a float input themselves (then share
  /// its parameters). Used for single-op pattern models whose input comes straight from the graph input.
  bool forceQuantizeAllInputs = false;
  /// ORT's reduce_range: 7-bit weights in [-64, 64] (scale = max|w| / 64). ORT's own int8 kernels on x86 without
  /// VNNI (u8 x s8 pairs summed in int16 with saturation) need it to give exact results; activations keep 8 bits.
  bool reduceRange = false;
};

/// Scale and zero point of one quantized activation tensor, computed as ORT's compute_scale_zp.
struct QdqParams {
  float scale = 1.0f;
  int32_t zeroPoint = 0;
};
QdqParams qdqActivationParams(const TensorRange& range, QdqActivationType type, bool symmetric);

/// Folds every BatchNormalization that is the only consumer of a Conv's or Gemm's output (constant weights) into
/// that producer's weights and bias; the producer then writes the BatchNormalization's output tensor.
Status foldBatchNormalization(onnx::ModelProto& model);

/// Converts `floatModel` into QDQ form (see the top of this file). `ranges` gives the calibrated range of every
/// activation tensor that gets quantized, by the float model's tensor names (a BatchNormalization output stands
/// for the folded producer's output). Missing ranges, non-constant Conv/Gemm weights and unsupported attributes
/// (Gemm alpha/beta != 1, transA) are errors. Ops other than Conv, Gemm, MatMul, Relu, Clip, MaxPool, AveragePool,
/// Reshape, Transpose, Add, Mul, Concat, Sigmoid, GlobalAveragePool and Softmax stay float. Every node of the
/// result has a name; opset >= 13, IR version >= 7.
Result<onnx::ModelProto> quantizeToQdq(const onnx::ModelProto& floatModel, const std::map<std::string, TensorRange>& ranges,
                                       const QdqOptions& options);

/// Min/max over `samples` of the graph input and of every node output, with the float interpreter of
/// ZooReferenceEval.h (the zoo's ops only; an op it lacks is an error).
Result<std::map<std::string, TensorRange>> calibrateRanges(const onnx::ModelProto& floatModel,
                                                           const std::vector<refeval::FloatTensor>& samples);

/// Bytes of the data of all initializers (element count times element size).
int64_t initializerBytes(const onnx::ModelProto& model);

/// A zoo model quantized to QDQ: buildZooModel(name, seed), calibrated on `calibrationSamples` inputs
/// sampleInput(info, seed + 1000 + i), then quantizeToQdq.
struct ZooQdqModel {
  onnx::ModelProto model;
  int64_t floatWeightBytes = 0;  ///< initializerBytes of the float model
  int64_t qdqWeightBytes = 0;    ///< initializerBytes of the QDQ model
};
Result<ZooQdqModel> buildZooQdqModel(const std::string& name, uint64_t seed, const QdqOptions& options,
                                     int calibrationSamples = 8);

}  // namespace stowage::zoo
