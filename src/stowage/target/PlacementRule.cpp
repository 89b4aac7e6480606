// PlacementRule matching (op and node globs) and role lookup.
#include "stowage/target/PlacementRule.h"

#include "stowage/target/Glob.h"

namespace stowage {

bool PlacementRule::matches(std::string_view opName, std::string_view nodeName) const {
  return (op.empty() || globMatch(op, opName)) && (node.empty() || globMatch(node, nodeName));
}

const std::optional<std::vector<std::string>>& PlacementRule::allowed(TensorRole role) const {
  switch (role) {
    case TensorRole::Input: return inputs;
    case TensorRole::Output: return outputs;
    case TensorRole::Weight: return weights;
    case TensorRole::Scratch: return scratch;
  }
  return inputs;
}

std::string_view tensorRoleKey(TensorRole role) {
  switch (role) {
    case TensorRole::Input: return "inputs";
    case TensorRole::Output: return "outputs";
    case TensorRole::Weight: return "weights";
    case TensorRole::Scratch: return "scratch";
  }
  return "inputs";
}

}  // namespace stowage
