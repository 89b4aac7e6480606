// `stowage run`: compile a model, build the generated C with the system cc, run it on the host on the given
// input files and write its outputs (the format of ONNX's test data by default).
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "Commands.h"
#include "ModelFlags.h"
#include "stowage/driver/Compiler.h"
#include "stowage/driver/EmulatorRunner.h"
#include "stowage/driver/HostRunner.h"
#include "stowage/driver/OutputDir.h"
#include "stowage/io/TensorFile.h"

namespace stowage::cli {

namespace {

namespace fs = std::filesystem;

std::string lowerExtension(const std::string& path) {
  std::string e = fs::path(path).extension().string();
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return e;
}

/// Input file i: .bin takes the dtype and shape of graph input i; .pb and .npy carry their own.
Result<Tensor> readInput(const CompileResult& compiled, size_t i, const std::string& path) {
  if (lowerExtension(path) != ".bin") return readTensorFile(path);
  const Graph& g = compiled.graph;
  if (i >= g.inputs.size())
    return makeError(path, fmt::format("is input {} but the model takes only {} input(s)", i, g.inputs.size()));
  const Tensor& want = g.tensor(g.inputs[i]);
  return readRawTensor(path, want.dtype, want.shape);
}

int fail(const Diagnostic& d) {
  std::fputs(d.render().c_str(), stderr);
  return kExitUserError;
}

/// "[0.1, 0.2, ...]": the first 16 values of `t` (all when it has at most 16), for a glance at the result.
std::string leadingValues(const Tensor& t) {
  const int64_t n = t.numElements(), shown = std::min<int64_t>(n, 16);
  std::string s = "[";
  for (int64_t k = 0; k < shown; ++k) {
    const uint8_t* p = t.data.data() + static_cast<size_t>(k) * dtypeSize(t.dtype);
    std::string v;
    switch (t.dtype) {
      case DType::Float32: {
        float x;
        std::memcpy(&x, p, 4);
        v = fmt::format("{:.6g}", x);
        break;
      }
      case DType::Int8: v = std::to_string(static_cast<int8_t>(*p)); break;
      case DType::Int32: {
        int32_t x;
        std::memcpy(&x, p, 4);
        v = std::to_string(x);
        break;
      }
      case DType::Int64: {
        int64_t x;
        std::memcpy(&x, p, 8);
        v = std::to_string(x);
        break;
      }
      default: v = std::to_string(*p); break;
    }
    s += (k ? ", " : "") + v;
  }
  return s + (shown < n ? ", ...]" : "]");
}

}  // namespace

CommandRunner registerRunCommand(CLI::App& app) {
  struct Flags {
    std::string model, outDir, format = "pb", keep, traceFile, emulate;
    bool trace = false, profileLayers = false;
    std::vector<std::string> inputs, shapes, binds;
  };
  auto f = std::make_shared<Flags>();
  auto options = std::make_shared<CompileOptions>();
  CLI::App* sub = app.add_subcommand(
      "run",
      "Compile an ONNX or TFLite model, build the generated C with $CC (default cc; -std=c99 -Wall -Wextra -Werror -pedantic, a small model (under 1 MB of weights C) as one translation unit with the harness at -O1, a larger one with -O2 for the model code, -O0 for the weights and the harness) "
      "and the Stowage runtime, run it on the host and write its outputs: OUTDIR/output_0.pb, output_1.pb, ... "
      "(ONNX TensorProto named after each model output, the format of ONNX test data), or .npy / .bin with --format. "
      "The runtime is found at the build's paths unless STOWAGE_RUNTIME_LIB (libstowage_rt.a) or STOWAGE_RUNTIME_DIR "
      "(the runtime/ source folder) are set. --board/--pool/--rule/--pin place memory as `compile` does, so any "
      "placement can be run and checked on the host (fixed-address pools are simulated). Errors go to stderr with exit "
      "code 2; no output folder is written then.");
  sub->add_option("model", f->model, "The model file: .onnx, or .tflite (by extension or its TFL3 identifier)")->required();
  sub->add_option("--input", f->inputs,
                  "Input tensor files, one per model input in the model's input order (bound inputs excluded): .pb "
                  "(ONNX TensorProto), .npy, or .bin (raw little-endian bytes with the model's dtype and shape). "
                  "dtype and shape must match the model")
      ->type_name("FILE");
  sub->add_option("--output-dir", f->outDir, "Folder for the outputs; created if missing, written only on success")
      ->type_name("DIR")
      ->required();
  sub->add_option("--format", f->format, "Output file format: pb (ONNX TensorProto), npy, or bin (raw bytes)")
      ->check(CLI::IsMember({"pb", "npy", "bin"}))
      ->capture_default_str();
  sub->add_option("--shape", f->shapes, kShapeHelp)->type_name("NAME=SHAPE");
  sub->add_option("--bind", f->binds, kBindHelp)->type_name("NAME=FILE");
  sub->add_option("--keep", f->keep,
                  "Build in DIR and keep it (generated C, host harness main.c, objects, logs) for debugging; by default a "
                  "temporary folder is used and removed")
      ->type_name("DIR");
  sub->add_flag("--trace", f->trace,
                "Report the host simulator's view of the run: print its statistics (total cycles, busy and stall cycles "
                "per core and engine queue, DMA bytes, the share of DMA time overlapping compute) and write its Chrome "
                "trace (one track per core, DMA channel and engine queue; open it in Perfetto or chrome://tracing) as "
                "OUTDIR/trace.json. Cycles follow the board's costs (docs/accelerators.md, Host simulator)");
  sub->add_option("--trace-file", f->traceFile, "With --trace: write the trace to FILE instead of OUTDIR/trace.json")
      ->type_name("FILE");
  std::string machines;
  for (const EmulatedMachine& m : emulatedMachines()) machines += fmt::format("{}{} ({})", machines.empty() ? "" : ", ", m.name, m.description);
  sub->add_option("--emulate", f->emulate,
                  "Build the firmware for MACHINE with its cross toolchain (arm-none-eabi-gcc or riscv64-unknown-elf-gcc) and run it "
                  "on QEMU instead of the host, writing the outputs as a host run does and printing the instructions of one "
                  "inference, the stack used and the firmware's sizes. The board is mapped onto the machine's memories "
                  "(a board without [[memories]] gets the machine's; memories the machine lacks, such as TCMs, are carved out of "
                  "its RAM: docs/firmware.md). Machines: " + machines)
      ->type_name("MACHINE");
  sub->add_flag("--profile-layers", f->profileLayers,
                "With --emulate: print the instructions of each CPU layer (the firmware reads its counter after every layer; "
                "the readings' cost is taken off each layer), its MACs and instructions per MAC");
  addBoardFlags(sub, *options);

  return [f, shared = options]() -> int {
    CompileOptions& options = *shared;
    options.modelPath = f->model;
    options.name = "net";
    const EmulatedMachine* machine = nullptr;
    if (!f->emulate.empty()) {
      auto m = findEmulatedMachine(f->emulate);
      if (!m.ok()) return fail(m.error());
      machine = *m;
      options.emulate = machine;
      if (f->trace) return fail(makeError("--trace", "is for the host simulator; with --emulate the firmware prints its instruction count"));
    } else if (f->profileLayers) {
      return fail(makeError("--profile-layers", "counts instructions on an emulated machine", "add --emulate MACHINE"));
    }
    if (Status s = applyModelFlags(f->shapes, f->binds, options); !s.ok()) return fail(s.error());
    auto compiled = compileModel(options);
    if (!compiled.ok()) return fail(compiled.error());

    std::vector<Tensor> inputs;
    for (size_t i = 0; i < f->inputs.size(); ++i) {
      auto t = readInput(*compiled, i, f->inputs[i]);
      if (!t.ok()) return fail(t.error());
      inputs.push_back(std::move(t.value()));
    }
    if (Status s = checkInputs(*compiled, inputs); !s.ok()) return fail(s.error());

    HostRunOptions runOptions;
    runOptions.keepDir = f->keep;
    runOptions.compiler.clear();  // $CC when set, else cc
    if (!f->traceFile.empty() && !f->trace)
      return fail(makeError("--trace-file", "is given without --trace", "add --trace to write the simulator's trace"));
    HostSimReport simReport;
    if (f->trace) runOptions.simReport = &simReport;
    EmulatorReport emulated;
    for (const std::string& r : compiled->remarks) std::printf("note: %s\n", r.c_str());
    // Which layers call the board's own kernels ([[kernels]]): what runs is not only Stowage's code.
    for (const std::string& r : compiled->plan.remarks)
      if (r.rfind("kernel:", 0) == 0) std::printf("note: %s\n", r.c_str());
    EmulatorRunOptions emulateOptions;
    emulateOptions.keepDir = f->keep;
    emulateOptions.profileLayers = f->profileLayers;
    auto outputs = machine ? runOnEmulator(*compiled, inputs, *machine, emulateOptions, &emulated)
                           : runOnHost(*compiled, inputs, runOptions);
    if (!outputs.ok()) return fail(outputs.error());
    if (f->trace && !f->traceFile.empty()) {
      const fs::path traceDir = fs::path(f->traceFile).parent_path();
      std::error_code ec;
      if (!traceDir.empty()) fs::create_directories(traceDir, ec);
      if (Status s = writeTextFile(f->traceFile, simReport.traceJson); !s.ok()) return fail(s.error());
    }

    Status written = commitOutputDir(f->outDir, [&](const fs::path& tmp) -> Status {
      for (size_t i = 0; i < outputs->size(); ++i) {
        const std::string path = (tmp / fmt::format("output_{}.{}", i, f->format)).string();
        const Tensor& t = (*outputs)[i];
        if (f->format == "pb") STOWAGE_TRY(writeTensorPb(path, t));
        else if (f->format == "npy") STOWAGE_TRY(writeNpy(path, t));
        else STOWAGE_TRY(writeRaw(path, t));
      }
      if (f->trace && f->traceFile.empty()) STOWAGE_TRY(writeTextFile(tmp / "trace.json", simReport.traceJson));
      return Status::success();
    });
    if (!written.ok()) return fail(written.error());
    for (size_t i = 0; i < outputs->size(); ++i) {
      const Tensor& t = (*outputs)[i];
      std::printf("output_%zu.%s: '%s' %s[%s] = %s\n", i, f->format.c_str(), t.name.c_str(), std::string(dtypeName(t.dtype)).c_str(),
                  shapeToString(t.shape).c_str(), leadingValues(t).c_str());
    }
    if (machine) {
      const FirmwareSizes& z = emulated.sizes;
      std::printf("%s: %llu instructions per inference, stack peak %llu of %llu bytes\n", machine->name.c_str(),
                  static_cast<unsigned long long>(emulated.instructions), static_cast<unsigned long long>(emulated.stackPeakBytes),
                  static_cast<unsigned long long>(z.stackBytes));
      std::printf("firmware: text %llu, data %llu, bss %llu bytes (RAM %llu bytes)\n", static_cast<unsigned long long>(z.text),
                  static_cast<unsigned long long>(z.data), static_cast<unsigned long long>(z.bss), static_cast<unsigned long long>(z.ramBytes));
      if (!emulated.elfPath.empty()) std::printf("elf: %s\n", emulated.elfPath.c_str());
      if (f->profileLayers) std::fputs(layerProfileTable(emulated.layers).c_str(), stdout);
    }
    if (f->trace) {
      std::fputs(simReport.stats.c_str(), stdout);
      std::printf("trace: %s\n", (f->traceFile.empty() ? fs::path(f->outDir) / "trace.json" : fs::path(f->traceFile)).string().c_str());
    }
    return kExitOk;
  };
}

}  // namespace stowage::cli
