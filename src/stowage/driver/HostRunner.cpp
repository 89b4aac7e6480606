// Host runner (see HostRunner.h).
#include "stowage/driver/HostRunner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "stowage/codegen/HarnessEmitter.h"
#include "stowage/driver/OutputDir.h"
#include "stowage/driver/Process.h"
#include "stowage/io/TensorFile.h"
#include "stowage_sim.h"

#ifndef STOWAGE_RUNTIME_DIR
#define STOWAGE_RUNTIME_DIR "runtime"
#endif
#ifndef STOWAGE_SIM_LIB
#define STOWAGE_SIM_LIB ""
#endif
#ifndef STOWAGE_RUNTIME_LIB
#define STOWAGE_RUNTIME_LIB ""
#endif

namespace stowage {

std::vector<std::pair<std::string, uint64_t>> HostSimReport::layerSpans() const {
  std::vector<std::pair<std::string, uint64_t>> spans;
  std::istringstream in(stats);
  std::string line;
  const std::string key = "  layer '";
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    const size_t close = line.rfind("': ");
    if (close == std::string::npos || close < key.size()) continue;
    spans.emplace_back(line.substr(key.size(), close - key.size()), std::stoull(line.substr(close + 3)));
  }
  return spans;
}

uint64_t HostSimReport::totalCycles() const {
  const std::string key = "simulated: ";
  const size_t at = stats.find(key);
  return at == std::string::npos ? 0 : std::stoull(stats.substr(at + key.size()));
}

uint64_t HostSimReport::dmaTransfers() const {
  const size_t at = stats.find("\n  DMA ");
  const size_t in = at == std::string::npos ? std::string::npos : stats.find(" bytes in ", at);
  return in == std::string::npos ? 0 : std::stoull(stats.substr(in + std::string(" bytes in ").size()));
}

uint64_t HostSimReport::dmaBytes() const {
  const std::string key = "\n  DMA ";
  const size_t at = stats.find(key);
  return at == std::string::npos ? 0 : std::stoull(stats.substr(at + key.size()));
}

namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kStrictFlags = {"-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"};

/// Bytes of generated weights C below which the harness is built as one translation unit (above, the weights compile at
/// -O0 in parallel with the rest: large models' arrays would take long at -O1).
constexpr size_t kOneUnitWeightsBytes = 1 << 20;

Status checkOutcome(const ProcessOutcome& o, const std::vector<std::string>& argv, const std::string& what) {
  if (o.ok()) return Status::success();
  std::string how = o.signal ? fmt::format("was killed by signal {}", o.signal) : fmt::format("exited with code {}", o.exitCode);
  return withProcessOutput(makeError(what, fmt::format("{}: {}", how, commandLine(argv))), o.output);
}

/// The bytes of a file the harness wrote (the simulator's statistics or trace).
Result<std::string> readWholeFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return makeError(path.string(), "the host harness did not write this file");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::string runtimeSourceDir() {
  const char* env = std::getenv("STOWAGE_RUNTIME_DIR");
  return env && *env ? env : STOWAGE_RUNTIME_DIR;
}

std::string runtimeLibraryPath() {
  const char* env = std::getenv("STOWAGE_RUNTIME_LIB");
  return env && *env ? env : STOWAGE_RUNTIME_LIB;
}

Status checkInputs(const CompileResult& compiled, const std::vector<Tensor>& inputs) {
  const Graph& g = compiled.graph;
  if (inputs.size() != g.inputs.size()) {
    std::string names;
    for (TensorId id : g.inputs) names += (names.empty() ? "" : ", ") + g.tensor(id).name;
    return makeError("inputs", fmt::format("the model takes {} input(s) ({}) but {} were given", g.inputs.size(),
                                           names.empty() ? "none" : names, inputs.size()),
                     "pass one --input FILE per model input, in the model's input order");
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& want = g.tensor(g.inputs[i]);
    const Tensor& got = inputs[i];
    if (got.dtype != want.dtype || got.shape != want.shape)
      return makeError(fmt::format("input {} ('{}')", i, want.name),
                       fmt::format("expected {}[{}] but the file holds {}[{}]", dtypeName(want.dtype), shapeToString(want.shape),
                                   dtypeName(got.dtype), shapeToString(got.shape)));
    if (got.data.size() != want.byteSize())
      return makeError(fmt::format("input {} ('{}')", i, want.name),
                       fmt::format("holds {} bytes of data; {}[{}] needs {}", got.data.size(), dtypeName(want.dtype),
                                   shapeToString(want.shape), want.byteSize()));
  }
  return Status::success();
}

/// The board within what the host simulator handles (STOWAGE_SIM_MAX_* in runtime/sim/stowage_sim.h): checked
/// before building, so a board that is fine for the device gets a clear error instead of an abort at run time.
Status checkSimulatorLimits(const Board& board) {
  const std::string where = board.sourcePath.empty() ? "board" : board.sourcePath;
  const std::string only = "stowage run simulates the board on the host; `stowage compile` has no such limit";
  if (board.targets.size() > STOWAGE_SIM_MAX_TARGETS)
    return makeError(where, fmt::format("the board has {} targets; the host simulator handles at most {}", board.targets.size(),
                                        STOWAGE_SIM_MAX_TARGETS),
                     only);
  for (const Target& t : board.targets) {
    const std::string at = t.origin.empty() ? where : t.origin;
    if (t.cores > STOWAGE_SIM_MAX_CORES)
      return makeError(at,
                       fmt::format("target '{}' has {} cores; the host simulator handles at most {} per target", t.name, t.cores,
                                   STOWAGE_SIM_MAX_CORES),
                       only);
    if (t.dmaBytesPerCycle > 0 && t.dmaChannels > STOWAGE_SIM_MAX_CHANNELS)
      return makeError(at,
                       fmt::format("target '{}' has {} DMA channels; the host simulator handles at most {} per core", t.name,
                                   t.dmaChannels, STOWAGE_SIM_MAX_CHANNELS),
                       only);
  }
  return Status::success();
}

Result<std::vector<Tensor>> runOnHost(const CompileResult& compiled, const std::vector<Tensor>& inputs,
                                      const HostRunOptions& options) {
  STOWAGE_TRY(checkInputs(compiled, inputs));
  STOWAGE_TRY(checkSimulatorLimits(compiled.plan.board));
  const Graph& g = compiled.graph;

  STOWAGE_ASSIGN_OR_RETURN(BuildDir build, BuildDir::open(options.keepDir, "stowage-run"));
  const fs::path dir = build.path();

  // Sources, harness and input files.
  for (const GeneratedFile* f : {&compiled.code.header, &compiled.code.source, &compiled.code.weights})
    STOWAGE_TRY(writeTextFile(dir / f->fileName, f->text));
  // The board's own kernels ([[kernels]]): beside the generated C, their sources built with it.
  std::vector<std::string> boardKernelSources;
  for (const GeneratedFile& f : compiled.code.kernelFiles) {
    STOWAGE_TRY(writeTextFile(dir / f.fileName, f.text));
    if (fs::path(f.fileName).extension() == ".c") boardKernelSources.push_back(f.fileName);
  }
  STOWAGE_TRY(writeTextFile(dir / "main.c", emitHostHarness(g, compiled.plan, compiled.name, compiled.code.options, compiled.code.images,
                                                           options.simReport != nullptr)));
  std::vector<std::string> runArgs = {(dir / "harness").string()};
  for (size_t i = 0; i < inputs.size(); ++i) {
    const fs::path p = dir / fmt::format("input_{}.bin", i);
    STOWAGE_TRY(writeRaw(p.string(), inputs[i]));
    runArgs.push_back(p.string());
  }
  for (size_t i = 0; i < g.outputs.size(); ++i) runArgs.push_back((dir / fmt::format("output_{}.bin", i)).string());
  // Weights images (--weights bin, user/fixed constant pools): the harness loads them as boot code would.
  for (const GeneratedImage& image : compiled.code.images) {
    STOWAGE_TRY(writeTextFile(dir / image.fileName, image.bytes));
    runArgs.push_back((dir / image.fileName).string());
  }
  if (options.simReport) runArgs.insert(runArgs.end(), {(dir / "trace.json").string(), (dir / "sim_stats.txt").string()});

  // Compile: the weights (data only, so -O0 saves time on large models) and the code in parallel.
  std::string cc = options.compiler;
  if (cc.empty()) {
    const char* env = std::getenv("CC");
    cc = env && *env ? env : "cc";
  }
  const fs::path rtDir = runtimeSourceDir();
  const std::string rtLib = runtimeLibraryPath();
  std::vector<std::string> sources = {compiled.code.source.fileName, "main.c"};
  sources.insert(sources.end(), boardKernelSources.begin(), boardKernelSources.end());
  const bool haveLib = !rtLib.empty() && fs::exists(rtLib);
  if (!haveLib) {
    std::vector<std::string> rtSources;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(rtDir / "kernels", ec))
      if (e.path().extension() == ".c") rtSources.push_back(e.path().string());
    if (ec || rtSources.empty())
      return makeError(rtDir.string(), "the Stowage runtime was not found (neither the library nor runtime/kernels/*.c)",
                       "set STOWAGE_RUNTIME_DIR to the runtime/ folder of the Stowage sources, or STOWAGE_RUNTIME_LIB to libstowage_rt.a");
    std::sort(rtSources.begin(), rtSources.end());
    sources.insert(sources.end(), rtSources.begin(), rtSources.end());
  }
  // The host simulator of the HAL (fixed-address pools): the built library, else its sources.
  const std::string simLib = STOWAGE_SIM_LIB;
  const bool haveSimLib = !simLib.empty() && fs::exists(simLib);
  if (!haveSimLib) {
    std::vector<std::string> simSources;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(rtDir / "sim", ec))
      if (e.path().extension() == ".c") simSources.push_back(e.path().string());
    std::sort(simSources.begin(), simSources.end());
    sources.insert(sources.end(), simSources.begin(), simSources.end());
  }
  auto compileCommand = [&](const std::string& src, const std::string& opt, const std::string& obj) {
    std::vector<std::string> a = {cc};
    a.insert(a.end(), kStrictFlags.begin(), kStrictFlags.end());
    a.insert(a.end(), {opt, "-DSTOWAGE_HOST_SIM", "-pthread", "-I", (rtDir / "include").string(), "-I",
                       (rtDir / "sim").string(), "-I", dir.string(), "-c",
                       fs::path(src).is_absolute() ? src : (dir / src).string(), "-o", obj});
    return a;
  };
  // A small model (weights below kOneUnitWeightsBytes of C, no board kernels, the runtime and simulator as libraries):
  // <name>.c, main.c and the weights as one translation unit at -O1, compiled and linked by one compiler call; half
  // the CPU time of the separate objects (0.18 against 0.32 s on a one-layer model), which is most of a run.
  const bool oneUnit = haveLib && haveSimLib && boardKernelSources.empty() &&
                       compiled.code.weights.text.size() < kOneUnitWeightsBytes;
  if (oneUnit) {
    std::string unit;
    for (const std::string& f : {compiled.code.source.fileName, std::string("main.c"), compiled.code.weights.fileName})
      unit += fmt::format("#include \"{}\"\n", f);
    STOWAGE_TRY(writeTextFile(dir / "unit.c", unit));
    std::vector<std::string> build = compileCommand("unit.c", "-O1", (dir / "harness").string());
    build.erase(std::find(build.begin(), build.end(), "-c"));
    build.insert(build.end(), {simLib, rtLib, "-lm", "-pthread"});
    STOWAGE_ASSIGN_OR_RETURN(ProcessOutcome built, runProcess(build, (dir / "cc_unit.log").string()));
    STOWAGE_TRY(checkOutcome(built, build, "generated C failed to compile"));
  }
  struct Job {
    std::vector<std::string> argv;
    ChildProcess child;
  };
  std::vector<Job> jobs;
  if (!oneUnit) {
    jobs.push_back({compileCommand(compiled.code.weights.fileName, "-O0", (dir / "weights.o").string()), {}});
    std::vector<std::string> objects = {(dir / "weights.o").string()};
    // The harness (main.c: file I/O around one call of the model) at -O0 too: 30 ms less per run, no slower.
    for (size_t i = 0; i < sources.size(); ++i) {
      objects.push_back((dir / fmt::format("obj_{}.o", i)).string());
      jobs.push_back({compileCommand(sources[i], sources[i] == "main.c" ? "-O0" : "-O2", objects.back()), {}});
    }
    // At most two compilers at once: the weights file (slowest) and the rest one after another.
    Status buildStatus;
    STOWAGE_ASSIGN_OR_RETURN(jobs[0].child, startProcess(jobs[0].argv, (dir / "cc_weights.log").string()));
    for (size_t i = 1; i < jobs.size() && buildStatus.ok(); ++i) {
      auto out = runProcess(jobs[i].argv, (dir / fmt::format("cc_{}.log", i)).string());
      if (!out.ok()) buildStatus = out.error();
      else buildStatus = checkOutcome(*out, jobs[i].argv, "generated C failed to compile");
    }
    auto weightsOut = waitProcess(jobs[0].child);
    STOWAGE_TRY(buildStatus);
    if (!weightsOut.ok()) return weightsOut.error();
    STOWAGE_TRY(checkOutcome(*weightsOut, jobs[0].argv, "generated weights failed to compile"));

    std::vector<std::string> link = {cc};
    link.insert(link.end(), objects.begin(), objects.end());
    if (haveSimLib) link.push_back(simLib);  // before the kernels: the simulated engine runs them
    if (haveLib) link.push_back(rtLib);
    link.insert(link.end(), {"-lm", "-pthread", "-o", (dir / "harness").string()});
    STOWAGE_ASSIGN_OR_RETURN(ProcessOutcome linked, runProcess(link, (dir / "link.log").string()));
    STOWAGE_TRY(checkOutcome(linked, link, "linking the host harness failed"));
  }

  STOWAGE_ASSIGN_OR_RETURN(ProcessOutcome ran, runProcess(runArgs, (dir / "run.log").string()));
  STOWAGE_TRY(checkOutcome(ran, runArgs, "the generated program failed on the host"));

  if (options.simReport) {
    STOWAGE_ASSIGN_OR_RETURN(options.simReport->stats, readWholeFile(dir / "sim_stats.txt"));
    STOWAGE_ASSIGN_OR_RETURN(options.simReport->traceJson, readWholeFile(dir / "trace.json"));
  }

  std::vector<Tensor> outputs;
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const Tensor& o = g.tensor(g.outputs[i]);
    STOWAGE_ASSIGN_OR_RETURN(Tensor t, readRawTensor(runArgs[1 + inputs.size() + i], o.dtype, o.shape));
    t.name = o.name;
    t.kind = TensorKind::Activation;
    outputs.push_back(std::move(t));
  }
  return outputs;
}

}  // namespace stowage
