// A self-contained firmware project for one compiled model: CMake files with a cross toolchain file, the linker script
// and its fragments, the runtime's startup code, a main.c, the generated C and exactly the runtime kernels it calls.
// `cmake -B b && cmake --build b` gives an ELF; `stowage.cmake` adds the model to an existing firmware build.
// `stowage run --emulate` builds the same files with the same flags. Stage firmware/.
#pragma once

#include <string>
#include <vector>

#include "stowage/codegen/CEmitter.h"
#include "stowage/firmware/EmulatedMachine.h"
#include "stowage/firmware/Toolchain.h"
#include "stowage/ir/Graph.h"
#include "stowage/plan/ProgramPlan.h"
#include "stowage/support/Diagnostic.h"

namespace stowage {

struct FirmwareProjectOptions {
  std::string runtimeDir;                    ///< the runtime/ folder of the Stowage sources (include, kernels, firmware)
  const EmulatedMachine* machine = nullptr;  ///< the board was mapped onto this QEMU machine: `run` and `debug` targets
  /// `--kernels portable` on a CPU with the DSP extension or Helium (lower/KernelVariant.h, KernelIsa::noSimd): the model
  /// library is built with STOWAGE_NO_SIMD, so that the int8 kernels run their portable loops.
  bool noSimd = false;
};

/// One file of the project, at a path relative to the project folder.
struct ProjectFile {
  std::string path;
  std::string text;
};

struct FirmwareProject {
  std::string name;                       ///< the model name; the firmware is <name>.elf
  std::vector<ProjectFile> files;
  Toolchain toolchain;
  std::vector<std::string> sources;       ///< .c files of the firmware, relative paths, in build order
  std::string weightsSource;              ///< the one among `sources` built with -O0 (data only)
  std::vector<std::string> includeDirs;   ///< relative
  std::string linkerScript;               ///< relative
  std::vector<std::string> kernelFiles;   ///< the runtime kernels it ships ("kernels/int8_conv.c")
  std::vector<std::string> boardKernelFiles;  ///< the C sources of the board's own kernels ([[kernels]]), "model/my_conv.c"
  /// preprocessor symbols the model library is built with ("STOWAGE_NO_SIMD", "STOWAGE_INT8_FAST_PATHS_ONLY",
  /// "STOWAGE_NO_CONV_POINTWISE", "STOWAGE_NO_CONV_IM2COL", "STOWAGE_NO_CONV_BY_FILTER_ROWS", "STOWAGE_NO_CONV_BORDER_PAIRS",
  /// "STOWAGE_NO_DW_STRIP", "STOWAGE_NO_DW_PIXELS")
  std::vector<std::string> modelDefines;
};

/// The project for model `name` (graph, plan and code as compileGraph made them; the plan's board must have a [device]
/// and memories, e.g. from boardForMachine). Errors name what is missing: the device, a runtime file.
Result<FirmwareProject> makeFirmwareProject(const Graph& g, const ProgramPlan& plan, const GeneratedC& code, const std::string& name,
                                            const FirmwareProjectOptions& options);

/// Writes every file of `project` under `dir` (created; existing files replaced).
Status writeFirmwareProject(const FirmwareProject& project, const std::string& dir);

}  // namespace stowage
