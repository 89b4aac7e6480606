// The memory planner's entry point for a compiled program: buffers and constraints (analysis/), alias groups
// (views and in-place adds share one buffer: analysis/Aliasing.h), pool assignment with spills from the
// cheapest pool to the next, offsets per pool (and bank) by the chosen algorithm (algo/), then the independent
// validator. Infeasible boards get an error naming the pool, the step of peak demand, the buffers live there
// and the pool size that would fit.
#pragma once

#include <string>
#include <vector>

#include "stowage/ir/Graph.h"
#include "stowage/plan/ProgramPlan.h"
#include "stowage/support/Diagnostic.h"
#include "stowage/target/Board.h"

namespace stowage {

/// Canary bytes on each side of every activation buffer in guard mode.
inline constexpr size_t kGuardCanaryBytes = 16;

struct PlanOptions {
  std::string algorithm = "auto";   ///< offset algorithm by name (see offsetAlgorithmNames())
  double timeLimitSeconds = 10.0;   ///< for the whole program (all pools), for exact / hill-climb / auto
  /// Guard mode (`--guard`): bytes of canary before and after every activation buffer (0 = off). The planner
  /// reserves them (the bytes before are rounded up to the pool alignment so the buffer stays aligned).
  size_t guardBytes = 0;
  /// Views and in-place adds share their input's buffer (analysis/Aliasing.h); off plans every tensor apart.
  bool aliasing = true;
  /// With aliasing: the inputs of a Concat whose slices of the output are contiguous are written straight into
  /// them (no copy, no buffer of their own); off keeps views and in-place adds only.
  bool concatSlices = true;
  /// A CPU layer whose kernel runs its output rows in order may write its output over the input rows it no longer
  /// reads (analysis/RowOverlap.h; `--no-overlap` turns it off).
  bool overlapLayers = true;
  /// `--io-in-pools`: graph inputs and outputs are planned into pools like other activations (see
  /// analyzeBuffers) instead of living in memory the application passes.
  bool ioInPools = false;
  /// From tile/: the target of every node step (empty = analysis/NodeTargets.h decides), the remarks of that
  /// partition, the tile buffers of offloaded layers, and pools reserved for them (no activation goes there
  /// when it has another candidate).
  std::vector<int> nodeTargets;
  std::vector<std::string> partitionRemarks;
  std::vector<ScratchRequest> scratch;
  std::vector<int> scratchPools;
  /// From tile/: activations pinned to an accelerator's local pool (its layers use them in place).
  std::vector<ResidentTensor> resident;
};

/// Plans every activation and constant of `g` (verified, scheduled in node order) over `board` (validated).
/// The result has passed validateProgramPlan.
Result<ProgramPlan> planProgram(const Graph& g, const Board& board, const PlanOptions& options);

/// Max over steps of the bytes live at that step of `buffers` selected by `include`, and the first step
/// reaching it (-1 when nothing is live).
std::pair<size_t, int> peakLiveBytes(const std::vector<PlacedBuffer>& buffers, const std::vector<int>& include);

}  // namespace stowage
