// Internal to the ONNX frontend: the per-op converter table, split over OnnxOpConverters.cpp (compute ops)
// and OnnxLayoutConverters.cpp (reshape-like, slicing, padding, reductions), plus helpers both use.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "stowage/frontend/OnnxContext.h"

namespace stowage::onnxfe {

using ConverterFn = Status (*)(Context&, NodeRef&);
using ConverterTable = std::map<std::string, ConverterFn>;

void addComputeConverters(ConverterTable& table);
void addLayoutConverters(ConverterTable& table);
/// QuantizeLinear, DequantizeLinear, ConvInteger, QLinearConv, MatMulInteger, QLinearMatMul (OnnxQuantConverters.cpp).
void addQuantConverters(ConverterTable& table);

/// Shape of input i, or an error naming the node when the input is absent or unknown.
Result<Shape> inputShape(Context& ctx, NodeRef& node, int i);
/// Input i as a compile-time constant (after folding, or bound with --bind). `role` names it in the error:
/// makeUnsupported naming the node and input, suggesting `--bind NAME=file.pb`.
Result<const Tensor*> constInput(Context& ctx, NodeRef& node, int i, const std::string& role);
/// Same, as int64 values.
Result<std::vector<int64_t>> constIntsInput(Context& ctx, NodeRef& node, int i, const std::string& role);
/// Normalizes a possibly negative axis against `rank`; error naming the node when out of range.
Result<int64_t> normalizeAxis(NodeRef& node, int64_t axis, int64_t rank, const std::string& what = "axis");
/// Conv / pool window attributes of an ONNX node resolved to explicit pads (auto_pad applied), checked against
/// the input shape [N, C, spatial...] (1 or 2 spatial dims).
struct WindowSpec {
  std::vector<int64_t> kernel, strides, dilations, pads;
};
Result<WindowSpec> readWindow(Context& ctx, NodeRef& node, const Shape& x, std::vector<int64_t> kernel);
/// Emits a Reshape of `in` to `shape` producing `out` (Flatten, Squeeze, Identity, ... become this).
Status emitReshape(Context& ctx, NodeRef& node, const std::string& in, const Shape& shape, const std::string& out);

}  // namespace stowage::onnxfe
