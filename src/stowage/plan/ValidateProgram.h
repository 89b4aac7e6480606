// Independent check of a program's memory plan over several pools, run in every compile and by the planner
// tests: it trusts nothing the planner computed except each buffer's pool, bank and offset.
#pragma once

#include <functional>
#include <string>

#include "stowage/plan/ProgramPlan.h"
#include "stowage/support/Diagnostic.h"

namespace stowage {

/// OK when every buffer sits in one of its candidate pools (its pinned pool when pinned), in a bank that
/// exists, aligned to its pool's alignment, inside its bank and pool capacity, and no two buffers of the same
/// pool that are live at the same step share a byte. Otherwise the first violation, naming the buffer(s)
/// (`nameOf` gives tensor names) and the pool.
Status validateProgramPlan(const ProgramPlan& plan, const std::function<std::string(TensorId)>& nameOf = {});

}  // namespace stowage
