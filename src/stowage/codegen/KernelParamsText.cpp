// The C text of the kernels' parameter structs (see KernelParamsText.h): the decisions of lower/ printed as
// designated initializers.
#include "stowage/codegen/KernelParamsText.h"

#include <fmt/format.h>

#include <algorithm>

#include "stowage/codegen/CNames.h"
#include "stowage/lower/LoweringSupport.h"

namespace stowage {

using lowering::intList;
using lowering::Overloaded;

namespace {

/// ", .clamp = 1, .clamp_min = ..., .clamp_max = ..." when `clamp`, else "".
std::string clampText(int32_t clamp, float lo, float hi) {
  if (!clamp) return {};
  return fmt::format(", .clamp = 1, .clamp_min = {}, .clamp_max = {}", floatLiteral(lo), floatLiteral(hi));
}

}  // namespace

std::string clampFields(const stowage_conv2d_params& p) { return clampText(p.clamp, p.clamp_min, p.clamp_max); }
std::string clampFields(const stowage_gemm_params& p) { return clampText(p.clamp, p.clamp_min, p.clamp_max); }
std::string clampFields(const stowage_broadcast_params& p) { return clampText(p.clamp, p.clamp_min, p.clamp_max); }

std::string poolParamsInitializer(const stowage_pool2d_params& p) {
  return fmt::format(
      ".n = {}, .c = {}, .h = {}, .w = {}, .oh = {}, .ow = {}, .kh = {}, .kw = {}, .stride_h = {}, .stride_w = {},\n"
      "  .pad_top = {}, .pad_left = {}, .pad_bottom = {}, .pad_right = {}, .dil_h = {}, .dil_w = {},\n"
      "  .count_include_pad = {}",
      p.n, p.c, p.h, p.w, p.oh, p.ow, p.kh, p.kw, p.stride_h, p.stride_w, p.pad_top, p.pad_left, p.pad_bottom, p.pad_right, p.dil_h,
      p.dil_w, p.count_include_pad);
}

std::string quantParamsInitializer(const QuantCall& c) {
  auto list = [](const auto* v, int32_t count) {
    std::string s = "{";
    for (int32_t i = 0; i < std::max(1, count); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "}";
  };
  return std::visit(
      Overloaded{
          [](const stowage_qconv_params& p) {
            return fmt::format(
                ".n = {}, .h = {}, .w = {}, .c = {}, .oh = {}, .ow = {}, .m = {}, .kh = {}, .kw = {}, .kc = {},\n"
                "  .stride_h = {}, .stride_w = {}, .dil_h = {}, .dil_w = {}, .pad_top = {}, .pad_left = {},\n"
                "  .depth_multiplier = {}, .per_channel = {}, .input_offset = {}, .output_offset = {}, .act_min = {}, .act_max = {}",
                p.n, p.h, p.w, p.c, p.oh, p.ow, p.m, p.kh, p.kw, p.kc, p.stride_h, p.stride_w, p.dil_h, p.dil_w, p.pad_top,
                p.pad_left, p.depth_multiplier, p.per_channel, p.input_offset, p.output_offset, p.act_min, p.act_max) +
                   (p.out_pixel_stride != 0 ? fmt::format(",\n  .out_pixel_stride = {}", p.out_pixel_stride) : std::string()) +
                   (p.row_band != 0 ? fmt::format(",\n  .row_band = {}", p.row_band) : std::string()) +
                   (p.requant_f32 != 0 ? std::string(",\n  .requant_f32 = 1") : std::string());
          },
          [](const stowage_qfc_params& p) {
            return fmt::format(".batches = {}, .k = {}, .m = {}, .per_channel = {}, .input_offset = {}, .output_offset = {},\n"
                               "  .act_min = {}, .act_max = {}",
                               p.batches, p.k, p.m, p.per_channel, p.input_offset, p.output_offset, p.act_min, p.act_max) +
                   (p.requant_f32 != 0 ? std::string(", .requant_f32 = 1") : std::string());
          },
          [](const stowage_qpool_params& p) {
            return fmt::format(".n = {}, .h = {}, .w = {}, .c = {}, .oh = {}, .ow = {}, .kh = {}, .kw = {},\n"
                               "  .stride_h = {}, .stride_w = {}, .pad_top = {}, .pad_left = {}, .act_min = {}, .act_max = {}",
                               p.n, p.h, p.w, p.c, p.oh, p.ow, p.kh, p.kw, p.stride_h, p.stride_w, p.pad_top, p.pad_left,
                               p.act_min, p.act_max);
          },
          [&](const stowage_qbinary_params& p) {
            return fmt::format(".rank = {}, .shape = {}, .a_stride = {}, .b_stride = {},\n"
                               "  .a_offset = {}, .b_offset = {}, .output_offset = {}, .left_shift = {},\n"
                               "  .a_multiplier = {}, .a_shift = {}, .b_multiplier = {}, .b_shift = {},\n"
                               "  .output_multiplier = {}, .output_shift = {}, .act_min = {}, .act_max = {}",
                               p.rank, list(p.shape, p.rank), list(p.a_stride, p.rank), list(p.b_stride, p.rank), p.a_offset,
                               p.b_offset, p.output_offset, p.left_shift, p.a_multiplier, p.a_shift, p.b_multiplier, p.b_shift,
                               p.output_multiplier, p.output_shift, p.act_min, p.act_max);
          },
          [](const stowage_qsoftmax_params& p) {
            return fmt::format(".outer = {}, .depth = {}, .input_multiplier = {}, .input_left_shift = {}, .diff_min = {}", p.outer,
                               p.depth, p.input_multiplier, p.input_left_shift, p.diff_min);
          },
          [](const stowage_quant_params& p) {
            return fmt::format(".count = {}, .scale = {}, .zero_point = {}", p.count, floatLiteral(p.scale), p.zero_point);
          },
          [](const stowage_requant_params& p) {
            return fmt::format(".count = {}, .input_zero_point = {}, .output_zero_point = {}, .multiplier = {}, .shift = {}", p.count,
                               p.input_zero_point, p.output_zero_point, p.multiplier, p.shift);
          },
          [](const stowage_qmean_params& p) {
            return fmt::format(".n = {}, .h = {}, .w = {}, .c = {}, .input_zero_point = {}, .output_zero_point = {},\n"
                               "  .multiplier = {}, .shift = {}",
                               p.n, p.h, p.w, p.c, p.input_zero_point, p.output_zero_point, p.multiplier, p.shift);
          },
          [](const stowage_qsigmoid_params& p) {
            return fmt::format(".count = {}, .input_zero_point = {}, .input_multiplier = {}, .input_left_shift = {}, .input_range_radius = {}",
                               p.count, p.input_zero_point, p.input_multiplier, p.input_left_shift, p.input_range_radius);
          },
          [](const stowage_qhardswish_params& p) {
            return fmt::format(".count = {}, .input_zero_point = {}, .output_zero_point = {}, .output_multiplier = {}, .output_shift = {},\n"
                               "  .reluish_multiplier = {}, .reluish_shift = {}",
                               p.count, p.input_zero_point, p.output_zero_point, p.output_multiplier, p.output_shift, p.reluish_multiplier,
                               p.reluish_shift);
          },
          [](const stowage_qrelu_params& p) {
            return fmt::format(".count = {}, .input_zero_point = {}, .output_zero_point = {}, .multiplier = {}, .shift = {},\n"
                               "  .alpha_multiplier = {}, .alpha_shift = {}, .act_min = {}, .act_max = {}",
                               p.count, p.input_zero_point, p.output_zero_point, p.multiplier, p.shift, p.alpha_multiplier, p.alpha_shift,
                               p.act_min, p.act_max);
          },
      },
      c.params);
}

std::string nhwcParamsInitializer(const NhwcCall& c) {
  return std::visit(
      Overloaded{
          [](const stowage_nhwc_conv_params& p) {
            return fmt::format(
                ".n = {}, .h = {}, .w = {}, .c = {}, .oh = {}, .ow = {}, .m = {}, .kh = {}, .kw = {}, .kc = {},\n"
                "  .stride_h = {}, .stride_w = {}, .dil_h = {}, .dil_w = {}, .pad_top = {}, .pad_left = {},\n"
                "  .depth_multiplier = {}, .act_min = {}, .act_max = {}",
                p.n, p.h, p.w, p.c, p.oh, p.ow, p.m, p.kh, p.kw, p.kc, p.stride_h, p.stride_w, p.dil_h, p.dil_w, p.pad_top,
                p.pad_left, p.depth_multiplier, floatLiteral(p.act_min), floatLiteral(p.act_max)) +
                   (p.out_pixel_stride != 0 ? fmt::format(",\n  .out_pixel_stride = {}", p.out_pixel_stride) : std::string());
          },
          [](const stowage_nhwc_pool_params& p) {
            return fmt::format(".n = {}, .h = {}, .w = {}, .c = {}, .oh = {}, .ow = {}, .kh = {}, .kw = {},\n"
                               "  .stride_h = {}, .stride_w = {}, .pad_top = {}, .pad_left = {}, .act_min = {}, .act_max = {}",
                               p.n, p.h, p.w, p.c, p.oh, p.ow, p.kh, p.kw, p.stride_h, p.stride_w, p.pad_top, p.pad_left,
                               floatLiteral(p.act_min), floatLiteral(p.act_max));
          },
      },
      c.params);
}

namespace {

/// The requantization fields for a designated initializer; empty when they are ONNX's reference (all 0).
template <typename Params>
std::string requantModeText(const Params& p) {
  if (!p.requant_f32 && !p.clamp) return "";
  return fmt::format(",\n  .requant_f32 = {}, .clamp = {}, .y_min = {}, .y_max = {}", p.requant_f32, p.clamp, p.y_min, p.y_max);
}

const char* elemName(int32_t t) {
  switch (t) {
    case STOWAGE_ELEM_S8: return "STOWAGE_ELEM_S8";
    case STOWAGE_ELEM_U8: return "STOWAGE_ELEM_U8";
    default: return "STOWAGE_ELEM_S32";
  }
}

}  // namespace

std::string qlinearParamsInitializer(const QLinearCall& c) {
  return std::visit(
      Overloaded{
          [](const stowage_qlinear_quant_params& p) {
            return fmt::format(".outer = {}, .axis_len = {}, .inner = {}, .q_type = {}", p.outer, p.axis_len, p.inner, elemName(p.q_type));
          },
          [](const stowage_qlinear_conv_params& p) {
            return fmt::format(
                ".n = {}, .c = {}, .h = {}, .w = {}, .m = {}, .oh = {}, .ow = {}, .kh = {}, .kw = {}, .group = {},\n"
                "  .stride_h = {}, .stride_w = {}, .dil_h = {}, .dil_w = {}, .pad_top = {}, .pad_left = {},\n"
                "  .x_type = {}, .w_type = {}, .y_type = {}, .w_quant_count = {}",
                p.n, p.c, p.h, p.w, p.m, p.oh, p.ow, p.kh, p.kw, p.group, p.stride_h, p.stride_w, p.dil_h, p.dil_w, p.pad_top,
                p.pad_left, elemName(p.x_type), elemName(p.w_type), elemName(p.y_type), p.w_quant_count) + requantModeText(p);
          },
          [](const stowage_qlinear_matmul_params& p) {
            return fmt::format(".batch_rank = {}, .batch_shape = {}, .a_stride = {}, .b_stride = {},\n"
                               "  .m = {}, .n = {}, .k = {}, .a_type = {}, .b_type = {}, .y_type = {},\n"
                               "  .a_quant_count = {}, .b_quant_count = {}, .y_quant_count = {}",
                               p.batch_rank, intList(p.batch_shape, std::max(1, p.batch_rank)), intList(p.a_stride, std::max(1, p.batch_rank)),
                               intList(p.b_stride, std::max(1, p.batch_rank)), p.m, p.n, p.k, elemName(p.a_type), elemName(p.b_type),
                               elemName(p.y_type), p.a_quant_count, p.b_quant_count, p.y_quant_count) + requantModeText(p);
          },
          [](const stowage_qlinear_binary_params& p) {
            const int r = std::max(1, p.rank);
            return fmt::format(".rank = {}, .shape = {}, .a_stride = {}, .b_stride = {},\n  .mul = {}, .a_type = {}, .b_type = {}, .y_type = {}",
                               p.rank, intList(p.shape, r), intList(p.a_stride, r), intList(p.b_stride, r), p.mul, elemName(p.a_type),
                               elemName(p.b_type), elemName(p.y_type)) +
                   requantModeText(p);
          },
          [](const stowage_qlinear_pool_params& p) {
            const stowage_pool2d_params& q = p.pool;
            return fmt::format(".pool = {{.n = {}, .c = {}, .h = {}, .w = {}, .oh = {}, .ow = {}, .kh = {}, .kw = {},\n"
                               "  .stride_h = {}, .stride_w = {}, .pad_top = {}, .pad_left = {}, .pad_bottom = {}, .pad_right = {},\n"
                               "  .dil_h = {}, .dil_w = {}, .count_include_pad = {}}},\n  .x_type = {}, .y_type = {}",
                               q.n, q.c, q.h, q.w, q.oh, q.ow, q.kh, q.kw, q.stride_h, q.stride_w, q.pad_top, q.pad_left, q.pad_bottom,
                               q.pad_right, q.dil_h, q.dil_w, q.count_include_pad, elemName(p.x_type), elemName(p.y_type)) +
                   requantModeText(p);
          },
          [](const stowage_qlinear_lookup_params& p) { return fmt::format(".count = {}", p.count); },
          [](const stowage_qlinear_softmax_params& p) {
            return fmt::format(".outer = {}, .len = {}, .inner = {}, .x_type = {}, .y_type = {}, .y_factor = {}, .y_zero_point = {}", p.outer,
                               p.len, p.inner, elemName(p.x_type), elemName(p.y_type), floatLiteral(p.y_factor), p.y_zero_point);
          },
      },
      c.params);
}

}  // namespace stowage
