// stowage_fuzz_replay: the fuzz targets without libFuzzer. `make test` runs it on each target's built-in seeds and
// checked-in regressions (tests/fuzz/regressions/<target>/), so that a fixed crash stays fixed; `make fuzz` uses it
// to write the seed corpus.
//   stowage_fuzz_replay TARGET [PATH...]          built-in seeds, then every file under each PATH (dirs recursively)
//   stowage_fuzz_replay TARGET --write-seeds DIR  writes the built-in seeds (large ones included) into DIR
//   stowage_fuzz_replay --list                    the targets' names
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>

#include "FuzzSeeds.h"
#include "FuzzTarget.h"

namespace {

namespace fs = std::filesystem;
using stowage::fuzz::FuzzEntry;

/// Runs `entry` on a heap copy of exactly `bytes.size()` bytes, so that AddressSanitizer sees any read past the end.
void replayOne(FuzzEntry entry, const std::string& bytes) {
  std::unique_ptr<uint8_t[]> copy(new uint8_t[bytes.size()]);
  if (!bytes.empty()) std::memcpy(copy.get(), bytes.data(), bytes.size());
  entry(copy.get(), bytes.size());
}

/// The regular files under `path` (itself when a file), sorted, so that runs are reproducible.
std::vector<fs::path> inputFiles(const fs::path& path) {
  std::vector<fs::path> files;
  if (fs::is_regular_file(path)) return {path};
  if (!fs::is_directory(path)) return files;
  for (const auto& e : fs::recursive_directory_iterator(path))
    if (e.is_regular_file() && e.path().filename().string()[0] != '.') files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

int usage() {
  std::fputs("usage: stowage_fuzz_replay TARGET [PATH...] | TARGET --write-seeds DIR | --list\n", stderr);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  const auto targets = stowage::fuzz::fuzzTargets();
  if (std::strcmp(argv[1], "--list") == 0) {
    for (const auto& t : targets) std::printf("%s\n", t.name.c_str());
    return 0;
  }
  const auto target = std::find_if(targets.begin(), targets.end(), [&](const auto& t) { return t.name == argv[1]; });
  if (target == targets.end()) {
    std::fprintf(stderr, "stowage_fuzz_replay: unknown target '%s' (see --list)\n", argv[1]);
    return 2;
  }
  if (argc == 4 && std::strcmp(argv[2], "--write-seeds") == 0) {
    fs::create_directories(argv[3]);
    const auto seeds = stowage::fuzz::builtinFuzzSeeds(target->name, true);
    for (const auto& seed : seeds) std::ofstream(fs::path(argv[3]) / seed.name, std::ios::binary) << seed.bytes;
    std::printf("%s: wrote %zu seeds to %s\n", target->name.c_str(), seeds.size(), argv[3]);
    return 0;
  }
  const auto start = std::chrono::steady_clock::now();
  const auto seeds = stowage::fuzz::builtinFuzzSeeds(target->name, false);
  for (const auto& seed : seeds) replayOne(target->entry, seed.bytes);
  size_t files = 0;
  for (int a = 2; a < argc; ++a) {
    if (!fs::exists(argv[a])) {
      std::fprintf(stderr, "stowage_fuzz_replay: %s does not exist\n", argv[a]);
      return 2;
    }
    for (const fs::path& file : inputFiles(argv[a])) {
      std::ifstream in(file, std::ios::binary);
      replayOne(target->entry, std::string(std::istreambuf_iterator<char>(in), {}));
      ++files;
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%s: %zu built-in seeds and %zu files replayed without a finding in %.2f s\n", target->name.c_str(), seeds.size(),
              files, seconds);
  return 0;
}
