// End-to-end checks on the bundled zoo models (tools/stowage-zoo): each compiles, its generated C builds
// warning-free with the strict flags, generation is byte-identical across runs, and it runs on the host.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "E2eSupport.h"
#include "stowage/frontend/OnnxImporter.h"
#include "stowage/io/TensorFile.h"

namespace stowage::e2e {
namespace {

namespace fs = std::filesystem;

struct ZooCase {
  std::string name;
  bool endsInSoftmax;
};

class ZooModel : public ::testing::TestWithParam<ZooCase> {};

TEST_P(ZooModel, CompilesBuildsStrictAndRuns) {
  const ZooCase& c = GetParam();
  fs::path work = scratchDir("zoo_" + c.name);
  fs::path model = work / (c.name + ".onnx");
  auto w = runCommand(zoo() + " write " + c.name + " -o " + shellQuote(model.string()) + " --seed 7");
  ASSERT_EQ(w.exitCode, 0) << w.err;

  // Compile twice: the generated C must be byte-identical.
  for (const char* dir : {"c1", "c2"}) {
    auto r = runCommand(cli() + " compile " + shellQuote(model.string()) + " -o " + shellQuote((work / dir).string()) +
                        " --name net");
    ASSERT_EQ(r.exitCode, 0) << r.err;
  }
  for (const char* file : {"net.h", "net.c", "net_weights.c"}) {
    ASSERT_TRUE(fs::exists(work / "c1" / file)) << file;
    EXPECT_EQ(readFileBytes(work / "c1" / file), readFileBytes(work / "c2" / file)) << file << " differs between two compiles";
  }

  // The generated C builds with the strict flags and not a single warning.
  for (const char* file : {"net.c", "net_weights.c"}) {
    auto cc = runCommand(std::string("cc -std=c99 -O2 -Wall -Wextra -Werror -pedantic -c -I ") +
                         shellQuote(std::string(STOWAGE_SOURCE_DIR) + "/runtime/include") + " " +
                         shellQuote((work / "c1" / file).string()) + " -o " + shellQuote((work / (std::string(file) + ".o")).string()));
    EXPECT_EQ(cc.exitCode, 0) << cc.err;
    EXPECT_EQ(cc.err, "") << file;
  }

  // Run on a deterministic input and check the output is sane.
  auto graph = importOnnxFile(model.string());
  ASSERT_TRUE(graph.ok()) << graph.error().render();
  Tensor input;
  input.name = graph->tensor(graph->inputs[0]).name;
  input.shape = graph->tensor(graph->inputs[0]).shape;
  input.kind = TensorKind::Input;
  input.data.resize(input.byteSize());
  float* x = reinterpret_cast<float*>(input.data.data());
  for (int64_t i = 0; i < input.numElements(); ++i) x[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i)));
  ASSERT_TRUE(writeNpy((work / "input.npy").string(), input).ok());
  auto run = runCommand(cli() + " run " + shellQuote(model.string()) + " --input " + shellQuote((work / "input.npy").string()) +
                        " --output-dir " + shellQuote((work / "out").string()) + " --format npy");
  ASSERT_EQ(run.exitCode, 0) << run.err;
  auto out = readTensorFile((work / "out" / "output_0.npy").string());
  ASSERT_TRUE(out.ok()) << out.error().render();
  EXPECT_EQ(out->shape, graph->tensor(graph->outputs[0]).shape);
  const float* y = out->dataAs<float>();
  double sum = 0;
  for (int64_t i = 0; i < out->numElements(); ++i) {
    ASSERT_TRUE(std::isfinite(y[i])) << "output element " << i;
    sum += y[i];
  }
  if (c.endsInSoftmax) {
    EXPECT_NEAR(sum, 1.0, 1e-4);
  }

  // Guard mode on a tight two-pool board: a static "fast" pool of half the one-pool workspace and a user
  // "slow" pool exactly as big as the plan needs (found by a first compile with it unlimited). Every canary,
  // poison and checksum check passes and the outputs are byte-identical to the one-pool run.
  auto usedOf = [&](const fs::path& report, const std::string& pool) -> size_t {
    const nlohmann::json j = nlohmann::json::parse(readFileBytes(report));
    for (const auto& p : j["pools"])
      if (p["name"] == pool) return p["used"].get<size_t>();
    return 0;
  };
  const size_t oneBlock = usedOf(work / "c1" / "report.json", "workspace");
  ASSERT_GT(oneBlock, 0u);
  const std::string fast = "--pool " + shellQuote("name=fast;placement=static;size=" + std::to_string(std::max<size_t>(16, oneBlock / 2 / 16 * 16)));
  auto sizing = runCommand(cli() + " compile " + shellQuote(model.string()) + " --guard -o " + shellQuote((work / "g1").string()) + " " +
                           fast + " --pool 'name=slow;placement=user'");
  ASSERT_EQ(sizing.exitCode, 0) << sizing.err;
  const size_t slowUsed = usedOf(work / "g1" / "report.json", "slow");
  const std::string tight = fast + " --pool " + shellQuote("name=slow;placement=user;size=" + std::to_string(std::max<size_t>(16, slowUsed)));
  auto guarded = runCommand(cli() + " run " + shellQuote(model.string()) + " --guard " + tight + " --input " +
                            shellQuote((work / "input.npy").string()) + " --output-dir " + shellQuote((work / "gout").string()) +
                            " --format npy");
  ASSERT_EQ(guarded.exitCode, 0) << guarded.err;
  EXPECT_EQ(readFileBytes(work / "gout" / "output_0.npy"), readFileBytes(work / "out" / "output_0.npy"));
  fs::remove_all(work);
}

INSTANTIATE_TEST_SUITE_P(Zoo, ZooModel,
                         ::testing::Values(ZooCase{"resnet8", true}, ZooCase{"ds-cnn", true},
                                           ZooCase{"mobilenet-v1-0.25", true}, ZooCase{"autoencoder", false}),
                         [](const auto& info) {
                           std::string n = info.param.name;
                           for (char& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

}  // namespace
}  // namespace stowage::e2e
