// "Did you mean ...?" for misspelled keys and names in board files and flags. Support code of target/.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace stowage {

/// The candidate closest to `word` by edit distance when it is close enough to be a likely typo, else "".
std::string closestMatch(std::string_view word, const std::vector<std::string>& candidates);

/// " (did you mean 'x'?)" or "" — ready to append to a message.
std::string didYouMean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace stowage
