// Target helpers: which ops a target runs and the board-file spelling of TargetKind.
#include "stowage/target/Target.h"

#include "stowage/target/Glob.h"

namespace stowage {

bool Target::runs(std::string_view op) const {
  for (const auto& pattern : ops)
    if (globMatch(pattern, op)) return true;
  return false;
}

const std::vector<IntrinsicSpec>& defaultIntrinsics() {
  static const std::vector<IntrinsicSpec> v = {
      {"mvin", "stowage_accel_mvin", {"dram", "local", "rows", "row_bytes", "dram_stride"}},
      {"mvout", "stowage_accel_mvout", {"dram", "local", "rows", "row_bytes", "dram_stride"}},
      {"fence", "stowage_accel_fence", {}},
      {"qconv2d_s8", "stowage_accel_qconv2d_s8", {"x", "w", "bias", "multiplier", "shift", "y", "p"}},
      {"qdepthwise_conv2d_s8", "stowage_accel_qdepthwise_conv2d_s8", {"x", "w", "bias", "multiplier", "shift", "y", "p"}},
      {"qfully_connected_s8", "stowage_accel_qfully_connected_s8", {"x", "w", "bias", "multiplier", "shift", "y", "p"}},
      {"conv2d_f32", "stowage_accel_conv2d_f32", {"x", "w", "bias", "y", "p"}},
      {"gemm_f32", "stowage_accel_gemm_f32", {"a", "b", "c", "y", "p"}},
      {"matmul_f32", "stowage_accel_matmul_f32", {"a", "b", "y", "p"}},
      {"add_f32", "stowage_accel_add_f32", {"a", "b", "y", "p"}},  // cores mode only (no engine runs element-wise ops)
      {"qadd_s8", "stowage_accel_qadd_s8", {"a", "b", "y", "p"}},  // likewise
      {"avgpool2d_f32", "stowage_accel_avgpool2d_f32", {"x", "y", "p"}},  // pooling: cores mode only, likewise
      {"maxpool2d_f32", "stowage_accel_maxpool2d_f32", {"x", "y", "p"}},
      {"qavgpool2d_s8", "stowage_accel_qavgpool2d_s8", {"x", "y", "p"}},
      {"qmaxpool2d_s8", "stowage_accel_qmaxpool2d_s8", {"x", "y", "p"}},
      {"global_avgpool2d_f32", "stowage_accel_global_avgpool2d_f32", {"x", "y", "p"}},
      {"global_maxpool2d_f32", "stowage_accel_global_maxpool2d_f32", {"x", "y", "p"}},
      {"qlinear_conv", "stowage_accel_qlinear_conv",
       {"x", "w", "x_scale", "x_zero_point", "w_scale", "w_zero_point", "y_scale", "y_zero_point", "bias", "y", "p"}},
      {"conv_integer", "stowage_accel_conv_integer", {"x", "w", "x_zero_point", "w_zero_point", "y", "p"}},
      {"qlinear_matmul", "stowage_accel_qlinear_matmul",
       {"a", "b", "a_scale", "a_zero_point", "b_scale", "b_zero_point", "y_scale", "y_zero_point", "y", "p"}},
      {"matmul_integer", "stowage_accel_matmul_integer", {"a", "b", "a_zero_point", "b_zero_point", "y", "p"}},
      {"dma_start", "stowage_dma_start", {"channel", "dst", "src", "row_bytes", "rows", "dst_stride", "src_stride"}},
      {"dma_wait", "stowage_dma_wait", {"ticket"}},
      {"run_on_cores", "stowage_run_on_cores", {"target", "cores", "fn", "arg"}},
      {"core_id", "stowage_core_id", {}},
      {"barrier", "stowage_barrier", {}},
  };
  return v;
}

IntrinsicSpec Target::intrinsic(std::string_view name) const {
  for (const auto& s : intrinsics)
    if (s.intrinsic == name) return s;
  for (const auto& s : defaultIntrinsics())
    if (s.intrinsic == name) return s;
  return IntrinsicSpec{std::string(name), std::string(name), {}};
}

bool Target::engineRuns(std::string_view dtype) const {
  for (const auto& d : engineDtypes)
    if (d == dtype) return true;
  return false;
}

std::string_view targetKindName(TargetKind kind) { return kind == TargetKind::Cpu ? "cpu" : "accelerator"; }

std::optional<TargetKind> targetKindFromName(std::string_view name) {
  if (name == "cpu") return TargetKind::Cpu;
  if (name == "accelerator") return TargetKind::Accelerator;
  return std::nullopt;
}

}  // namespace stowage
