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

const DeviceMemory* Board::findMemory(std::string_view name) const {
  for (const auto& m : memories)
    if (m.name == name) return &m;
  return nullptr;
}

const KernelOverride* Board::findKernel(std::string_view kernel, std::string_view dtype, const Target& target) const {
  for (const auto& k : kernels)
    if (k.kernel == kernel && k.appliesToDtype(dtype) && k.appliesTo(target)) return &k;
  return nullptr;
}

const DeviceMemory* poolMemory(const Board& board, const MemoryPool& pool) {
  if (board.memories.empty()) return nullptr;
  if (!pool.memory.empty()) return board.findMemory(pool.memory);
  if (pool.base) {
    for (const DeviceMemory& m : board.memories)
      if (*pool.base >= m.base && *pool.base < m.end()) return &m;
    return nullptr;
  }
  if (!board.device || pool.placement == PoolPlacement::Fixed) return nullptr;
  return board.findMemory(pool.kind == PoolKind::Constant ? board.device->flashMemory : board.device->ramMemory);
}

const DeviceMemory* poolLoadMemory(const Board& board, const MemoryPool& pool) {
  if (pool.kind != PoolKind::Constant || pool.placement != PoolPlacement::Static) return nullptr;
  const DeviceMemory* home = poolMemory(board, pool);
  if (!home || home->kind == MemoryKind::Flash) return nullptr;
  if (!pool.loadFrom.empty()) return board.findMemory(pool.loadFrom);
  return board.device ? board.findMemory(board.device->flashMemory) : nullptr;
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
