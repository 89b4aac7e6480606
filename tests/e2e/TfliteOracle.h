// TFLite's own interpreter as a test oracle: run a .tflite model with the WebAssembly build of TFLite
// (tools/tflite-oracle/run.js, Node.js and the npm package @tensorflow/tfjs-tflite, installed by `make deps`) on
// the inputs `stowage run` gets, and compare the outputs. Tests skip (GTEST_SKIP) when tfliteOracleAvailable() is
// false. The interpreter applies XNNPACK: an oracle for float models, a loose one for int8 (docs/testing.md).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "NodeOracle.h"

namespace stowage::e2e {

/// The oracle's folder (tools/tflite-oracle of the source tree).
inline std::string tfliteOracleDir() { return STOWAGE_TFLITE_ORACLE; }

/// True when `node` is on PATH and tools/tflite-oracle/node_modules/@tensorflow/tfjs-tflite exists. Otherwise
/// false, and `*why` (when given) says what is missing and how to install it (`make deps`).
bool tfliteOracleAvailable(std::string* why = nullptr);

/// One run of runTfliteOracleBatch: the .tflite model, its inputs (an input with a name is bound to the model input
/// of that name, one without takes the next model input in order) and the folder for the files.
struct TfliteJob {
  std::filesystem::path model;
  std::vector<Tensor> inputs;
  std::filesystem::path work;
};

/// Runs each job with TFLite's interpreter (one thread) in one Node process (Node and the WebAssembly module start
/// once: ~0.7 s saved per model). The job list is written to `batchFile`. A job that fails has its error in its
/// ModelRun; the others still run.
std::vector<ModelRun> runTfliteOracleBatch(const std::vector<TfliteJob>& jobs, const std::filesystem::path& batchFile);

/// runTfliteOracleBatch of one job (batch file work/tflite_batch.json).
ModelRun runTfliteOracle(const std::filesystem::path& model, const std::vector<Tensor>& inputs,
                         const std::filesystem::path& work);

}  // namespace stowage::e2e
