// Host runner for `stowage run`: builds the generated C of a compiled model with the system C compiler
// (strict C99 flags, the prebuilt runtime library) around a generated harness, runs it on the given inputs
// and returns the outputs. The same C a device would run, executed on the host.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "stowage/driver/Compiler.h"
#include "stowage/ir/Tensor.h"
#include "stowage/support/Diagnostic.h"

namespace stowage {

/// What the host simulator (runtime/sim) reports about a run: its statistics (text) and Chrome trace (JSON).
struct HostSimReport {
  std::string stats;
  std::string traceJson;
  /// The layer spans of `stats` ("  layer 'NAME': N cycles from S" lines), in run order: (node name, cycles).
  std::vector<std::pair<std::string, uint64_t>> layerSpans() const;
  /// The run's total ("simulated: N cycles"), 0 when `stats` has none.
  uint64_t totalCycles() const;
  /// Bytes the run's transfers moved (the "  DMA N bytes in M transfers" line: core DMA and engine mvin / mvout), 0
  /// when `stats` has none.
  uint64_t dmaBytes() const;
  /// The number of those transfers (M of the same line), 0 when `stats` has none.
  uint64_t dmaTransfers() const;
};

struct HostRunOptions {
  /// Build folder to keep (created if missing) for debugging; empty: a temporary folder, removed afterwards.
  std::string keepDir;
  /// The C compiler; "cc" by default, or $CC when this is empty.
  std::string compiler = "cc";
  /// When set, the harness prints the simulator's statistics and writes its trace after the run, read back here.
  HostSimReport* simReport = nullptr;
};

/// Runtime locations: $STOWAGE_RUNTIME_DIR / $STOWAGE_RUNTIME_LIB when set, else the build's paths.
std::string runtimeSourceDir();
std::string runtimeLibraryPath();

/// Checks `inputs` against the graph inputs of `compiled` (count, then dtype and shape of each, by position);
/// the error names the input and states the expected dtype and shape.
Status checkInputs(const CompileResult& compiled, const std::vector<Tensor>& inputs);

/// An error when `board` has more targets, cores per target or DMA channels than the host simulator handles
/// (runtime/sim/stowage_sim.h), naming the target and the limit; runOnHost checks it before building.
Status checkSimulatorLimits(const Board& board);

/// Builds and runs `compiled` on `inputs` (graph input order). Returns one tensor per graph output, named
/// after it. Errors carry the compiler's or program's output as notes.
Result<std::vector<Tensor>> runOnHost(const CompileResult& compiled, const std::vector<Tensor>& inputs,
                                      const HostRunOptions& options = {});

}  // namespace stowage
