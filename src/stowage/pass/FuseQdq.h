// Graph pass: turns the QDQ form of quantized ONNX models (float operators between DequantizeLinear and
// QuantizeLinear, as PyTorch and ONNX Runtime's quantizer write them) into integer operators with int8 weights.
#pragma once

#include <string>
#include <vector>

#include "stowage/ir/Graph.h"
#include "stowage/ir/LoweringAttributes.h"
#include "stowage/support/Diagnostic.h"

namespace stowage {

/// Rewrites, where every scale and zero point is a constant and the quantized tensors are int8 or uint8:
/// - `Q(Conv(DQ(x), DQ(w), DQ(b)?))` into QLinearConv(x, w, ..., b) with w kept int8 (per tensor or per output channel)
///   and b the int32 bias as is (its scale must be x_scale * w_scale);
/// - `Q(Gemm(DQ(a), DQ(w), DQ(c)?))` (alpha = beta = 1, transA = 0, a 2-D) into the same 1-D convolution between two
///   Reshapes;
/// - `Q(MatMul(DQ(a), DQ(b)))` into QLinearMatMul;
/// - `Q(Add|Mul(DQ(a), DQ(b)))` into QLinearAdd / QLinearMul (the float graph's arithmetic on int8 operands);
/// - `Q(AveragePool|GlobalAveragePool(DQ(x)))` into QLinearAveragePool, `Q(MaxPool(DQ(x)))` into QLinearMaxPool;
/// - `Q(Concat(DQ(a), DQ(b), ...))` into a Concat of the int8 tensors when all share the output's quantization;
/// - `Q(Sigmoid(DQ(x)))` into QLinearLookup through a 256-entry table of ONNX Runtime's QLinearSigmoid, and
///   `Q(Softmax(DQ(x)))` (one type on both sides, nothing in between) into QLinearSoftmax with ONNX Runtime's exponential
///   table (pass/QdqTables.h: both computed here, at compile time);
/// - a Relu or Clip between the operator and its Q into the clamp of the output (exact: quantization is monotonic);
/// - `Q(Reshape|Transpose(DQ(x)))` with the same scale and zero point on both sides into that view of the int8 tensor.
/// DequantizeLinear nodes left without readers are removed; the rest of the graph is unchanged (so an operator that no
/// pattern covers runs in float between its DequantizeLinear and QuantizeLinear). Returns remarks: what became
/// integer, and each float operator fed by a DequantizeLinear that stays float, with the reason.
Result<std::vector<std::string>> fuseQdq(Graph& g);

}  // namespace stowage
