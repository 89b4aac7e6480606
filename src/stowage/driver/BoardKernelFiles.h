// The files of a board's own kernels ([[kernels]], docs/kernels.md) for one compiled model: after the C emitter
// decided which calls go to board functions, the driver reads their headers and C sources (copied beside the
// generated C, built by `stowage run` and listed in firmware projects) and says in remarks which layers call them.
#pragma once

#include "stowage/codegen/CEmitter.h"
#include "stowage/ir/Graph.h"
#include "stowage/plan/ProgramPlan.h"
#include "stowage/support/Diagnostic.h"

namespace stowage {

/// Fills `code.kernelFiles` with the header and source of every board kernel in `code.boardKernelCalls` (each file
/// once), and adds to `plan.remarks` one remark per calling layer and one per board kernel no layer calls. Errors name
/// a file that cannot be read, or one whose name is also a generated file's.
Status attachBoardKernels(const Graph& g, ProgramPlan& plan, GeneratedC& code);

}  // namespace stowage
