// `stowage plan`: the offset planner on its own, driven by the MiniMalloc benchmark CSV (buffers with
// half-open lifetimes and sizes). Reads the buffers, runs the chosen algorithm, validates the plan and
// writes the same rows plus an `offset` column.
#include <fmt/format.h>

#include <cstdio>
#include <limits>
#include <memory>

#include "Commands.h"
#include "stowage/plan/Validate.h"
#include "stowage/plan/algo/OffsetAlgorithm.h"
#include "stowage/plan/io/BufferCsv.h"

namespace stowage::cli {

CommandRunner registerPlanCommand(CLI::App& app) {
  struct Flags {
    std::string input, output, planner = "auto";
    size_t capacity = std::numeric_limits<size_t>::max();
    double timeLimit = 10.0;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* sub = app.add_subcommand(
      "plan",
      "Assign offsets to buffers from a CSV (MiniMalloc format: header id,lower,upper,size with half-open lifetimes "
      "[lower, upper), optional alignment column) so that buffers live at the same time never share a byte. Prints "
      "peak, lower bound, status, algorithm and time; with --output writes the rows plus an offset column. Exit code: "
      "0 plan found (within --capacity), 1 proved infeasible, 3 no plan found within the time limit, 2 bad input.");
  sub->add_option("--input", f->input, "The buffer CSV file")->type_name("FILE")->required();
  sub->add_option("--capacity", f->capacity, "Maximum offset + size in bytes; default: none (minimise the peak)")
      ->type_name("BYTES");
  std::string names;
  for (const std::string& n : offsetAlgorithmNames()) names += (names.empty() ? "" : ", ") + n;
  sub->add_option("--planner", f->planner, "Offset algorithm: " + names)->capture_default_str();
  sub->add_option("--time-limit", f->timeLimit, "Wall-clock budget in seconds for exact, hill-climb and auto")
      ->type_name("S")
      ->capture_default_str();
  sub->add_option("--output", f->output, "Where to write the solution CSV (only when a plan is found)")
      ->type_name("FILE");

  return [f]() -> int {
    auto fail = [](const Diagnostic& d) {
      std::fputs(d.render().c_str(), stderr);
      return kExitUserError;
    };
    auto table = readBufferCsv(f->input);
    if (!table.ok()) return fail(table.error());
    if (table->hasOffsetColumn)
      return fail(makeUnsupported(f->input, "the 'offset' column (offsets fixed in advance) is not supported",
                                  "remove the column to plan every buffer"));
    if (!(f->timeLimit >= 0)) return fail(makeError("--time-limit", fmt::format("{} is negative", f->timeLimit)));
    OffsetOptions options;
    options.capacityBytes = f->capacity;
    options.timeLimitSeconds = f->timeLimit;
    auto result = placeOffsets(f->planner, table->buffers, options);
    if (!result.ok()) return fail(result.error());
    const OffsetResult& r = *result;
    const bool unlimited = f->capacity == std::numeric_limits<size_t>::max();
    std::string out = fmt::format("plan {}: {} buffers, capacity {}\n", f->input, table->buffers.size(),
                                  unlimited ? std::string("unlimited") : fmt::format("{} bytes", f->capacity));
    if (!r.offsets.empty())
      out += fmt::format("  peak: {} bytes   lower bound: {} bytes\n", r.peakBytes, r.lowerBoundBytes);
    else
      out += fmt::format("  peak: none   lower bound: {} bytes\n", r.lowerBoundBytes);
    out += fmt::format("  status: {}   algorithm: {}   time: {:.3f} s\n", offsetStatusName(r.status), r.algorithm,
                       r.seconds);
    if (r.status == OffsetStatus::Infeasible) {
      std::fputs(out.c_str(), stdout);
      std::fputs("  no plan fits the capacity (proved)\n", stdout);
      return kExitInfeasible;
    }
    if (r.offsets.empty()) {
      std::fputs(out.c_str(), stdout);
      std::fputs("  no plan within the capacity found in the time limit\n", stdout);
      return kExitTimedOut;
    }
    // Independent check before anything is written.
    PlanCheck check = checkOffsets(table->buffers, r.offsets, f->capacity,
                                   [&](size_t i) { return table->ids[i]; });
    if (!check.ok()) return fail(makeError(f->input, "internal error: invalid plan: " + check.message));
    if (!f->output.empty()) {
      if (Status s = writeBufferCsv(f->output, *table, r.offsets); !s.ok()) return fail(s.error());
      out += fmt::format("  wrote {}\n", f->output);
    }
    std::fputs(out.c_str(), stdout);
    return kExitOk;
  };
}

}  // namespace stowage::cli
