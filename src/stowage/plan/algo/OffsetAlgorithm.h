// Offset assignment, the last step of memory planning before validation: given buffers with sizes,
// alignments and half-open lifetimes, choose a byte offset for each so that buffers live at the same time
// never share a byte. One entry point; the algorithm (one file each in this folder) is chosen by name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "stowage/plan/MemoryPlan.h"
#include "stowage/support/Diagnostic.h"

namespace stowage {

/// Limits and knobs shared by every offset algorithm.
struct OffsetOptions {
  size_t capacityBytes = std::numeric_limits<size_t>::max();  ///< max offset+size; max() = unlimited (minimise the peak)
  double timeLimitSeconds = 10.0;                             ///< wall-clock budget for exact / hill-climb / auto
  uint64_t seed = 1;                                          ///< hill-climb's deterministic seed
};

/// Outcome of one offset assignment.
/// Feasible: a plan within capacity, optimality unknown. Optimal: peak proved minimal (or equal to the lower
/// bound). Infeasible: proved that no plan fits the capacity. TimedOut: no plan within capacity was found (in
/// the time limit, or at all by a heuristic that cannot prove infeasibility).
enum class OffsetStatus { Feasible, Optimal, Infeasible, TimedOut };

/// "feasible", "optimal", "infeasible", "timed-out".
std::string_view offsetStatusName(OffsetStatus status);

struct OffsetResult {
  std::vector<size_t> offsets;   ///< one per input buffer, same order; empty when status is Infeasible or TimedOut with nothing found
  size_t peakBytes = 0;          ///< max over buffers of offset + size (0 when offsets is empty)
  size_t lowerBoundBytes = 0;    ///< max over time of the bytes live at once: no plan can have a smaller peak
  OffsetStatus status = OffsetStatus::TimedOut;
  std::string algorithm;         ///< the algorithm that produced the offsets (for auto: which one won, e.g. "auto(exact)")
  double seconds = 0;            ///< wall-clock time spent, in seconds
};

/// Names accepted by placeOffsets, in a stable order ("auto" first).
const std::vector<std::string>& offsetAlgorithmNames();

/// Runs the named algorithm on `buffers` (each has sizeBytes, alignment, half-open [firstStep, endStep)).
/// Unknown name -> error listing the names. Errors also for a non-power-of-two alignment or an empty lifetime
/// (endStep <= firstStep). Zero-size buffers get offset 0. Every returned plan has passed checkOffsets.
/// Deterministic: the same input gives the same offsets (hill-climb and exact stop early only on their time
/// limit, which is the one source of run-to-run variation).
Result<OffsetResult> placeOffsets(std::string_view algorithm, const std::vector<Buffer>& buffers,
                                  const OffsetOptions& options);

}  // namespace stowage
