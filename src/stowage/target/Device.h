// The device a board describes beyond its pools: the CPU that runs the generated code (and the instruction-set
// features it has) and the physical memories of its address map, which become the MEMORY regions of the
// generated linker script (firmware/). Part of the memory description (target/); optional in a board file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stowage {

/// What a physical memory is to the linker and the boot code.
enum class MemoryKind {
  Flash,  ///< read-only while running: code, constants and the load images of what is copied to RAM at boot
  Ram,    ///< read-write, contents undefined at reset: data, stack, workspace pools, RAM-resident constants
};

/// One physical memory of the device's address map (a `[[memories]]` table): [base, base + sizeBytes).
struct DeviceMemory {
  std::string name;            ///< identifier; its uppercase names the linker-script MEMORY region
  uint64_t base = 0;           ///< address of byte 0
  uint64_t sizeBytes = 0;      ///< bytes, > 0
  MemoryKind kind = MemoryKind::Ram;
  std::string origin;          ///< "board.toml:40", for diagnostics

  uint64_t end() const { return base + sizeBytes; }
  bool contains(uint64_t lo, uint64_t hi) const { return lo >= base && hi <= end() && lo <= hi; }
};

/// The instruction-set family of a CPU.
enum class IsaFamily { Arm, RiscV };

/// A CPU the firmware flow knows, with the features the board states or its defaults imply.
struct CpuSpec {
  std::string name;        ///< "cortex-m4", "cortex-m7", "cortex-m55", "rv32imac", ...
  IsaFamily isa = IsaFamily::Arm;
  /// Arm floating-point unit as GCC's -mfpu names it ("fpv4-sp-d16", "fpv5-d16", "fpv5-sp-d16"), "auto" for CPUs whose
  /// -mcpu implies it (Cortex-M55), "" for none (soft float).
  std::string fpu;
  bool dsp = false;        ///< Arm DSP extension (SMLAD, SXTB16, ...)
  std::string mve;         ///< Helium: "" none, "int", "float"
};

/// The CPU names the firmware flow knows, in documentation order.
const std::vector<std::string>& knownCpuNames();
/// The defaults of CPU `name` (nullopt for an unknown name).
std::optional<CpuSpec> defaultCpuSpec(std::string_view name);

/// The `[device]` table of a board.
struct Device {
  CpuSpec cpu;                          ///< resolved: the name's defaults with the board's fpu / dsp / mve applied
  std::string flashMemory;              ///< memory holding code, read-only data and load images ("" = none described)
  std::string ramMemory;                ///< memory holding the application's stack, .data and .bss ("" = none described)
  uint64_t stackBytes = 8192;           ///< stack of the firmware's main thread
  std::vector<std::string> openocdConfigs;  ///< OpenOCD configuration files for `flash` (-f each), e.g. interface, target
  std::string qemuMachine;              ///< QEMU machine this device is (or is emulated as), "" = none
  std::string origin;                   ///< where [device] was written
};

/// "flash" / "ram" (the spelling in board files).
std::string_view memoryKindName(MemoryKind kind);
std::optional<MemoryKind> memoryKindFromName(std::string_view name);

}  // namespace stowage
