// Model memory benchmark: compiles each MLPerf Tiny int8 model of ../shared/models/mlperf-tiny on the default
// board and prints, as a markdown table for bench/RESULTS.md, the RAM Stowage's plan uses against the lower bound
// of its own schedule, the sum of all activations (no reuse) and TensorFlow Lite Micro's arena; then, for the branching
// models of ../shared/models (onnx-light, the TFLM MobileNetV2 224), the RAM with and without the memory-aware
// operator order (pass/ReorderForMemory.h) and the time that pass takes.
// A plain executable: built by `make build`, not run by ctest. Usage: stowage_bench_models [SHARED_DIR].
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "stowage/driver/Compiler.h"

namespace fs = std::filesystem;
using namespace stowage;

namespace {

/// One model and TFLM's published arena for it.
struct Model {
  const char* file;  ///< under models/mlperf-tiny/
  const char* label;
  /// TFLM `arena_used_bytes()` after AllocateTensors(), 32-bit build, default GreedyMemoryPlanner; "head" is
  /// the activation plan alone (tail = TFLM's persistent structures). From
  /// ../shared/models/mlperf-tiny/reference/README.md, "TFLM memory for these models". 0: not given there.
  size_t tflmArena32 = 0, tflmHead = 0;
};

// Figures copied from ../shared/models/mlperf-tiny/reference/README.md (table "TFLM memory for these models").
// VWW has no TFLM measurement in that file; ../shared/docs/mlperf-tiny-anchors.md gives only its live-bytes
// lower bound (55,296 B), so its TFLM columns stay empty.
const std::vector<Model> kModels = {
    {"pretrainedResnet_quant.tflite", "IC ResNet-8", 54364, 49152},
    {"kws_ref_model.tflite", "KWS DS-CNN", 22780, 16000},
    {"vww_96_int8.tflite", "VWW MobileNetV1 0.25", 0, 0},
    {"model_ToyCar_quant_fullint_micro.tflite", "AD ToyCar (float I/O)", 4920, 3200},
    {"model_ToyCar_quant_fullint_micro_intio.tflite", "AD ToyCar (int8 I/O)", 2380, 768},
};

std::string num(size_t n) {
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return s;
}

struct Row {
  size_t workspace = 0;   ///< sum over workspace pools of used bytes (activations, scratch, state)
  size_t lowerBound = 0;  ///< max over steps of the live bytes of its buffers (its schedule, its aliases)
  size_t noAliasBound = 0;  ///< the same bound with aliasing off
  size_t noReorder = 0;   ///< workspace with the model's node order (--no-reorder)
  size_t sumAll = 0;      ///< sum of every planned activation (no reuse, no aliasing)
  size_t io = 0;          ///< bytes of graph inputs and outputs (buffers the application passes)
  size_t constants = 0;   ///< bytes in constant pools
  bool constantsInConstantPools = true;
  double seconds = 0;
};

size_t workspaceBytes(const CompileResult& r) {
  size_t used = 0;
  for (const PoolUse& u : r.plan.pools)
    if (r.plan.board.pools[static_cast<size_t>(u.pool)].kind == PoolKind::Workspace) used += u.usedBytes;
  return used;
}

Result<Row> measure(const fs::path& model) {
  Row row;
  CompileOptions o;
  o.modelPath = model.string();
  o.planner.timeLimitSeconds = 10;
  const auto start = std::chrono::steady_clock::now();
  STOWAGE_ASSIGN_OR_RETURN(CompileResult r, compileModel(o));
  row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const PoolUse& u : r.plan.pools) {
    const MemoryPool& pool = r.plan.board.pools[static_cast<size_t>(u.pool)];
    if (pool.kind == PoolKind::Workspace) {
      row.workspace += u.usedBytes;
      row.lowerBound += u.lowerBoundBytes;
    } else {
      row.constants += u.usedBytes;
    }
  }
  for (const PlacedBuffer& b : r.plan.buffers) {
    if (b.role == BufferRole::Activation) row.sumAll += b.sizeBytes;
    const PoolKind kind = r.plan.board.pools[static_cast<size_t>(b.slot.pool)].kind;
    if (b.role == BufferRole::Constant && kind != PoolKind::Constant) row.constantsInConstantPools = false;
  }
  for (TensorId id : r.graph.inputs) row.io += r.graph.tensor(id).byteSize();
  for (TensorId id : r.graph.outputs) row.io += r.graph.tensor(id).byteSize();
  o.reorder = false;
  STOWAGE_ASSIGN_OR_RETURN(CompileResult asWritten, compileModel(o));
  row.noReorder = workspaceBytes(asWritten);
  o.reorder = true;
  o.planner.aliasing = false;
  STOWAGE_ASSIGN_OR_RETURN(CompileResult plain, compileModel(o));
  for (const PoolUse& u : plain.plan.pools)
    if (plain.plan.board.pools[static_cast<size_t>(u.pool)].kind == PoolKind::Workspace) row.noAliasBound += u.lowerBoundBytes;
  return row;
}

/// The branching models: workspace with the memory-aware order and with the model's order (--no-reorder), the
/// pass's own measure and its time. Returns the number of models that failed to compile or got worse.
int branchingTable(const fs::path& shared) {
  const std::vector<std::pair<const char*, const char*>> models = {
      {"onnx/onnx-light/light_squeezenet.onnx", "SqueezeNet (onnx-light)"},
      {"onnx/onnx-light/light_shufflenet.onnx", "ShuffleNet (onnx-light)"},
      {"onnx/onnx-light/light_inception_v1.onnx", "Inception v1 (onnx-light)"},
      {"onnx/onnx-light/light_resnet50.onnx", "ResNet-50 (onnx-light)"},
      {"onnx/mnist-8/model.onnx", "MNIST-8"},
      {"tflm/mobilenet_v2_quantized_1x3x224x224.tflite", "MobileNetV2 224 int8 (TFLM)"},
      {"tflm/person_detect.tflite", "person_detect (TFLM)"},
      {"mlperf-tiny/pretrainedResnet_quant.tflite", "IC ResNet-8"},
  };
  std::printf("\nMemory-aware operator order, default board:\n\n");
  std::printf("| model | nodes | RAM, model's order (--no-reorder) | RAM, reordered | saved | pass's own peak before -> after | "
              "reorder ms | compile ms |\n|---|---:|---:|---:|---:|---|---:|---:|\n");
  int failures = 0;
  for (const auto& [file, label] : models) {
    const fs::path path = shared / "models" / file;
    if (!fs::exists(path)) {
      std::printf("| %s | skipped: %s not found |||||||\n", label, path.string().c_str());
      continue;
    }
    CompileOptions o;
    o.modelPath = path.string();
    o.planner.timeLimitSeconds = 10;
    auto on = compileModel(o);
    o.reorder = false;
    auto off = compileModel(o);
    if (!on.ok() || !off.ok()) {
      std::printf("| %s | error: %s |||||||\n", label, (on.ok() ? off : on).error().message.c_str());
      ++failures;
      continue;
    }
    double reorderMs = 0, totalMs = 0;
    for (const StageTime& t : on->timings) {
      totalMs += t.milliseconds;
      if (t.stage == "reorder") reorderMs = t.milliseconds;
    }
    std::string pass = "unchanged";
    for (const std::string& r : on->plan.remarks)
      if (r.rfind("reorder:", 0) == 0) {
        const size_t from = r.find("from "), paren = r.find(" (");
        pass = r.substr(from + 5, paren - from - 5).replace(r.find(" to ", from) - from - 5, 4, " -> ");
      }
    const size_t a = workspaceBytes(*off), b = workspaceBytes(*on);
    if (b > a) ++failures;
    std::printf("| %s | %zu | %s | %s | %s | %s | %.1f | %.0f |\n", label, on->graph.nodes.size(), num(a).c_str(), num(b).c_str(),
                b <= a ? num(a - b).c_str() : ("-" + num(b - a)).c_str(), pass.c_str(), reorderMs, totalMs);
  }
  std::printf("\nRAM = bytes of the workspace pool (the `auto` planner). The pass's own peak is its model of the planner's live "
              "bytes (views, in-place adds, concat slices); \"unchanged\": no order is strictly lower than the model's, which is "
              "kept. Exit status 1 when the reordered RAM is above the model order's.\n");
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  const fs::path shared = argc > 1 ? fs::path(argv[1]) : fs::path(STOWAGE_SHARED_DIR);
  const fs::path dir = shared / "models" / "mlperf-tiny";
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  std::printf("Default board (one workspace pool, one constant pool), `auto` planner, %s.\n\n", date);
  std::printf("| model | Stowage RAM (workspace) | same, --no-reorder | lower bound of its schedule | same, no aliasing | all activations, no reuse | "
              "graph I/O | Stowage RAM + I/O | TFLM arena (32-bit) | TFLM head | constants (in constant pools) | compile s |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  int failures = 0;
  for (const Model& m : kModels) {
    const fs::path path = dir / m.file;
    if (!fs::exists(path)) {
      std::printf("| %s | skipped: %s not found ||||||||||\n", m.label, path.string().c_str());
      continue;
    }
    auto row = measure(path);
    if (!row.ok()) {
      std::printf("| %s | error: %s ||||||||||\n", m.label, row.error().message.c_str());
      ++failures;
      continue;
    }
    const Row& r = *row;
    const bool atBound = r.workspace == r.lowerBound;
    // The target: the RAM the generated code writes below TFLM's arena (graph I/O is the application's).
    const bool belowTflm = m.tflmArena32 == 0 || r.workspace < m.tflmArena32;
    if (!atBound || !belowTflm || !r.constantsInConstantPools) ++failures;
    std::printf("| %s | %s%s | %s | %s | %s | %s | %s | %s | %s | %s | %s%s | %.2f |\n", m.label, num(r.workspace).c_str(),
                atBound ? "" : " (above bound)", num(r.noReorder).c_str(), num(r.lowerBound).c_str(), num(r.noAliasBound).c_str(), num(r.sumAll).c_str(),
                num(r.io).c_str(), num(r.workspace + r.io).c_str(), m.tflmArena32 ? num(m.tflmArena32).c_str() : "n/a",
                m.tflmHead ? num(m.tflmHead).c_str() : "n/a", num(r.constants).c_str(), r.constantsInConstantPools ? "" : " (NOT all)",
                r.seconds);
  }
  std::printf("\nStowage RAM = bytes of every workspace pool the generated code writes (activations, scratch, state). Graph "
              "inputs and outputs are buffers the application passes and are not in it; TFLM's arena holds them (and TFLM's "
              "own structures: arena = head + tail), so \"RAM + I/O\" adds them back as separate buffers, an upper bound "
              "(TFLM can reuse the input's bytes for the output; the float-I/O ToyCar's 5,120 bytes of float I/O exceed its "
              "arena that way). Lower bound = max over steps of the bytes live in the schedule Stowage ran (the model's order, or "
              "the memory-aware one where it is lower: \"same, --no-reorder\" keeps the model's), "
              "after aliasing; \"same, no aliasing\" plans every tensor apart. Exit status 1 when a model is above its "
              "bound, not below TFLM's arena, or has a constant outside a constant pool.\n");
  failures += branchingTable(shared);
  return failures == 0 ? 0 : 1;
}
