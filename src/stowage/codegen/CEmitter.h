// The C emitter: turns the planned graph into <name>.h (the API: input/output/workspaces structs, pool and
// offset macros, error codes, <name>_run), <name>.c (one kernel call per lowered node in schedule order,
// intermediates at pool + offset) and <name>_weights.c. Output is byte-identical for the same graph and plan.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stowage/ir/Graph.h"
#include "stowage/lower/LowerProgram.h"
#include "stowage/plan/ProgramPlan.h"
#include "stowage/support/Diagnostic.h"

namespace stowage {

/// One generated file: its name (no folder) and text.
struct GeneratedFile {
  std::string fileName;
  std::string text;
};

/// How constants reach the device (`--weights`).
enum class WeightsFormat {
  Auto,  ///< `static` constant pools as C arrays, `user` / `fixed` ones as binary images (the only way there)
  C,     ///< every constant as a C array; an error when a constant pool is `user` or `fixed`
  Bin,   ///< every constant pool as a binary image the application loads (no C arrays)
};

/// "auto" / "c" / "bin" (the spelling of --weights); nullopt for anything else.
std::optional<WeightsFormat> weightsFormatFromName(std::string_view name);

/// Choices of the generated API that are not in the plan.
struct EmitOptions {
  WeightsFormat weights = WeightsFormat::Auto;
  /// `--io-in-pools`: graph inputs and outputs are planned buffers (the plan must have been made with
  /// PlanOptions::ioInPools); the API gets <name>_map_inputs / <name>_map_outputs and <name>_run(ws).
  bool ioInPools = false;
};

/// One binary weights image: a constant pool's bytes, each constant at its planned offset, padding zeroed.
struct GeneratedImage {
  std::string fileName;  ///< "<name>_weights_<pool>.bin"
  std::string bytes;     ///< exactly <P>_POOL_<X>_SIZE bytes
  int pool = -1;         ///< index into Board::pools
};

/// A call of one of the board's own kernels ([[kernels]], docs/kernels.md) in place of a portable kernel.
struct BoardKernelCall {
  int step = -1;           ///< the calling node's step
  std::string node;        ///< its name
  std::string kernel;      ///< the portable kernel replaced: "stowage_qconv2d_s8"
  std::string function;    ///< the board's function called instead
  std::string target;      ///< the target whose code calls it (a cpu, or an accelerator's cores)
  size_t boardKernel = 0;  ///< index into Board::kernels
};

/// The files of one model.
struct GeneratedC {
  GeneratedFile header;   ///< <name>.h
  GeneratedFile source;   ///< <name>.c
  GeneratedFile weights;  ///< <name>_weights.c (constants kept as C arrays; a placeholder when there are none)
  std::vector<GeneratedImage> images;  ///< one per constant pool delivered as an image (and holding constants)
  EmitOptions options;    ///< what the files were generated with (the host harness follows it)
  size_t kernelCalls = 0;  ///< calls in <name>_run
  /// Whether the calls need the int8 kernels' reference loops (lower/LowerProgram.h needsInt8ReferenceLoops): when not,
  /// a firmware project builds the kernels without them (STOWAGE_INT8_FAST_PATHS_ONLY).
  bool int8ReferenceLoops = true;
  /// Whether the calls need the int8 convolution's filter-row widening (lower/LowerProgram.h
  /// needsConvFilterRowWidening): when not, a firmware project leaves it out (STOWAGE_NO_CONV_BY_FILTER_ROWS).
  bool convFilterRowWidening = true;
  /// The calls of board kernels, in step order (empty when the board has no [[kernels]] or none matches).
  std::vector<BoardKernelCall> boardKernelCalls;
  /// The headers and C sources of the board kernels called, to be copied beside <name>.c and built with it (the C
  /// sources are the files ending in ".c"). Filled by the driver (driver/BoardKernelFiles.h), not by emitC.
  std::vector<GeneratedFile> kernelFiles;
};

/// True when constant pool `pool` is delivered as a binary image under `format` (`user` and `fixed` pools
/// always; `static` ones with WeightsFormat::Bin).
bool isImagePool(const MemoryPool& pool, WeightsFormat format);

/// Emits C for `g` (verified, after passes) placed by `plan` (validated): each intermediate tensor at
/// pool base + offset, user pools as fields of <name>_workspaces, static pools as arrays, fixed pools through
/// STOWAGE_FIXED_ADDRESS (stowage_hal.h), constants in their pools' sections, or (image pools, see
/// isImagePool) in binary images reached through a const field of <name>_workspaces or the fixed address.
/// `name` prefixes every symbol and must pass validateModelName. Errors come from kernel lowering (an op or
/// dtype the kernels do not support) and name the node, or from `options` that do not fit the board or plan.
Result<GeneratedC> emitC(const Graph& g, const ProgramPlan& plan, const std::string& name, const EmitOptions& options = {});
/// emitC printing `program` (lowerProgram of `g` and `plan`: the calls, their parameters and the board kernels called);
/// the overload above lowers the program itself.
Result<GeneratedC> emitC(const Graph& g, const ProgramPlan& plan, const LoweredProgram& program, const std::string& name,
                         const EmitOptions& options = {});

/// The "generated by" version string written in every file.
std::string stowageVersion();

}  // namespace stowage
