// Byte counts as written in board files and flags ("64KiB", "1MiB", "4096", "0x1000") and back. Part of the
// memory description (target/).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "stowage/support/Diagnostic.h"

namespace stowage {

/// Parses a byte count: a decimal or `0x` hexadecimal integer (`_` allowed between digits), optionally
/// followed (spaces allowed) by a binary unit `B`, `KiB`, `MiB` or `GiB` (case-insensitive; 1 KiB = 1024
/// bytes). Decimal SI units (`KB`, `MB`, `K`, `M`, ...) are rejected with a hint, because boards and data
/// sheets disagree on what they mean. Errors quote the text; the caller adds the location.
Result<size_t> parseByteSize(std::string_view text);

/// Parses an unsigned integer (decimal or `0x` hex, `_` between digits allowed), e.g. an address.
Result<uint64_t> parseUnsigned(std::string_view text);

/// Shortest exact rendering: "64KiB", "1MiB", "1000" (bytes) or "0" — parseByteSize reads it back.
std::string formatByteSize(uint64_t bytes);

/// An address in upper-case hex with at least `minDigits` digits: "0x0000FFFF" as a linker script or memory map
/// prints it (the default), "0xFFFF" with 1 (diagnostics: hexAddress).
std::string formatAddress(uint64_t address, int minDigits = 8);

}  // namespace stowage
