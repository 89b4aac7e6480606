// The CPUs the firmware flow knows and their default features (Device.h).
#include "stowage/target/Device.h"

namespace stowage {

namespace {

struct CpuRow {
  const char* name;
  IsaFamily isa;
  const char* fpu;
  bool dsp;
  const char* mve;
};

// Defaults follow each core's common configuration (Arm's technical reference manuals): the Cortex-M4's FPU is the
// single-precision FPv4-SP, the Cortex-M7's the double-precision FPv5 (parts with the single-precision one say
// fpu = "fpv5-sp-d16"), the Cortex-M33's FPv5-SP, and the Cortex-M55 has MVE with floating point.
constexpr CpuRow kCpus[] = {
    {"cortex-m0plus", IsaFamily::Arm, "", false, ""},
    {"cortex-m3", IsaFamily::Arm, "", false, ""},
    {"cortex-m4", IsaFamily::Arm, "fpv4-sp-d16", true, ""},
    {"cortex-m7", IsaFamily::Arm, "fpv5-d16", true, ""},
    {"cortex-m33", IsaFamily::Arm, "fpv5-sp-d16", true, ""},
    {"cortex-m55", IsaFamily::Arm, "auto", true, "float"},
    {"rv32imac", IsaFamily::RiscV, "", false, ""},
};

}  // namespace

const std::vector<std::string>& knownCpuNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const CpuRow& r : kCpus) v.emplace_back(r.name);
    return v;
  }();
  return names;
}

std::optional<CpuSpec> defaultCpuSpec(std::string_view name) {
  for (const CpuRow& r : kCpus)
    if (name == r.name) return CpuSpec{r.name, r.isa, r.fpu, r.dsp, r.mve};
  return std::nullopt;
}

std::string_view memoryKindName(MemoryKind kind) { return kind == MemoryKind::Flash ? "flash" : "ram"; }

std::optional<MemoryKind> memoryKindFromName(std::string_view name) {
  if (name == "flash") return MemoryKind::Flash;
  if (name == "ram") return MemoryKind::Ram;
  return std::nullopt;
}

}  // namespace stowage
