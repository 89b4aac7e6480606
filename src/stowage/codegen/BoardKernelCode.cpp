// Board kernels in generated C (see BoardKernelCode.h).
#include "stowage/codegen/BoardKernelCode.h"

#include <fmt/format.h>

#include <filesystem>
#include <set>
#include <utility>

#include "stowage/codegen/CNames.h"

namespace stowage {

BoardKernelCall boardKernelCall(const Graph& g, const Board& board, int step, int target, const KernelOverride& k) {
  BoardKernelCall c;
  c.step = step;
  c.node = g.nodes[static_cast<size_t>(step)].name;
  c.kernel = k.kernel;
  c.function = k.function;
  c.target = board.targets[static_cast<size_t>(target)].name;
  c.boardKernel = static_cast<size_t>(&k - board.kernels.data());
  return c;
}

std::string boardKernelPrelude(const Board& board, const std::vector<BoardKernelCall>& calls, const std::string& prefix) {
  if (calls.empty()) return "";
  std::set<std::string> headers;
  std::set<std::pair<std::string, std::string>> pairs;  // (portable kernel, board function)
  for (const BoardKernelCall& c : calls) {
    headers.insert(std::filesystem::path(board.kernels[c.boardKernel].header).filename().string());
    pairs.emplace(c.kernel, c.function);
  }
  std::string s = fmt::format("\n/* Kernels of board '{}' ([[kernels]]), called instead of the portable ones. */\n", commentText(board.name));
  for (const std::string& h : headers) s += fmt::format("#include \"{}\"\n", h);
  s += "/* Each has its portable kernel's type: the compiler rejects a conditional of two different function pointer types. */\n";
  size_t i = 0;
  for (const auto& [kernel, function] : pairs)
    s += fmt::format("typedef char {}_kernel_type_check_{}[sizeof(1 ? &{} : &{})];\n", prefix, i++, function, kernel);
  return s;
}

}  // namespace stowage
