// Reader and writer of the MiniMalloc-style buffer CSV (see BufferCsv.h).
#include "stowage/plan/io/BufferCsv.h"

#include <fmt/format.h>

#include <charconv>
#include <climits>
#include <fstream>
#include <iterator>
#include <sstream>
#include <unordered_map>

namespace stowage {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> splitFields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    size_t comma = line.find(',', start);
    out.push_back(trim(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

/// A whole-field signed integer, or nullopt.
std::optional<long long> parseInteger(std::string_view s) {
  long long v = 0;
  if (s.empty()) return std::nullopt;
  const char* begin = s.data();
  if (*begin == '+') ++begin;
  auto [ptr, ec] = std::from_chars(begin, s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

Result<BufferTable> parseBufferCsv(std::string_view text, const std::string& fileName) {
  BufferTable table;
  enum Column { kId, kLower, kUpper, kSize, kAlignment, kOffset, kHint, kColumns };
  static const char* const kNames[kColumns] = {"id", "lower", "upper", "size", "alignment", "offset", "hint"};
  int where[kColumns];
  std::fill(std::begin(where), std::end(where), -1);
  size_t fieldCount = 0;
  bool haveHeader = false;
  std::unordered_map<std::string, size_t> seen;
  size_t lineNo = 0;
  auto error = [&](std::string message, std::string hint = {}) -> Diagnostic {
    return makeError(fmt::format("{}:{}", fileName, lineNo), std::move(message), std::move(hint));
  };
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
    ++lineNo;
    if (trim(line).empty()) continue;
    std::vector<std::string_view> fields = splitFields(line);
    if (!haveHeader) {
      haveHeader = true;
      fieldCount = fields.size();
      for (size_t f = 0; f < fields.size(); ++f) {
        int column = -1;
        for (int c = 0; c < kColumns; ++c)
          if (fields[f] == kNames[c]) column = c;
        if (column < 0)
          return error(fmt::format("unknown column '{}'", fields[f]),
                       "columns are id, lower, upper, size and optionally alignment, offset, hint");
        if (where[column] >= 0) return error(fmt::format("column '{}' appears twice", fields[f]));
        where[column] = static_cast<int>(f);
      }
      for (int c : {kId, kLower, kUpper, kSize})
        if (where[c] < 0)
          return error(fmt::format("missing column '{}' in the header", kNames[c]),
                       "the header must name id, lower, upper and size");
      table.hasOffsetColumn = where[kOffset] >= 0;
      continue;
    }
    if (fields.size() != fieldCount)
      return error(fmt::format("has {} fields, the header has {}", fields.size(), fieldCount));
    auto integer = [&](int column) -> Result<long long> {
      std::string_view s = fields[static_cast<size_t>(where[column])];
      std::optional<long long> v = parseInteger(s);
      if (!v) return error(fmt::format("{} '{}' is not an integer", kNames[column], s));
      return *v;
    };
    std::string id(fields[static_cast<size_t>(where[kId])]);
    if (id.empty()) return error("empty id");
    STOWAGE_ASSIGN_OR_RETURN(long long lower, integer(kLower));
    STOWAGE_ASSIGN_OR_RETURN(long long upper, integer(kUpper));
    STOWAGE_ASSIGN_OR_RETURN(long long size, integer(kSize));
    if (size < 0) return error(fmt::format("buffer '{}' has negative size {}", id, size));
    if (lower < INT_MIN || lower > INT_MAX || upper < INT_MIN || upper > INT_MAX)
      return error(fmt::format("buffer '{}' has a lifetime [{}, {}) outside the supported range [{}, {}]", id, lower,
                               upper, INT_MIN, INT_MAX));
    if (upper <= lower)
      return error(fmt::format("buffer '{}' has upper {} <= lower {}", id, upper, lower),
                   "lifetimes are half-open [lower, upper): upper must be greater than lower");
    Buffer b;
    b.tensor = static_cast<TensorId>(table.buffers.size());
    b.sizeBytes = static_cast<size_t>(size);
    b.alignment = 1;
    b.firstStep = static_cast<int>(lower);
    b.endStep = static_cast<int>(upper);
    if (where[kAlignment] >= 0) {
      STOWAGE_ASSIGN_OR_RETURN(long long alignment, integer(kAlignment));
      if (alignment <= 0 || (alignment & (alignment - 1)) != 0)
        return error(fmt::format("buffer '{}' has alignment {}, not a positive power of two", id, alignment));
      b.alignment = static_cast<size_t>(alignment);
    }
    std::optional<size_t> offset;
    if (where[kOffset] >= 0) {
      STOWAGE_ASSIGN_OR_RETURN(long long o, integer(kOffset));
      if (o < -1) return error(fmt::format("buffer '{}' has negative offset {}", id, o));
      if (o >= 0) offset = static_cast<size_t>(o);
    }
    if (where[kHint] >= 0) STOWAGE_TRY(integer(kHint));
    if (auto [it, fresh] = seen.emplace(id, lineNo); !fresh)
      return error(fmt::format("duplicate id '{}' (first on line {})", id, it->second));
    table.ids.push_back(std::move(id));
    table.buffers.push_back(b);
    if (table.hasOffsetColumn) table.givenOffsets.push_back(offset);
  }
  if (!haveHeader) {
    lineNo = 1;
    return error("empty file: expected a header 'id,lower,upper,size'");
  }
  return table;
}

Result<BufferTable> readBufferCsv(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return makeError(path.string(), "cannot open the buffer CSV file");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return makeError(path.string(), "cannot read the buffer CSV file");
  return parseBufferCsv(text, path.string());
}

std::string formatBufferCsv(const BufferTable& table, const std::vector<size_t>& offsets) {
  bool withAlignment = false;
  for (const Buffer& b : table.buffers) withAlignment = withAlignment || b.alignment != 1;
  std::string out = withAlignment ? "id,lower,upper,size,alignment,offset\n" : "id,lower,upper,size,offset\n";
  for (size_t i = 0; i < table.buffers.size(); ++i) {
    const Buffer& b = table.buffers[i];
    out += fmt::format("{},{},{},{}", table.ids[i], b.firstStep, b.endStep, b.sizeBytes);
    if (withAlignment) out += fmt::format(",{}", b.alignment);
    out += fmt::format(",{}\n", i < offsets.size() ? offsets[i] : 0);
  }
  return out;
}

Status writeBufferCsv(const std::filesystem::path& path, const BufferTable& table, const std::vector<size_t>& offsets) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return makeError(path.string(), "cannot open the solution file for writing");
  out << formatBufferCsv(table, offsets);
  out.close();
  if (!out) return makeError(path.string(), "cannot write the solution file");
  return Status::success();
}

}  // namespace stowage
