// MemoryPool helpers: access checks, bank-aware addresses and the board-file spelling of the enums.
#include "stowage/target/MemoryPool.h"

#include <algorithm>

namespace stowage {

bool MemoryPool::canAccess(std::string_view target) const {
  return std::find(access.begin(), access.end(), target) != access.end();
}

std::optional<uint64_t> MemoryPool::addressOf(size_t offset) const {
  if (placement != PoolPlacement::Fixed || !base) return std::nullopt;
  if (bankBases.empty() || bankSizeBytes == 0) return *base + offset;
  size_t bank = offset / bankSizeBytes;
  if (bank >= bankBases.size()) return std::nullopt;
  return bankBases[bank] + offset % bankSizeBytes;
}

std::string_view poolKindName(PoolKind kind) {
  return kind == PoolKind::Workspace ? "workspace" : "constant";
}

std::optional<PoolKind> poolKindFromName(std::string_view name) {
  if (name == "workspace") return PoolKind::Workspace;
  if (name == "constant") return PoolKind::Constant;
  return std::nullopt;
}

std::string_view poolPlacementName(PoolPlacement placement) {
  switch (placement) {
    case PoolPlacement::User: return "user";
    case PoolPlacement::Static: return "static";
    case PoolPlacement::Fixed: return "fixed";
  }
  return "user";
}

std::optional<PoolPlacement> poolPlacementFromName(std::string_view name) {
  if (name == "user") return PoolPlacement::User;
  if (name == "static") return PoolPlacement::Static;
  if (name == "fixed") return PoolPlacement::Fixed;
  return std::nullopt;
}

}  // namespace stowage
