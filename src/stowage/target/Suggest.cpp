// Edit-distance suggestions for misspelled board keys and names (see Suggest.h).
#include "stowage/target/Suggest.h"

#include <algorithm>
#include <cctype>

namespace stowage {
namespace {

/// Levenshtein distance, case-insensitive.
size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                  std::tolower(static_cast<unsigned char>(b[j - 1]));
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (same ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string closestMatch(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t bestDistance = std::string::npos;
  for (const auto& c : candidates) {
    size_t d = editDistance(word, c);
    if (d < bestDistance) {
      bestDistance = d;
      best = c;
    }
  }
  size_t limit = std::max<size_t>(2, word.size() / 3);
  if (best.empty() || bestDistance > limit || bestDistance >= std::max(word.size(), best.size())) return {};
  return best;
}

std::string didYouMean(std::string_view word, const std::vector<std::string>& candidates) {
  std::string m = closestMatch(word, candidates);
  return m.empty() ? std::string() : " (did you mean '" + m + "'?)";
}

}  // namespace stowage
