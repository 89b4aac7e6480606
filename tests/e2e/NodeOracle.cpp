// The --batch exchange of the Node.js test oracles (see NodeOracle.h).
#include "NodeOracle.h"

#include <sstream>

#include "E2eSupport.h"
#include "stowage/io/FileBytes.h"
#include "stowage/io/TensorFile.h"

namespace stowage::e2e {

namespace fs = std::filesystem;

std::vector<std::string> writeNpyInputs(const std::vector<Tensor>& inputs, const fs::path& work,
                                        const std::string& prefix, std::string* error) {
  std::vector<std::string> files;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string file = (work / (prefix + std::to_string(i) + ".npy")).string();
    Status s = writeNpy(file, inputs[i]);
    if (!s.ok()) {
      *error = "cannot write input " + std::to_string(i) + " (" + inputs[i].name + "): " + s.error().render();
      return {};
    }
    files.push_back(file);
  }
  return files;
}

std::string nodeOracleMissing(const std::string& oracleDir, const std::string& package, const std::string& what) {
  if (runCommand("command -v node").exitCode != 0) {
    return "Node.js (`node`) is not installed; `make deps` installs it (Debian packages nodejs npm) and the " + what;
  }
  if (!fs::exists(fs::path(oracleDir) / "node_modules" / package / "package.json")) {
    return package + " is not installed in " + oracleDir +
           "/node_modules; run `make deps` (it runs `npm ci --ignore-scripts` there; needs access to the npm registry)";
  }
  return "";
}

std::vector<ModelRun> runNodeOracleBatch(const std::string& script, const std::string& prefix,
                                         const std::vector<NodeOracleJob>& jobs, const fs::path& batchFile) {
  std::vector<ModelRun> runs(jobs.size());
  nlohmann::json list = nlohmann::json::array();
  std::vector<size_t> jobOfEntry;  // list index -> jobs index (jobs whose inputs could not be written are left out)
  for (size_t j = 0; j < jobs.size(); ++j) {
    const NodeOracleJob& job = jobs[j];
    fs::create_directories(job.work);
    std::vector<std::string> files = writeNpyInputs(job.inputs, job.work, prefix + "input_", &runs[j].error);
    if (!runs[j].error.empty()) continue;
    const fs::path out = job.work / (prefix + "out");
    fs::remove_all(out);
    nlohmann::json specs = nlohmann::json::array();
    for (size_t i = 0; i < job.inputs.size(); ++i) specs.push_back(job.inputs[i].name.empty() ? files[i] : job.inputs[i].name + "=" + files[i]);
    nlohmann::json entry = job.fields;
    entry["model"] = job.model.string();
    entry["out"] = out.string();
    entry["inputs"] = specs;
    list.push_back(std::move(entry));
    jobOfEntry.push_back(j);
  }
  if (jobOfEntry.empty()) return runs;
  fs::create_directories(batchFile.parent_path());
  if (Status s = stowage::writeFileBytes(batchFile.string(), list.dump(1) + "\n"); !s.ok()) {
    for (size_t j : jobOfEntry) runs[j].error = s.error().render();
    return runs;
  }
  const std::string cmd = "node " + shellQuote(script) + " --batch " + shellQuote(batchFile.string());
  const CommandResult r = runCommand(cmd);
  std::vector<bool> answered(jobs.size(), false);
  std::istringstream lines(r.out);
  for (std::string l; std::getline(lines, l);) {
    nlohmann::json line = nlohmann::json::parse(l, nullptr, /*allow_exceptions=*/false);
    if (line.is_discarded() || !line.contains("job") || !line["job"].is_number_unsigned()) continue;
    const size_t entry = line["job"].get<size_t>();
    if (entry >= jobOfEntry.size()) continue;
    const size_t j = jobOfEntry[entry];
    answered[j] = true;
    ModelRun& run = runs[j];
    if (line.contains("error")) {
      run.error = jobs[j].label + ": " + line["error"].dump();
      continue;
    }
    if (!line.contains("outputs") || !line["outputs"].is_array()) {
      run.error = jobs[j].label + ": the oracle printed no output listing: " + l;
      continue;
    }
    for (const auto& o : line["outputs"]) {
      auto t = readTensorFile(o.value("file", std::string()));
      if (!t.ok()) {
        run.error = jobs[j].label + ": cannot read output " + o.dump() + ": " + t.error().render();
        run.outputs.clear();
        break;
      }
      t->name = o.value("name", std::string());
      t->kind = TensorKind::Activation;
      run.outputs.push_back(std::move(*t));
    }
  }
  for (size_t j : jobOfEntry) {
    if (!answered[j]) {
      runs[j].error = jobs[j].label + ": " + cmd + " failed (exit code " + std::to_string(r.exitCode) + "): " + r.err;
    }
  }
  return runs;
}

}  // namespace stowage::e2e
