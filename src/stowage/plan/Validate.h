// Independent check of a memory plan, run in every compile, on every plan `stowage plan` writes and in the
// planner tests: it trusts nothing the algorithm computed except the offsets it is asked to check.
// O(n log n): a sweep over time keeps the live buffers ordered by offset.
#pragma once

#include <cstddef>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "stowage/plan/MemoryPlan.h"
#include "stowage/support/Diagnostic.h"

namespace stowage {

/// What is wrong with a plan, the first violation found (buffers are checked in index order, then overlaps).
enum class PlanFailure {
  None,           ///< the plan is valid
  MissingOffset,  ///< fewer (or more) offsets than buffers; `first` is the first buffer without one
  BadAlignment,   ///< a buffer's alignment is 0 or not a power of two
  Misaligned,     ///< an offset is not a multiple of its buffer's alignment
  EmptyLifetime,  ///< endStep <= firstStep
  OutOfCapacity,  ///< offset + size exceeds the capacity (or overflows)
  Overlap,        ///< two buffers live at the same step share a byte; `first` < `second`
};

/// "none", "missing-offset", "bad-alignment", "misaligned", "empty-lifetime", "out-of-capacity", "overlap".
const char* planFailureName(PlanFailure failure);

inline constexpr size_t kNoBufferIndex = std::numeric_limits<size_t>::max();

/// The verdict of checkOffsets.
struct PlanCheck {
  PlanFailure failure = PlanFailure::None;
  size_t first = kNoBufferIndex;   ///< index of the offending buffer (the lower one for an overlap)
  size_t second = kNoBufferIndex;  ///< the other buffer of an overlap
  std::string message;             ///< one sentence naming buffers by index, bytes and steps; empty when ok

  bool ok() const { return failure == PlanFailure::None; }
};

/// Checks `offsets` (one per buffer, bytes) for `buffers` within [0, capacityBytes): every offset present and
/// aligned, every lifetime non-empty, every buffer [offset, offset + sizeBytes) inside the capacity, and no two
/// buffers with overlapping half-open lifetimes sharing a byte. Zero-size buffers never overlap anything.
PlanCheck checkOffsets(const std::vector<Buffer>& buffers, const std::vector<size_t>& offsets,
                       size_t capacityBytes = std::numeric_limits<size_t>::max());

/// As checkOffsets with `nameOf` naming buffers (tensor names; "tensor #id" when not given) in the message.
PlanCheck checkOffsets(const std::vector<Buffer>& buffers, const std::vector<size_t>& offsets, size_t capacityBytes,
                       const std::function<std::string(size_t index)>& nameOf);

/// OK when checkOffsets passes with the capacity plan.workspaceBytes. Otherwise the first violation, naming the
/// buffer(s) with `nameOf` (tensor names; "tensor #id" when not given), their byte ranges and step ranges.
Status validatePlan(const MemoryPlan& plan, const std::function<std::string(TensorId)>& nameOf = {});

}  // namespace stowage
