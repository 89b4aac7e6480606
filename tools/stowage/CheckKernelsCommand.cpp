// `stowage check-kernels`: checks a board's own kernels ([[kernels]]) against the portable ones on the host: the
// model built both ways, run on the same inputs, every board-kernel layer's output compared byte for byte.
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "Commands.h"
#include "ModelFlags.h"
#include "stowage/driver/KernelCheck.h"

namespace stowage::cli {

CommandRunner registerCheckKernelsCommand(CLI::App& app) {
  struct Flags {
    std::string model, keep;
    std::vector<std::string> inputs, shapes, binds;
    uint64_t seed = 1;
  };
  auto f = std::make_shared<Flags>();
  auto options = std::make_shared<CompileOptions>();
  CLI::App* sub = app.add_subcommand(
      "check-kernels",
      "Check the board's own kernels ([[kernels]] tables, docs/kernels.md) against Stowage's portable kernels: builds the model "
      "for the host twice with $CC (default cc), once calling the board's kernels and once the portable ones, runs both on "
      "the same inputs (--input files, else seeded random ones) and compares byte for byte the output of every layer that "
      "calls a board kernel, the tensors those layers read, and the model's outputs. Prints one line per compared tensor. "
      "Exit code 0 when all are identical, 1 when one differs, 2 on errors (no board kernel is called, a build fails).");
  sub->add_option("model", f->model, "The model file: .onnx, or .tflite")->required();
  sub->add_option("--input", f->inputs,
                  "Input tensor files, one per model input in order: .pb, .npy or .bin (raw bytes of the input's dtype and shape); "
                  "default: random inputs from --seed")
      ->type_name("FILE");
  sub->add_option("--seed", f->seed, "Seed of the random inputs")->capture_default_str();
  sub->add_option("--shape", f->shapes, kShapeHelp)->type_name("NAME=SHAPE");
  sub->add_option("--bind", f->binds, kBindHelp)->type_name("NAME=FILE");
  sub->add_option("--keep", f->keep, "Build in DIR/board and DIR/portable and keep them (generated C, harness, logs)")->type_name("DIR");
  addBoardFlags(sub, *options);

  return [f, shared = options]() -> int {
    auto fail = [](const Diagnostic& d) {
      std::fputs(d.render().c_str(), stderr);
      return kExitUserError;
    };
    KernelCheckOptions check;
    check.compile = *shared;
    check.compile.modelPath = f->model;
    check.compile.name = "net";
    if (Status s = applyModelFlags(f->shapes, f->binds, check.compile); !s.ok()) return fail(s.error());
    check.inputFiles = f->inputs;
    check.seed = f->seed;
    check.run.keepDir = f->keep;
    check.run.compiler.clear();  // $CC when set, else cc
    auto report = checkBoardKernels(check);
    if (!report.ok()) return fail(report.error());
    for (const std::string& r : report->remarks)
      if (r.rfind("kernel:", 0) == 0) std::printf("note: %s\n", r.c_str());
    std::printf("inputs: %s\n", f->inputs.empty() ? fmt::format("random, seed {}", f->seed).c_str() : "from the --input files");
    size_t differing = 0, kernelsWrong = 0;
    for (const KernelCheckTensor& t : report->tensors) {
      // The layer first (its tensor names can be long, as TFLite's are).
      std::string what = t.function.empty() ? fmt::format("'{}'", t.tensor)
                                            : fmt::format("node '{}' ({} for {}), output '{}'", t.node, t.function, t.kernel, t.tensor);
      if (t.modelOutput) what += " [model output]";
      if (t.differing == 0) {
        std::printf("  identical  %s: %lld elements\n", what.c_str(), static_cast<long long>(t.elements));
        continue;
      }
      ++differing;
      std::string why;
      if (!t.function.empty() && t.inputsIdentical) {
        ++kernelsWrong;
        why = fmt::format("; its inputs are identical, so {} computes differently from {}", t.function, t.kernel);
      } else if (!t.inputsIdentical) {
        why = "; its inputs already differ";
      }
      std::printf("  DIFFERS    %s: %lld of %lld elements, the first at element %lld: %s with the board's kernels, %s with the "
                  "portable ones%s\n",
                  what.c_str(), static_cast<long long>(t.differing), static_cast<long long>(t.elements), static_cast<long long>(t.first),
                  t.boardValue.c_str(), t.portableValue.c_str(), why.c_str());
    }
    if (differing == 0) {
      std::printf("ok: the board's kernels give the same bytes as the portable ones (%zu tensors compared)\n", report->tensors.size());
      return kExitOk;
    }
    std::printf("FAILED: %zu of %zu tensors differ%s\n", differing, report->tensors.size(),
                kernelsWrong ? fmt::format("; {} board kernel call(s) compute differently on identical inputs", kernelsWrong).c_str() : "");
    return kExitKernelsDiffer;
  };
}

}  // namespace stowage::cli
