// Op table lookups generated from Ops.def (see Op.h).
#include "stowage/ir/Op.h"

#include <array>

namespace stowage {

namespace {
constexpr std::array kOpInfos = {
#define STOWAGE_OP(Kind, MinIn, MaxIn, NumOut, ShapeRule, CostRule) OpInfo{#Kind, MinIn, MaxIn, NumOut},
#include "stowage/ir/Ops.def"
#undef STOWAGE_OP
};
}  // namespace

const OpInfo& opInfo(OpKind op) { return kOpInfos[static_cast<size_t>(op)]; }

std::optional<OpKind> opKindFromName(std::string_view name) {
  for (size_t i = 0; i < kOpInfos.size(); ++i)
    if (kOpInfos[i].name == name) return static_cast<OpKind>(i);
  return std::nullopt;
}

const std::vector<OpKind>& allOpKinds() {
  static const std::vector<OpKind> kinds = [] {
    std::vector<OpKind> v;
    for (size_t i = 0; i < kOpInfos.size(); ++i) v.push_back(static_cast<OpKind>(i));
    return v;
  }();
  return kinds;
}

}  // namespace stowage
