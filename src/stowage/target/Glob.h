// Shell-style glob matching (`*` and `?`) used by board files to name ops, nodes and tensors. Support code
// of the memory description (target/); knows nothing about boards.
#pragma once

#include <string_view>

namespace stowage {

/// True when `text` matches `pattern` as a whole. `*` matches any run of characters (also empty), `?` any
/// one character; every other character matches itself (case-sensitive). No escapes, no classes.
bool globMatch(std::string_view pattern, std::string_view text);

/// True when `pattern` contains `*` or `?`.
bool isGlob(std::string_view pattern);

}  // namespace stowage
