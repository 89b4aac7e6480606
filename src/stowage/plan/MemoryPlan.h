// Static memory plan data: the buffers the planner places (one per workspace tensor, with its lifetime over
// node steps) and the offsets it chose. Plain data shared by liveness, the placement algorithms, the
// validator and the C emitter; a later multi-pool planner adds pool assignment beside the offsets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "stowage/ir/Tensor.h"

namespace stowage {

/// Workspace alignment of every buffer, in bytes (NET_WORKSPACE_ALIGN in generated code).
inline constexpr size_t kWorkspaceAlignment = 16;

/// One tensor that needs workspace memory while it is live.
struct Buffer {
  TensorId tensor = kNoTensor;  ///< the tensor stored in this buffer
  size_t sizeBytes = 0;         ///< bytes the tensor occupies
  size_t alignment = kWorkspaceAlignment;  ///< required offset alignment in bytes (power of two)
  int firstStep = 0;  ///< half-open lifetime [firstStep, endStep) over node steps (indices in Graph::nodes)
  int endStep = 0;
  /// The output of an overlapping layer (plan/analysis/RowOverlap.h): index in the same list of the buffer holding
  /// the layer's input, or -1. With shift = this offset - that offset, the two may share bytes when
  /// shift <= overlapBelow (this one starts low enough: the kernel runs its rows in increasing order) or
  /// shift >= overlapAbove (high enough: decreasing order); otherwise they must not share a byte while both are
  /// live. The input's lifetime must end at this one's first step + 1.
  int overlapsWith = -1;
  int64_t overlapBelow = 0;
  int64_t overlapAbove = 0;
};

/// True when buffer `y` may share bytes with `x` at offsets `oy`, `ox` by an allowed overlap (Buffer::overlapsWith).
inline bool allowedOverlap(const Buffer& y, size_t oy, size_t ox) {
  const int64_t shift = static_cast<int64_t>(oy) - static_cast<int64_t>(ox);
  return shift <= y.overlapBelow || shift >= y.overlapAbove;
}

/// Where each buffer lives. offsets[i] belongs to buffers[i].
struct MemoryPlan {
  std::vector<Buffer> buffers;
  std::vector<size_t> offsets;  ///< byte offset of each buffer from the workspace base
  size_t workspaceBytes = 0;    ///< bytes of workspace the plan uses: max over buffers of offset + size
  size_t lowerBoundBytes = 0;   ///< max over steps of the bytes live at that step (no plan can do better)
  std::string algorithm;        ///< name of the algorithm that chose the offsets, e.g. "greedy-by-size"
};

/// True when the half-open lifetimes of `a` and `b` intersect.
inline bool lifetimesOverlap(const Buffer& a, const Buffer& b) {
  return a.firstStep < b.endStep && b.firstStep < a.endStep;
}

/// `v` rounded up to a multiple of `alignment` (a power of two, or 0/1 for none).
inline size_t alignUp(size_t v, size_t alignment) {
  return alignment <= 1 ? v : (v + alignment - 1) / alignment * alignment;
}

}  // namespace stowage
