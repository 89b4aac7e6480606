// The registry of offset algorithms and the checks around every run (see OffsetAlgorithm.h).
#include "stowage/plan/algo/OffsetAlgorithm.h"

#include <fmt/format.h>

#include <functional>

#include "stowage/plan/Validate.h"
#include "stowage/plan/algo/AutoOffsets.h"
#include "stowage/plan/algo/ExactSearch.h"
#include "stowage/plan/algo/GreedyConflicts.h"
#include "stowage/plan/algo/GreedySize.h"
#include "stowage/plan/algo/HillClimb.h"
#include "stowage/plan/algo/OffsetProblem.h"

namespace stowage {

namespace {

using AlgorithmFn = std::function<OffsetResult(const OffsetProblem&, const OffsetOptions&)>;

struct Entry {
  std::string name;
  AlgorithmFn run;
};

const std::vector<Entry>& registry() {
  static const std::vector<Entry> entries = {
      {"auto", placeAuto},
      {"greedy-size", placeGreedySize},
      {"greedy-conflicts", placeGreedyConflicts},
      {"hill-climb", placeHillClimb},
      {"exact", [](const OffsetProblem& p, const OffsetOptions& o) { return placeExact(p, o); }},
  };
  return entries;
}

}  // namespace

std::string_view offsetStatusName(OffsetStatus status) {
  switch (status) {
    case OffsetStatus::Feasible: return "feasible";
    case OffsetStatus::Optimal: return "optimal";
    case OffsetStatus::Infeasible: return "infeasible";
    case OffsetStatus::TimedOut: return "timed-out";
  }
  return "unknown";
}

const std::vector<std::string>& offsetAlgorithmNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const Entry& e : registry()) out.push_back(e.name);
    return out;
  }();
  return names;
}

Result<OffsetResult> placeOffsets(std::string_view algorithm, const std::vector<Buffer>& buffers,
                                  const OffsetOptions& options) {
  const Entry* entry = nullptr;
  for (const Entry& e : registry())
    if (e.name == algorithm) entry = &e;
  if (!entry)
    return makeError("planner", fmt::format("unknown offset algorithm '{}'", algorithm),
                     fmt::format("use one of: {}", fmt::join(offsetAlgorithmNames(), ", ")));
  if (!(options.timeLimitSeconds >= 0))
    return makeError("planner", fmt::format("time limit {} s is negative", options.timeLimitSeconds));
  size_t total = 0;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const Buffer& b = buffers[i];
    if (b.alignment == 0 || (b.alignment & (b.alignment - 1)) != 0)
      return makeError("planner", fmt::format("buffer #{} has alignment {}, not a power of two", i, b.alignment));
    if (b.endStep <= b.firstStep)
      return makeError("planner", fmt::format("buffer #{} has an empty lifetime [{}, {})", i, b.firstStep, b.endStep));
    // Every offset any algorithm picks is at most the sum of all sizes plus alignment padding.
    const size_t need = b.sizeBytes + b.alignment;
    if (need < b.sizeBytes || total + need < total)
      return makeError("planner", fmt::format("buffer sizes add up to more than {} bytes", SIZE_MAX));
    total += need;
  }
  Deadline clock(0);
  const OffsetProblem problem = makeOffsetProblem(buffers);
  OffsetResult r = entry->run(problem, options);
  classifyResult(problem, options, r);
  r.seconds = clock.elapsed();
  if (!r.offsets.empty()) {
    PlanCheck check = checkOffsets(buffers, r.offsets, options.capacityBytes);
    if (!check.ok())
      return makeError("planner", fmt::format("internal error: '{}' produced an invalid plan: {}", r.algorithm,
                                              check.message));
  }
  return r;
}

}  // namespace stowage
