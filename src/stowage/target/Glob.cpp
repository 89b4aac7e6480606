// Glob matching for the memory description (see Glob.h): linear-backtracking matcher, no allocation.
#include "stowage/target/Glob.h"

namespace stowage {

bool globMatch(std::string_view pattern, std::string_view text) {
  size_t p = 0, t = 0;
  size_t starP = std::string_view::npos, starT = 0;  // last `*` seen and where its match ends so far
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      starP = p++;
      starT = t;
    } else if (starP != std::string_view::npos) {
      p = starP + 1;  // let the last `*` swallow one more character
      t = ++starT;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

bool isGlob(std::string_view pattern) { return pattern.find_first_of("*?") != std::string_view::npos; }

}  // namespace stowage
