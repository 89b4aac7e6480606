// Emulator runner for `stowage run --emulate MACHINE`: builds the firmware project of a compiled model with its cross
// toolchain (the same files and flags as the project's CMake build), runs it on QEMU with semihosting on the given
// inputs and returns the outputs, the instructions of the inference, the stack it used and the ELF's sizes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stowage/driver/Compiler.h"
#include "stowage/firmware/EmulatedMachine.h"
#include "stowage/ir/Tensor.h"
#include "stowage/support/Diagnostic.h"

namespace stowage {

/// Bytes of the firmware by kind, from its section headers (what `size` prints, with RAM split out).
struct FirmwareSizes {
  uint64_t text = 0;        ///< bytes in flash memories: code, read-only data, weights
  uint64_t constantPoolBytes = 0;  ///< the part of text that is the model's constant pools (.stowage.<pool>): text minus
                                   ///< this is the firmware's code and its read-only data
  uint64_t data = 0;        ///< bytes loaded into RAM memories: .data, RAM-resident constant pools (copied at boot)
  uint64_t bss = 0;         ///< zero-initialised and NOLOAD bytes: .bss, workspace pools, I/O buffers, stack
  uint64_t stackBytes = 0;  ///< the stack reserved by the linker script
  uint64_t ramBytes = 0;    ///< every byte the firmware reserves in RAM memories (data + bss, as placed)
};

/// Instructions of one layer of an emulated run (--profile-layers).
struct LayerProfile {
  std::string layer;
  uint64_t instructions = 0;  ///< from the end of the previous layer (or the start of <name>_run) to the end of this one
  uint64_t macs = 0;
};

/// What one emulated run measured.
struct EmulatorReport {
  uint64_t instructions = 0;    ///< executed during <name>_run (QEMU -icount, see runtime/firmware/fw_counter.c)
  uint64_t stackPeakBytes = 0;  ///< painted-stack high-water mark over the whole run
  FirmwareSizes sizes;
  std::string console;          ///< what the firmware printed
  std::string elfPath;          ///< the ELF (inside keepDir when given)
  std::vector<LayerProfile> layers;  ///< per CPU layer, in run order, with EmulatorRunOptions::profileLayers
};

struct EmulatorRunOptions {
  /// Build folder to keep (created if missing); empty: a temporary folder, removed afterwards.
  std::string keepDir;
  /// Seconds after which QEMU is stopped (a firmware that hangs).
  int timeoutSeconds = 600;
  /// Build with -DSTOWAGE_PROFILE_LAYERS: the firmware reads its instruction counter after every CPU layer
  /// (runtime/firmware/fw_profile.c; the readings' cost is taken off each layer, not off the total).
  bool profileLayers = false;
};

/// Builds `compiled` (its board already mapped onto `machine`: CompileOptions::emulate) for the machine and runs it on
/// `inputs`. Errors: a missing cross compiler or QEMU (naming the Debian package), build failures with the compiler's
/// output, a firmware that faults, fails or times out (with its console output).
Result<std::vector<Tensor>> runOnEmulator(const CompileResult& compiled, const std::vector<Tensor>& inputs, const EmulatedMachine& machine,
                                          const EmulatorRunOptions& options = {}, EmulatorReport* report = nullptr);

/// A table of the layers: instructions, MACs, instructions per MAC and share of the run, and a total line.
std::string layerProfileTable(const std::vector<LayerProfile>& layers);

/// The section sizes of the ELF file at `path` (32-bit little-endian ELF, as the cross toolchains write), each section
/// counted by the kind of the memory in `memories` that holds it (by its flags when none does).
Result<FirmwareSizes> readFirmwareSizes(const std::string& path, const std::vector<DeviceMemory>& memories);

}  // namespace stowage
