// report.json: the machine-readable account of a compile: the model, every pool with its use against its
// lower bound, every buffer with its pool, offset, lifetime and why it landed there, every layer with the
// bytes live in each pool, the planner and its remarks. Fields documented in docs/report.md.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "stowage/ir/Graph.h"
#include "stowage/lower/LayerKernels.h"
#include "stowage/plan/ProgramPlan.h"

namespace stowage {

/// Everything the reports need besides the graph and the plan.
struct ReportContext {
  std::string modelPath;  ///< the model file compiled
  std::string name;       ///< the C symbol prefix (--name)
  /// Per step: the kernel each layer calls and its variant (CompileResult::layerKernels); empty: the layers carry no
  /// `kernel` and `kernel_variant` fields.
  std::vector<LayerKernel> layerKernels;
  /// MACs the fused bands' halos recompute (CompileResult::fusedBandExtraMacs): report.json "fused_bands".
  int64_t fusedBandExtraMacs = 0;
};

/// The report as JSON (schema version 1). Deterministic: same graph and plan, same text.
nlohmann::ordered_json buildReportJson(const Graph& g, const ProgramPlan& plan, const ReportContext& context);

/// buildReportJson as text (2-space indent, trailing newline). Names that are not valid UTF-8 (models may
/// carry any bytes) have the bad bytes replaced by U+FFFD instead of failing.
std::string reportJsonText(const Graph& g, const ProgramPlan& plan, const ReportContext& context);

/// Bytes of `plan`'s buffers in pool `pool` live at `step` (buffers with firstStep <= step < endStep).
size_t liveBytesAt(const ProgramPlan& plan, int pool, int step);

/// The plan of pool `pool` in the MiniMalloc benchmark CSV format: "id,lower,upper,size,offset" with one row per
/// buffer (id = tensor name with ',' '"' and line breaks replaced by '_'; [lower, upper) the half-open lifetime in
/// steps; offset from the pool's start), so other tools can check or re-solve it.
std::string poolPlanCsv(const Graph& g, const ProgramPlan& plan, int pool);

}  // namespace stowage
