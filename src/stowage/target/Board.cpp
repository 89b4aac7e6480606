// Board lookups and the default board (one cpu target, a user workspace pool and a static constant pool).
#include "stowage/target/Board.h"

namespace stowage {

const MemoryPool* Board::findPool(std::string_view name) const {
  for (const auto& p : pools)
    if (p.name == name) return &p;
  return nullptr;
}

const Target* Board::findTarget(std::string_view name) const {
  for (const auto& t : targets)
    if (t.name == name) return &t;
  return nullptr;
}

Board defaultBoard() {
  Board b;
  b.name = "default";
  Target cpu;
  cpu.name = "cpu";
  cpu.ops = {"*"};
  cpu.origin = "default";
  b.targets.push_back(cpu);
  MemoryPool ws;
  ws.name = std::string(kDefaultWorkspacePool);
  ws.access = {"cpu"};
  ws.origin = "default";
  b.pools.push_back(ws);
  MemoryPool weights;
  weights.name = std::string(kDefaultConstantPool);
  weights.kind = PoolKind::Constant;
  weights.placement = PoolPlacement::Static;
  weights.access = {"cpu"};
  weights.origin = "default";
  b.pools.push_back(weights);
  return b;
}

}  // namespace stowage
