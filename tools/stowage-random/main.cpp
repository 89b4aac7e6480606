// `stowage-random`: random models, random boards and the differential campaign over them (issue 27; the library is
// tests/differential and src/stowage/zoo/Random*). Parses flags, forks one child per seed (a crash is a finding, not
// the end of the run) and prints the table; docs/testing.md describes it.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "RandomCampaign.h"
#include "stowage/zoo/RandomBoard.h"
#include "stowage/zoo/RandomTflite.h"

namespace {

namespace fs = std::filesystem;
using namespace stowage;
using namespace stowage::differential;
using nlohmann::json;

std::string readText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

json toJson(const SeedReport& r, bool quantized) {
  json j;
  j["seed"] = r.seed;
  j["int8"] = quantized;
  j["model"] = r.model;
  j["pairs"] = r.pairs;
  for (const auto& [o, n] : r.outcomes) j["outcomes"][outcomeName(o)] = n;
  j["programs"] = r.programsRun;
  j["ort"] = r.onnxRuntimeChecked;
  j["tflite"] = r.model.rfind("tflite ", 0) == 0 || r.model.rfind("f32 tflite ", 0) == 0;
  j["emulated"] = r.emulated;
  j["skips"] = r.skips;
  for (const Finding& f : r.findings)
    j["findings"].push_back({{"pair", f.pair}, {"board", f.boardKind}, {"outcome", outcomeName(f.outcome)},
                             {"detail", f.detail.substr(0, 600)}, {"variant", f.variant.toString()},
                             {"model", f.recipe.describe()}, {"reproducer", f.reproducer.string()}});
  return j;
}

struct Totals {
  int models = 0, int8Models = 0, tfliteModels = 0, emulated = 0, pairs = 0, programs = 0, ort = 0, crashes = 0;
  std::map<std::string, int> outcomes;
  std::map<std::string, int> skipReasons;
  std::vector<std::string> findings;
};

/// Skip reasons grouped by their first words (pool names and sizes differ from board to board).
std::string skipKey(const std::string& line) {
  const size_t colon = line.rfind(": ");
  std::string s = colon == std::string::npos ? line : line.substr(colon + 2);
  return s.substr(0, 60);
}

struct CampaignFlags {
  int tflitePercent = 50;   ///< of the int8 seeds, written as .tflite
  int floatTflitePercent = 25;  ///< of the float seeds, written as float .tflite (checked against TFLite's interpreter)
  int emulatePercent = 10;  ///< of the int8 seeds, also run on QEMU
  std::string machine = "mps2-an386";
};

int runCampaign(uint64_t first, int seeds, double seconds, int boards, int int8Percent, bool ort, bool shrinkFindings,
                const fs::path& out, int jobs, bool keepWork, const CampaignFlags& flags) {
  fs::create_directories(out / "results");
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  Totals t;
  std::map<pid_t, std::pair<uint64_t, bool>> running;
  auto reap = [&](bool block) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, block ? 0 : WNOHANG);
    if (pid <= 0) return false;
    auto [seed, quantized] = running[pid];
    running.erase(pid);
    const fs::path result = out / "results" / fmt::format("{}.json", seed);
    ++t.models;
    t.int8Models += quantized;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !fs::exists(result)) {
      ++t.crashes;
      t.findings.push_back(fmt::format("seed {} ({}): the run died ({}); reproduce with `stowage-random run --first {} --seeds 1 --jobs 1`",
                                       seed, quantized ? "int8" : "f32",
                                       WIFSIGNALED(status) ? fmt::format("signal {}", WTERMSIG(status)) : fmt::format("exit {}", WEXITSTATUS(status)), seed));
      return true;
    }
    const json j = json::parse(readText(result));
    t.pairs += j["pairs"].get<int>();
    t.programs += j["programs"].get<int>();
    t.ort += j["ort"].get<bool>();
    t.tfliteModels += j.value("tflite", false);
    t.emulated += j.value("emulated", false);
    if (j.contains("outcomes"))
      for (auto& [k, v] : j["outcomes"].items()) t.outcomes[k] += v.get<int>();
    for (const auto& s : j["skips"]) ++t.skipReasons[skipKey(s.get<std::string>())];
    if (j.contains("findings"))
      for (const auto& f : j["findings"])
        t.findings.push_back(fmt::format("seed {} pair {} ({} board, {}): {}\n    {}\n    model: {}\n    reproducer: {}", seed,
                                         f["pair"].get<int>(), f["board"].get<std::string>(), f["variant"].get<std::string>(),
                                         f["outcome"].get<std::string>(), f["detail"].get<std::string>(),
                                         f["model"].get<std::string>(), f["reproducer"].get<std::string>()));
    return true;
  };
  for (int i = 0; i < seeds && elapsed() < seconds; ++i) {
    const uint64_t seed = first + static_cast<uint64_t>(i);
    const bool quantized = static_cast<int>((seed * 7919u) % 100u) < int8Percent;
    while (static_cast<int>(running.size()) >= jobs) reap(true);
    std::fflush(stdout);
    const pid_t pid = fork();
    if (pid == 0) {
      alarm(600);  // a hang is a finding too (the parent sees the signal)
      CampaignOptions options;
      options.boardsPerModel = boards;
      options.quantized = quantized;
      options.model.tflitePercent = flags.tflitePercent;
      options.model.floatTflitePercent = flags.floatTflitePercent;
      options.emulatePercent = flags.emulatePercent;
      options.emulateMachine = flags.machine;
      options.onnxRuntime = ort;
      options.shrink = shrinkFindings;
      options.work = out / "work";
      options.reproducers = out / "reproducers";
      const SeedReport r = runSeed(seed, options);
      std::ofstream(out / "results" / fmt::format("{}.json", seed)) << toJson(r, quantized).dump(1) << "\n";
      if (!keepWork) fs::remove_all(options.work / fmt::format("{}{}", quantized ? "q" : "f", seed));
      std::fflush(stdout);
      _exit(0);
    }
    running[pid] = {seed, quantized};
    while (reap(false)) {
    }
  }
  while (!running.empty()) reap(true);
  const int mismatches = t.outcomes["mismatch"], failed = t.outcomes["failed"];
  std::printf("%-8s %-6s %-7s %-9s %-7s %-7s %-9s %-7s %-8s %-9s %-9s %-8s %s\n", "models", "int8", "tflite", "emulated", "pairs",
              "match", "mismatch", "failed", "skipped", "programs", "ort-runs", "crashes", "seconds");
  std::printf("%-8d %-6d %-7d %-9d %-7d %-7d %-9d %-7d %-8d %-9d %-9d %-8d %.0f\n", t.models, t.int8Models, t.tfliteModels, t.emulated,
              t.pairs, t.outcomes["match"], mismatches, failed, t.outcomes["skipped"], t.programs, t.ort, t.crashes, elapsed());
  std::printf("(int8: int8 models, tflite: models written as .tflite files, int8 or float, emulated: firmware runs on QEMU;\n"
              " pairs: random board x variant runs and emulated runs compared with each model's reference;\n"
              " match/mismatch/failed/skipped also count the reference and the oracle checks (ONNX Runtime, or TFLite's\n"
              " interpreter for float .tflite models: ort-runs); programs: distinct generated programs built and run)\n");
  if (!t.skipReasons.empty()) {
    std::vector<std::pair<int, std::string>> reasons;
    for (const auto& [k, n] : t.skipReasons) reasons.push_back({n, k});
    std::sort(reasons.rbegin(), reasons.rend());
    std::printf("\nskips by reason:\n");
    for (size_t i = 0; i < reasons.size() && i < 12; ++i) std::printf("  %5d  %s\n", reasons[i].first, reasons[i].second.c_str());
  }
  if (!t.findings.empty()) {
    std::printf("\nfindings:\n");
    for (const std::string& f : t.findings) std::printf("  %s\n", f.c_str());
  }
  return t.findings.empty() ? 0 : 1;
}

int checkReproducer(const fs::path& dir) {
  Result<Variant> variant = parseVariant(readText(dir / "variant.txt"));
  if (!variant) {
    std::fputs(variant.error().render().c_str(), stderr);
    return 2;
  }
  const std::string readme = readText(dir / "README.txt");
  const bool quantized = readme.find("model (shrunk): int8") != std::string::npos ||
                         readme.find("model (shrunk): tflite") != std::string::npos;
  uint64_t seed = 0;
  std::sscanf(readme.c_str(), "seed %lu", &seed);
  const fs::path model = fs::exists(dir / "model.tflite") ? dir / "model.tflite" : dir / "model.onnx";
  ModelUnderTest m(model, seed, dir / "work", quantized);
  PairResult r = m.referenceResult();
  if (r.outcome == Outcome::Match) {
    const std::string board = fs::exists(dir / "board.toml") ? readText(dir / "board.toml") : "";
    const size_t emulated = readme.find("(emulated ");
    if (readme.find(" pair -2 ") != std::string::npos) r = m.checkOracle();
    else if (readme.find(" pair -3 ") != std::string::npos && emulated != std::string::npos)
      r = m.checkEmulated(readme.substr(emulated + 10, readme.find(' ', emulated + 10) - emulated - 10), *variant);
    else r = m.check(board, *variant);
  }
  std::printf("%s\n%s\n", outcomeName(r.outcome), r.detail.c_str());
  return r.outcome == Outcome::Match ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"stowage-random: random models and boards, checked differentially (docs/testing.md)"};
  app.require_subcommand(1);

  uint64_t seed = 1;
  bool int8 = false, tflite = false, floatTflite = false;
  std::string outPath;
  CLI::App* model = app.add_subcommand("model", "Write the random model of a seed (.onnx) and print its recipe");
  model->add_option("--seed", seed, "Seed")->required();
  model->add_flag("--int8", int8, "QDQ int8 model instead of float32");
  model->add_flag("--tflite", tflite, "Int8 .tflite model (the same recipe in TFLite's form)");
  model->add_flag("--float-tflite", floatTflite, "Float32 .tflite model (the float recipe in TFLite's form)");
  model->add_option("-o,--output", outPath, "Output .onnx (.tflite with --tflite) file")->required();

  size_t workspace = 64 * 1024;
  CLI::App* board = app.add_subcommand("board", "Write the random board of a seed (.toml)");
  board->add_option("--seed", seed, "Seed")->required();
  board->add_option("--workspace-bytes", workspace, "The model's peak activation bytes (sizes the small pools)")->capture_default_str();
  board->add_option("-o,--output", outPath, "Output .toml file")->required();

  uint64_t first = 1;
  int seeds = 100, boards = 8, int8Percent = 50, jobs = 1;
  double seconds = 1e9;
  bool noOrt = false, noShrink = false, keepWork = false;
  std::string outDir = "random-run";
  CLI::App* run = app.add_subcommand("run", "Differential campaign over seeds first .. first + seeds - 1; prints a table");
  run->add_option("--first", first, "First seed")->capture_default_str();
  run->add_option("--seeds", seeds, "Models (one per seed)")->capture_default_str();
  run->add_option("--seconds", seconds, "Stop starting seeds after this many seconds");
  run->add_option("--boards", boards, "Pairs (board x variant) per model; the first on the default board")->capture_default_str();
  run->add_option("--int8-percent", int8Percent, "Share of seeds with int8 QDQ models")->capture_default_str();
  CampaignFlags flags;
  run->add_option("--tflite-percent", flags.tflitePercent, "Share of the int8 seeds written as .tflite files")->capture_default_str();
  run->add_option("--float-tflite-percent", flags.floatTflitePercent,
                  "Share of the float seeds written as float .tflite files (compared with TFLite's interpreter)")->capture_default_str();
  run->add_option("--emulate-percent", flags.emulatePercent,
                  "Share of the int8 seeds also built as firmware and run on QEMU (--emulate-machine)")->capture_default_str();
  run->add_option("--emulate-machine", flags.machine, "QEMU machine of the emulated runs")->capture_default_str();
  run->add_option("--jobs", jobs, "Seeds run at once (one process each)")->capture_default_str();
  run->add_flag("--no-ort", noOrt, "Do not compare float models with ONNX Runtime (or .tflite ones with TFLite's interpreter)");
  run->add_flag("--no-shrink", noShrink, "Write findings as found, without minimising them");
  run->add_flag("--keep-work", keepWork, "Keep each seed's scratch folder (<out>/work/<f|q><seed>: model, boards)");
  run->add_option("--out", outDir, "Folder for results, scratch files and reproducers")->capture_default_str();

  std::string reproducer;
  CLI::App* check = app.add_subcommand("check", "Re-run a reproducer folder written by `run`");
  check->add_option("dir", reproducer, "Reproducer folder")->required();

  CLI11_PARSE(app, argc, argv);

  if (model->parsed()) {
    zoo::RandomModelOptions options;
    options.quantized = !floatTflite && (int8 || tflite);
    tflite = tflite || floatTflite;
    zoo::RandomRecipe recipe = zoo::randomRecipe(seed, options);
    if (tflite) {
      recipe.tflite = true;
      Result<std::vector<uint8_t>> bytes = zoo::buildRandomTflite(recipe);
      if (!bytes) {
        std::fputs(bytes.error().render().c_str(), stderr);
        return 2;
      }
      std::ofstream out(outPath, std::ios::binary);
      out.write(reinterpret_cast<const char*>(bytes->data()), static_cast<std::streamsize>(bytes->size()));
      if (!out) {
        std::fprintf(stderr, "error: cannot write %s\n", outPath.c_str());
        return 2;
      }
      std::printf("%s\n", recipe.describe().c_str());
      return 0;
    }
    Result<zoo::RandomModel> built = zoo::buildRandomModel(recipe);
    if (!built) {
      std::fputs(built.error().render().c_str(), stderr);
      return 2;
    }
    std::ofstream out(outPath, std::ios::binary);
    if (!built->model.SerializeToOstream(&out)) {
      std::fprintf(stderr, "error: cannot write %s\n", outPath.c_str());
      return 2;
    }
    std::printf("%s\n", recipe.describe().c_str());
    return 0;
  }
  if (board->parsed()) {
    zoo::RandomBoardHints hints;
    hints.workspaceBytes = workspace;
    const zoo::RandomBoard b = zoo::randomBoard(seed, hints);
    std::ofstream(outPath) << b.toml;
    std::printf("%s board written to %s\n", b.kind.c_str(), outPath.c_str());
    return 0;
  }
  if (run->parsed())
    return runCampaign(first, seeds, seconds, boards, int8Percent, !noOrt, !noShrink, outDir, std::max(1, jobs), keepWork, flags);
  return checkReproducer(reproducer);
}
