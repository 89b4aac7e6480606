// The C of a board's own kernels ([[kernels]], target/KernelOverride.h; which calls go to them is decided in
// lower/KernelVariant.h): the record of each call, and the #include lines and signature checks <name>.c starts with.
// Used by the C emitter and the tiled-layer emitter. Docs: docs/kernels.md.
#pragma once

#include <string>
#include <vector>

#include "stowage/codegen/CEmitter.h"
#include "stowage/lower/KernelCall.h"
#include "stowage/lower/KernelVariant.h"
#include "stowage/plan/ProgramPlan.h"

namespace stowage {

/// Records that step `step` calls board kernel `k` (an element of board.kernels) in place of `kernel` on `target`.
BoardKernelCall boardKernelCall(const Graph& g, const Board& board, int step, int target, const KernelOverride& k);

/// For <name>.c: one #include per header of the board kernels `calls` use, then per (portable kernel, function) pair a
/// compile-time check that the function has the portable kernel's type (a file-scope typedef the C compiler rejects
/// under -Werror when the types differ; sizeof evaluates nothing, so the portable kernel is not linked). "" when none.
std::string boardKernelPrelude(const Board& board, const std::vector<BoardKernelCall>& calls, const std::string& prefix);

}  // namespace stowage
