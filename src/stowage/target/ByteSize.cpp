// Parsing and printing of byte counts for the memory description (see ByteSize.h).
#include "stowage/target/ByteSize.h"

#include <cctype>
#include <cstdio>
#include <limits>

#include "stowage/support/Text.h"

namespace stowage {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

Diagnostic badNumber(std::string_view text, std::string why) {
  return makeError({}, "'" + std::string(text) + "' is not a valid " + why,
                   "write a byte count such as 4096, 0x1000, 64KiB, 1MiB or 2GiB");
}

/// Parses the leading integer of `s` (decimal or 0x hex); `rest` receives what follows it.
Result<uint64_t> leadingInteger(std::string_view text, std::string_view s, std::string_view& rest) {
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  uint64_t value = 0;
  size_t i = 0;
  bool any = false, lastUnderscore = false;
  for (; i < s.size(); ++i) {
    char c = s[i];
    int digit = -1;
    if (c >= '0' && c <= '9') digit = c - '0';
    else if (base == 16 && c >= 'a' && c <= 'f') digit = c - 'a' + 10;
    else if (base == 16 && c >= 'A' && c <= 'F') digit = c - 'A' + 10;
    else if (c == '_' && any && !lastUnderscore) {
      lastUnderscore = true;
      continue;
    } else break;
    if (value > (std::numeric_limits<uint64_t>::max() - static_cast<uint64_t>(digit)) / static_cast<uint64_t>(base))
      return badNumber(text, "number: it does not fit in 64 bits");
    value = value * static_cast<uint64_t>(base) + static_cast<uint64_t>(digit);
    any = true;
    lastUnderscore = false;
  }
  if (!any || lastUnderscore) return badNumber(text, "number");
  rest = s.substr(i);
  return value;
}

}  // namespace

Result<uint64_t> parseUnsigned(std::string_view text) {
  std::string_view rest;
  std::string_view s = trimSpaces(text);
  if (!s.empty() && s[0] == '-') return badNumber(text, "number: it is negative");
  STOWAGE_ASSIGN_OR_RETURN(uint64_t value, leadingInteger(text, s, rest));
  if (!rest.empty()) return badNumber(text, "number");
  return value;
}

Result<size_t> parseByteSize(std::string_view text) {
  std::string_view s = trimSpaces(text);
  if (s.empty()) return badNumber(text, "byte count: it is empty");
  if (s[0] == '-') return badNumber(text, "byte count: it is negative");
  std::string_view rest;
  bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  STOWAGE_ASSIGN_OR_RETURN(uint64_t value, leadingInteger(text, s, rest));
  std::string unit = lower(trimSpaces(rest));
  uint64_t scale = 1;
  if (unit.empty() || unit == "b") scale = 1;
  else if (unit == "kib") scale = uint64_t{1} << 10;
  else if (unit == "mib") scale = uint64_t{1} << 20;
  else if (unit == "gib") scale = uint64_t{1} << 30;
  else if (unit == "k" || unit == "kb" || unit == "m" || unit == "mb" || unit == "g" || unit == "gb") {
    return makeError({}, "'" + std::string(text) + "': unit '" + std::string(trimSpaces(rest)) + "' is ambiguous",
                     "use binary units KiB, MiB, GiB (1 KiB = 1024 bytes) or a plain byte count");
  } else {
    return badNumber(text, "byte count: unknown unit '" + std::string(trimSpaces(rest)) + "'");
  }
  if (hex && scale != 1) return badNumber(text, "byte count: a hexadecimal count takes no unit");
  if (value > std::numeric_limits<uint64_t>::max() / scale ||
      value * scale > std::numeric_limits<size_t>::max())
    return badNumber(text, "byte count: it does not fit in 64 bits");
  return static_cast<size_t>(value * scale);
}

std::string formatByteSize(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"GiB", "MiB", "KiB"};
  static constexpr int kShifts[] = {30, 20, 10};
  if (bytes == 0) return "0";
  for (int i = 0; i < 3; ++i) {
    uint64_t unit = uint64_t{1} << kShifts[i];
    if (bytes % unit == 0) return std::to_string(bytes / unit) + kUnits[i];
  }
  return std::to_string(bytes);
}

std::string formatAddress(uint64_t address, int minDigits) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%0*llX", minDigits, static_cast<unsigned long long>(address));
  return buf;
}

}  // namespace stowage
