// ONNX conformance suite: runs ONNX's own backend test models (Debian package libonnx-testdata) through
// `stowage run` exactly as a user would, and compares every output with the reference output files.
//
// For each case folder holding model.onnx and test_data_set_*/: if the importer reports an unsupported op
// or dtype, the case is SKIPPED with the reason; otherwise each data set is run with the strict C flags
// and compared (float: |got - want| <= atol + rtol * |want|; integers: exact). Prints one line per case
// and ends with "N passed, N failed, N skipped". Exit status 1 when anything failed.
//
// --accel-flags FLAGS compiles every passing data set with FLAGS (an accelerator board; repeat the option for
// several boards, which share the one CPU run): a case counts as offloaded on that board when report.json shows at
// least one offloaded layer, and such a case is run with FLAGS: its outputs must be byte-identical to the CPU run's; --only-ops limits the suite to models using those ops and --min-offloaded fails the
// run when fewer cases were offloaded on any one board. --accel-ops runs the boards only on the cases whose models use
// those ops while every case still runs on the CPU (and in guard mode): one CPU run per case serves all checks.
// --boards-per-case N runs each case on N of the boards only, in rotation (case k on boards k, k+1, .. modulo their
// count), so that every board still sees every kind of case at about N / boards of the cost. --plain-every N (with
// --guard-flags) runs only every N-th case plainly too; the others run in guard mode only, compared with the reference.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "stowage/frontend/OnnxImporter.h"
#include "stowage/io/TensorCompare.h"
#include "stowage/io/TensorFile.h"

namespace fs = std::filesystem;
using namespace stowage;

namespace {

struct Options {
  fs::path data;
  fs::path work;
  fs::path cli;
  std::vector<std::string> suites = {"node", "pytorch-converted", "pytorch-operator", "simple"};
  std::string filter;
  int jobs = 2;
  double rtol = 1e-4;
  double atol = 1e-5;
  bool verbose = false;
  /// Fails the run when fewer cases pass: guards against a change that quietly turns passes into skips.
  size_t minPassed = 0;
  /// When set: each passing data set runs a second time with `--guard` and these memory flags (a tight
  /// multi-pool board), and its outputs must be byte-identical to the first run's.
  std::string guardFlags;
  /// Each passing data set runs again with each of these flags (accelerator boards); outputs must be
  /// byte-identical, and the case counts as offloaded on a board when the compile offloads at least one layer.
  std::vector<std::string> accelFlags;
  /// Only cases whose model has a node of one of these ONNX op types (empty: all).
  std::vector<std::string> onlyOps;
  /// With accelFlags: only cases whose model has a node of one of these op types run on the boards (empty: all).
  std::vector<std::string> accelOps;
  /// Fails the run when fewer cases were offloaded on any one board (with --accel-flags).
  size_t minOffloaded = 0;
  /// With accelFlags: each case runs on this many of the boards, in rotation by its position (0: all).
  size_t boardsPerCase = 0;
  /// With guardFlags: only every N-th case (by position) also runs plainly, with no flags; the others run in guard
  /// mode only, which then serves as the case's run (reference outputs, the boards' bytes). 0 or 1: every case.
  size_t plainEvery = 0;
};

/// Whether case number `index` runs on board `board` of `boards` when each case runs on `perCase` of them.
bool caseRunsOnBoard(size_t index, size_t board, size_t boards, size_t perCase) {
  if (perCase == 0 || perCase >= boards) return true;
  return (board + boards - index % boards) % boards < perCase;
}

enum class Outcome { Pass, Fail, Skip };

struct CaseResult {
  std::string name;
  Outcome outcome = Outcome::Pass;
  std::string detail;
  std::vector<int> offloadedLayers = {};  ///< with --accel-flags: per board, the fewest layers offloaded over the data sets
};

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

std::string readText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// First line of a (possibly multi-line) message, trimmed to keep the summary one line per case.
std::string firstLine(const std::string& s) {
  std::string line = s.substr(0, s.find('\n'));
  if (line.size() > 200) line = line.substr(0, 200) + "...";
  return line;
}

/// Whether the model has a node whose op type is in `ops`.
bool usesAnyOp(const fs::path& model, const std::vector<std::string>& ops) {
  onnx::ModelProto proto;
  std::ifstream in(model, std::ios::binary);
  if (!in || !proto.ParseFromIstream(&in)) return false;
  for (const auto& n : proto.graph().node())
    if (std::find(ops.begin(), ops.end(), n.op_type()) != ops.end()) return true;
  return false;
}

/// Number of layers report.json marks as offloaded (each has an "offload" object).
int offloadedLayers(const fs::path& report) {
  const std::string text = readText(report);
  int count = 0;
  for (size_t at = text.find("\"offload\""); at != std::string::npos; at = text.find("\"offload\"", at + 1)) ++count;
  return count;
}

/// Runs `stowage COMMAND MODEL ARGS` (ARGS ending with its output flag) with stdout discarded and stderr in `errFile`:
/// "" when it succeeds, else "stowage COMMAND exited N: " and the first line of its stderr.
std::string runStowage(const Options& opt, const std::string& command, const fs::path& model, const std::string& args,
                       const fs::path& errFile) {
  const std::string cmd = quote(opt.cli.string()) + " " + command + " " + quote(model.string()) + args + " > /dev/null 2> " +
                          quote(errFile.string());
  const int rc = std::system(cmd.c_str());
  if (rc == 0) return "";
  return "stowage " + command + " exited " + std::to_string(WEXITSTATUS(rc)) + ": " + firstLine(readText(errFile));
}

/// Graph inputs that are not initializers, in order, with their ONNX element types.
bool modelInputs(const fs::path& model, std::vector<std::pair<std::string, int>>& inputs) {
  onnx::ModelProto proto;
  std::ifstream in(model, std::ios::binary);
  if (!in || !proto.ParseFromIstream(&in)) return false;
  std::vector<std::string> inits;
  for (const auto& t : proto.graph().initializer()) inits.push_back(t.name());
  for (const auto& vi : proto.graph().input()) {
    if (std::find(inits.begin(), inits.end(), vi.name()) != inits.end()) continue;
    inputs.emplace_back(vi.name(), vi.type().tensor_type().elem_type());
  }
  return true;
}

CaseResult runCase(const Options& opt, size_t index, const std::string& suite, const fs::path& dir) {
  CaseResult r;
  r.name = suite + "/" + dir.filename().string();
  const fs::path model = dir / "model.onnx";
  std::vector<std::pair<std::string, int>> inputs;
  if (!modelInputs(model, inputs)) return {r.name, Outcome::Fail, "cannot parse model.onnx"};

  // With --accel-ops, only the cases whose models use those ops run on the boards.
  const bool onBoards = !opt.accelFlags.empty() && (opt.accelOps.empty() || usesAnyOp(model, opt.accelOps));
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) return {r.name, Outcome::Skip, "no test_data_set_* folders"};

  for (const fs::path& set : sets) {
    // int64 graph inputs carry shapes, axes or pads: bind them at compile time (static shapes only).
    OnnxImportOptions importOptions;
    std::string args, compileArgs;  // compileArgs: the shapes and bindings without the input files
    for (size_t k = 0; k < inputs.size(); ++k) {
      fs::path file = set / ("input_" + std::to_string(k) + ".pb");
      if (!fs::exists(file)) return {r.name, Outcome::Skip, "data set lacks " + file.filename().string() + " (optional input)"};
      if (inputs[k].second == onnx::TensorProto::INT64) {
        auto t = readTensorFile(file.string());
        if (!t.ok()) return {r.name, Outcome::Fail, firstLine(t.error().render())};
        importOptions.boundInputs[inputs[k].first] = std::move(t.value());
        args += " --bind " + quote(inputs[k].first + "=" + file.string());
        compileArgs += " --bind " + quote(inputs[k].first + "=" + file.string());
      } else {
        // Models with dynamic dims get the data set's shapes, as a user would pass them with --shape.
        // A file Stowage cannot read (an unsupported dtype) passes no shape: the importer then names the dtype.
        auto t = readTensorFile(file.string());
        if (t.ok() && !t->shape.empty()) {
          importOptions.inputShapes[inputs[k].first] = t->shape;
          args += " --shape " + quote(inputs[k].first + "=" + shapeToString(t->shape));
          compileArgs += " --shape " + quote(inputs[k].first + "=" + shapeToString(t->shape));
        }
        args += " --input " + quote(file.string());
      }
    }
    auto graph = importOnnxFile(model.string(), importOptions);
    if (!graph.ok()) {
      const Diagnostic& d = graph.error();
      std::string why = d.message + (d.location.empty() ? "" : " [" + d.location + "]");
      return {r.name, d.unsupported ? Outcome::Skip : Outcome::Fail, firstLine(why)};
    }

    const fs::path out = opt.work / suite / dir.filename() / set.filename();
    fs::remove_all(out);
    fs::create_directories(out.parent_path());
    const fs::path errFile = out.string() + ".stderr";
    // Without a plain run (--plain-every), the guard-mode run is the case's run: its outputs go to `out`.
    const bool plain = opt.guardFlags.empty() || opt.plainEvery <= 1 || index % opt.plainEvery == 0;
    const std::string firstRunFlags = plain ? "" : " --guard " + opt.guardFlags;
    if (std::string err = runStowage(opt, "run", model, args + firstRunFlags + " --output-dir " + quote(out.string()), errFile); !err.empty())
      return {r.name, Outcome::Fail, plain ? err : "guard mode: " + err};
    const fs::path guardOut = out.string() + ".guard";
    const bool guardRun = plain && !opt.guardFlags.empty();
    if (guardRun) {
      fs::remove_all(guardOut);
      if (std::string err = runStowage(opt, "run", model, args + " --guard " + opt.guardFlags + " --output-dir " + quote(guardOut.string()),
                                       errFile);
          !err.empty())
        return {r.name, Outcome::Fail, "guard mode: " + err};
    }
    r.offloadedLayers.resize(opt.accelFlags.size(), -1);
    std::vector<bool> accelRan(opt.accelFlags.size(), false);
    for (size_t b = 0; onBoards && b < opt.accelFlags.size(); ++b) {
      if (!caseRunsOnBoard(index, b, opt.accelFlags.size(), opt.boardsPerCase)) continue;
      const std::string& flags = opt.accelFlags[b];
      // The compile's report says which layers the board offloads; a case that offloads nothing on this board runs
      // only on its CPU there, which the guard-board run of the main suite already checks, so it is not run again.
      const fs::path compiled = out.string() + ".compiled";
      fs::remove_all(compiled);
      if (std::string err = runStowage(opt, "compile", model, compileArgs + " " + flags + " -o " + quote(compiled.string()), errFile);
          !err.empty())
        return {r.name, Outcome::Fail, "accelerator compile (" + flags + "): " + err};
      const int layers = offloadedLayers(compiled / "report.json");
      r.offloadedLayers[b] = r.offloadedLayers[b] < 0 ? layers : std::min(r.offloadedLayers[b], layers);
      fs::remove_all(compiled);
      if (layers == 0) continue;
      const fs::path accelOut = out.string() + ".accel" + std::to_string(b);
      fs::remove_all(accelOut);
      if (std::string err = runStowage(opt, "run", model, args + " " + flags + " --output-dir " + quote(accelOut.string()), errFile);
          !err.empty())
        return {r.name, Outcome::Fail, "accelerator run (" + flags + "): " + err};
      accelRan[b] = true;
    }
    for (size_t k = 0;; ++k) {
      fs::path want = set / ("output_" + std::to_string(k) + ".pb");
      if (!fs::exists(want)) break;
      fs::path got = out / ("output_" + std::to_string(k) + ".pb");
      auto w = readTensorFile(want.string());
      auto g = readTensorFile(got.string());
      if (!w.ok()) return {r.name, Outcome::Fail, "reference " + firstLine(w.error().render())};
      if (!g.ok()) return {r.name, Outcome::Fail, firstLine(g.error().render())};
      std::string diff = compareTensors(*g, *w, Tolerance{opt.rtol, opt.atol});
      if (!diff.empty())
        return {r.name, Outcome::Fail, set.filename().string() + " output_" + std::to_string(k) + ": " + diff};
      if (guardRun && readText(got) != readText(guardOut / got.filename()))
        return {r.name, Outcome::Fail, set.filename().string() + " output_" + std::to_string(k) + " differs in guard mode"};
      for (size_t b = 0; b < opt.accelFlags.size(); ++b)
        if (accelRan[b] && readText(got) != readText(fs::path(out.string() + ".accel" + std::to_string(b)) / got.filename()))
          return {r.name, Outcome::Fail,
                  set.filename().string() + " output_" + std::to_string(k) + " differs on the accelerator (" + opt.accelFlags[b] + ")"};
    }
    fs::remove_all(out);
    fs::remove_all(guardOut);
    for (size_t b = 0; b < opt.accelFlags.size(); ++b) fs::remove_all(out.string() + ".accel" + std::to_string(b));
    fs::remove(errFile);
  }
  return r;
}

/// "Conv,Gemm" -> {"Conv", "Gemm"}.
std::vector<std::string> splitOps(const std::string& list) {
  std::vector<std::string> ops;
  for (size_t start = 0; start <= list.size();) {
    const size_t end = std::min(list.find(',', start), list.size());
    if (end > start) ops.push_back(list.substr(start, end - start));
    start = end + 1;
  }
  return ops;
}

int usage() {
  std::fprintf(stderr,
               "usage: stowage_conformance --data DIR --work DIR --cli PATH [--suite NAME]... [--filter TEXT]\n"
               "                           [--jobs N] [--rtol X] [--atol X] [--min-passed N] [--guard-flags FLAGS]\n"
               "                           [--accel-flags FLAGS] [--only-ops OP,OP,...] [--accel-ops OP,OP,...]\n"
               "                           [--min-offloaded N] [--boards-per-case N] [--plain-every N] [--verbose]\n"
               "Runs ONNX backend test cases (DIR/<suite>/<case>/model.onnx) through `stowage run`.\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  bool suitesGiven = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--data") opt.data = next();
    else if (a == "--work") opt.work = next();
    else if (a == "--cli") opt.cli = next();
    else if (a == "--filter") opt.filter = next();
    else if (a == "--jobs") opt.jobs = std::max(1, std::atoi(next().c_str()));
    else if (a == "--rtol") opt.rtol = std::atof(next().c_str());
    else if (a == "--atol") opt.atol = std::atof(next().c_str());
    else if (a == "--verbose") opt.verbose = true;
    else if (a == "--min-passed") opt.minPassed = static_cast<size_t>(std::atol(next().c_str()));
    else if (a == "--guard-flags") opt.guardFlags = next();
    else if (a == "--accel-flags") opt.accelFlags.push_back(next());
    else if (a == "--min-offloaded") opt.minOffloaded = static_cast<size_t>(std::atol(next().c_str()));
    else if (a == "--boards-per-case") opt.boardsPerCase = static_cast<size_t>(std::atol(next().c_str()));
    else if (a == "--plain-every") opt.plainEvery = static_cast<size_t>(std::atol(next().c_str()));
    else if (a == "--only-ops") opt.onlyOps = splitOps(next());
    else if (a == "--accel-ops") opt.accelOps = splitOps(next());
    else if (a == "--suite") {
      if (!suitesGiven) opt.suites.clear();
      suitesGiven = true;
      opt.suites.push_back(next());
    } else return usage();
  }
  if (opt.data.empty() || opt.work.empty() || opt.cli.empty()) return usage();
  if (!fs::is_directory(opt.data)) {
    std::printf("conformance data not found at %s (Debian package libonnx-testdata); nothing to run\n",
                opt.data.c_str());
    std::printf("0 passed, 0 failed, 0 skipped\n");
    return 0;
  }

  std::vector<std::pair<std::string, fs::path>> cases;
  for (const auto& suite : opt.suites) {
    fs::path root = opt.data / suite;
    if (!fs::is_directory(root)) continue;
    std::vector<fs::path> dirs;
    for (const auto& e : fs::directory_iterator(root))
      if (fs::exists(e.path() / "model.onnx")) dirs.push_back(e.path());
    std::sort(dirs.begin(), dirs.end());
    for (auto& d : dirs)
      if ((opt.filter.empty() || d.filename().string().find(opt.filter) != std::string::npos) &&
          (opt.onlyOps.empty() || usesAnyOp(d / "model.onnx", opt.onlyOps)))
        cases.emplace_back(suite, d);
  }

  std::vector<CaseResult> results(cases.size());
  std::atomic<size_t> nextCase{0};
  std::mutex printMutex;
  auto worker = [&] {
    for (size_t i; (i = nextCase++) < cases.size();) {
      results[i] = runCase(opt, i, cases[i].first, cases[i].second);
      if (opt.verbose) {
        std::lock_guard<std::mutex> lock(printMutex);
        std::fprintf(stderr, "[%zu/%zu] %s\n", i + 1, cases.size(), results[i].name.c_str());
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < opt.jobs; ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();

  size_t passed = 0, failed = 0, skipped = 0;
  std::vector<size_t> offloaded(opt.accelFlags.size(), 0), tried(opt.accelFlags.size(), 0);
  for (const auto& r : results) {
    switch (r.outcome) {
      case Outcome::Pass: {
        ++passed;
        std::string boards;
        for (size_t b = 0; b < opt.accelFlags.size(); ++b) {
          const int layers = b < r.offloadedLayers.size() ? r.offloadedLayers[b] : -1;
          if (layers < 0) continue;  // not tried on this board (--accel-ops, --boards-per-case)
          ++tried[b];
          if (layers > 0) ++offloaded[b];
          boards += std::string(b ? "; " : " (") + "board " + std::to_string(b + 1) + ": " +
                    (layers > 0 ? "bit-identical, " + std::to_string(layers) + " layer(s) offloaded"
                                : "nothing offloaded (the compile summary's remarks say why), not run");
        }
        std::printf("PASS %s%s\n", r.name.c_str(), boards.empty() ? "" : (boards + ")").c_str());
        break;
      }
      case Outcome::Fail: ++failed; std::printf("FAIL %s: %s\n", r.name.c_str(), r.detail.c_str()); break;
      case Outcome::Skip: ++skipped; std::printf("SKIP %s: %s\n", r.name.c_str(), r.detail.c_str()); break;
    }
  }
  if (passed < opt.minPassed)
    std::printf("FAIL suite: only %zu cases passed; at least %zu are expected (--min-passed)\n", passed, opt.minPassed);
  bool offloadedEnough = true;
  for (size_t b = 0; b < opt.accelFlags.size(); ++b) {
    std::printf("board %zu (%s): %zu of the %zu passing cases tried on it ran at least one layer on the accelerator, bit-identical to the CPU "
                "run (%zu passing cases in all%s)\n",
                b + 1, opt.accelFlags[b].c_str(), offloaded[b], tried[b], passed,
                opt.accelOps.empty() && opt.boardsPerCase == 0 ? ""
                                                               : "; a case is tried when its model uses an --accel-ops op, on --boards-per-case boards");
    if (offloaded[b] < opt.minOffloaded) {
      offloadedEnough = false;
      std::printf("FAIL suite: only %zu cases were offloaded on board %zu; at least %zu are expected (--min-offloaded)\n", offloaded[b], b + 1,
                  opt.minOffloaded);
    }
  }
  std::printf("%zu passed, %zu failed, %zu skipped\n", passed, failed, skipped);
  std::fflush(stdout);
  return failed == 0 && passed >= opt.minPassed && offloadedEnough ? 0 : 1;
}
