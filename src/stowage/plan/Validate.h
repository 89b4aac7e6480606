// Independent check of a memory plan, run in every compile and in the planner tests: it trusts nothing the
// algorithm computed except the offsets it is asked to check.
#pragma once

#include <functional>
#include <string>

#include "stowage/plan/MemoryPlan.h"
#include "stowage/support/Diagnostic.h"

namespace stowage {

/// OK when every buffer has an offset, each offset is a multiple of its buffer's alignment, each buffer
/// [offset, offset + sizeBytes) lies inside [0, workspaceBytes), and no two buffers whose lifetimes overlap
/// share a byte. Otherwise the first violation, naming the buffer(s) with `nameOf` (tensor names; "tensor #id"
/// when not given), their byte ranges and step ranges.
Status validatePlan(const MemoryPlan& plan, const std::function<std::string(TensorId)>& nameOf = {});

}  // namespace stowage
