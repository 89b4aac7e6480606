// ONNX Runtime oracle and output comparison for the end-to-end tests (see OrtOracle.h).
#include "OrtOracle.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

#include "E2eSupport.h"
#include "stowage/frontend/OnnxImporter.h"
#include "stowage/frontend/TfliteImporter.h"
#include "stowage/io/TensorFile.h"
#include "stowage/zoo/OnnxGraphBuilder.h"

namespace stowage::e2e {
namespace {

namespace fs = std::filesystem;

// Element i of an integer or bool tensor as int64.
int64_t ortIntAt(const Tensor& t, int64_t i) {
  const uint8_t* p = t.data.data() + static_cast<size_t>(i) * dtypeSize(t.dtype);
  switch (t.dtype) {
    case DType::Int8: return static_cast<int8_t>(*p);
    case DType::UInt8:
    case DType::Bool: return *p;
    case DType::Int32: { int32_t v; std::memcpy(&v, p, 4); return v; }
    case DType::Int64: { int64_t v; std::memcpy(&v, p, 8); return v; }
    case DType::Float32: break;
  }
  return 0;
}

}  // namespace

bool ortOracleAvailable(std::string* why) {
  const std::string reason = nodeOracleMissing(ortOracleDir(), "onnxruntime-node", "ONNX Runtime oracle");
  if (why) *why = reason;
  return reason.empty();
}

ModelRun runOrtOracle(const fs::path& model, const std::vector<Tensor>& inputs, const fs::path& work,
                      const std::string& level, bool dumpIntermediates) {
  return runOrtOracleBatch({OrtJob{model, inputs, work, level, dumpIntermediates}}, work / "ort_batch.json").front();
}

std::vector<ModelRun> runOrtOracleBatch(const std::vector<OrtJob>& jobs, const fs::path& batchFile) {
  std::vector<NodeOracleJob> runs;
  for (const OrtJob& job : jobs) {
    runs.push_back(NodeOracleJob{job.model, job.inputs, job.work,
                                 {{"level", job.level}, {"dumpIntermediates", job.dumpIntermediates}},
                                 "ONNX Runtime (" + job.model.string() + ", level " + job.level + ")"});
  }
  return runNodeOracleBatch(ortOracleDir() + "/run.js", "ort_", runs, batchFile);
}

ModelRun runStowageCli(const fs::path& model, const std::vector<Tensor>& inputs, const fs::path& work,
                       const std::string& extraFlags) {
  ModelRun run;
  fs::create_directories(work);
  std::vector<std::string> files = writeNpyInputs(inputs, work, "stowage_input_", &run.error);
  if (!run.error.empty()) return run;
  fs::path out = work / "stowage_out";
  fs::remove_all(out);
  std::string cmd = cli() + " run " + shellQuote(model.string()) + " --output-dir " + shellQuote(out.string()) +
                    " --format npy";
  if (!files.empty()) {
    cmd += " --input";
    for (const std::string& f : files) cmd += " " + shellQuote(f);
  }
  if (!extraFlags.empty()) cmd += " " + extraFlags;
  CommandResult r = runCommand(cmd);
  if (r.exitCode != 0) {
    run.error = "stowage run (" + cmd + ") failed (exit code " + std::to_string(r.exitCode) + "): " + r.err;
    return run;
  }
  // A model with N outputs: output_0.npy ... output_{N-1}.npy.
  for (int i = 0;; ++i) {
    fs::path file = out / ("output_" + std::to_string(i) + ".npy");
    if (!fs::exists(file)) break;
    auto t = readTensorFile(file.string());
    if (!t.ok()) {
      run.error = "cannot read stowage output " + file.string() + ": " + t.error().render();
      return run;
    }
    t->kind = TensorKind::Activation;
    run.outputs.push_back(std::move(*t));
  }
  if (run.outputs.empty()) run.error = "stowage run wrote no output_0.npy in " + out.string();
  return run;
}

std::vector<Tensor> randomModelInputs(const fs::path& model, uint64_t seed, std::string* error, double lo, double hi) {
  auto graph = model.extension() == ".tflite" ? importTfliteFile(model.string()) : importOnnxFile(model.string());
  if (!graph.ok()) {
    if (error) *error = graph.error().render();
    return {};
  }
  zoo::SplitMix64 rng(seed);
  std::vector<Tensor> inputs;
  for (TensorId id : graph->inputs) {
    const Tensor& g = graph->tensor(id);
    Tensor t;
    t.name = g.name;
    t.dtype = g.dtype;
    t.shape = g.shape;
    t.kind = TensorKind::Input;
    t.data.resize(t.byteSize());
    for (int64_t i = 0; i < t.numElements(); ++i) {
      double u = (static_cast<double>(rng.uniform()) + 1.0) / 2.0;  // [0, 1)
      uint8_t* p = t.data.data() + static_cast<size_t>(i) * dtypeSize(t.dtype);
      if (t.dtype == DType::Float32) {
        float v = static_cast<float>(lo + (hi - lo) * u);
        std::memcpy(p, &v, 4);
        continue;
      }
      double tmin = 0, tmax = 1;
      switch (t.dtype) {
        case DType::Int8: tmin = -128; tmax = 127; break;
        case DType::UInt8: tmax = 255; break;
        case DType::Int32: tmin = -2147483648.0; tmax = 2147483647.0; break;
        case DType::Int64: tmin = -9.2e18; tmax = 9.2e18; break;
        default: break;
      }
      double a = std::max(std::ceil(lo), tmin), b = std::min(std::floor(hi), tmax);
      if (t.dtype == DType::Bool) a = 0, b = 1;
      int64_t v = static_cast<int64_t>(a + std::floor(u * (b - a + 1)));
      v = std::min<int64_t>(v, static_cast<int64_t>(b));
      std::memcpy(p, &v, dtypeSize(t.dtype));  // little-endian: the low bytes
    }
    inputs.push_back(std::move(t));
  }
  return inputs;
}

std::string TensorDiff::summary() const {
  if (!mismatch.empty()) return mismatch;
  std::ostringstream s;
  if (differing == 0) {
    s << "ok (" << elements << " elements, max abs diff " << maxAbs << ", max rel diff " << maxRel << ")";
    return s.str();
  }
  s << differing << " of " << elements << " elements differ (first at flat index " << firstIndex
    << "), max abs diff " << maxAbs << ", max rel diff " << maxRel;
  if (maxSteps > 0) s << ", max " << maxSteps << " steps";
  return s.str();
}

TensorDiff diffTensors(const Tensor& got, const Tensor& want, Tolerance tol, int64_t allowedSteps) {
  TensorDiff d;
  if (got.dtype != want.dtype) {
    d.mismatch = "dtype " + std::string(dtypeName(got.dtype)) + " vs " + std::string(dtypeName(want.dtype));
    return d;
  }
  if (got.shape != want.shape) {
    d.mismatch = "shape " + shapeToString(got.shape) + " vs " + shapeToString(want.shape);
    return d;
  }
  d.elements = got.numElements();
  if (got.data.size() != got.byteSize() || want.data.size() != want.byteSize()) {
    d.mismatch = "data size does not match the shape";
    return d;
  }
  for (int64_t i = 0; i < d.elements; ++i) {
    bool differs = false;
    if (got.dtype == DType::Float32) {
      float a, b;
      std::memcpy(&a, got.data.data() + 4 * i, 4);
      std::memcpy(&b, want.data.data() + 4 * i, 4);
      double diff;
      if (std::isnan(a) || std::isnan(b)) {
        differs = std::isnan(a) != std::isnan(b);
        diff = differs ? std::numeric_limits<double>::infinity() : 0.0;
      } else if (std::isinf(a) || std::isinf(b)) {
        differs = a != b;
        diff = differs ? std::numeric_limits<double>::infinity() : 0.0;
      } else {
        diff = std::fabs(static_cast<double>(a) - static_cast<double>(b));
        differs = diff > tol.atol + tol.rtol * std::fabs(static_cast<double>(b));
        if (b != 0.0f) d.maxRel = std::max(d.maxRel, diff / std::fabs(static_cast<double>(b)));
      }
      d.maxAbs = std::max(d.maxAbs, diff);
    } else {
      int64_t a = ortIntAt(got, i), b = ortIntAt(want, i);
      int64_t steps = a > b ? a - b : b - a;
      d.maxSteps = std::max(d.maxSteps, steps);
      d.maxAbs = std::max(d.maxAbs, static_cast<double>(steps));
      differs = steps > allowedSteps;
    }
    if (differs) {
      if (d.differing == 0) d.firstIndex = i;
      ++d.differing;
    }
  }
  return d;
}

std::string diffOutputs(const std::vector<Tensor>& got, const std::vector<Tensor>& want, Tolerance tol,
                        int64_t allowedSteps) {
  if (got.size() != want.size()) {
    return std::to_string(got.size()) + " outputs vs " + std::to_string(want.size()) + "\n";
  }
  std::string report;
  for (size_t i = 0; i < got.size(); ++i) {
    TensorDiff d = diffTensors(got[i], want[i], tol, allowedSteps);
    if (!d.same()) report += "output " + std::to_string(i) + " (" + want[i].name + "): " + d.summary() + "\n";
  }
  return report;
}

}  // namespace stowage::e2e
