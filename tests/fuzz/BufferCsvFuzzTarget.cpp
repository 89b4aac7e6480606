// Fuzz target of the planner's buffer CSV (plan/io/BufferCsv.h, what `stowage plan --input` reads): any text
// through parseBufferCsv; a table of at most kFuzzMaxPlannedBuffers buffers is then planned by the two greedy
// offset algorithms, whose offsets must pass checkOffsets, and the written CSV must read back as the same table.
#include <string_view>

#include "FuzzTarget.h"
#include "stowage/plan/Validate.h"
#include "stowage/plan/algo/OffsetAlgorithm.h"
#include "stowage/plan/io/BufferCsv.h"

namespace {
/// Larger tables only go through the parser: the greedy planners are quadratic.
constexpr size_t kFuzzMaxPlannedBuffers = 64;
}  // namespace

STOWAGE_FUZZ_TARGET(buffer_csv) {
  using namespace stowage;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Result<BufferTable> table = parseBufferCsv(text, "fuzz.csv");
  if (!table.ok()) {
    fuzz::abortIfDiagnosticAdmitsBug(table.error(), text);
    return 0;
  }
  if (table->buffers.size() > kFuzzMaxPlannedBuffers) return 0;
  for (const char* algorithm : {"greedy-size", "greedy-conflicts"}) {
    OffsetOptions options;
    options.timeLimitSeconds = 1;
    Result<OffsetResult> placed = placeOffsets(algorithm, table->buffers, options);
    if (!placed.ok()) {
      fuzz::abortIfDiagnosticAdmitsBug(placed.error(), text);
      continue;
    }
    if (placed->offsets.empty()) continue;
    PlanCheck check = checkOffsets(table->buffers, placed->offsets);
    if (!check.ok()) fuzz::abortOnBug(std::string(algorithm) + " made an invalid plan: " + check.message);
    Result<BufferTable> reread = parseBufferCsv(formatBufferCsv(*table, placed->offsets), "fuzz-written.csv");
    if (!reread.ok()) fuzz::abortOnBug("a written buffer CSV does not read back:\n" + reread.error().render());
    if (reread->ids != table->ids || reread->buffers.size() != table->buffers.size())
      fuzz::abortOnBug("a buffer CSV changes through write and read");
    for (size_t i = 0; i < table->buffers.size(); ++i) {
      const Buffer &a = table->buffers[i], &b = reread->buffers[i];
      if (a.sizeBytes != b.sizeBytes || a.alignment != b.alignment || a.firstStep != b.firstStep || a.endStep != b.endStep ||
          reread->givenOffsets[i] != placed->offsets[i])
        fuzz::abortOnBug("buffer '" + table->ids[i] + "' changes through write and read");
    }
  }
  return 0;
}
