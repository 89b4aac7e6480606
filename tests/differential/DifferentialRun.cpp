// Differential runs of one model against its reference build (see DifferentialRun.h).
#include "DifferentialRun.h"

#include <fmt/format.h>

#include <exception>
#include <fstream>
#include <sstream>

#include "../e2e/OrtOracle.h"
#include "../e2e/TfliteOracle.h"
#include "stowage/driver/EmulatorRunner.h"
#include "stowage/driver/HostRunner.h"
#include "stowage/firmware/EmulatedMachine.h"
#include "stowage/firmware/Toolchain.h"
#include "stowage/plan/algo/OffsetAlgorithm.h"
#include "stowage/tile/WholeModelCycles.h"
#include "stowage/zoo/OnnxGraphBuilder.h"

namespace stowage::differential {

std::string Variant::toString() const {
  return fmt::format("planner={} alias={:d} concat={:d} overlap={:d} fuse={:d} reorder={:d} guard={:d} io={:d} db={:d} "
                     "resident={:d} prefetch={:d}",
                     planner, aliasing, concatSlices, overlap, fuse, reorder, guard, ioInPools, doubleBuffer, resident,
                     prefetchWeights);
}

std::string Variant::cliFlags() const {
  std::string f = "--planner " + planner;
  if (!overlap) f += " --no-overlap";
  if (!fuse) f += " --no-fuse";
  if (!reorder) f += " --no-reorder";
  if (guard) f += " --guard";
  if (ioInPools) f += " --io-in-pools";
  if (!doubleBuffer) f += " --no-double-buffer";
  if (!resident) f += " --no-resident";
  if (!prefetchWeights) f += " --no-weight-prefetch";
  if (!aliasing || !concatSlices)
    f += fmt::format("  # and, in-process only (no flag): PlanOptions aliasing={:d} concatSlices={:d}", aliasing, concatSlices);
  return f;
}

void Variant::apply(CompileOptions& options) const {
  options.planner.algorithm = planner;
  options.planner.timeLimitSeconds = 1.0;
  options.planner.aliasing = aliasing;
  options.planner.concatSlices = concatSlices;
  options.planner.overlapLayers = overlap;
  options.fuse = fuse;
  options.reorder = reorder;
  options.guard = guard;
  options.ioInPools = ioInPools;
  options.doubleBuffer = doubleBuffer;
  options.resident = resident;
  options.prefetchWeights = prefetchWeights;
}

Variant referenceVariant() {
  Variant v;
  v.planner = "greedy-size";
  v.aliasing = v.concatSlices = v.overlap = v.fuse = v.reorder = false;
  v.doubleBuffer = v.resident = v.prefetchWeights = false;
  return v;
}

Variant randomVariant(uint64_t seed) {
  zoo::SplitMix64 rng(seed * 0xA24BAED4963EE407ull + 7);
  auto coin = [&](int percentTrue) { return static_cast<int>(rng.next() % 100) < percentTrue; };
  Variant v;
  const std::vector<std::string>& names = offsetAlgorithmNames();
  v.planner = names[rng.next() % names.size()];
  v.aliasing = coin(75);
  v.concatSlices = coin(75);
  v.overlap = coin(75);
  v.fuse = coin(75);
  v.reorder = coin(75);
  v.guard = coin(25);
  v.ioInPools = coin(20);
  v.doubleBuffer = coin(75);
  v.resident = coin(75);
  v.prefetchWeights = coin(75);
  return v;
}

Result<Variant> parseVariant(const std::string& text) {
  Variant v;
  std::istringstream in(text);
  std::string item;
  while (in >> item) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos) return makeError("variant", fmt::format("'{}' is not key=value", item));
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    if (key == "planner") {
      v.planner = value;
      continue;
    }
    if (value != "0" && value != "1") return makeError("variant", fmt::format("'{}': expected 0 or 1", item));
    const bool on = value == "1";
    if (key == "alias") v.aliasing = on;
    else if (key == "concat") v.concatSlices = on;
    else if (key == "overlap") v.overlap = on;
    else if (key == "fuse") v.fuse = on;
    else if (key == "reorder") v.reorder = on;
    else if (key == "guard") v.guard = on;
    else if (key == "io") v.ioInPools = on;
    else if (key == "db") v.doubleBuffer = on;
    else if (key == "resident") v.resident = on;
    else if (key == "prefetch") v.prefetchWeights = on;
    else return makeError("variant", fmt::format("unknown key '{}'", key));
  }
  return v;
}

const char* outcomeName(Outcome o) {
  switch (o) {
    case Outcome::Match: return "match";
    case Outcome::Mismatch: return "mismatch";
    case Outcome::Skipped: return "skipped";
    case Outcome::Failed: return "failed";
  }
  return "?";
}

bool isInfeasibleError(const std::string& message) {
  // The plan validator's errors (location "memory plan") are compiler bugs whatever they say.
  if (message.find("memory plan") != std::string::npos) return false;
  // The planner's and tiler's user errors: the board is valid, the model just does not fit it.
  for (const char* phrase : {"does not fit", "do not fit", "too small", "no pool of the board", "cannot hold", "not enough",
                             "infeasible", "exceeds", "leaves no pool", "larger than",
                             // a random pin that contradicts a random rule: the board is self-contradictory
                             "but the rule",
                             // a pin of a board drawn for the unshrunk model, on a tensor the shrunk model lacks
                             "matches no tensor",
                             // exact / hill-climb within the 1 s limit of a variant on a tight pool: not a wrong plan
                             "found no placement within"})
    if (message.find(phrase) != std::string::npos) return true;
  return false;
}

ModelUnderTest::ModelUnderTest(std::filesystem::path model, uint64_t inputSeed, std::filesystem::path work,
                               bool exactOutputs)
    : model_(std::move(model)), work_(std::move(work)), exactFloat_(exactOutputs) {
  std::filesystem::create_directories(work_);
  std::string error;
  // Int8 inputs (TFLite models) over their whole range; float ones in [-1, 1).
  const bool tflite = model_.extension() == ".tflite";
  inputs_ = e2e::randomModelInputs(model_, inputSeed, &error, tflite ? -128.0 : -1.0, tflite ? 127.0 : 1.0);
  if (inputs_.empty()) {
    reference_ = {Outcome::Failed, "inputs: " + error};
    return;
  }
  CompileOptions options;
  options.modelPath = model_.string();
  referenceVariant().apply(options);
  auto keep = std::make_shared<CompileResult>();
  reference_ = compileAndRun(options, {}, referenceOutputs_, keep.get());
  if (reference_.outcome == Outcome::Match) referenceCompile_ = std::move(keep);
}

PairResult ModelUnderTest::compileAndRun(const CompileOptions& options, const CompileHook& hook,
                                         std::vector<Tensor>& outputs, CompileResult* keep) {
  PairResult r;
  try {
    Result<CompileResult> compiled = compileModel(options);
    if (!compiled) {
      const std::string message = compiled.error().render();
      r.outcome = isInfeasibleError(message) || compiled.error().unsupported ? Outcome::Skipped : Outcome::Failed;
      r.detail = "compile: " + message;
      return r;
    }
    if (hook) {
      Status s = hook(*compiled);
      if (!s) return {Outcome::Failed, "hook: " + s.error().render()};
    }
    // The whole-model bounds are lower bounds: no estimate is below them (the run below checks the simulator's
    // cycles against the estimate).
    const bool offloaded = !compiled->plan.offloaded.empty();
    const WholeModelCycles whole = offloaded ? wholeModelCycles(compiled->graph, compiled->plan) : WholeModelCycles{};
    if (offloaded && whole.estimate < whole.bestBound())
      return {Outcome::Failed, fmt::format("bound: the whole-model estimate {} is below the best bound {} (bound with floor {}, "
                                           "dependency bound {}, transfer bound {}): a bound that is none",
                                           whole.estimate, whole.bestBound(), whole.boundWithFloor, whole.dependencyBound,
                                           whole.transferBound)};
    std::string program = compiled->code.header.text + compiled->code.source.text + compiled->code.weights.text;
    for (const GeneratedImage& image : compiled->code.images) program += image.fileName + image.bytes;
    for (const auto& [text, cached] : runsByProgram_)
      if (text == program) {
        outputs = cached;
        r.reusedRun = true;
        if (keep) *keep = std::move(*compiled);
        return r;
      }
    if (Status limits = checkSimulatorLimits(compiled->plan.board); !limits)
      return {Outcome::Skipped, "simulator: " + limits.error().render()};
    HostSimReport sim;
    HostRunOptions runOptions;
    if (offloaded) runOptions.simReport = &sim;  // the statistics and trace only where they are checked
    Result<std::vector<Tensor>> run = runOnHost(*compiled, inputs_, runOptions);
    ++programsRun_;
    if (!run) return {Outcome::Failed, "run: " + run.error().render()};
    // The simulator charges what the compiler estimates, step by step (docs/accelerators.md, "Whole-model bound").
    if (offloaded && sim.totalCycles() != whole.estimate)
      return {Outcome::Failed, fmt::format("cycles: the host simulator took {} cycles, the compiler's whole-model estimate is {}",
                                           sim.totalCycles(), whole.estimate)};
    outputs = *run;
    runsByProgram_.emplace_back(std::move(program), outputs);
    if (keep) *keep = std::move(*compiled);
  } catch (const std::exception& e) {
    return {Outcome::Failed, std::string("exception: ") + e.what()};
  }
  return r;
}

PairResult ModelUnderTest::check(const std::string& boardToml, const Variant& variant, const CompileHook& hook) {
  if (reference_.outcome != Outcome::Match) return {Outcome::Skipped, "no reference: " + reference_.detail};
  CompileOptions options;
  options.modelPath = model_.string();
  if (!boardToml.empty()) {
    const std::filesystem::path board = work_ / fmt::format("board{}.toml", boardsWritten_++);
    std::ofstream(board) << boardToml;
    options.board.boardPath = board.string();
  }
  variant.apply(options);
  std::vector<Tensor> outputs;
  PairResult r = compileAndRun(options, hook, outputs, nullptr);
  if (r.outcome != Outcome::Match) return r;
  // Integer outputs must be equal; float ones (QDQ models dequantize their outputs) equal too when the reference's
  // dtype is an integer one, else within the float tolerance.
  const std::string diff = e2e::diffOutputs(outputs, referenceOutputs_, Tolerance{exactFloat_ ? 0.0 : kFloatRtol, exactFloat_ ? 0.0 : kFloatAtol});
  if (!diff.empty()) return {Outcome::Mismatch, diff, r.reusedRun};
  return r;
}

PairResult ModelUnderTest::checkEmulated(const std::string& machineName, const Variant& variant) {
  if (reference_.outcome != Outcome::Match) return {Outcome::Skipped, "no reference: " + reference_.detail};
  Result<const EmulatedMachine*> machine = findEmulatedMachine(machineName);
  if (!machine) return {Outcome::Failed, "emulator: " + machine.error().render()};
  for (const char* program : {"arm-none-eabi-gcc", "qemu-system-arm"})
    if (!findProgram(program, {}).ok()) return {Outcome::Skipped, fmt::format("emulator: {} not found on PATH", program)};
  CompileOptions options;
  options.modelPath = model_.string();
  options.emulate = *machine;
  variant.apply(options);
  PairResult r;
  std::vector<Tensor> outputs;
  try {
    Result<CompileResult> compiled = compileModel(options);
    if (!compiled) {
      const std::string message = compiled.error().render();
      return {isInfeasibleError(message) || compiled.error().unsupported ? Outcome::Skipped : Outcome::Failed, "compile: " + message};
    }
    EmulatorRunOptions runOptions;
    runOptions.timeoutSeconds = 300;
    Result<std::vector<Tensor>> run = runOnEmulator(*compiled, inputs_, **machine, runOptions);
    ++programsRun_;
    if (!run) return {Outcome::Failed, "emulator: " + run.error().render()};
    outputs = std::move(*run);
  } catch (const std::exception& e) {
    return {Outcome::Failed, std::string("exception: ") + e.what()};
  }
  // Integer kernels and dequantizing give the same bytes on every machine; float kernels call the platform's libm
  // (expf in Softmax, Sigmoid, ...), whose last bits differ between the host's glibc and the firmware's newlib, so a
  // graph computing in float (a QDQ model's unquantized Softmax, kept float activations) gets the float tolerance.
  bool floatCompute = false;
  const Graph& graph = referenceCompile_->graph;
  for (const Node& n : graph.nodes) {
    if (n.op == OpKind::Dequantize || n.op == OpKind::DequantizeLinear || n.op == OpKind::Quantize || n.op == OpKind::QuantizeLinear)
      continue;
    for (TensorId t : n.outputs)
      if (t != kNoTensor && graph.tensors[static_cast<size_t>(t)].dtype == DType::Float32) floatCompute = true;
  }
  const std::string diff = e2e::diffOutputs(outputs, referenceOutputs_, floatCompute ? Tolerance{kFloatRtol, kFloatAtol} : Tolerance{0.0, 0.0});
  if (!diff.empty())
    return {Outcome::Mismatch, fmt::format("emulated {} against the host reference ({}): {}", machineName,
                                           floatCompute ? "float tolerance: the graph computes in float" : "byte for byte", diff)};
  return r;
}

PairResult ModelUnderTest::checkOracle() {
  if (reference_.outcome != Outcome::Match) return {Outcome::Skipped, "no reference: " + reference_.detail};
  std::string why;
  if (model_.extension() == ".tflite") {
    if (!e2e::tfliteOracleAvailable(&why)) return {Outcome::Skipped, "TFLite interpreter: " + why};
    e2e::ModelRun tfl = e2e::runTfliteOracle(model_, inputs_, work_ / "tflite");
    if (!tfl.ok()) return {Outcome::Failed, "TFLite interpreter: " + tfl.error};
    const std::string diff = e2e::diffOutputs(referenceOutputs_, tfl.outputs, Tolerance{kFloatRtol, kFloatAtol});
    if (!diff.empty()) return {Outcome::Mismatch, "against TFLite's interpreter: " + diff};
    return {};
  }
  if (!e2e::ortOracleAvailable(&why)) return {Outcome::Skipped, "ONNX Runtime: " + why};
  e2e::ModelRun ort = e2e::runOrtOracle(model_, inputs_, work_ / "ort");
  if (!ort.ok()) return {Outcome::Failed, "ONNX Runtime: " + ort.error};
  const std::string diff = e2e::diffOutputs(referenceOutputs_, ort.outputs, Tolerance{kFloatRtol, kFloatAtol});
  if (!diff.empty()) return {Outcome::Mismatch, "against ONNX Runtime: " + diff};
  return {};
}

}  // namespace stowage::differential
