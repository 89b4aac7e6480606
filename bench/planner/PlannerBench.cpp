// Planner benchmark: runs every offset algorithm on the MiniMalloc benchmark CSVs (../shared/bench/minimalloc,
// at the capacity in each file name) and on generated instances of 1,000 and 100,000 buffers, and prints a
// markdown table for bench/RESULTS.md. A plain executable: built by `make build`, not run by ctest.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "stowage/plan/Validate.h"
#include "stowage/plan/algo/ExactSearch.h"
#include "stowage/plan/algo/OffsetAlgorithm.h"
#include "stowage/plan/io/BufferCsv.h"

namespace fs = std::filesystem;
using namespace stowage;

namespace {

struct Args {
  double timeLimit = 60.0;           // exact and auto on the CSV instances
  double hillClimbLimit = 10.0;      // hill-climb on the CSV instances
  double scaleAutoLimit = 1.0;       // auto on the generated instances
  std::vector<std::string> algorithms;  // empty: all
  std::string only;                  // substring filter on instance names
  bool skipScale = false, skipCsv = false, stats = false;
};

/// Capacity from a MiniMalloc file name: "A.1048576.csv" -> 1048576; 0 when there is none.
size_t capacityFromName(const fs::path& p) {
  std::string stem = p.stem().string();  // "A.1048576"
  size_t dot = stem.rfind('.');
  if (dot == std::string::npos) return 0;
  try {
    return std::stoull(stem.substr(dot + 1));
  } catch (...) {
    return 0;
  }
}

/// splitmix64, for seeded instance generation identical everywhere.
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint64_t below(uint64_t n) { return next() % n; }
};

/// A network-like instance: one buffer produced per step; most live 1-3 steps (activations), some 4-30
/// (skip connections), about 0.5% up to a quarter of the network (long-lived state). Sizes are log-uniform
/// between 256 B and 256 KiB, rounded to 16; alignment 16.
std::vector<Buffer> generate(size_t n, uint64_t seed) {
  Rng rng{seed};
  std::vector<Buffer> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    Buffer b;
    b.tensor = static_cast<TensorId>(i);
    const uint64_t kind = rng.below(1000);
    uint64_t life;
    if (kind < 5) life = 1 + rng.below(std::max<uint64_t>(n / 4, 1));
    else if (kind < 150) life = 4 + rng.below(27);
    else life = 1 + rng.below(3);
    const int shift = 8 + static_cast<int>(rng.below(11));  // 256 B .. 256 KiB
    const uint64_t size = (uint64_t{1} << shift) + rng.below(uint64_t{1} << shift);
    b.sizeBytes = static_cast<size_t>((size + 15) / 16 * 16);
    b.alignment = 16;
    b.firstStep = static_cast<int>(i);
    b.endStep = static_cast<int>(i + life);
    out.push_back(b);
  }
  return out;
}

std::string solvedText(const OffsetResult& r) {
  switch (r.status) {
    case OffsetStatus::Optimal:
    case OffsetStatus::Feasible: return "yes";
    case OffsetStatus::Infeasible: return "proved infeasible";
    case OffsetStatus::TimedOut: return "no";
  }
  return "?";
}

bool wanted(const Args& a, const std::string& algorithm) {
  return a.algorithms.empty() || std::find(a.algorithms.begin(), a.algorithms.end(), algorithm) != a.algorithms.end();
}

int runCsv(const Args& a) {
  fs::path root = fs::path(STOWAGE_SHARED_DIR) / "bench" / "minimalloc";
  if (!fs::exists(root)) {
    std::printf("skipped: %s not found (the MiniMalloc benchmark CSVs live in ../shared)\n\n", root.string().c_str());
    return 0;
  }
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file() && e.path().extension() == ".csv") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::printf("| instance | buffers | capacity | lower bound | algorithm | peak found | solved within capacity | seconds |\n");
  std::printf("|---|---:|---:|---:|---|---:|---|---:|\n");
  std::vector<double> exactSeconds;
  int failures = 0;
  for (const fs::path& file : files) {
    const std::string name = fs::relative(file, root).string();
    if (!a.only.empty() && name.find(a.only) == std::string::npos) continue;
    auto table = readBufferCsv(file);
    if (!table.ok()) {
      std::printf("| %s | parse error: %s | | | | | | |\n", name.c_str(), table.error().message.c_str());
      ++failures;
      continue;
    }
    const size_t capacity = capacityFromName(file);
    for (const std::string& algorithm : offsetAlgorithmNames()) {
      if (!wanted(a, algorithm)) continue;
      OffsetOptions options;
      if (capacity > 0) options.capacityBytes = capacity;
      options.timeLimitSeconds = algorithm == "hill-climb" ? a.hillClimbLimit : a.timeLimit;
      auto r = placeOffsets(algorithm, table->buffers, options);
      if (!r.ok()) {
        std::printf("| %s | error: %s | | | | | | |\n", name.c_str(), r.error().message.c_str());
        ++failures;
        continue;
      }
      std::string peak = r->offsets.empty() ? std::string("-") : fmt::format("{}", r->peakBytes);
      if (r->offsets.empty() && algorithm.rfind("greedy", 0) == 0) {
        // A heuristic that missed the capacity: show the peak it reached without one.
        OffsetOptions unlimited = options;
        unlimited.capacityBytes = std::numeric_limits<size_t>::max();
        auto u = placeOffsets(algorithm, table->buffers, unlimited);
        if (u.ok()) peak = fmt::format("({})", u->peakBytes);
      }
      if (algorithm == "exact") exactSeconds.push_back(r->seconds);
      std::printf("| %s | %zu | %zu | %zu | %s | %s | %s | %.3f |\n", name.c_str(), table->buffers.size(), capacity,
                  r->lowerBoundBytes, r->algorithm.c_str(), peak.c_str(), solvedText(*r).c_str(), r->seconds);
      std::fflush(stdout);
    }
  }
  if (!exactSeconds.empty()) {
    std::sort(exactSeconds.begin(), exactSeconds.end());
    std::printf("\nexact: median %.3f s, max %.3f s over %zu instances\n", exactSeconds[exactSeconds.size() / 2],
                exactSeconds.back(), exactSeconds.size());
  }
  return failures;
}

int runScale(const Args& a) {
  std::printf("\n| generated instance | buffers | lower bound | algorithm | peak | peak / lower bound | seconds |\n");
  std::printf("|---|---:|---:|---|---:|---:|---:|\n");
  int failures = 0;
  for (size_t n : {size_t{1000}, size_t{100000}}) {
    std::vector<Buffer> buffers = generate(n, 42);
    for (const char* algorithm : {"greedy-size", "greedy-conflicts", "auto"}) {
      if (!wanted(a, algorithm)) continue;
      OffsetOptions options;
      options.timeLimitSeconds = a.scaleAutoLimit;
      // Small instances: best of several runs, so the number reflects the algorithm, not a cold cache.
      const int repeats = n <= 1000 && std::strcmp(algorithm, "auto") != 0 ? 20 : 1;
      double best = 1e9;
      Result<OffsetResult> r = placeOffsets(algorithm, buffers, options);
      for (int k = 0; k < repeats && r.ok(); ++k) {
        r = placeOffsets(algorithm, buffers, options);
        if (r.ok()) best = std::min(best, r->seconds);
      }
      if (!r.ok()) {
        std::printf("| seed 42 | %zu | error: %s | | | | |\n", n, r.error().message.c_str());
        ++failures;
        continue;
      }
      std::printf("| seed 42 | %zu | %zu | %s | %zu | %.4f | %.4f |\n", n, r->lowerBoundBytes, r->algorithm.c_str(),
                  r->peakBytes, static_cast<double>(r->peakBytes) / static_cast<double>(std::max<size_t>(r->lowerBoundBytes, 1)),
                  best);
      std::fflush(stdout);
    }
  }
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "error: %s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--time-limit") a.timeLimit = std::stod(value());
    else if (arg == "--hill-climb-limit") a.hillClimbLimit = std::stod(value());
    else if (arg == "--scale-auto-limit") a.scaleAutoLimit = std::stod(value());
    else if (arg == "--algorithm") a.algorithms.push_back(value());
    else if (arg == "--only") a.only = value();
    else if (arg == "--no-scale") a.skipScale = true;
    else if (arg == "--no-csv") a.skipCsv = true;
    else {
      std::fprintf(stderr,
                   "usage: stowage_bench_planner [--time-limit S] [--hill-climb-limit S] [--scale-auto-limit S] "
                   "[--algorithm NAME]... [--only SUBSTRING] [--no-scale] [--no-csv]\n");
      return 2;
    }
  }
  int failures = 0;
  if (!a.skipCsv) failures += runCsv(a);
  if (!a.skipScale) failures += runScale(a);
  return failures == 0 ? 0 : 1;
}
