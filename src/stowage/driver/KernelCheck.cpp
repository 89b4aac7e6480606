// The board-kernel check (see KernelCheck.h).
#include "stowage/driver/KernelCheck.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <set>

#include "stowage/io/TensorFile.h"

namespace stowage {

namespace {

/// Element `k` of `t` as text.
std::string valueText(const Tensor& t, int64_t k) {
  const uint8_t* p = t.data.data() + static_cast<size_t>(k) * dtypeSize(t.dtype);
  switch (t.dtype) {
    case DType::Float32: {
      float x;
      std::memcpy(&x, p, 4);
      return fmt::format("{:.9g}", x);
    }
    case DType::Int8: return std::to_string(static_cast<int8_t>(*p));
    case DType::Int32: {
      int32_t x;
      std::memcpy(&x, p, 4);
      return std::to_string(x);
    }
    case DType::Int64: {
      int64_t x;
      std::memcpy(&x, p, 8);
      return std::to_string(x);
    }
    default: return std::to_string(*p);
  }
}

/// Compares `board` with `portable` element by element (as bytes) into `out`.
void compare(const Tensor& board, const Tensor& portable, KernelCheckTensor& out) {
  const size_t elem = dtypeSize(board.dtype);
  out.elements = board.numElements();
  for (int64_t k = 0; k < out.elements; ++k) {
    const size_t at = static_cast<size_t>(k) * elem;
    if (std::memcmp(board.data.data() + at, portable.data.data() + at, elem) == 0) continue;
    if (out.differing++ == 0) {
      out.first = k;
      out.boardValue = valueText(board, k);
      out.portableValue = valueText(portable, k);
    }
  }
}

}  // namespace

bool KernelCheckReport::identical() const {
  return std::all_of(tensors.begin(), tensors.end(), [](const KernelCheckTensor& t) { return t.differing == 0; });
}

std::vector<Tensor> randomInputs(const Graph& g, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Tensor> out;
  for (TensorId id : g.inputs) {
    Tensor t = g.tensor(id);
    t.kind = TensorKind::Activation;
    t.data.assign(t.byteSize(), 0);
    const int64_t n = t.numElements();
    for (int64_t k = 0; k < n; ++k) {
      uint8_t* p = t.data.data() + static_cast<size_t>(k) * dtypeSize(t.dtype);
      switch (t.dtype) {
        case DType::Float32: {
          const float x = std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng);
          std::memcpy(p, &x, 4);
          break;
        }
        case DType::Int8:
        case DType::UInt8: *p = static_cast<uint8_t>(rng() & 0xFF); break;
        default: *p = static_cast<uint8_t>(rng() & 1); break;  // little-endian 0 or 1 for int32 / int64 / bool
      }
    }
    out.push_back(std::move(t));
  }
  return out;
}

Result<KernelCheckReport> checkBoardKernels(const KernelCheckOptions& options) {
  CompileOptions compile = options.compile;
  compile.outDir.clear();
  compile.projectDir.clear();
  compile.portableKernels = false;
  const std::string boardWhere = compile.board.boardPath.empty() ? "--board" : compile.board.boardPath;
  STOWAGE_ASSIGN_OR_RETURN(Board board, resolveCompileBoard(compile));
  if (board.kernels.empty())
    return makeError(boardWhere, "the board names no kernels of its own: there is nothing to check",
                     "add [[kernels]] tables to the board (docs/kernels.md)");
  STOWAGE_ASSIGN_OR_RETURN(Graph imported, importModel(compile));
  // A first compile says which layers call board kernels.
  STOWAGE_ASSIGN_OR_RETURN(CompileResult first, compileGraphOnBoard(imported, board, compile));
  KernelCheckReport report;
  report.calls = first.code.boardKernelCalls;
  report.remarks = first.plan.remarks;
  if (report.calls.empty())
    return makeError(boardWhere, fmt::format("no layer of model '{}' calls one of the board's kernels: there is nothing to check",
                                             compile.modelPath),
                     "check each [[kernels]] table's kernel, dtype and target against the layers (stowage compile prints a remark per "
                     "board kernel no layer calls)");

  // The graph both programs run: the compiled graph with each board-kernel layer's output and the tensors it reads as
  // extra outputs, so each layer is compared on its own.
  Graph g = first.graph;
  const size_t modelOutputs = g.outputs.size();
  std::set<TensorId> outputs(g.outputs.begin(), g.outputs.end()), graphInputs(g.inputs.begin(), g.inputs.end());
  std::vector<TensorId> layerTensors;
  auto expose = [&](TensorId id) {
    if (id == kNoTensor || g.tensor(id).isConstant() || graphInputs.count(id)) return;
    if (std::find(layerTensors.begin(), layerTensors.end(), id) == layerTensors.end()) layerTensors.push_back(id);
    if (outputs.insert(id).second) g.outputs.push_back(id);
  };
  std::set<int> steps;
  for (const BoardKernelCall& c : report.calls) steps.insert(c.step);
  for (int step : steps) {
    const Node& n = g.nodes[static_cast<size_t>(step)];
    for (TensorId id : n.inputs) expose(id);
    for (TensorId id : n.outputs) expose(id);
  }

  std::vector<Tensor> inputs;
  if (options.inputFiles.empty()) inputs = randomInputs(g, options.seed);
  for (size_t i = 0; i < options.inputFiles.size(); ++i) {
    const std::string& path = options.inputFiles[i];
    if (std::filesystem::path(path).extension() == ".bin" && i < g.inputs.size()) {
      const Tensor& want = g.tensor(g.inputs[i]);
      STOWAGE_ASSIGN_OR_RETURN(Tensor t, readRawTensor(path, want.dtype, want.shape));
      inputs.push_back(std::move(t));
    } else {
      STOWAGE_ASSIGN_OR_RETURN(Tensor t, readTensorFile(path));
      inputs.push_back(std::move(t));
    }
  }
  STOWAGE_TRY(checkInputs(first, inputs));
  auto build = [&](bool portable, const char* sub) -> Result<std::vector<Tensor>> {
    CompileOptions o = compile;
    o.portableKernels = portable;
    STOWAGE_ASSIGN_OR_RETURN(CompileResult r, compileGraphOnBoard(g, board, o));
    HostRunOptions run = options.run;
    if (!run.keepDir.empty()) run.keepDir = (std::filesystem::path(run.keepDir) / sub).string();
    return runOnHost(r, inputs, run);
  };
  STOWAGE_ASSIGN_OR_RETURN(std::vector<Tensor> withBoard, build(false, "board"));
  STOWAGE_ASSIGN_OR_RETURN(std::vector<Tensor> withPortable, build(true, "portable"));
  // Results by tensor id (the outputs of both runs follow g.outputs).
  std::map<TensorId, size_t> at;
  for (size_t i = 0; i < g.outputs.size(); ++i) at[g.outputs[i]] = i;
  const std::vector<int> producers = g.producers();
  std::map<TensorId, bool> same;
  auto add = [&](TensorId id, bool modelOutput) {
    KernelCheckTensor t;
    t.tensor = g.tensor(id).name;
    t.modelOutput = modelOutput;
    const int step = producers[static_cast<size_t>(id)];
    if (step >= 0) {
      t.node = g.nodes[static_cast<size_t>(step)].name;
      for (const BoardKernelCall& c : report.calls)
        if (c.step == step) {
          t.function = c.function;
          t.kernel = c.kernel;
        }
      for (TensorId in : g.nodes[static_cast<size_t>(step)].inputs)
        if (auto s = same.find(in); s != same.end() && !s->second) t.inputsIdentical = false;
    }
    compare(withBoard[at.at(id)], withPortable[at.at(id)], t);
    same[id] = t.differing == 0;
    report.tensors.push_back(std::move(t));
  };
  std::vector<TensorId> ordered = layerTensors;  // in step order: the writer of each before its readers
  std::stable_sort(ordered.begin(), ordered.end(), [&](TensorId a, TensorId b) { return producers[static_cast<size_t>(a)] < producers[static_cast<size_t>(b)]; });
  for (TensorId id : ordered) add(id, std::find(g.outputs.begin(), g.outputs.begin() + static_cast<std::ptrdiff_t>(modelOutputs), id) !=
                                          g.outputs.begin() + static_cast<std::ptrdiff_t>(modelOutputs));
  for (size_t i = 0; i < modelOutputs; ++i)
    if (std::find(ordered.begin(), ordered.end(), g.outputs[i]) == ordered.end()) add(g.outputs[i], true);
  return report;
}

}  // namespace stowage
