// ONNX Runtime as a test oracle: run an ONNX model with ONNX Runtime (tools/ort-oracle/run.js, Node.js and the npm
// package onnxruntime-node, installed by `make deps`) and with `stowage run` on the same inputs, and compare the
// outputs. Tests skip (GTEST_SKIP) when ortOracleAvailable() is false. See README.md, "ONNX Runtime as the test oracle".
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "NodeOracle.h"
#include "stowage/io/TensorCompare.h"
#include "stowage/ir/Tensor.h"

namespace stowage::e2e {

/// The oracle's folder (tools/ort-oracle of the source tree).
inline std::string ortOracleDir() { return STOWAGE_ORT_ORACLE; }

/// True when `node` is on PATH and tools/ort-oracle/node_modules/onnxruntime-node exists. Otherwise false, and
/// `*why` (when given) says what is missing and how to install it (`make deps`).
bool ortOracleAvailable(std::string* why = nullptr);

/// Runs `model` with ONNX Runtime (one thread) on `inputs`. An input with a name is bound to the model input of
/// that name, one without takes the next model input in order. `level` is ONNX Runtime's graph optimisation
/// level: "disabled" (default: every node as ONNX defines it), "basic", "extended" or "all" (fusions that depend
/// on the machine's CPU). `dumpIntermediates`: every node output of the main graph that is not a graph output is
/// returned too, after the model's outputs (to calibrate quantisation ranges). Input and output files go to
/// `work` (created if missing; files of an earlier run there are overwritten).
ModelRun runOrtOracle(const std::filesystem::path& model, const std::vector<Tensor>& inputs,
                      const std::filesystem::path& work, const std::string& level = "disabled",
                      bool dumpIntermediates = false);

/// One run of runOrtOracleBatch: runOrtOracle's arguments.
struct OrtJob {
  std::filesystem::path model;
  std::vector<Tensor> inputs;
  std::filesystem::path work;
  std::string level = "disabled";
  bool dumpIntermediates = false;
};

/// runOrtOracle for each job, in one Node process (Node and ONNX Runtime start once: ~0.25 s saved per model). The
/// job list is written to `batchFile`. A job that fails has its error in its ModelRun; the others still run.
std::vector<ModelRun> runOrtOracleBatch(const std::vector<OrtJob>& jobs, const std::filesystem::path& batchFile);

/// Runs `model` with `stowage run` (the CLI of this build) on `inputs`, given positionally in the model's input
/// order; `extraFlags` is appended to the command line as is (shell syntax, e.g. "--board b.toml --guard").
/// Files go to `work` (created if missing).
ModelRun runStowageCli(const std::filesystem::path& model, const std::vector<Tensor>& inputs,
                       const std::filesystem::path& work, const std::string& extraFlags = "");

/// One input tensor per graph input of the ONNX (or .tflite) model (as stowage imports it: name, dtype, static shape), filled
/// from a seeded splitmix64: float32 uniform in [lo, hi), integer types uniform over [lo, hi] clamped to the
/// type's range, bool 0/1. Empty with `*error` set when the model cannot be imported.
std::vector<Tensor> randomModelInputs(const std::filesystem::path& model, uint64_t seed, std::string* error,
                                      double lo = -1.0, double hi = 1.0);

/// How two tensors differ.
struct TensorDiff {
  std::string mismatch;  ///< dtype or shape differ ("" when they agree; the counts below are then meaningful)
  int64_t elements = 0;
  int64_t differing = 0;    ///< elements outside the tolerance (float) or more than `allowedSteps` apart (integer)
  int64_t firstIndex = -1;  ///< flat index of the first differing element
  double maxAbs = 0;        ///< largest |got - want| over all elements (infinity when only one side is NaN/inf)
  double maxRel = 0;        ///< float32: largest |got - want| / |want| over elements with want != 0
  int64_t maxSteps = 0;     ///< integer and bool dtypes: largest |got - want| in quantisation steps
  bool same() const { return mismatch.empty() && differing == 0; }
  /// One line: "ok (...)" or "N of M elements differ (first at i), max abs diff D, max rel diff R[, max S steps]",
  /// or the mismatch.
  std::string summary() const;
};

/// Compares `got` with `want` element by element: float32 within |got - want| <= atol + rtol * |want| (NaN
/// matches NaN, infinities must be equal); integer and bool dtypes may be `allowedSteps` apart.
TensorDiff diffTensors(const Tensor& got, const Tensor& want, Tolerance tol = {}, int64_t allowedSteps = 0);

/// diffTensors over two output lists (same count expected): "" when every output matches, else one line per
/// differing output, "output i (name): <summary>".
std::string diffOutputs(const std::vector<Tensor>& got, const std::vector<Tensor>& want, Tolerance tol = {},
                        int64_t allowedSteps = 0);

}  // namespace stowage::e2e
