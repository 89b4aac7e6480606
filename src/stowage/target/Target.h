// A compute target of a board: the CPU or an accelerator, with its core count and the ops it can run.
// Part of the memory description (target/); pools name targets in `access`.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stowage {

enum class TargetKind { Cpu, Accelerator };

/// How generated code calls one intrinsic of stowage_accel.h on this target: the C function name and the
/// order of its arguments (names of the stowage_accel.h parameters, e.g. {"dram", "local", "rows", ...}).
struct IntrinsicSpec {
  std::string intrinsic;          ///< "mvin", "mvout", "fence", "dma_start", ... (the stowage_accel.h suffix)
  std::string name;               ///< the C function to call
  std::vector<std::string> args;  ///< argument names in call order
};

/// Intrinsics a board may rename, with their default C names and argument orders (stowage_accel.h).
const std::vector<IntrinsicSpec>& defaultIntrinsics();

struct Target {
  std::string name;
  TargetKind kind = TargetKind::Cpu;
  int cores = 1;                    ///< cores the target can split one op over (>= 1)
  std::vector<std::string> ops;     ///< IR op names or globs it runs; "*" = all. Cpu default: {"*"}
  std::string origin;               ///< "board.toml:4" or "default", for diagnostics
  // Costs and engines (docs/accelerators.md):
  int engineDim = 0;                     ///< matrix engine of dim x dim MACs; 0 = none (kernels run on cores)
  std::vector<std::string> engineDtypes = {"int8"};  ///< element types the engine computes ("int8", "float32")
  double macsPerCycle = 1;               ///< per core, for kernels run by the cores
  int dmaChannels = 1;                   ///< DMA channels per core
  double dmaBytesPerCycle = 0;           ///< per channel; 0 = the target has no DMA (only cores mode without tiling)
  double dmaSetupCycles = 0;             ///< cycles of setup per transfer
  std::vector<IntrinsicSpec> intrinsics; ///< renamed intrinsics (others keep their defaults)

  /// The intrinsic `name` as this target calls it (the board's renaming, else the default).
  IntrinsicSpec intrinsic(std::string_view name) const;
  /// True when the engine computes `dtype` ("int8", "float32").
  bool engineRuns(std::string_view dtype) const;

  /// True when `op` (an IR op name) matches one of `ops`.
  bool runs(std::string_view op) const;
};

/// "cpu" / "accelerator" (the spelling in board files).
std::string_view targetKindName(TargetKind kind);
std::optional<TargetKind> targetKindFromName(std::string_view name);

}  // namespace stowage
