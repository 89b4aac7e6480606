// report.html: one self-contained page (inline CSS, SVG and a few lines of script; nothing fetched) with the
// per-layer table and, for each pool, a memory map: time (steps) on x, address on y, one rectangle per buffer
// with its name, size and interval on hover, and the peak step marked.
#pragma once

#include <string>

#include "stowage/ir/Graph.h"
#include "stowage/plan/ProgramPlan.h"
#include "stowage/report/ReportJson.h"

namespace stowage {

/// The page. Every buffer of `plan` is exactly one `<rect class="buf">`; the peak step of each pool with
/// buffers is one `<line class="peak">`. Deterministic.
std::string buildReportHtml(const Graph& g, const ProgramPlan& plan, const ReportContext& context);

}  // namespace stowage
