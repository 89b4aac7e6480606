// Subcommands of the `stowage` CLI. Each file registers one subcommand: it parses flags, calls the library
// and prints; no compiler logic lives here. Errors print Diagnostic::render() and return exit code 2.
#pragma once

#include <CLI/CLI.hpp>

namespace stowage::cli {

/// Exit codes shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitInfeasible = 1;  ///< `stowage plan`: proved that no plan fits the capacity
inline constexpr int kExitUserError = 2;  ///< bad model, bad flags, unwritable output, build failure
inline constexpr int kExitTimedOut = 3;   ///< `stowage plan`: no plan within the capacity found in the time limit
inline constexpr int kExitKernelsDiffer = 1;  ///< `stowage check-kernels`: a board kernel's output differs from the portable one

/// Each adds its subcommand to `app`; the returned callback runs it and returns the exit code.
using CommandRunner = std::function<int()>;
CommandRunner registerInfoCommand(CLI::App& app);
CommandRunner registerCompileCommand(CLI::App& app);
CommandRunner registerRunCommand(CLI::App& app);
CommandRunner registerPlanCommand(CLI::App& app);
CommandRunner registerCheckKernelsCommand(CLI::App& app);

}  // namespace stowage::cli
