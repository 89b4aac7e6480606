// Node-to-target assignment (see NodeTargets.h).
#include "stowage/plan/analysis/NodeTargets.h"

namespace stowage {

NodeTargets assignNodeTargets(const Graph& g, const Board& board) {
  NodeTargets r;
  int cpu = -1;
  for (size_t t = 0; t < board.targets.size() && cpu < 0; ++t)
    if (board.targets[t].kind == TargetKind::Cpu) cpu = static_cast<int>(t);
  if (cpu < 0) cpu = 0;
  r.targetOf.assign(g.nodes.size(), cpu);
  for (size_t step = 0; step < g.nodes.size(); ++step) {
    const std::string op(opName(g.nodes[step].op));
    for (size_t t = 0; t < board.targets.size(); ++t) {
      const Target& target = board.targets[t];
      if (target.kind == TargetKind::Accelerator && target.runs(op)) {
        r.targetOf[step] = static_cast<int>(t);
        break;
      }
    }
    if (!board.targets.empty() && !board.targets[static_cast<size_t>(r.targetOf[step])].runs(op))
      r.remarks.push_back("node '" + g.nodes[step].name + "' (" + op + ") runs on '" +
                          board.targets[static_cast<size_t>(r.targetOf[step])].name +
                          "' although its ops list does not name " + op + ": no target of the board lists it");
  }
  return r;
}

}  // namespace stowage
