// What the test oracles that run in Node.js (tools/ort-oracle/run.js, tools/tflite-oracle/run.js) share: a model run's
// outputs, and the --batch exchange (inputs written as .npy, a JSON job list, one JSON result line per run).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "stowage/ir/Tensor.h"

namespace stowage::e2e {

/// The outputs of one model run in the model's output order (each named after its model output), or an error.
struct ModelRun {
  std::vector<Tensor> outputs;
  std::string error;  ///< empty on success
  bool ok() const { return error.empty(); }
};

/// One run of runNodeOracleBatch: the model, its inputs (an input with a name is bound to the model input of that
/// name, one without takes the next model input in order), the folder for its files (created if missing; files of
/// an earlier run there are overwritten), the run's further JSON fields for the script (e.g. {"level": ...}), and
/// what the run's errors are prefixed with (e.g. "ONNX Runtime (m.onnx, level disabled)").
struct NodeOracleJob {
  std::filesystem::path model;
  std::vector<Tensor> inputs;
  std::filesystem::path work;
  nlohmann::json fields = nlohmann::json::object();
  std::string label;
};

/// Runs `node <script> --batch <batchFile>` on the jobs: each job's inputs go to work/<prefix>input_<i>.npy, its
/// outputs to work/<prefix>out/. A job that fails has its error in its ModelRun; the others still run.
std::vector<ModelRun> runNodeOracleBatch(const std::string& script, const std::string& prefix,
                                         const std::vector<NodeOracleJob>& jobs,
                                         const std::filesystem::path& batchFile);

/// "" when `node` is on PATH and `<oracleDir>/node_modules/<package>/package.json` exists; else what is missing and
/// how to install it (`make deps`), naming the oracle as `what`.
std::string nodeOracleMissing(const std::string& oracleDir, const std::string& package, const std::string& what);

/// Writes each input as work/<prefix><i>.npy; returns the paths, or sets *error.
std::vector<std::string> writeNpyInputs(const std::vector<Tensor>& inputs, const std::filesystem::path& work,
                                        const std::string& prefix, std::string* error);

}  // namespace stowage::e2e
