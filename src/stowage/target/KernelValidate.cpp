// checkKernelsAt (BoardCheck.h): a board's [[kernels]] tables against its targets and each other, each failure a
// diagnostic at the offending key.
#include <filesystem>
#include <map>

#include "stowage/target/BoardCheck.h"
#include "stowage/target/Suggest.h"

namespace stowage {

namespace {

/// True when `a` and `b` can both match one call: same kernel, types that overlap, targets that overlap.
bool overlap(const Board& board, const KernelOverride& a, const KernelOverride& b) {
  if (a.kernel != b.kernel) return false;
  if (a.dtype && b.dtype && *a.dtype != *b.dtype) return false;
  for (const Target& t : board.targets)
    if (a.appliesTo(t) && b.appliesTo(t)) return true;
  return false;
}

}  // namespace

Status checkKernelsAt(const Board& board, const BoardLocations& locs) {
  std::vector<std::string> targetNames;
  for (const Target& t : board.targets) targetNames.push_back(t.name);
  std::map<std::string, std::string> fileByName;  // file name -> path: all are copied into one folder
  for (size_t i = 0; i < board.kernels.size(); ++i) {
    const KernelOverride& k = board.kernels[i];
    auto where = [&](std::string_view key) { return locs.where(board, BoardItem::Kernel, i, key); };
    const std::string label = "kernel '" + k.kernel + "'";
    for (const std::string& name : k.targets) {
      const Target* t = board.findTarget(name);
      if (!t) {
        std::string list;
        for (const auto& n : targetNames) list += " " + n;
        return makeError(where("target"), label + ": 'target' names target '" + name + "', which does not exist" + didYouMean(name, targetNames),
                         "targets of this board:" + list);
      }
      if (t->kind == TargetKind::Accelerator && t->engineDim > 0)
        return makeError(where("target"),
                         label + ": target '" + name + "' computes its layers on its matrix engine (engine_dim = " +
                             std::to_string(t->engineDim) + "), which calls the engine's intrinsics, not kernels",
                         "rename the engine's compute intrinsic instead ([targets.intrinsics], docs/accelerators.md); [[kernels]] "
                         "apply to the cpu and to accelerators that run layers on their cores (no engine_dim)");
    }
    for (size_t j = 0; j < i; ++j)
      if (overlap(board, board.kernels[j], k)) {
        Diagnostic d = makeError(where("kernel"), label + " is replaced twice for the same calls" +
                                                      (k.dtype ? " (dtype \"" + *k.dtype + "\")" : std::string()),
                                 "give each table a different 'dtype' or 'target', or remove one");
        d.notes.push_back("first replaced at " + board.kernels[j].origin + " by '" + board.kernels[j].function + "'");
        return d;
      }
    for (const auto& [key, path] : {std::pair<const char*, const std::string&>{"header", k.header}, {"source", k.source}}) {
      const std::string name = std::filesystem::path(path).filename().string();
      auto [it, fresh] = fileByName.emplace(name, path);
      if (!fresh && it->second != path)
        return makeError(where(key), label + ": '" + std::string(key) + "' is a second file named '" + name + "' (" + path +
                                         "; the other is " + it->second + ")",
                         "kernel files are copied into one folder beside the generated C: give them different names");
    }
  }
  return Status::success();
}

}  // namespace stowage
