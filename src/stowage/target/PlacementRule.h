// Placement rules and pins of a board: which pools the inputs, outputs, weights and scratch of matching
// nodes may use, and tensors pinned to one pool. Part of the memory description (target/); the planner
// (plan/) intersects every rule that matches a node and honours pins.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stowage {

/// The role a tensor plays for a node, as restricted by a rule.
enum class TensorRole { Input, Output, Weight, Scratch };

struct PlacementRule {
  std::string op;    ///< glob over IR op names (e.g. "Conv", "*Pool"); empty = any
  std::string node;  ///< glob over node names; empty = any
  /// Allowed pools per role; nullopt = no restriction. `inputs` are the node's non-constant inputs,
  /// `weights` its constant inputs, `outputs` what it produces, `scratch` its temporary buffers.
  std::optional<std::vector<std::string>> inputs, outputs, weights, scratch;
  std::string origin;  ///< "board.toml:30" or "--rule #1", for diagnostics

  /// True when the rule applies to a node `nodeName` of op `opName` (both globs, when set, match).
  bool matches(std::string_view opName, std::string_view nodeName) const;
  /// The restriction for `role` (nullopt = none).
  const std::optional<std::vector<std::string>>& allowed(TensorRole role) const;
};

/// A tensor (by name; glob allowed) pinned to one pool. When several pins match a tensor the last one wins
/// (board file pins first, then --pin flags in order).
struct PoolPin {
  std::string tensor;  ///< glob over tensor names
  std::string pool;    ///< pool name
  std::string origin;  ///< "board.toml:40" or "--pin conv1_out=dtcm"
};

/// "inputs" / "outputs" / "weights" / "scratch" (the board-file keys).
std::string_view tensorRoleKey(TensorRole role);

}  // namespace stowage
