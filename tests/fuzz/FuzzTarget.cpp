// The registry of fuzz targets and the checks every target shares (see FuzzTarget.h). Linked into each libFuzzer
// executable and into stowage_fuzz_replay.
#include "FuzzTarget.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace stowage::fuzz {
namespace {

std::vector<RegisteredFuzzTarget>& registry() {
  static std::vector<RegisteredFuzzTarget> targets;
  return targets;
}

}  // namespace

bool registerFuzzTarget(const char* name, FuzzEntry entry) {
  registry().push_back({name, entry});
  return true;
}

std::vector<RegisteredFuzzTarget> fuzzTargets() {
  std::vector<RegisteredFuzzTarget> sorted = registry();
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return sorted;
}

void abortOnBug(const std::string& what) {
  std::fprintf(stderr, "fuzz target found a bug: %s\n", what.c_str());
  std::abort();
}

void abortIfDiagnosticAdmitsBug(const Diagnostic& d, std::string_view input) {
  const std::string text = d.render();
  for (std::string_view admission : {"internal error", "this is a bug in the"})
    if (text.find(admission) != std::string::npos && input.find(admission) == std::string_view::npos)
      abortOnBug("a diagnostic blames Stowage, not the input:\n" + text);
}

}  // namespace stowage::fuzz
