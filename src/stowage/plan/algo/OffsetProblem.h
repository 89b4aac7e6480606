// The planner's working form of an offset-assignment instance, shared by the algorithms in this folder:
// lifetimes compressed to "sections" (the time intervals between consecutive lifetime boundaries), the
// live-bytes lower bound, a deadline, and result bookkeeping. Built once by placeOffsets.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
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
  uint32_t sections = 0;          ///< number of sections
  size_t lowerBoundBytes = 0;     ///< max over sections of the bytes live there

  size_t count() const { return size.size(); }
};

/// Builds the sections; `buffers` must have power-of-two alignments and non-empty lifetimes (checked by the caller).
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

/// max over buffers of offsets[i] + size[i]; 0 for no buffers.
size_t peakOf(const OffsetProblem& p, const std::vector<size_t>& offsets);

/// Fills status, peakBytes and lowerBoundBytes of `r` from its offsets: Optimal when the peak equals the lower
/// bound, Feasible when within capacity, otherwise TimedOut with the offsets dropped. Infeasible when the lower
/// bound (or one buffer) exceeds the capacity.
void classifyResult(const OffsetProblem& p, const OffsetOptions& options, OffsetResult& r);

/// True when no plan can fit `capacity`: the lower bound or a single buffer exceeds it.
bool triviallyInfeasible(const OffsetProblem& p, size_t capacity);

}  // namespace stowage
