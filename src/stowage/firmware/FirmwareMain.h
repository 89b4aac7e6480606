// The main.c of a firmware project: runs the compiled model once on the device. Given file names on the semihosting
// command line (QEMU's -semihosting-config arg=..., or a debugger's semihosting on a board) it reads each input from
// a host file and writes each output to one, as `stowage run` does on the host; without them it runs on an all-zero
// input and prints the outputs. It prints the instructions of the run and the stack it used. Stage firmware/.
#pragma once

#include <string>
#include <vector>

#include "stowage/codegen/CEmitter.h"
#include "stowage/ir/Graph.h"
#include "stowage/plan/ProgramPlan.h"

namespace stowage {

/// Exit codes of the firmware main besides 0 (and the fault codes of runtime/firmware: 128 + exception).
inline constexpr int kFirmwareUsage = 64, kFirmwareBadInput = 66, kFirmwareRunFailed = 70, kFirmwareWriteFailed = 73;

/// main.c for model `name` (graph, plan and options as given to emitC). User workspace pools become static arrays in
/// their memory's section (poolSectionName); constant pools delivered as images are read from `<name>_images.c`
/// (emitFirmwareImages): passed in ws, or copied to a fixed pool's address before the run.
std::string emitFirmwareMain(const Graph& g, const ProgramPlan& plan, const std::string& name, const EmitOptions& options,
                             const std::vector<GeneratedImage>& images);

/// `<name>_images.c`: each weights image as a const array, for firmware that has no file system to load them from.
GeneratedFile emitFirmwareImages(const Graph& g, const std::string& name, const ProgramPlan& plan, const std::vector<GeneratedImage>& images);

}  // namespace stowage
