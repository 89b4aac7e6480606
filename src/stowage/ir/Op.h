// The operation table (Ops.def) as C++: op kinds, their names and arities, and the per-op shape rule and
// MAC count that every stage uses. Frontends build nodes with canonical attributes documented in Ops.def.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "stowage/ir/Tensor.h"
#include "stowage/support/Diagnostic.h"

namespace stowage {

enum class OpKind : uint16_t {
#define STOWAGE_OP(Kind, MinIn, MaxIn, NumOut, ShapeRule, CostRule) Kind,
#include "stowage/ir/Ops.def"
#undef STOWAGE_OP
};

struct OpInfo {
  std::string_view name;
  int minInputs;
  int maxInputs;  ///< -1: variadic
  int numOutputs;
};

const OpInfo& opInfo(OpKind op);
inline std::string_view opName(OpKind op) { return opInfo(op).name; }
std::optional<OpKind> opKindFromName(std::string_view name);
/// Every op kind, in Ops.def order.
const std::vector<OpKind>& allOpKinds();

class Graph;
struct Node;

/// Output shapes of `node` computed from its input shapes and canonical attributes (the op's ShapeRule).
/// An error names the node and what is inconsistent.
Result<std::vector<Shape>> inferOutputShapes(const Graph& g, const Node& node);

/// Multiply-accumulate count of one execution of `node` (0 for ops without MACs).
int64_t macCount(const Graph& g, const Node& node);

}  // namespace stowage
