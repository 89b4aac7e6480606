// Emits the host harness main.c that `stowage run` builds around generated code: it reads each input from a
// raw binary file, allocates the aligned user pools (host code, so malloc is fine), calls <name>_run and
// writes each output as a raw binary file.
#pragma once

#include <string>

#include "stowage/codegen/CEmitter.h"
#include "stowage/codegen/CNames.h"
#include "stowage/ir/Graph.h"
#include "stowage/plan/ProgramPlan.h"

namespace stowage {

/// The symbols of model `name` as an application-side emitter (this harness, the firmware main) needs them: those
/// emitC assigns, for the plan's activations and the board's pools.
CSymbols applicationSymbols(const Graph& g, const ProgramPlan& plan, const std::string& name);

/// Exit codes of the harness besides 0: usage error, unreadable input, out of memory, <name>_run failed,
/// unwritable output.
inline constexpr int kHarnessUsage = 64, kHarnessBadInput = 66, kHarnessNoMemory = 71, kHarnessRunFailed = 70,
                     kHarnessWriteFailed = 73;

/// main.c for model `name` (same graph, plan and `options` as given to emitC). Usage: prog IN_0 .. IN_k OUT_0 ..
/// OUT_m IMG_0 .. IMG_n, inputs as exact raw little-endian bytes in graph input order, outputs written likewise,
/// then one weights image file per entry of `images` (emitC's, in order).
/// User pools are allocated on the heap with their alignment; fixed pools are mapped by the host simulator.
/// Images are read into an aligned heap block passed in ws, or copied to their fixed pool's simulated address.
/// With options.ioInPools the inputs are read to <name>_map_inputs' pointers and the outputs written from
/// <name>_map_outputs' ones. With `simReport`, two more arguments follow the images: TRACE_FILE STATS_FILE, where
/// the harness writes the simulator's Chrome trace and statistics (runtime/sim/stowage_sim.h) after the run.
std::string emitHostHarness(const Graph& g, const ProgramPlan& plan, const std::string& name, const EmitOptions& options = {},
                            const std::vector<GeneratedImage>& images = {}, bool simReport = false);

}  // namespace stowage
