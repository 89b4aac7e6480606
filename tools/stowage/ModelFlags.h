// Flags shared by `stowage compile` and `stowage run`: --shape NAME=1x3x32x32, --bind NAME=FILE and the memory
// flags (--board, --pool, --rule, --pin, --planner, --time-limit), the API flags (--guard, --weights,
// --io-in-pools) and --kernels, parsed into the driver's CompileOptions.
// Parsing only; no compiler logic.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "stowage/driver/Compiler.h"
#include "stowage/support/Diagnostic.h"

namespace stowage::cli {

/// Help text of the two flags, shared so both subcommands describe them the same way.
inline constexpr const char* kShapeHelp =
    "Static shape for a model input with dynamic dims, NAME=DxDx... (e.g. input=1x3x32x32; 'scalar' for rank 0). "
    "Repeatable.";
inline constexpr const char* kBindHelp =
    "Freeze a model input to the tensor in FILE (.pb TensorProto or .npy) at compile time, NAME=FILE; needed when an "
    "input feeds shapes (e.g. Reshape's shape). Repeatable.";

/// Adds --board, --pool, --rule, --pin, --planner, --time-limit, --guard, --weights, --kernels and --io-in-pools to `sub`, stored in `options` (which must
/// outlive parsing). Shared so `compile` and `run` place memory the same way.
void addBoardFlags(CLI::App* sub, CompileOptions& options);

/// Adds the parsed --shape and --bind values to `options`; errors name the flag value.
Status applyModelFlags(const std::vector<std::string>& shapes, const std::vector<std::string>& binds, CompileOptions& options);

}  // namespace stowage::cli
