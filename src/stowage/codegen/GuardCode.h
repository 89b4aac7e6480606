// Guard mode (`stowage compile --guard`): the C that checks a plan at run time. Every activation buffer gets
// canary bytes on both sides (reserved by the planner), its bytes are poisoned until its producer writes them
// and again when its lifetime ends, and a checksum taken after the write must still match whenever the buffer
// is read and after every step. Any violation calls stowage_guard_fail (stowage_hal.h) with the tensor's name.
#pragma once

#include <string>
#include <vector>

#include "stowage/ir/Graph.h"
#include "stowage/plan/ProgramPlan.h"

namespace stowage {

/// The guard helpers for net.c (file scope; `prefix` is the model name). Empty when the plan has no guard.
std::string guardHelpers(const ProgramPlan& plan, const std::string& prefix);

/// Index of each tensor's guard record (by TensorId; -1 for tensors without one): the plan's non-empty
/// activation buffers, in plan order.
std::vector<int> guardIndex(const Graph& g, const ProgramPlan& plan);

/// Statements run before step `step`'s kernel calls: arm (canaries, poison) each buffer the node writes, and
/// check each buffer it reads is live and intact. `guard` from guardIndex.
std::string guardBeforeStep(const Graph& g, const ProgramPlan& plan, const std::vector<int>& guard, int step, const std::string& prefix);

/// --io-in-pools: statements run at the start of <name>_run that treat each graph input (written by the
/// application before the call) as just written: canaries around it, its checksum taken, marked live.
std::string guardInputsWrittenByApplication(const Graph& g, const std::vector<int>& guard, const std::string& prefix);

/// Statements run after step `step`: record the checksums of what it wrote, check every live buffer and its
/// canaries, then poison the buffers whose lifetime ends here (except graph outputs in pools, which the
/// application reads after the run).
std::string guardAfterStep(const Graph& g, const ProgramPlan& plan, const std::vector<int>& guard, int step, const std::string& prefix);

}  // namespace stowage
