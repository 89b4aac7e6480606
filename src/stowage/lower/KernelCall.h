// Kernel lowering (stage lower/, below pass/, tile/ and codegen/): the one place that maps an IR node (canonical
// attributes, NCHW) to calls of the C kernels in runtime/include/stowage_kernels*.h, with their parameter structs
// filled. Constant folding executes these calls on the host, the tiler reads them, the C emitter prints them
// (codegen/KernelParamsText.h). None of them re-derives any kernel parameter.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "stowage/ir/Graph.h"
#include "stowage/support/Diagnostic.h"
#include "stowage_kernels.h"

namespace stowage {

/// stowage_conv2d_f32 / stowage_conv_transpose2d_f32(x, w, bias?, y, &params).
struct ConvCall {
  stowage_conv2d_params params;
  bool transpose = false;
};
/// stowage_gemm_f32(a, b, c?, y, &params), or with int8 B (w8) stowage_gemm_w8_f32(a, b, b_scale, c?, y, &params).
struct GemmCall {
  stowage_gemm_params params;
  bool w8 = false;
};
/// stowage_matmul_f32(a, b, y, &params).
struct MatMulCall {
  stowage_matmul_params params;
};
/// stowage_binary_f32(op, a, b, y, &params).
struct BinaryCall {
  stowage_binary_op op;
  stowage_broadcast_params params;
};
/// stowage_unary_f32(op, x, y, count, alpha, beta); count in elements.
struct UnaryCall {
  stowage_unary_op op;
  int64_t count = 0;
  float alpha = 0.0f;
  float beta = 0.0f;
};
/// stowage_softmax_f32(x, y, outer, len, inner, log); sizes in elements.
struct SoftmaxCall {
  int64_t outer = 1, len = 1, inner = 1;
  int32_t log = 0;
};
/// stowage_batchnorm_f32(x, scale, bias, mean, var, y, n, c, spatial, epsilon).
struct BatchNormCall {
  int64_t n = 1, c = 1, spatial = 1;
  float epsilon = 1e-5f;
};
/// stowage_lrn_f32(x, y, n, c, spatial, size, alpha, beta, bias).
struct LrnCall {
  int64_t n = 1, c = 1, spatial = 1;
  int32_t size = 1;
  float alpha = 1e-4f, beta = 0.75f, bias = 1.0f;
};
/// stowage_maxpool2d_f32 / stowage_avgpool2d_f32(x, y, &params).
struct PoolCall {
  stowage_pool2d_params params;
  bool max = true;
};
/// stowage_global_avgpool_f32 / stowage_global_maxpool_f32(x, y, channels, spatial).
struct GlobalPoolCall {
  int64_t channels = 0, spatial = 0;
  bool max = false;
};
/// stowage_gather_strided(x, y, elemSize, &params); elemSize in bytes.
struct GatherCall {
  size_t elemSize = 4;
  stowage_strided_params params;
};
/// stowage_concat_part(x, y, elemSize, outer, inBlock, outBlock, outOffset) for one Concat input;
/// blocks and offset in elements, elemSize in bytes.
struct ConcatPartCall {
  size_t elemSize = 4;
  int64_t outer = 0, inBlock = 0, outBlock = 0, outOffset = 0;
};
/// stowage_pad_f32(x, y, &params), or stowage_pad_s8 for int8 tensors (constant mode only).
struct PadCall {
  stowage_pad_params params;
  bool int8 = false;
};
/// stowage_reduce_f32(op, x, y, &params).
struct ReduceCall {
  stowage_reduce_op op;
  stowage_reduce_params params;
};
/// memcpy(y, x, bytes): Reshape (same bytes, new shape).
struct CopyCall {
  size_t bytes = 0;
};

/// One call of an int8 (TFLite-arithmetic, NHWC) kernel of stowage_kernels_int8.h: `fn(inputs..., y, &params)`.
/// Lowered and executed by QuantKernelCall.cpp (printed by codegen/KernelParamsText.h).
enum class QuantKernel { Conv2d, DepthwiseConv2d, FullyConnected, AvgPool2d, MaxPool2d, Add, Mul, Softmax, Quantize, Dequantize, Mean, Requantize,
                         Logistic, Tanh, HardSwish, Relu, Sub, Maximum, Minimum };
struct QuantCall {
  QuantKernel kernel = QuantKernel::Conv2d;
  std::variant<stowage_qconv_params, stowage_qfc_params, stowage_qpool_params, stowage_qbinary_params,
               stowage_qsoftmax_params, stowage_quant_params, stowage_qmean_params, stowage_requant_params,
               stowage_qsigmoid_params, stowage_qhardswish_params, stowage_qrelu_params>
      params;
};

/// One call of a float32 NHWC kernel of stowage_kernels_nhwc.h: `fn(inputs..., y, &params)`. See
/// NhwcKernelCall.cpp. w8: the conv's weights are int8, `fn_w8(x, w, w_scale, bias?, y, &params)`.
enum class NhwcKernel { Conv2d, DepthwiseConv2d, AvgPool2d, MaxPool2d };
struct NhwcCall {
  NhwcKernel kernel = NhwcKernel::Conv2d;
  bool w8 = false;
  std::variant<stowage_nhwc_conv_params, stowage_nhwc_pool_params> params;
};

/// One call of an ONNX integer / quantized-linear kernel of stowage_kernels_qlinear.h: `fn(inputs..., y, &params)`.
/// See QLinearKernelCall.cpp.
enum class QLinearKernel {
  QuantizeLinear,
  DequantizeLinear,
  ConvInteger,
  QLinearConv,
  MatMulInteger,
  QLinearMatMul,
  QLinearBinary,
  QLinearAveragePool,
  QLinearMaxPool,
  QLinearLookup,
  QLinearSoftmax
};
struct QLinearCall {
  QLinearKernel kernel = QLinearKernel::QLinearConv;
  std::variant<stowage_qlinear_quant_params, stowage_qlinear_conv_params, stowage_qlinear_matmul_params, stowage_qlinear_binary_params,
               stowage_qlinear_pool_params, stowage_qlinear_lookup_params, stowage_qlinear_softmax_params>
      params;
};

using KernelParams = std::variant<ConvCall, GemmCall, MatMulCall, BinaryCall, UnaryCall, SoftmaxCall, BatchNormCall,
                                  LrnCall, PoolCall, GlobalPoolCall, GatherCall, ConcatPartCall, PadCall, ReduceCall,
                                  CopyCall, QuantCall, NhwcCall, QLinearCall>;

/// One call of one C kernel. `inputs` are the tensor arguments read by the kernel in the C signature's order
/// (kNoTensor passes NULL, e.g. an absent bias); `output` is the tensor it writes.
struct KernelCall {
  KernelParams params;
  std::vector<TensorId> inputs;
  TensorId output = kNoTensor;
};

/// C function a call invokes ("stowage_conv2d_f32", ..., "memcpy").
std::string kernelFunctionName(const KernelCall& call);
/// C type of the call's parameter struct ("stowage_conv2d_params"), or "" when it takes scalars only.
std::string kernelParamsTypeName(const KernelCall& call);

/// The calls that compute `node`, in order (Concat gives one per non-empty input; a node whose output has no
/// elements gives none). Errors (unsupported dtype, rank above STOWAGE_MAX_RANK, attributes the kernel
/// cannot express) name the node; unsupported-but-valid cases are marked `unsupported`.
Result<std::vector<KernelCall>> lowerNode(const Graph& g, const Node& node);

/// Makes `call` (a conv of stowage_kernels_int8.h or stowage_kernels_nhwc.h) write its output pixels `stride`
/// elements apart, as the channel slice of a wider NHWC tensor (a strided Concat alias, plan/analysis/Aliasing.h).
/// False when the call's kernel has no output pixel stride or `channels` is not its output channel count.
bool setOutputPixelStride(KernelCall& call, int64_t stride, int64_t channels);

/// Makes `call` (an int8 conv or depthwise conv of stowage_kernels_int8.h, one image) finish its output rows in
/// bands of |band| rows, increasing (band > 0) or decreasing (band < 0): the row order an overlapping layer's plan
/// relies on (plan/analysis/RowOverlap.h).
/// False for any other call.
bool setRowBand(KernelCall& call, int band);

/// Executes `call` on the host with the real kernels. `inputs[i]` points at the data of call.inputs[i]
/// (nullptr for kNoTensor); `output` at call.output's storage, which must not alias any input.
void executeKernelCall(const KernelCall& call, const std::vector<const void*>& inputs, void* output);

// The quantized ops (QConv2d, ..., Dequantize in Ops.def), implemented in QuantKernelCall.cpp.
/// The call computing a quantized node; errors name the node (missing quantization, non-int8 tensors).
Result<std::vector<KernelCall>> lowerQuantNode(const Graph& g, const Node& node);
struct ProgramPlan;
/// Per step: bytes of stack the portable kernels of that CPU layer use for buffers of their own (the int8
/// convolution's im2col buffer, stowage_qconv2d_s8_stack_bytes; the fully connected kernel's widened row,
/// stowage_qfully_connected_s8_stack_bytes), beyond ordinary locals; 0 for none, for an
/// offloaded layer and for a node that does not lower. The report's kernel_stack_bytes and summary line.
std::vector<size_t> kernelStackByStep(const Graph& g, const ProgramPlan& plan);
/// "stowage_qconv2d_s8", ...
std::string quantKernelFunctionName(const QuantCall& call);
/// "stowage_qconv_params", ...
std::string quantParamsTypeName(const QuantCall& call);
/// Runs the kernel on the host (constant folding); pointers as for executeKernelCall.
void executeQuantCall(const QuantCall& call, const std::vector<const void*>& inputs, void* output);

// The float32 NHWC ops (ConvNhwc ... MaxPoolNhwc in Ops.def), implemented in NhwcKernelCall.cpp; same roles.
Result<std::vector<KernelCall>> lowerNhwcNode(const Graph& g, const Node& node);
std::string nhwcKernelFunctionName(const NhwcCall& call);
std::string nhwcParamsTypeName(const NhwcCall& call);
void executeNhwcCall(const NhwcCall& call, const std::vector<const void*>& inputs, void* output);

/// The broadcast walk of binary op `n` (inputs 0 and 1, output 0) and the window of pool `n` (NCHW, kernel_shape, strides,
/// pads, dilations, count_include_pad), shared by the float and the QLinear lowerings. No dtype checks.
Result<stowage_broadcast_params> broadcastGeometry(const Graph& g, const Node& n);
Result<stowage_pool2d_params> poolGeometry(const Graph& g, const Node& n);

// The ONNX integer ops (QuantizeLinear ... QLinearAveragePool in Ops.def), implemented in QLinearKernelCall.cpp; same roles.
Result<std::vector<KernelCall>> lowerQLinearNode(const Graph& g, const Node& node);
std::string qlinearKernelFunctionName(const QLinearCall& call);
std::string qlinearParamsTypeName(const QLinearCall& call);
void executeQLinearCall(const QLinearCall& call, const std::vector<const void*>& inputs, void* output);

}  // namespace stowage
