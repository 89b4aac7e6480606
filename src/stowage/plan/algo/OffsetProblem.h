// The planner's working form of an offset-assignment instance, shared by the algorithms in this folder:
// lifetimes compressed to "sections" (the time intervals between consecutive lifetime boundaries), the
// live-bytes lower bound, a deadline, and result bookkeeping. Built once by placeOffsets.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "stowage/plan/MemoryPlan.h"
#include "stowage/plan/algo/OffsetAlgorithm.h"

namespace stowage {

/// An instance with lifetimes in section indices. Buffer i occupies sections [first[i], end[i]) (half-open);
/// zero-size buffers (and ones with an empty lifetime) are in no section and always get offset 0.
struct OffsetProblem {
  std::vector<size_t> size;       ///< bytes, per input buffer
  std::vector<size_t> alignment;  ///< bytes, a power of two, per input buffer
  std::vector<uint32_t> first;    ///< first section of the lifetime
  std::vector<uint32_t> end;      ///< one past the last section
  std::vector<int> firstStep;     ///< the original lifetime start, for tie-breaking like the old planner
  std::vector<int> endStep;       ///< the original lifetime end (exclusive), for lifetime widths in steps
  std::vector<uint32_t> active;   ///< indices of the buffers with size > 0, ascending
  /// Allowed overlaps (Buffer::overlapsWith): per buffer, the buffer whose bytes it may overlap from below
  /// (-1: none) with its shift, and the reverse link (the overlapping output of a layer reading this one, -1: none).
  std::vector<int32_t> overlapsInput, overlappedBy;
  std::vector<int64_t> overlapBelow, overlapAbove;
  bool hasOverlaps = false;
  uint32_t sections = 0;          ///< number of sections
  /// Max over sections of the bytes live there, an allowed overlap counting its pair's smallest footprint: no
  /// plan can do better.
  size_t lowerBoundBytes = 0;
  /// The same with every buffer apart (allowed overlaps counted in full): the bound of the exact search, which
  /// places buffers apart. Equal to lowerBoundBytes without overlaps.
  size_t disjointBoundBytes = 0;

  size_t count() const { return size.size(); }
};

/// Builds the sections; `buffers` must have power-of-two alignments and non-empty lifetimes (checked by the caller).
/// An overlap link to an index out of range or to itself is ignored (the buffers are then planned apart).
OffsetProblem makeOffsetProblem(const std::vector<Buffer>& buffers);

/// A wall-clock budget measured from construction.
class Deadline {
 public:
  explicit Deadline(double seconds);
  bool expired() const;
  double elapsed() const;  ///< seconds since construction
  double remaining() const;

 private:
  std::chrono::steady_clock::time_point start_;
  double seconds_;
};

/// The range [start, end) that placed buffer `j` (at `offsetJ`) forbids to the bytes of buffer `i` when both
/// live at once, as first-fit sees it: `i` fits below when its offset + size <= start, else it must start at
/// or above end. Disjointness gives [offsetJ, offsetJ + size j); an allowed overlap between the two narrows the
/// forbidden offsets (start - size i, end), and start may then exceed end.
std::pair<int64_t, int64_t> forbiddenRange(const OffsetProblem& p, uint32_t i, uint32_t j, size_t offsetJ);

/// max over buffers of offsets[i] + size[i]; 0 for no buffers.
size_t peakOf(const OffsetProblem& p, const std::vector<size_t>& offsets);

/// Fills status, peakBytes and lowerBoundBytes of `r` from its offsets: Optimal when the peak equals the lower
/// bound, Feasible when within capacity, otherwise TimedOut with the offsets dropped. Infeasible when the lower
/// bound (or one buffer) exceeds the capacity.
void classifyResult(const OffsetProblem& p, const OffsetOptions& options, OffsetResult& r);

/// True when no plan can fit `capacity`: the lower bound or a single buffer exceeds it.
bool triviallyInfeasible(const OffsetProblem& p, size_t capacity);

}  // namespace stowage
