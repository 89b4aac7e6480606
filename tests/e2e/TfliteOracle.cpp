// TFLite interpreter oracle for the end-to-end tests (see TfliteOracle.h).
#include "TfliteOracle.h"

namespace stowage::e2e {

namespace fs = std::filesystem;

bool tfliteOracleAvailable(std::string* why) {
  const std::string reason = nodeOracleMissing(tfliteOracleDir(), "@tensorflow/tfjs-tflite", "TFLite interpreter oracle");
  if (why) *why = reason;
  return reason.empty();
}

std::vector<ModelRun> runTfliteOracleBatch(const std::vector<TfliteJob>& jobs, const fs::path& batchFile) {
  std::vector<NodeOracleJob> runs;
  for (const TfliteJob& job : jobs) {
    runs.push_back(NodeOracleJob{job.model, job.inputs, job.work, nlohmann::json::object(),
                                 "TFLite interpreter (" + job.model.string() + ")"});
  }
  return runNodeOracleBatch(tfliteOracleDir() + "/run.js", "tflite_", runs, batchFile);
}

ModelRun runTfliteOracle(const fs::path& model, const std::vector<Tensor>& inputs, const fs::path& work) {
  return runTfliteOracleBatch({TfliteJob{model, inputs, work}}, work / "tflite_batch.json").front();
}

}  // namespace stowage::e2e
