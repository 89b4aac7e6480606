// A compute target of a board: the CPU or an accelerator, with its core count and the ops it can run.
// Part of the memory description (target/); pools name targets in `access`.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stowage {

enum class TargetKind { Cpu, Accelerator };

struct Target {
  std::string name;
  TargetKind kind = TargetKind::Cpu;
  int cores = 1;                    ///< cores the target can split one op over (>= 1)
  std::vector<std::string> ops;     ///< IR op names or globs it runs; "*" = all. Cpu default: {"*"}
  std::string origin;               ///< "board.toml:4" or "default", for diagnostics

  /// True when `op` (an IR op name) matches one of `ops`.
  bool runs(std::string_view op) const;
};

/// "cpu" / "accelerator" (the spelling in board files).
std::string_view targetKindName(TargetKind kind);
std::optional<TargetKind> targetKindFromName(std::string_view name);

}  // namespace stowage
