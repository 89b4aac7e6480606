// Kernel lowering of the float32 NHWC ops (ConvNhwc, DepthwiseConvNhwc, AveragePoolNhwc, MaxPoolNhwc in
// Ops.def) to runtime/include/stowage_kernels_nhwc.h. See KernelCall.h.
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "stowage/lower/KernelCall.h"
#include "stowage/lower/LoweringSupport.h"

namespace stowage {

namespace {

using lowering::assignI32;
using lowering::fitsI32;
using lowering::nodeLoc;
using lowering::Overloaded;
using lowering::requireFloat;
using lowering::tooBig;

KernelCall single(NhwcKernel k, auto params, std::vector<TensorId> inputs, TensorId out, bool w8 = false) {
  NhwcCall c;
  c.kernel = k;
  c.w8 = w8;
  c.params = params;
  return KernelCall{c, std::move(inputs), out};
}

Result<std::vector<KernelCall>> lowerNhwcConv(const Graph& g, const Node& n) {
  STOWAGE_ASSIGN_OR_RETURN(const bool w8, lowering::requireFloatOrInt8Weights(g, n));
  const Shape& x = g.tensor(n.inputs[0]).shape;
  const Shape& w = g.tensor(n.inputs[1]).shape;
  const Shape& y = g.tensor(n.outputs[0]).shape;
  if (x.size() != 4 || w.size() != 4 || y.size() != 4) return makeError(nodeLoc(n), "input, filter and output must be 4-D (NHWC)");
  const auto strides = n.attrs.getInts("strides", {1, 1}), dil = n.attrs.getInts("dilations", {1, 1});
  const auto pads = n.attrs.getInts("pads", {0, 0, 0, 0});
  if (strides.size() != 2 || dil.size() != 2 || pads.size() != 4) return makeError(nodeLoc(n), "strides, dilations or pads malformed");
  const bool depthwise = n.op == OpKind::DepthwiseConvNhwc;
  stowage_nhwc_conv_params p;
  std::memset(&p, 0, sizeof p);
  STOWAGE_TRY(assignI32(n, {{&p.n, x[0]}, {&p.h, x[1]}, {&p.w, x[2]}, {&p.c, x[3]}, {&p.oh, y[1]}, {&p.ow, y[2]}, {&p.m, y[3]},
                            {&p.kh, w[1]}, {&p.kw, w[2]}, {&p.kc, depthwise ? 1 : w[3]}, {&p.stride_h, strides[0]},
                            {&p.stride_w, strides[1]}, {&p.dil_h, dil[0]}, {&p.dil_w, dil[1]}, {&p.pad_top, pads[0]},
                            {&p.pad_left, pads[1]}, {&p.depth_multiplier, depthwise && x[3] > 0 ? y[3] / x[3] : 1}}));
  p.act_min = n.attrs.getFloat("clip_min", -std::numeric_limits<float>::infinity());
  p.act_max = n.attrs.getFloat("clip_max", std::numeric_limits<float>::infinity());
  if (w8 && g.tensor(n.inputs[3]).numElements() != y[3])
    return makeError(nodeLoc(n), "the int8 filter needs one scale per output channel");
  std::vector<TensorId> in = w8 ? std::vector<TensorId>{n.inputs[0], n.inputs[1], n.inputs[3], n.input(2)}
                                : std::vector<TensorId>{n.inputs[0], n.inputs[1], n.input(2)};
  return std::vector<KernelCall>{single(depthwise ? NhwcKernel::DepthwiseConv2d : NhwcKernel::Conv2d, p, std::move(in), n.outputs[0], w8)};
}

Result<std::vector<KernelCall>> lowerNhwcPool(const Graph& g, const Node& n) {
  STOWAGE_TRY(requireFloat(g, n));
  const Shape& x = g.tensor(n.inputs[0]).shape;
  const Shape& y = g.tensor(n.outputs[0]).shape;
  if (x.size() != 4 || y.size() != 4) return makeError(nodeLoc(n), "input and output must be 4-D (NHWC)");
  const auto k = n.attrs.getInts("kernel_shape"), strides = n.attrs.getInts("strides", {1, 1});
  const auto pads = n.attrs.getInts("pads", {0, 0, 0, 0});
  if (k.size() != 2 || strides.size() != 2 || pads.size() != 4) return makeError(nodeLoc(n), "kernel_shape, strides or pads malformed");
  stowage_nhwc_pool_params p;
  std::memset(&p, 0, sizeof p);
  STOWAGE_TRY(assignI32(n, {{&p.n, x[0]}, {&p.h, x[1]}, {&p.w, x[2]}, {&p.c, x[3]}, {&p.oh, y[1]}, {&p.ow, y[2]}, {&p.kh, k[0]},
                            {&p.kw, k[1]}, {&p.stride_h, strides[0]}, {&p.stride_w, strides[1]}, {&p.pad_top, pads[0]},
                            {&p.pad_left, pads[1]}}));
  p.act_min = n.attrs.getFloat("clip_min", -std::numeric_limits<float>::infinity());
  p.act_max = n.attrs.getFloat("clip_max", std::numeric_limits<float>::infinity());
  return std::vector<KernelCall>{
      single(n.op == OpKind::MaxPoolNhwc ? NhwcKernel::MaxPool2d : NhwcKernel::AvgPool2d, p, {n.inputs[0]}, n.outputs[0])};
}

}  // namespace

Result<std::vector<KernelCall>> lowerNhwcNode(const Graph& g, const Node& n) {
  switch (n.op) {
    case OpKind::ConvNhwc:
    case OpKind::DepthwiseConvNhwc: return lowerNhwcConv(g, n);
    case OpKind::AveragePoolNhwc:
    case OpKind::MaxPoolNhwc: return lowerNhwcPool(g, n);
    default: break;
  }
  return makeError(nodeLoc(n), "is not a float NHWC op");
}

std::string nhwcKernelFunctionName(const NhwcCall& c) {
  switch (c.kernel) {
    case NhwcKernel::Conv2d: return c.w8 ? "stowage_conv2d_nhwc_w8_f32" : "stowage_conv2d_nhwc_f32";
    case NhwcKernel::DepthwiseConv2d: return c.w8 ? "stowage_depthwise_conv2d_nhwc_w8_f32" : "stowage_depthwise_conv2d_nhwc_f32";
    case NhwcKernel::AvgPool2d: return "stowage_avgpool2d_nhwc_f32";
    case NhwcKernel::MaxPool2d: return "stowage_maxpool2d_nhwc_f32";
  }
  return "";
}

std::string nhwcParamsTypeName(const NhwcCall& c) {
  return std::holds_alternative<stowage_nhwc_conv_params>(c.params) ? "stowage_nhwc_conv_params" : "stowage_nhwc_pool_params";
}

void executeNhwcCall(const NhwcCall& c, const std::vector<const void*>& in, void* out) {
  auto f = [&](size_t i) { return static_cast<const float*>(i < in.size() ? in[i] : nullptr); };
  float* y = static_cast<float*>(out);
  std::visit(Overloaded{
                 [&](const stowage_nhwc_conv_params& p) {
                   if (c.w8) {
                     const auto* wq = static_cast<const int8_t*>(in.at(1));
                     if (c.kernel == NhwcKernel::DepthwiseConv2d) stowage_depthwise_conv2d_nhwc_w8_f32(f(0), wq, f(2), f(3), y, &p);
                     else stowage_conv2d_nhwc_w8_f32(f(0), wq, f(2), f(3), y, &p);
                   } else if (c.kernel == NhwcKernel::DepthwiseConv2d) stowage_depthwise_conv2d_nhwc_f32(f(0), f(1), f(2), y, &p);
                   else stowage_conv2d_nhwc_f32(f(0), f(1), f(2), y, &p);
                 },
                 [&](const stowage_nhwc_pool_params& p) {
                   if (c.kernel == NhwcKernel::MaxPool2d) stowage_maxpool2d_nhwc_f32(f(0), y, &p);
                   else stowage_avgpool2d_nhwc_f32(f(0), y, &p);
                 },
             },
             c.params);
}

}  // namespace stowage
