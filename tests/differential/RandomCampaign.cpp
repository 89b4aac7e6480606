// One seed of the random differential campaign, with shrinking and reproducers (see RandomCampaign.h).
#include "RandomCampaign.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <set>

#include "stowage/ir/Op.h"
#include "stowage/zoo/RandomBoard.h"
#include "stowage/zoo/RandomTflite.h"

namespace stowage::differential {
namespace {

std::string firstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

bool writeModel(const onnx::ModelProto& model, const std::filesystem::path& path) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  return model.SerializeToOstream(&out);
}

zoo::RandomBoardHints boardHints(const CompileResult& reference) {
  zoo::RandomBoardHints hints;
  hints.workspaceBytes = 0;
  for (const PoolUse& use : reference.plan.pools)
    if (reference.plan.board.pools[static_cast<size_t>(use.pool)].kind == PoolKind::Workspace) hints.workspaceBytes += use.usedBytes;
  std::set<std::string> ops;
  for (const Node& n : reference.graph.nodes) {
    ops.insert(std::string(opName(n.op)));
    for (TensorId t : n.outputs)  // graph outputs are not planned (pins on them are an error, unless --io-in-pools)
      if (std::find(reference.graph.outputs.begin(), reference.graph.outputs.end(), t) == reference.graph.outputs.end())
        hints.tensorNames.push_back(reference.graph.tensors[static_cast<size_t>(t)].name);
  }
  hints.ops.assign(ops.begin(), ops.end());
  return hints;
}

/// The start of a failure's first line, up to its first name, number or path ("compile: error: planner: internal
/// error: "): what must not change while shrinking.
std::string failureKind(const std::string& detail) {
  const std::string line = firstLine(detail);
  return line.substr(0, line.find_first_of("'\"0123456789/"));
}

/// Whether `recipe`, built, still fails as `finding` did (same outcome) on its board and variant.
bool stillFails(const zoo::RandomRecipe& recipe, const Finding& finding, const CampaignOptions& options,
                const std::filesystem::path& work, std::string* detail) {
  Result<std::filesystem::path> path = writeRandomModel(recipe, work);
  if (!path) return false;
  ModelUnderTest m(*path, recipe.seed, work, recipe.quantized);
  PairResult r;
  if (finding.pair == -1) r = m.referenceResult();
  else if (finding.pair == -2) r = m.checkOracle();
  else if (finding.pair == -3) r = m.checkEmulated(options.emulateMachine, finding.variant);
  else r = m.check(finding.boardToml, finding.variant, options.hook);
  if (r.outcome != finding.outcome) return false;
  // A failure must stay the same kind of failure (not, say, a planner error turned into a build error).
  if (r.outcome == Outcome::Failed && failureKind(r.detail) != failureKind(finding.detail)) return false;
  if (detail) *detail = r.detail;
  return true;
}

/// Greedy shrinking: drop steps, halve the input and the channel counts, while the finding still reproduces.
void shrink(Finding& finding, const CampaignOptions& options, const std::filesystem::path& work) {
  int attempts = 0;
  auto tryCandidate = [&](const zoo::RandomRecipe& candidate) {
    if (attempts >= options.shrinkAttempts) return false;
    ++attempts;
    std::string detail;
    if (!stillFails(candidate, finding, options, work / fmt::format("shrink{}", attempts), &detail)) return false;
    finding.recipe = candidate;
    finding.detail = detail;
    return true;
  };
  bool progress = true;
  while (progress && attempts < options.shrinkAttempts) {
    progress = false;
    for (size_t i = finding.recipe.steps.size(); i-- > 0;) {
      zoo::RandomRecipe c = finding.recipe;
      c.steps.erase(c.steps.begin() + static_cast<std::ptrdiff_t>(i));
      if (tryCandidate(c)) progress = true;
    }
    for (int dim = 0; dim < 3; ++dim) {
      zoo::RandomRecipe c = finding.recipe;
      int64_t& d = dim == 0 ? c.height : dim == 1 ? c.width : c.channels;
      if (d <= 1) continue;
      d = d / 2 + (dim < 2 && d > 3 ? 1 : 0);
      if (tryCandidate(c)) progress = true;
    }
    zoo::RandomRecipe c = finding.recipe;
    bool changed = false;
    for (zoo::RandomStep& s : c.steps)
      if (s.outChannels > 1) s.outChannels = (s.outChannels + 1) / 2, changed = true;
    if (changed && tryCandidate(c)) progress = true;
  }
}

}  // namespace

bool emulatesSeed(uint64_t seed, int emulatePercent) {
  return static_cast<int>((seed * 0x9E3779B97F4A7C15ull >> 40) % 100u) < emulatePercent;
}

Result<std::filesystem::path> writeRandomModel(const zoo::RandomRecipe& recipe, const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  if (recipe.tflite) {
    STOWAGE_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, zoo::buildRandomTflite(recipe));
    const std::filesystem::path path = dir / "model.tflite";
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!out) return makeError(path.string(), "cannot write");
    return path;
  }
  STOWAGE_ASSIGN_OR_RETURN(zoo::RandomModel built, zoo::buildRandomModel(recipe));
  const std::filesystem::path path = dir / "model.onnx";
  if (!writeModel(built.model, path)) return makeError(path.string(), "cannot write");
  return path;
}

void writeReproducer(const std::filesystem::path& dir, const Finding& f) {
  Result<std::filesystem::path> model = writeRandomModel(f.recipe, dir);
  const std::string file = model ? model->filename().string() : "model.onnx";
  if (!f.boardToml.empty()) std::ofstream(dir / "board.toml") << f.boardToml;
  std::ofstream(dir / "variant.txt") << f.variant.toString() << "\n";
  std::ofstream readme(dir / "README.txt");
  readme << fmt::format("seed {} pair {} ({} board): {}\n\n{}\n\nmodel (shrunk): {}\nmodel (as generated): {}\n\n", f.seed,
                        f.pair, f.boardKind, outcomeName(f.outcome), f.detail, f.recipe.describe(), f.originalRecipe);
  readme << "reference: stowage run " << file << " " << referenceVariant().cliFlags() << "\n";
  readme << "this pair: stowage run " << file << " " << (f.boardToml.empty() ? "" : "--board board.toml ")
         << (f.pair == -3 ? "--emulate " + f.boardKind.substr(f.boardKind.find(' ') + 1) + " " : "") << f.variant.cliFlags()
         << "\n(stowage-random check DIR re-runs the pair in-process with the same inputs)\n";
}

SeedReport runSeed(uint64_t seed, const CampaignOptions& options) {
  SeedReport report;
  report.seed = seed;
  zoo::RandomModelOptions modelOptions = options.model;
  modelOptions.quantized = options.quantized;
  const zoo::RandomRecipe recipe = zoo::randomRecipe(seed, modelOptions);
  report.model = recipe.describe();
  const std::filesystem::path work = options.work / fmt::format("{}{}", options.quantized ? "q" : "f", seed);
  std::filesystem::remove_all(work);
  Result<std::filesystem::path> modelPath = writeRandomModel(recipe, work);
  const std::string kind = options.quantized ? (recipe.tflite ? "tflite" : "int8") : (recipe.tflite ? "f32tflite" : "f32");
  auto record = [&](int pair, const std::string& boardKind, const std::string& boardToml, const Variant& variant,
                    const PairResult& r) {
    ++report.outcomes[r.outcome];
    if (r.outcome == Outcome::Skipped) report.skips.push_back(firstLine(r.detail));
    if (r.outcome != Outcome::Mismatch && r.outcome != Outcome::Failed) return;
    Finding f;
    f.seed = seed;
    f.pair = pair;
    f.boardKind = boardKind;
    f.boardToml = boardToml;
    f.variant = variant;
    f.outcome = r.outcome;
    f.detail = r.detail;
    f.recipe = recipe;
    f.originalRecipe = recipe.describe();
    if (options.shrink) shrink(f, options, work / fmt::format("shrink-pair{}", pair));
    if (!options.reproducers.empty()) {
      f.reproducer = options.reproducers / fmt::format("{}-{}-{}", kind, seed,
                                                       pair == -1   ? "ref"
                                                       : pair == -2 ? (recipe.tflite ? "interpreter" : "ort")
                                                       : pair == -3 ? "emu"
                                                                    : std::to_string(pair));
      writeReproducer(f.reproducer, f);
    }
    report.findings.push_back(std::move(f));
  };
  if (!modelPath) {
    record(-1, "default", "", referenceVariant(), {Outcome::Failed, "generator: " + modelPath.error().render()});
    return report;
  }
  ModelUnderTest m(*modelPath, seed, work, options.quantized);
  if (m.referenceResult().outcome != Outcome::Match) {
    record(-1, "default", "", referenceVariant(), m.referenceResult());
    return report;
  }
  if (!options.quantized && options.onnxRuntime) {
    PairResult ort = m.checkOracle();
    report.onnxRuntimeChecked = ort.outcome != Outcome::Skipped;
    if (report.onnxRuntimeChecked) record(-2, "default", "", referenceVariant(), ort);
  }
  const zoo::RandomBoardHints hints = boardHints(*m.referenceCompile());
  for (int pair = 0; pair < options.boardsPerModel; ++pair) {
    const uint64_t pairSeed = seed * 1000003ull + static_cast<uint64_t>(pair);
    std::string boardKind = "default", boardToml;
    if (pair > 0) {
      zoo::RandomBoard board = zoo::randomBoard(pairSeed, hints);
      boardKind = board.kind;
      boardToml = board.toml;
    }
    const Variant variant = randomVariant(pairSeed);
    ++report.pairs;
    record(pair, boardKind, boardToml, variant, m.check(boardToml, variant, options.hook));
  }
  if (options.quantized && emulatesSeed(seed, options.emulatePercent)) {
    // The firmware on QEMU: the default board mapped onto the machine, a random variant; the host reference's bytes.
    const Variant variant = randomVariant(seed * 1000003ull + 999983ull);
    ++report.pairs;
    report.emulated = true;
    record(-3, "emulated " + options.emulateMachine, "", variant, m.checkEmulated(options.emulateMachine, variant));
  }
  report.programsRun = m.programsRun();
  return report;
}

}  // namespace stowage::differential
