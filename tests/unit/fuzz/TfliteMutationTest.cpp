// Fuzz-style robustness test of the TFLite frontend, run under ASan/UBSan by `make test`: 3,000 deterministic
// mutations (byte flips, 32-bit word overwrites that hit offsets and counts, truncations, insertions) of a
// real MLPerf Tiny model when ../shared is present, else of a tiny model built with FlatBufferBuilder. Each
// must end in a clean Diagnostic, or import into a graph the rest of the pipeline compiles or rejects cleanly.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <cstring>
#include <random>

#include "../frontend/TfliteTestModels.h"
#include "stowage/driver/Compiler.h"
#include "stowage/frontend/TfliteImporter.h"

namespace stowage {
namespace {

namespace fs = std::filesystem;

std::vector<uint8_t> seedModel(std::string& name) {
  const fs::path kws = fs::path(STOWAGE_SHARED_DIR) / "models/mlperf-tiny/kws_ref_model.tflite";
  if (fs::exists(kws)) {
    std::ifstream in(kws, std::ios::binary);
    name = kws.filename().string();
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
  }
  name = "tiny.tflite";
  return tflitetest::buildTinyFcModel();
}

std::vector<uint8_t> mutate(std::vector<uint8_t> b, std::mt19937& rng) {
  auto pos = [&](size_t n) { return n == 0 ? size_t{0} : static_cast<size_t>(rng() % n); };
  switch (rng() % 5) {
    case 0:  // flip a few bytes
      for (int k = 0, n = 1 + static_cast<int>(rng() % 8); k < n && !b.empty(); ++k) b[pos(b.size())] ^= static_cast<uint8_t>(1 + rng() % 255);
      break;
    case 1: {  // overwrite an aligned 32-bit word (offsets, counts, vtable entries) with a small or huge value
      if (b.size() < 4) break;
      const size_t at = pos(b.size() / 4) * 4;
      const uint32_t v = rng() % 2 ? rng() % 64 : rng();
      std::memcpy(&b[at], &v, 4);
      break;
    }
    case 2:  // truncate
      b.resize(pos(b.size()));
      break;
    case 3: {  // insert random bytes
      const size_t at = pos(b.size() + 1);
      std::vector<uint8_t> ins(1 + rng() % 16);
      for (auto& x : ins) x = static_cast<uint8_t>(rng());
      b.insert(b.begin() + static_cast<ptrdiff_t>(at), ins.begin(), ins.end());
      break;
    }
    default: {  // overwrite a 16-bit word (vtable slots)
      if (b.size() < 2) break;
      const size_t at = pos(b.size() / 2) * 2;
      const uint16_t v = static_cast<uint16_t>(rng());
      std::memcpy(&b[at], &v, 2);
      break;
    }
  }
  return b;
}

/// Mutated copies per model. The TFLite issue asks for 1,000; measured under ASan/UBSan (Debug, GCC 12, the
/// 2-core shared machine at load ~2.7): 1,000 copies of both models take 9.1 s and 3,000 take 27.2 s, within the
/// ~60 s budget of one unit test (at load ~8, 300 copies took 13.2 s, so a busy machine can take 2-4x longer).
/// 1,000 copies of the tiny model found a misaligned int64 load in the reader (fixed in TfliteReader's readVector).
constexpr int kMutations = 3000;

/// Imports (and when that works, compiles) kMutations mutations of `seed`; each must end in a value, not a crash.
void mutateAndCompile(const std::vector<uint8_t>& seed, const std::string& name, uint32_t rngSeed) {
  ASSERT_TRUE(importTfliteBytes(seed, name).ok()) << "the unmutated seed must import";
  std::mt19937 rng(rngSeed);
  int imported = 0, compiled = 0;
  for (int i = 0; i < kMutations; ++i) {
    auto g = importTfliteBytes(mutate(seed, rng), name);
    if (!g.ok()) {
      EXPECT_FALSE(g.error().message.empty()) << "mutation " << i;
      continue;
    }
    ++imported;
    CompileOptions options;
    auto r = compileGraph(std::move(g.value()), options);
    if (r.ok()) ++compiled;
    else EXPECT_FALSE(r.error().message.empty()) << "mutation " << i;
  }
  // Most mutations of weight bytes still import; the point is that none crashed.
  SUCCEED() << imported << " of " << kMutations << " mutations imported, " << compiled << " compiled";
}

TEST(TfliteMutation, ThreeThousandMutationsEndCleanly) {
  std::string name;
  const std::vector<uint8_t> seed = seedModel(name);
  mutateAndCompile(seed, name, 20261123);
}

// The builder-made model is small, so the same number of mutations hits its tables and vtables far more often.
TEST(TfliteMutation, ThreeThousandMutationsOfTheTinyModelEndCleanly) {
  mutateAndCompile(tflitetest::buildTinyFcModel(), "tiny.tflite", 7);
}

}  // namespace
}  // namespace stowage
