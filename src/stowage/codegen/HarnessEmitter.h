// Emits the host harness main.c that `stowage run` builds around generated code: it reads each input from a
// raw binary file, allocates the aligned user pools (host code, so malloc is fine), calls <name>_run and
// writes each output as a raw binary file.
#pragma once

#include <string>

#include "stowage/ir/Graph.h"
#include "stowage/plan/ProgramPlan.h"

namespace stowage {

/// Exit codes of the harness besides 0: usage error, unreadable input, out of memory, <name>_run failed,
/// unwritable output.
inline constexpr int kHarnessUsage = 64, kHarnessBadInput = 66, kHarnessNoMemory = 71, kHarnessRunFailed = 70,
                     kHarnessWriteFailed = 73;

/// main.c for model `name` (same graph and plan as given to emitC). Usage: prog IN_0 .. IN_k OUT_0 .. OUT_m,
/// inputs as exact raw little-endian bytes in graph input order, outputs written likewise.
/// User pools are allocated on the heap with their alignment; fixed pools are mapped by the host simulator.
/// With `simReport`, two more arguments follow the outputs: TRACE_FILE STATS_FILE, where the harness writes the
/// simulator's Chrome trace and statistics (runtime/sim/stowage_sim.h) after the run.
std::string emitHostHarness(const Graph& g, const ProgramPlan& plan, const std::string& name, bool simReport = false);

}  // namespace stowage
