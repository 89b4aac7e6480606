// After placement: an overlapping layer's output that shares its input's bytes but would fit apart from everything
// live with it, below its pool's peak, is moved there, so that the layer runs at full speed for the same RAM.
#pragma once

#include <cstddef>
#include <functional>
#include <utility>

#include "stowage/plan/ProgramPlan.h"
#include "stowage/target/Board.h"

namespace stowage {

/// Bytes a placed buffer reserves around itself: (before its offset, after its end); guard mode's canaries.
using ReservedAround = std::function<std::pair<size_t, size_t>(const PlacedBuffer&)>;

/// An output written over its own input (PlacedBuffer::overlapsInput) makes its kernel run its rows in bands in a
/// fixed order, which costs speed (the banded kernels set up their filters once per band). Where the planner placed
/// such an output over its input although a gap apart from every buffer live during its lifetime exists below the
/// slot's highest used byte, the output moves to the lowest such gap: the pool's used bytes do not grow and the
/// layer needs no band (orientRowBands then gives it row_band 0). Group roots only (run before alias members take
/// their root's placement, so members follow); outputs in step order. Returns how many outputs moved.
int separateNeedlessOverlaps(ProgramPlan& plan, const Board& board, const ReservedAround& reservedAround);

}  // namespace stowage
