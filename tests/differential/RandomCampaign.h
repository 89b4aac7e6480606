// One seed of the random differential campaign (issue 27): a random model (zoo/RandomModel.h), its reference run,
// ONNX Runtime (float models), then random boards (zoo/RandomBoard.h) x random variants against the reference. A
// mismatch or failure is shrunk (steps dropped, shapes and channels reduced while it still fails) and written as a
// reproducer folder (model.onnx, board.toml, variant.txt, README.txt).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "DifferentialRun.h"
#include "stowage/zoo/RandomModel.h"

namespace stowage::differential {

struct CampaignOptions {
  int boardsPerModel = 8;          ///< pairs per model after the reference (the first on the default board)
  bool quantized = false;          ///< int8 QDQ models (else float32)
  bool onnxRuntime = true;         ///< also compare float models with their oracle (when installed): ONNX Runtime,
                                   ///< or TFLite's interpreter for .tflite files
  bool shrink = true;              ///< minimise findings
  int shrinkAttempts = 40;         ///< candidate models tried by the shrinker per finding, at most
  zoo::RandomModelOptions model;   ///< `quantized` above overrides model.quantized; model.tflitePercent: int8 seeds
                                   ///< written as .tflite files (zoo/RandomTflite.h) rather than QDQ ONNX;
                                   ///< model.floatTflitePercent: float seeds written as float .tflite files
  int emulatePercent = 0;          ///< int8 seeds (chosen by seed) also built as firmware and run on QEMU, in percent
  std::string emulateMachine = "mps2-an386";  ///< the machine of those runs (`stowage run --emulate`)
  std::filesystem::path work;      ///< scratch folder (created)
  std::filesystem::path reproducers;  ///< findings go to <reproducers>/<kind>-<seed>-<pair>/; empty: not written
  CompileHook hook;                ///< between compile and run of every pair except the reference (test of the test)
};

/// A mismatch or failure, after shrinking.
struct Finding {
  uint64_t seed = 0;
  int pair = 0;               ///< -1: the reference itself, -2: the oracle (ONNX Runtime or TFLite's interpreter),
                              ///< -3: the emulated firmware
  std::string boardKind;      ///< "default", "cpu", "engine", "cores"
  std::string boardToml;      ///< empty: the default board
  Variant variant;
  Outcome outcome = Outcome::Mismatch;
  std::string detail;
  zoo::RandomRecipe recipe;   ///< shrunk
  std::string originalRecipe; ///< describe() before shrinking
  std::filesystem::path reproducer;
};

struct SeedReport {
  uint64_t seed = 0;
  std::string model;            ///< the recipe's describe()
  int pairs = 0;                ///< (board, variant) pairs compiled against the reference
  std::map<Outcome, int> outcomes;
  int programsRun = 0;          ///< distinct generated programs built and run (identical ones run once)
  bool onnxRuntimeChecked = false;  ///< the oracle ran (ONNX Runtime, or TFLite's interpreter for a .tflite file)
  bool emulated = false;        ///< the firmware was built and run on QEMU (one of the pairs)
  std::vector<std::string> skips;  ///< the first line of each skip's reason
  std::vector<Finding> findings;
};

/// Runs seed `seed`. Deterministic but for planner time limits (exact / hill-climb stop after 1 s).
SeedReport runSeed(uint64_t seed, const CampaignOptions& options);

/// Whether int8 seed `seed` is also run on the emulator under `emulatePercent` (deterministic).
bool emulatesSeed(uint64_t seed, int emulatePercent);

/// Writes the model of `recipe` to `dir` (created) as model.onnx, or model.tflite for a TFLite recipe; the path, or
/// an error when the recipe does not build.
Result<std::filesystem::path> writeRandomModel(const zoo::RandomRecipe& recipe, const std::filesystem::path& dir);

/// Writes `finding`'s model (its shrunk recipe), board, variant and a README to `dir` (created).
void writeReproducer(const std::filesystem::path& dir, const Finding& finding);

}  // namespace stowage::differential
