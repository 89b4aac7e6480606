// The planner's text interchange format, the CSV of the MiniMalloc benchmarks: one buffer per line with
// `id,lower,upper,size` (half-open lifetime [lower, upper), size in bytes), optional `alignment` and
// `offset` columns. Read by `stowage plan` and the planner benchmark; solutions are written with `offset`.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stowage/plan/MemoryPlan.h"
#include "stowage/support/Diagnostic.h"

namespace stowage {

/// The buffers of one CSV file, in file order.
struct BufferTable {
  std::vector<std::string> ids;   ///< the `id` column, unique
  std::vector<Buffer> buffers;    ///< tensor = row index; alignment 1 unless an `alignment` column says otherwise
  std::vector<std::optional<size_t>> givenOffsets;  ///< the `offset` column per row when present (empty otherwise)
  bool hasOffsetColumn = false;
};

/// Parses CSV text. Columns may come in any order; `id`, `lower`, `upper` and `size` are required;
/// `alignment` (a power of two), `offset` (bytes, or -1 for none) and `hint` (ignored) are optional; any
/// other column is an error. Errors name `fileName`, the 1-based line and what is wrong (missing column,
/// non-integer, negative size, upper <= lower, duplicate id). Blank lines and a trailing '\r' are ignored.
Result<BufferTable> parseBufferCsv(std::string_view text, const std::string& fileName);

/// Reads and parses a file.
Result<BufferTable> readBufferCsv(const std::filesystem::path& path);

/// The table as CSV `id,lower,upper,size[,alignment],offset` (alignment only when some buffer has one
/// other than 1), with `offsets` (one per buffer) in the last column. LF line endings.
std::string formatBufferCsv(const BufferTable& table, const std::vector<size_t>& offsets);

/// Writes formatBufferCsv to `path`; an error names the path when it cannot be written.
Status writeBufferCsv(const std::filesystem::path& path, const BufferTable& table, const std::vector<size_t>& offsets);

}  // namespace stowage
