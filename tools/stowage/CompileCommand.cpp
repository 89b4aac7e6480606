// `stowage compile`: ONNX model in, <name>.h, <name>.c and <name>_weights.c out, plus a short summary.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <memory>

#include "Commands.h"
#include "ModelFlags.h"
#include "stowage/driver/Compiler.h"
#include "stowage/firmware/EmulatedMachine.h"
#include "stowage/report/PoolSummary.h"

namespace stowage::cli {

namespace {

/// 1234567 -> "1,234,567".
std::string grouped(uint64_t v) {
  std::string s = std::to_string(v), out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i && (s.size() - i) % 3 == 0) out += ',';
    out += s[i];
  }
  return out;
}

std::string summaryLines(const CompileResult& r) {
  std::string out = fmt::format("  nodes: {} ({} kernel calls)   MACs: {}\n", r.graph.nodes.size(), r.code.kernelCalls, grouped(static_cast<uint64_t>(r.macs)));
  out += fmt::format("  weights: {} bytes\n", grouped(r.weightBytes));
  out += poolSummary(r.graph, r.plan);
  std::string times;
  double total = 0;
  for (const StageTime& t : r.timings) {
    times += fmt::format("{}{} {:.1f}", times.empty() ? "" : ", ", t.stage, t.milliseconds);
    total += t.milliseconds;
  }
  out += fmt::format("  time: {:.1f} ms ({})\n", total, times);
  return out;
}

}  // namespace

CommandRunner registerCompileCommand(CLI::App& app) {
  struct Flags {
    std::string model, outDir, name = "net", project, emulate;
    std::vector<std::string> shapes, binds;
    bool dumpIr = false;
  };
  auto f = std::make_shared<Flags>();
  auto options = std::make_shared<CompileOptions>();
  CLI::App* sub = app.add_subcommand(
      "compile",
      "Compile an ONNX or TFLite model to standalone C99: DIR/<name>.h (API), DIR/<name>.c (one kernel call per node, intermediates "
      "at fixed offsets in the board's memory pools) and DIR/<name>_weights.c (constants as C arrays) and/or "
      "DIR/<name>_weights_<pool>.bin (constant pools as binary images: --weights). Build them with "
      "runtime/kernels/*.c and -Iruntime/include. Prints a summary: nodes, MACs, weight bytes, and per pool the capacity, "
      "bytes used, the bytes only that pool may hold (its own lower bound), utilisation and the layer at the peak. With a board that has [[memories]] it also writes "
      "linker-script files: DIR/<name>_sections.ld and <name>_memory.ld, and with a [device] a complete DIR/<name>.ld "
      "(docs/firmware.md). "
      "Errors go to stderr with exit code 2; nothing is written then.");
  sub->add_option("model", f->model, "The model file: .onnx, or .tflite (by extension or its TFL3 identifier)")->required();
  sub->add_option("-o,--output", f->outDir,
                  "Output folder; created if missing, files are replaced only when compilation succeeds")
      ->type_name("DIR")
      ->required();
  sub->add_option("--name", f->name, "Model name: prefix of every generated symbol and file name (a C identifier)")
      ->capture_default_str();
  sub->add_option("--shape", f->shapes, kShapeHelp)->type_name("NAME=SHAPE");
  sub->add_option("--bind", f->binds, kBindHelp)->type_name("NAME=FILE");
  sub->add_flag("--dump-ir", f->dumpIr, "Print the graph IR after the compiler's passes to stdout");
  sub->add_option("--project", f->project,
                  "Also write a firmware project to DIR: CMakeLists.txt with a cross toolchain file, the linker script, startup "
                  "code, main.c, the generated C and the runtime kernels it calls; `cmake -B b && cmake --build b` gives an ELF, "
                  "targets run/debug (QEMU) and flash (OpenOCD); stowage.cmake adds the model to an existing CMake firmware. "
                  "Needs a board with [device] and [[memories]], or --emulate (docs/firmware.md)")
      ->type_name("DIR");
  std::string machines;
  for (const EmulatedMachine& m : emulatedMachines()) machines += (machines.empty() ? "" : ", ") + m.name;
  sub->add_option("--emulate", f->emulate,
                  "Compile for the QEMU machine MACHINE: the board mapped onto its memories (docs/firmware.md); with --project, "
                  "the project's run and debug targets use it. Machines: " + machines)
      ->type_name("MACHINE");
  addBoardFlags(sub, *options);

  return [f, shared = options]() -> int {
    CompileOptions& options = *shared;
    options.projectDir = f->project;
    if (!f->emulate.empty()) {
      auto m = findEmulatedMachine(f->emulate);
      if (!m.ok()) {
        std::fputs(m.error().render().c_str(), stderr);
        return kExitUserError;
      }
      options.emulate = *m;
    }
    options.modelPath = f->model;
    options.outDir = f->outDir;
    options.name = f->name;
    options.dumpIr = f->dumpIr;
    if (Status s = applyModelFlags(f->shapes, f->binds, options); !s.ok()) {
      std::fputs(s.error().render().c_str(), stderr);
      return kExitUserError;
    }
    auto result = compileModel(options);
    if (!result.ok()) {
      std::fputs(result.error().render().c_str(), stderr);
      return kExitUserError;
    }
    if (f->dumpIr) std::fputs(result->irDump.c_str(), stdout);
    const std::string dir = std::filesystem::path(f->outDir).string();
    std::string images;
    for (const GeneratedImage& image : result->code.images) images += ", " + image.fileName;
    std::fputs(fmt::format("compiled {} -> {}/{{{}, {}, {}{}}}\n", f->model, dir, result->code.header.fileName,
                           result->code.source.fileName, result->code.weights.fileName, images)
                   .c_str(),
               stdout);
    for (const std::string& r : result->remarks) std::printf("note: %s\n", r.c_str());
    if (!f->project.empty()) std::printf("firmware project -> %s (cmake -B build && cmake --build build)\n", f->project.c_str());
    std::fputs(summaryLines(*result).c_str(), stdout);
    return kExitOk;
  };
}

}  // namespace stowage::cli
