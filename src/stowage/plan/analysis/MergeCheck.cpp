// Rule and pin check before merging two activation tensors (see MergeCheck.h).
#include "stowage/plan/analysis/MergeCheck.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "stowage/target/Glob.h"

namespace stowage {
namespace {

/// Workspace pools that every rule over `t`'s producer (outputs) and readers (inputs) allows, with the rules
/// that restricted them.
struct Allowed {
  std::vector<std::string> pools;
  std::vector<std::string> origins;
};

Allowed allowedByRules(const Graph& g, const Board& board, TensorId t) {
  Allowed a;
  for (const MemoryPool& p : board.pools)
    if (p.kind == PoolKind::Workspace) a.pools.push_back(p.name);
  for (const Node& n : g.nodes) {
    const bool writes = std::find(n.outputs.begin(), n.outputs.end(), t) != n.outputs.end();
    const bool reads = std::find(n.inputs.begin(), n.inputs.end(), t) != n.inputs.end();
    if (!writes && !reads) continue;
    for (const PlacementRule& rule : board.rules) {
      if (!rule.matches(opName(n.op), n.name)) continue;
      for (const bool asOutput : {true, false}) {
        if (asOutput ? !writes : !reads) continue;
        const auto& list = asOutput ? rule.outputs : rule.inputs;
        if (!list) continue;
        std::erase_if(a.pools, [&](const std::string& p) { return std::find(list->begin(), list->end(), p) == list->end(); });
        a.origins.push_back(fmt::format("{} ({} of '{}')", rule.origin, asOutput ? "outputs" : "inputs", n.name));
      }
    }
  }
  return a;
}

/// The pin that decides `name` (the last matching one), if any.
const PoolPin* pinOf(const Board& board, const std::string& name) {
  for (size_t k = board.pins.size(); k-- > 0;)
    if (globMatch(board.pins[k].tensor, name)) return &board.pins[k];
  return nullptr;
}

std::string joined(const std::vector<std::string>& items) {
  return items.empty() ? std::string("none") : fmt::format("{}", fmt::join(items, ", "));
}

}  // namespace

std::string whyRulesKeepApart(const Graph& g, const Board& board, TensorId inner, TensorId outer) {
  const std::string& innerName = g.tensor(inner).name;
  const std::string& outerName = g.tensor(outer).name;
  // Asked once per fusable pair: without rules and pins (most boards) there is nothing to scan the graph for.
  if (board.rules.empty() && board.pins.empty()) return {};
  if (const PoolPin* pin = pinOf(board, innerName))
    return fmt::format("pin {} names tensor '{}', which fusing would remove", pin->origin, innerName);
  // The node that would disappear (reads `inner`, writes `outer`): a rule restricting its tensors would match
  // nothing afterwards unless it also matches the producer, which then writes `outer`.
  const Node* producer = nullptr;
  const Node* middle = nullptr;
  for (const Node& n : g.nodes) {
    if (std::find(n.outputs.begin(), n.outputs.end(), inner) != n.outputs.end()) producer = &n;
    if (std::find(n.inputs.begin(), n.inputs.end(), inner) != n.inputs.end() &&
        std::find(n.outputs.begin(), n.outputs.end(), outer) != n.outputs.end())
      middle = &n;
  }
  if (middle != nullptr)
    for (const PlacementRule& rule : board.rules) {
      if (!rule.inputs && !rule.outputs) continue;
      if (!rule.matches(opName(middle->op), middle->name)) continue;
      if (producer != nullptr && rule.matches(opName(producer->op), producer->name)) continue;
      return fmt::format("the rule at {} places the tensors of '{}', which fusing would remove", rule.origin, middle->name);
    }
  const Allowed a = allowedByRules(g, board, inner);
  const Allowed b = allowedByRules(g, board, outer);
  std::vector<std::string> both;
  for (const std::string& p : a.pools)
    if (std::find(b.pools.begin(), b.pools.end(), p) != b.pools.end()) both.push_back(p);
  if (both.empty())
    return fmt::format("the rules put '{}' in [{}] (rules {}) and '{}' in [{}] (rules {}): the node between them moves it "
                       "from one pool to another",
                       innerName, joined(a.pools), joined(a.origins), outerName, joined(b.pools), joined(b.origins));
  if (const PoolPin* pin = pinOf(board, outerName); pin != nullptr &&
      std::find(both.begin(), both.end(), pin->pool) == both.end())
    return fmt::format("pin {} puts '{}' in pool '{}', which the rules over '{}' do not allow (rules {})", pin->origin, outerName,
                       pin->pool, innerName, joined(a.origins));
  return {};
}

}  // namespace stowage
