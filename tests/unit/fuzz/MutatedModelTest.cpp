// Fuzz-style robustness test, run under ASan/UBSan by `make test`: 500 deterministic mutations of a real
// model (byte flips, truncations, insertions, duplicated spans) go through the importer and, when they still
// import, through the whole compile pipeline. Each must end in a clean Diagnostic or valid output.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>

#include "stowage/driver/Compiler.h"
#include "stowage/frontend/OnnxImporter.h"

namespace stowage {
namespace {

namespace fs = std::filesystem;

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// mnist-8 from ../shared when present, else an ONNX conformance CNN from Debian's libonnx-testdata.
fs::path seedModel() {
  fs::path mnist = fs::path(STOWAGE_SHARED_DIR) / "models/onnx/mnist-8/model.onnx";
  if (fs::exists(mnist)) return mnist;
  return "/usr/share/libonnx-testdata/data/pytorch-converted/test_Conv2d_groups/model.onnx";
}

std::string mutate(const std::string& original, std::mt19937_64& rng) {
  std::string s = original;
  auto pick = [&](size_t n) { return n == 0 ? size_t{0} : static_cast<size_t>(rng() % n); };
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits && !s.empty(); ++e) {
    switch (rng() % 5) {
      case 0: s[pick(s.size())] = static_cast<char>(rng()); break;                      // random byte
      case 1: s[pick(s.size())] ^= static_cast<char>(1u << (rng() % 8)); break;         // bit flip
      case 2: s.resize(pick(s.size())); break;                                          // truncate
      case 3: s.insert(pick(s.size()), std::string(1 + pick(16), static_cast<char>(rng()))); break;
      case 4: {                                                                          // duplicate a span
        size_t at = pick(s.size()), len = std::min<size_t>(1 + pick(64), s.size() - at);
        s.insert(pick(s.size()), s.substr(at, len));
        break;
      }
    }
  }
  return s;
}

TEST(Fuzz, FiveHundredMutatedModelsGiveCleanErrorsOrValidOutput) {
  const fs::path seed = seedModel();
  if (!fs::exists(seed)) GTEST_SKIP() << "no seed model found (" << seed << "); install libonnx-testdata";
  const std::string original = readFile(seed);
  ASSERT_TRUE(importOnnxBytes(original, seed.string()).ok()) << "the unmutated seed model must import";

  const fs::path work = fs::path(STOWAGE_BINARY_DIR) / "fuzz-tmp";
  fs::remove_all(work);
  fs::create_directories(work);
  std::mt19937_64 rng(20261122);
  int imported = 0, rejected = 0, compiled = 0;
  for (int i = 0; i < 500; ++i) {
    const std::string bytes = mutate(original, rng);
    auto graph = importOnnxBytes(bytes, "mutant.onnx");
    if (!graph.ok()) {
      ++rejected;
      EXPECT_FALSE(graph.error().message.empty()) << "mutant " << i << " gave an empty error";
      continue;
    }
    ++imported;
    const fs::path model = work / "mutant.onnx";
    {
      std::ofstream out(model, std::ios::binary | std::ios::trunc);
      out << bytes;
    }
    CompileOptions options;
    options.modelPath = model.string();
    options.outDir = (work / "out").string();
    options.name = "net";
    fs::remove_all(work / "out");
    auto result = compileModel(options);
    if (result.ok()) {
      ++compiled;
      EXPECT_TRUE(fs::exists(work / "out" / "net.c")) << "mutant " << i;
    } else {
      EXPECT_FALSE(fs::exists(work / "out")) << "mutant " << i << " left a partial output dir";
    }
  }
  std::printf("fuzz: %d rejected with a diagnostic, %d imported, %d of those compiled\n", rejected, imported, compiled);
  fs::remove_all(work);
}

}  // namespace
}  // namespace stowage
