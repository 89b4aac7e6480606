// Board kernel files and remarks (see BoardKernelFiles.h).
#include "stowage/driver/BoardKernelFiles.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace stowage {

namespace fs = std::filesystem;

Status attachBoardKernels(const Graph& g, ProgramPlan& plan, GeneratedC& code) {
  const Board& board = plan.board;
  std::set<size_t> used;
  for (const BoardKernelCall& c : code.boardKernelCalls) {
    used.insert(c.boardKernel);
    plan.remarks.push_back(fmt::format("kernel: node '{}' ({}) calls '{}' of the board instead of {} on '{}'", c.node,
                                       opName(g.nodes[static_cast<size_t>(c.step)].op), c.function, c.kernel, c.target));
  }
  for (size_t i = 0; i < board.kernels.size(); ++i)
    if (!used.count(i))
      plan.remarks.push_back(fmt::format("kernel: '{}' of the board ({} at {}) is called by no layer of this model",
                                         board.kernels[i].function, board.kernels[i].kernel, board.kernels[i].origin));
  // Names the kernel files must not take: the generated files and the runtime's headers share their folder or include path.
  std::set<std::string> taken = {code.header.fileName, code.source.fileName, code.weights.fileName, "main.c"};
  for (const GeneratedImage& image : code.images) taken.insert(image.fileName);
  std::set<std::string> copied;
  for (size_t i : used) {
    const KernelOverride& k = board.kernels[i];
    for (const std::string& path : {k.header, k.source}) {
      if (!copied.insert(path).second) continue;
      const std::string name = fs::path(path).filename().string();
      if (taken.count(name) || name.rfind("stowage_", 0) == 0)
        return makeError(k.origin, fmt::format("kernel '{}': the file name '{}' is also the name of a generated or runtime file", k.kernel, name),
                         "rename the file (kernel files are copied beside the generated C)");
      std::ifstream in(path, std::ios::binary);
      if (!in) return makeError(path, fmt::format("cannot read this file of board kernel '{}'", k.function), "check 'header' and 'source' at " + k.origin);
      std::ostringstream text;
      text << in.rdbuf();
      code.kernelFiles.push_back({name, text.str()});
      taken.insert(name);
    }
  }
  return Status::success();
}

}  // namespace stowage
