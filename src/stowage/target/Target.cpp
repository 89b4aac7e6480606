// Target helpers: which ops a target runs and the board-file spelling of TargetKind.
#include "stowage/target/Target.h"

#include "stowage/target/Glob.h"

namespace stowage {

bool Target::runs(std::string_view op) const {
  for (const auto& pattern : ops)
    if (globMatch(pattern, op)) return true;
  return false;
}

std::string_view targetKindName(TargetKind kind) { return kind == TargetKind::Cpu ? "cpu" : "accelerator"; }

std::optional<TargetKind> targetKindFromName(std::string_view name) {
  if (name == "cpu") return TargetKind::Cpu;
  if (name == "accelerator") return TargetKind::Accelerator;
  return std::nullopt;
}

}  // namespace stowage
