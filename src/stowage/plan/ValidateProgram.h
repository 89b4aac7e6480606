// Independent check of a program's memory plan over several pools, run in every compile and by the planner
// tests: it trusts nothing the planner computed except each buffer's pool, bank and offset.
#pragma once

#include <functional>
#include <string>

#include "stowage/ir/Graph.h"
#include "stowage/plan/ProgramPlan.h"
#include "stowage/plan/Validate.h"
#include "stowage/support/Diagnostic.h"

namespace stowage {

/// What is wrong with a program plan: the first violation found (buffers in plan order, then overlaps pool by
/// pool).
enum class ProgramPlanFailure {
  None,              ///< the plan is valid
  NoPool,            ///< the buffer's pool index is not a pool of the board
  NotACandidate,     ///< the buffer is in a pool that is not one of its candidates
  NotInPinnedPool,   ///< the buffer is pinned to another pool
  NoSuchBank,        ///< the bank index is not a bank of the pool
  NotInPinnedBank,   ///< the buffer is pinned to another bank of its pool (a tile buffer's ping or pong half)
  ScratchLifetime,   ///< a scratch (tile) buffer with no step to live in (from its layer's, or an earlier prefetching layer's)
  PingPongSameBank,  ///< the two halves of a double buffer in one bank of a banked pool (`second` is the other)
  Misaligned,        ///< the offset is not a multiple of the pool's alignment
  OutOfBank,         ///< the bytes leave the buffer's bank
  OutOfPool,         ///< the bytes end past the pool's size
  BadAlias,          ///< declared an alias of something that is not a planned activation buffer
  AliasOutsideRoot,  ///< an alias not inside its root's bytes, pool, bank and steps (`second` is the root)
  EmptyLifetime,     ///< endStep <= firstStep
  Overlap,           ///< two buffers of one pool, live at the same step, share a byte (`first` < `second`)
};

/// "none", "no-pool", "not-a-candidate", "not-in-pinned-pool", "no-such-bank", "misaligned", "out-of-bank",
/// "out-of-pool", "bad-alias", "alias-outside-root", "empty-lifetime", "overlap".
const char* programPlanFailureName(ProgramPlanFailure failure);

/// The verdict of checkProgramPlan.
struct ProgramPlanCheck {
  ProgramPlanFailure failure = ProgramPlanFailure::None;
  size_t first = kNoBufferIndex;   ///< index in plan.buffers of the offending buffer (the lower one for an overlap)
  size_t second = kNoBufferIndex;  ///< the other buffer of an overlap, or the root of a bad alias
  int pool = -1;                   ///< the pool where it happened (-1 for NoPool)
  Diagnostic diagnostic;           ///< location "memory plan: pool 'NAME'" and one sentence naming the buffer(s)

  bool ok() const { return failure == ProgramPlanFailure::None; }
};

/// Checks that every buffer sits in one of its candidate pools (its pinned pool when pinned), in a bank that
/// exists, aligned to its pool's alignment, inside its bank and pool capacity, that declared aliases lie
/// inside their root (a strided alias: every run), that two strided aliases of one root live at the same step
/// share no byte, and that no two buffers of the same pool that are live at the same step share a byte.
/// An overlapping layer's output (PlacedBuffer::overlapsInput) may share bytes with its input only where the
/// layer's kernel, walked band by band over the rows as placed, never overwrites an input byte before its last
/// read; that needs `graph` (without it such a plan is refused).
/// `nameOf` gives tensor names for the message ("tensor #id" when not given).
ProgramPlanCheck checkProgramPlan(const ProgramPlan& plan, const std::function<std::string(TensorId)>& nameOf = {},
                                  const Graph* graph = nullptr);

/// checkProgramPlan as a Status: OK, or its diagnostic.
Status validateProgramPlan(const ProgramPlan& plan, const std::function<std::string(TensorId)>& nameOf = {},
                           const Graph* graph = nullptr);

}  // namespace stowage
