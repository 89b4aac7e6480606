// Differential runs of random models (issue 27): one model compiled and run on the host simulator with every
// optimisation off on the default board (the reference), then under other boards, planners and option sets, and by
// ONNX Runtime or TFLite's interpreter for float models; outputs must be byte-identical (int8) or within a float tolerance of the reference.
// In-process (compileModel + runOnHost); used by tools/stowage-random and tests/e2e/RandomDifferentialTest.cpp.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "stowage/driver/Compiler.h"
#include "stowage/ir/Tensor.h"

namespace stowage::differential {

/// The compile options a variant changes; the text form (toString / parseVariant) names every field.
struct Variant {
  std::string planner = "auto";  ///< offset algorithm (offsetAlgorithmNames())
  bool aliasing = true;          ///< PlanOptions::aliasing
  bool concatSlices = true;      ///< PlanOptions::concatSlices
  bool overlap = true;           ///< PlanOptions::overlapLayers (`--no-overlap`)
  bool fuse = true;              ///< `--no-fuse`
  bool reorder = true;           ///< `--no-reorder`
  bool guard = false;            ///< `--guard`
  bool ioInPools = false;        ///< `--io-in-pools`
  bool doubleBuffer = true;      ///< `--no-double-buffer`
  bool resident = true;          ///< `--no-resident`
  bool prefetchWeights = true;   ///< `--no-weight-prefetch`
  /// "planner=auto alias=1 concat=1 overlap=1 fuse=1 reorder=1 guard=0 io=0 db=1 resident=1 prefetch=1".
  std::string toString() const;
  /// The `stowage run` flags for it (aliasing and concat slices have none: noted in a comment).
  std::string cliFlags() const;
  /// Applies the variant to `options` (planner time limit 1 s: exact and hill-climb keep the plan found by then).
  void apply(CompileOptions& options) const;
};

/// Every optimisation off, the simplest planner: what every other run must reproduce.
Variant referenceVariant();
/// A random variant of `seed`.
Variant randomVariant(uint64_t seed);
/// Parses toString's form; unknown keys or values are an error.
Result<Variant> parseVariant(const std::string& text);

/// How one (model, board, variant) pair ended.
enum class Outcome {
  Match,       ///< outputs as the reference's
  Mismatch,    ///< outputs differ from the reference's (or ONNX Runtime's)
  Skipped,     ///< the compiler rejected the pair with a clear user error (model does not fit the board, ...)
  Failed,      ///< internal error, invalid plan, generated code that does not build or run, guard check fired
};
const char* outcomeName(Outcome o);

struct PairResult {
  Outcome outcome = Outcome::Match;
  std::string detail;       ///< the differences, or the error
  bool reusedRun = false;   ///< the generated program was byte-identical to one already run for this model
};

/// Optional hook between compile and run (the test of the test plants a bug through it).
using CompileHook = std::function<Status(CompileResult&)>;

/// True when `message` (a compile error) is a clear rejection of the input rather than a compiler bug: a model
/// that does not fit the board's pools, a rule or pin that leaves a tensor no pool, an op the board cannot run.
bool isInfeasibleError(const std::string& message);

/// One model and its reference run; runs variants against it.
class ModelUnderTest {
 public:
  /// Imports `model` (an .onnx or .tflite file), draws inputs from `inputSeed` and runs the reference. `work`: a scratch folder.
  /// `exactOutputs`: every run must give the reference's bytes (QDQ models: their float outputs are dequantized
  /// int8 values), else float outputs may differ within kFloatRtol / kFloatAtol.
  ModelUnderTest(std::filesystem::path model, uint64_t inputSeed, std::filesystem::path work, bool exactOutputs);

  /// The reference's outcome: Match when it ran (outputs in reference()), else Skipped or Failed with the error.
  const PairResult& referenceResult() const { return reference_; }
  const std::vector<Tensor>& reference() const { return referenceOutputs_; }
  const std::vector<Tensor>& inputs() const { return inputs_; }
  /// The reference compile (its graph names the tensors and ops a board generator may use; its plan's peak).
  const CompileResult* referenceCompile() const { return referenceCompile_.get(); }

  /// Compiles under `boardToml` (empty: the default board) and `variant`, runs, compares with the reference:
  /// exact for integer outputs, |got - want| <= atol + rtol |want| for float ones.
  PairResult check(const std::string& boardToml, const Variant& variant, const CompileHook& hook = {});

  /// The outside oracle on the same inputs against the reference (float tolerance): ONNX Runtime for an .onnx model,
  /// TFLite's interpreter for a .tflite one (float models only: its int8 kernels are not TFLite Micro's). Skipped when
  /// the oracle is missing.
  PairResult checkOracle();

  /// The model compiled for the emulated `machine` (`stowage run --emulate`: the default board mapped onto it) under
  /// `variant`, built as firmware and run on QEMU: its outputs must be the reference's bytes (the reference was
  /// built and run on the host; within the float tolerance when a node other than a (de)quantize computes in float:
  /// libm's last bits differ between the host and the firmware). Skipped when the cross compiler or QEMU is missing,
  /// or the model does not fit.
  PairResult checkEmulated(const std::string& machine, const Variant& variant);

  /// Distinct generated programs run so far (identical ones run once and reuse the outputs).
  int programsRun() const { return programsRun_; }

 private:
  PairResult compileAndRun(const CompileOptions& options, const CompileHook& hook, std::vector<Tensor>& outputs,
                           CompileResult* keep);

  std::filesystem::path model_, work_;
  std::vector<Tensor> inputs_, referenceOutputs_;
  PairResult reference_;
  std::shared_ptr<CompileResult> referenceCompile_;
  std::vector<std::pair<std::string, std::vector<Tensor>>> runsByProgram_;  // hash of generated files -> outputs
  bool exactFloat_ = false;
  int programsRun_ = 0;
  int boardsWritten_ = 0;
};

/// Float tolerance against the reference and ONNX Runtime: random models chain up to ~10 layers whose summation
/// order differs between kernels (tiled, fused), so a little looser than TensorCompare's defaults.
inline constexpr double kFloatRtol = 1e-3;
inline constexpr double kFloatAtol = 1e-4;

}  // namespace stowage::differential
