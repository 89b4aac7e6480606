// The check a user runs on a board's own kernels ([[kernels]], docs/kernels.md): the model is built for the host
// twice, calling the board's kernels and calling the portable ones, both run on the same inputs, and the outputs of
// every layer that calls a board kernel (and the tensors it reads, and the model's outputs) are compared byte for
// byte. `stowage check-kernels` prints the result; the e2e tests call it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stowage/codegen/CEmitter.h"
#include "stowage/driver/Compiler.h"
#include "stowage/driver/HostRunner.h"
#include "stowage/ir/Tensor.h"
#include "stowage/support/Diagnostic.h"

namespace stowage {

struct KernelCheckOptions {
  CompileOptions compile;      ///< the model and the board (with its [[kernels]]); outDir and projectDir are ignored
  /// One file per model input, in order: .pb, .npy, or .bin (raw bytes of the input's dtype and shape); empty: seeded
  /// random inputs.
  std::vector<std::string> inputFiles;
  uint64_t seed = 1;           ///< of the random inputs
  HostRunOptions run;          ///< the C compiler; `keepDir` keeps the two builds in its subfolders board/ and portable/
};

/// One compared tensor.
struct KernelCheckTensor {
  std::string tensor;        ///< its name
  std::string node;          ///< the node writing it ("" for a model input)
  std::string function;      ///< the board kernel that node calls, "" when it calls a portable kernel
  std::string kernel;        ///< the portable kernel that function replaces
  bool modelOutput = false;  ///< one of the model's own outputs
  int64_t elements = 0;
  int64_t differing = 0;     ///< elements whose bytes differ
  int64_t first = -1;        ///< the first differing element, -1 when none
  std::string boardValue, portableValue;  ///< the values at `first`, as text
  /// For a board kernel's output: every tensor its node reads (other than constants) was identical in both runs, so
  /// a difference comes from the kernel itself.
  bool inputsIdentical = true;
};

struct KernelCheckReport {
  std::vector<BoardKernelCall> calls;      ///< the board kernels' calls, in step order
  std::vector<KernelCheckTensor> tensors;  ///< the compared tensors, in step order, then the model's outputs
  std::vector<std::string> remarks;        ///< the compile's remarks (which layers call which board kernel)
  /// True when every compared tensor is identical.
  bool identical() const;
};

/// Builds and runs both programs and compares them. Errors: no board kernel is called by the model (nothing to
/// check), inputs that do not match the model, a build or run failure (with the compiler's output).
Result<KernelCheckReport> checkBoardKernels(const KernelCheckOptions& options);

/// Seeded random inputs for the model's inputs: int8 / uint8 over their whole range, float32 in [-1, 1), int32 / int64
/// / bool in {0, 1}.
std::vector<Tensor> randomInputs(const Graph& g, uint64_t seed);

}  // namespace stowage
