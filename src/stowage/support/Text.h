// Small text helpers shared by the parsers of flags and board values.
// Header-only; no locale: ASCII white space only.
#pragma once

#include <cctype>
#include <string_view>

namespace stowage {

/// `s` without leading and trailing ASCII white space.
inline std::string_view trimSpaces(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace stowage
