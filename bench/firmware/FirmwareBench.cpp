// Firmware benchmark: compiles each MLPerf Tiny int8 model of ../shared/models/mlperf-tiny for every QEMU machine
// `stowage run --emulate` knows (default board: the machine's memories), builds the firmware with the cross
// toolchain, runs one inference on QEMU and prints, as a markdown table for bench/RESULTS.md ("Firmware"): the
// instructions per inference (QEMU -icount; on Arm a SysTick count, within one tick: 40 instructions on MPS2, 31.25
// on MPS3 AN547; on RISC-V minstret, exact), the MACs and instructions per MAC, the ELF's text / data / bss bytes,
// the stack peak, the RAM the firmware reserves, and whether the output is bit-exact with TFLM's reference output
// for input 0 (reference/README.md); VWW has no reference: its output is compared with a host run of the same input.
// Three more rows run the same networks as QDQ ONNX models (the zoo's, quantized in-process: issue 28), also
// compared with a host run.
// A plain executable: built by `make build`, not run by ctest (it needs the cross toolchains and QEMU; a machine
// whose toolchain or QEMU is missing is skipped with a message, a model whose file is missing likewise).
// Usage: stowage_bench_firmware [--models a,b] [--machines m1,m2] [--keep DIR] [SHARED_DIR]
//   --models    model file stems or labels to run (default: all five), e.g. pretrainedResnet_quant,kws_ref_model
//   --machines  machines to run on (default: mps2-an386,mps2-an500,mps3-an547,riscv32-virt)
//   --keep DIR  keep each firmware build in DIR/<model>/<machine> (generated C, ELF, logs)
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "stowage/driver/Compiler.h"
#include "stowage/driver/EmulatorRunner.h"
#include "stowage/driver/HostRunner.h"
#include "stowage/firmware/EmulatedMachine.h"
#include "stowage/firmware/Toolchain.h"
#include "stowage/io/TensorFile.h"
#include "stowage/zoo/QdqQuantizer.h"

namespace fs = std::filesystem;
using namespace stowage;

namespace {

struct Model {
  const char* stem;   ///< file name without .tflite, also the folder under reference/
  const char* label;
  bool hasReference;  ///< reference/<stem>/input_0.bin and output_0.bin exist (TFLM's output)
  /// A zoo model (src/stowage/zoo) quantized to QDQ ONNX (int8 activations, per-channel int8 weights, calibrated on
  /// seeded inputs: stowage-zoo write NAME --qdq s8) instead of a file of ../shared: the same network as the TFLite
  /// row above it, with seeded weights, through the QDQ pass (docs/quantized-onnx.md).
  const char* zooQdq = nullptr;
};

const std::vector<Model> kModels = {
    {"pretrainedResnet_quant", "IC ResNet-8", true},
    {"kws_ref_model", "KWS DS-CNN", true},
    {"vww_96_int8", "VWW MobileNetV1 0.25", false},
    {"model_ToyCar_quant_fullint_micro", "AD ToyCar (float I/O)", true},
    {"model_ToyCar_quant_fullint_micro_intio", "AD ToyCar (int8 I/O)", true},
    {"zoo_resnet8_qdq", "IC ResNet-8, QDQ ONNX (zoo)", false, "resnet8"},
    {"zoo_ds_cnn_qdq", "KWS DS-CNN, QDQ ONNX (zoo)", false, "ds-cnn"},
    {"zoo_mobilenet_qdq", "VWW MobileNetV1 0.25, QDQ ONNX (zoo)", false, "mobilenet-v1-0.25"},
};

/// Two float32 outputs equal to 1e-6 relative (the bytes of little-endian floats).
bool withinFloatRounding(const std::string& got, const std::string& want) {
  if (got.size() != want.size() || got.size() % 4 != 0) return false;
  for (size_t i = 0; i < got.size(); i += 4) {
    float a = 0.0f, b = 0.0f;
    std::memcpy(&a, got.data() + i, 4);
    std::memcpy(&b, want.data() + i, 4);
    if (!(std::fabs(a - b) <= 1e-6f * std::fabs(b) + 1e-9f)) return false;
  }
  return true;
}

/// Writes the QDQ form of zoo model `m.zooQdq` (seed 1) to `dir`/<stem>.onnx and returns its path.
Result<fs::path> writeZooQdqModel(const Model& m, const fs::path& dir) {
  zoo::QdqOptions options;
  options.activations = zoo::QdqActivationType::Int8;
  options.perChannel = true;
  STOWAGE_ASSIGN_OR_RETURN(zoo::ZooQdqModel built, zoo::buildZooQdqModel(m.zooQdq, 1, options));
  std::error_code ec;
  fs::create_directories(dir, ec);
  const fs::path file = dir / (std::string(m.stem) + ".onnx");
  std::ofstream out(file, std::ios::binary);
  if (!out || !built.model.SerializeToOstream(&out)) return makeError(file.string(), "cannot write the QDQ model");
  return file;
}

std::string num(uint64_t n) {
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return s;
}

std::vector<std::string> splitList(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

std::optional<std::string> readBytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// Input 0 of a model without reference files, made the way reference/README.md makes the references' inputs:
/// xorshift32 from the state 1000, one step per element, the low byte reinterpreted as int8 (int8/uint8 inputs only).
/// A float input takes the same steps' values as (x & 0xFFFF) / 32768 - 1, in [-1, 1).
Result<Tensor> xorshiftInput(const CompileResult& compiled) {
  const Graph& g = compiled.graph;
  if (g.inputs.size() != 1) return makeError("bench", "a model without reference inputs must have one input");
  Tensor t = g.tensor(g.inputs[0]);
  const bool isFloat = t.dtype == DType::Float32;
  if (t.dtype != DType::Int8 && t.dtype != DType::UInt8 && !isFloat)
    return makeError("bench", "a model without reference inputs must take int8 or float32");
  t.kind = TensorKind::Activation;
  t.data.assign(t.byteSize(), 0);
  uint32_t x = 1000;
  for (int64_t i = 0; i < t.numElements(); ++i) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    if (isFloat) {
      const float v = static_cast<float>(x & 0xFFFF) / 32768.0f - 1.0f;
      std::memcpy(t.data.data() + i * 4, &v, 4);
    } else {
      t.data[static_cast<size_t>(i)] = static_cast<uint8_t>(x & 0xFF);
    }
  }
  return t;
}

/// A rendered diagnostic on one line: "error: " dropped, notes and hints after "; ".
std::string oneLine(const Diagnostic& d) {
  std::string r = d.render();
  if (r.rfind("error: ", 0) == 0) r.erase(0, 7);
  while (!r.empty() && (r.back() == '\n' || r.back() == ' ')) r.pop_back();
  for (size_t at = r.find('\n'); at != std::string::npos; at = r.find('\n', at)) {
    size_t end = at + 1;
    while (end < r.size() && r[end] == ' ') ++end;
    r.replace(at, end - at, "; ");
  }
  return r;
}

/// Why `machine` cannot run here (its cross compiler or QEMU missing), or nothing.
std::optional<std::string> machineMissing(const EmulatedMachine& machine) {
  CompileOptions o;
  o.emulate = &machine;
  auto board = resolveCompileBoard(o);
  if (!board.ok()) return board.error().message;
  if (!board->device) return std::string("the board mapped onto the machine has no [device]");
  const Toolchain tc = toolchainFor(board->device->cpu);
  if (auto cc = findProgram(tc.compiler, tc.debianPackages); !cc.ok()) return oneLine(cc.error());
  if (auto q = findProgram(machine.qemuBinary, {machine.debianPackage}); !q.ok()) return oneLine(q.error());
  return std::nullopt;
}

struct Row {
  EmulatorReport report;
  int64_t macs = 0;
  std::string exact;  ///< "yes", "no (N of M bytes differ)"
  double seconds = 0;
};

}  // namespace

int main(int argc, char** argv) {
  fs::path shared = STOWAGE_SHARED_DIR;
  std::set<std::string> wantModels, wantMachines;
  std::string keep;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--models") {
      for (const std::string& m : splitList(value())) wantModels.insert(m);
    } else if (a == "--machines") {
      for (const std::string& m : splitList(value())) wantMachines.insert(m);
    } else if (a == "--keep") {
      keep = value();
    } else if (a == "-h" || a == "--help") {
      std::printf("usage: %s [--models a,b] [--machines m1,m2] [--keep DIR] [SHARED_DIR]\nmodels:", argv[0]);
      for (const Model& m : kModels) std::printf(" %s", m.stem);
      std::printf("\nmachines:");
      for (const EmulatedMachine& m : emulatedMachines()) std::printf(" %s", m.name.c_str());
      std::printf("\n");
      return 0;
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "unknown flag %s (see --help)\n", a.c_str());
      return 2;
    } else {
      shared = a;
    }
  }
  for (const std::string& m : wantModels) {
    bool known = false;
    for (const Model& k : kModels) known = known || m == k.stem || m == k.label;
    if (!known) {
      std::fprintf(stderr, "unknown model %s (see --help)\n", m.c_str());
      return 2;
    }
  }
  for (const std::string& m : wantMachines)
    if (!findEmulatedMachine(m).ok()) {
      std::fprintf(stderr, "%s\n", findEmulatedMachine(m).error().message.c_str());
      return 2;
    }

  const fs::path dir = shared / "models" / "mlperf-tiny";
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));

  // Machines that can run here.
  std::vector<const EmulatedMachine*> machines;
  for (const EmulatedMachine& m : emulatedMachines()) {
    if (!wantMachines.empty() && !wantMachines.count(m.name)) continue;
    if (auto why = machineMissing(m)) {
      std::printf("skipped machine %s: %s\n", m.name.c_str(), why->c_str());
      continue;
    }
    machines.push_back(&m);
  }
  if (machines.empty()) {
    std::printf("no machine to run on: nothing measured\n");
    return 0;
  }

  std::printf("Default board (the machine's memories), `auto` planner, one inference of input 0 under QEMU, %s.\n\n", date);
  std::printf("| model | machine | bit-exact | instructions per inference | MACs | per MAC | text B | code B | data B | bss B | stack peak B | "
              "RAM used B | build + run s |\n");
  std::printf("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  std::fflush(stdout);
  int failures = 0;
  std::vector<std::string> notes;
  for (const Model& m : kModels) {
    if (!wantModels.empty() && !wantModels.count(m.stem) && !wantModels.count(m.label)) continue;
    fs::path model = dir / (std::string(m.stem) + ".tflite");
    if (m.zooQdq) {
      auto written = writeZooQdqModel(m, fs::temp_directory_path() / "stowage_bench_firmware");
      if (!written.ok()) {
        std::printf("| %s | error: %s |||||||||||\n", m.label, written.error().message.c_str());
        ++failures;
        continue;
      }
      model = *written;
    }
    if (!fs::exists(model)) {
      std::printf("| %s | skipped: %s not found ||||||||||||\n", m.label, model.string().c_str());
      continue;
    }
    const fs::path ref = dir / "reference" / m.stem;
    // The expected output of input 0: TFLM's reference, or a host run for the model without one.
    std::optional<std::string> expected;
    std::vector<Tensor> inputs;
    std::string against = "TFLM reference";
    {
      CompileOptions o;
      o.modelPath = model.string();
      auto host = compileModel(o);
      if (!host.ok()) {
        std::printf("| %s | error: %s |||||||||||\n", m.label, host.error().message.c_str());
        ++failures;
        continue;
      }
      const Graph& g = host->graph;
      if (m.hasReference) {
        if (g.inputs.size() != 1) {
          std::printf("| %s | error: expected one input |||||||||||\n", m.label);
          ++failures;
          continue;
        }
        const Tensor& want = g.tensor(g.inputs[0]);
        auto in = readRawTensor((ref / "input_0.bin").string(), want.dtype, want.shape);
        expected = readBytes(ref / "output_0.bin");
        if (!in.ok() || !expected) {
          std::printf("| %s | skipped: reference files in %s missing or unreadable |||||||||||\n", m.label, ref.string().c_str());
          continue;
        }
        inputs.push_back(std::move(in.value()));
      } else {
        against = "host run";
        auto in = xorshiftInput(*host);
        if (!in.ok()) {
          std::printf("| %s | error: %s |||||||||||\n", m.label, in.error().message.c_str());
          ++failures;
          continue;
        }
        inputs.push_back(std::move(in.value()));
        auto out = runOnHost(*host, inputs);
        if (!out.ok() || out->size() != 1) {
          std::printf("| %s | error: host run failed: %s |||||||||||\n", m.label, out.ok() ? "not one output" : oneLine(out.error()).c_str());
          ++failures;
          continue;
        }
        const std::vector<uint8_t>& d = (*out)[0].data;
        expected = std::string(d.begin(), d.end());
      }
    }
    for (const EmulatedMachine* machine : machines) {
      const auto start = std::chrono::steady_clock::now();
      CompileOptions o;
      o.modelPath = model.string();
      o.emulate = machine;
      auto compiled = compileModel(o);
      if (!compiled.ok()) {
        std::printf("| %s | %s | error: %s |||||||||||\n", m.label, machine->name.c_str(), compiled.error().message.c_str());
        ++failures;
        continue;
      }
      Row row;
      row.macs = compiled->macs;
      EmulatorRunOptions ro;
      if (!keep.empty()) ro.keepDir = (fs::path(keep) / m.stem / machine->name).string();
      auto out = runOnEmulator(*compiled, inputs, *machine, ro, &row.report);
      row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (!out.ok()) {
        std::string msg = out.error().message;
        std::printf("| %s | %s | error: %s |||||||||||\n", m.label, machine->name.c_str(), msg.c_str());
        std::fprintf(stderr, "%s on %s:\n%s\n", m.label, machine->name.c_str(), out.error().render().c_str());
        ++failures;
        continue;
      }
      const std::vector<uint8_t>& d = (*out)[0].data;
      const std::string got(d.begin(), d.end());
      if (got == *expected) {
        row.exact = "yes";
      } else if (m.zooQdq && withinFloatRounding(got, *expected)) {
        // The QDQ models end in a float Softmax: newlib's expf and the host's differ in the last bits.
        row.exact = "yes (float output within 1e-6)";
      } else {
        size_t differ = 0;
        for (size_t k = 0; k < std::min(got.size(), expected->size()); ++k) differ += got[k] != (*expected)[k];
        differ += std::max(got.size(), expected->size()) - std::min(got.size(), expected->size());
        row.exact = fmt::format("**no** ({} of {} bytes differ)", differ, expected->size());
        notes.push_back(fmt::format("{} on {}: output differs from the {}", m.label, machine->name, against));
        ++failures;
      }
      if (against != "TFLM reference") row.exact += " (vs host)";
      const FirmwareSizes& z = row.report.sizes;
      const double perMac = row.macs > 0 ? static_cast<double>(row.report.instructions) / static_cast<double>(row.macs) : 0.0;
      std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s of %s | %s | %.1f |\n", m.label, machine->name.c_str(),
                  row.exact.c_str(), num(row.report.instructions).c_str(), num(static_cast<uint64_t>(row.macs)).c_str(), row.macs > 0 ? fmt::format("{:.2f}", perMac).c_str() : "n/a",
                  num(z.text).c_str(), num(z.text - z.constantPoolBytes).c_str(), num(z.data).c_str(), num(z.bss).c_str(), num(row.report.stackPeakBytes).c_str(),
                  num(z.stackBytes).c_str(), num(z.ramBytes).c_str(), row.seconds);
      std::fflush(stdout);
    }
  }
  std::printf("\nInstructions: executed during net_run under QEMU -icount (Arm: SysTick ticks, within one tick = 40 instructions on "
              "MPS2, 31.25 on mps3-an547; "
              "riscv32-virt: minstret, exact). Per MAC: instructions / CompileResult::macs. text = bytes in flash memories "
              "(code, read-only data, weights); code = text minus the model's constant pools (.stowage.<pool> sections: weights, "
              "biases, multipliers): the firmware's code and read-only data; data = initialised bytes loaded into RAM; bss = zeroed and NOLOAD bytes "
              "(.bss, workspace pools, I/O buffers, the stack); RAM used = every byte the firmware reserves in RAM memories "
              "(data + bss as placed: the linker's whole stack and the harness's buffers included; stack peak = the part of "
              "that stack the run wrote). Bit-exact: output of input 0 byte for byte equal to "
              "reference/<model>/output_0.bin (TFLM), or to a host run of the same input (xorshift32 from 1000) for VWW.\n");
  for (const std::string& n : notes) std::printf("- %s\n", n.c_str());
  return failures == 0 ? 0 : 1;
}
