// Program plan validator (see ValidateProgram.h).
#include "stowage/plan/ValidateProgram.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "stowage/plan/Validate.h"

namespace stowage {

Status validateProgramPlan(const ProgramPlan& plan, const std::function<std::string(TensorId)>& nameOf) {
  const Board& board = plan.board;
  auto name = [&](const PlacedBuffer& b) {
    if (b.role == BufferRole::Scratch) return fmt::format("scratch {}", b.name);
    return nameOf ? nameOf(b.tensor) : fmt::format("tensor #{}", b.tensor);
  };
  // Scratch buffers have no tensor: the overlap check below names them by a negative id -2 - index.
  auto flatName = [&](TensorId id) {
    if (id <= -2) return name(plan.buffers[static_cast<size_t>(-2 - id)]);
    return nameOf ? nameOf(id) : fmt::format("tensor #{}", id);
  };
  std::vector<MemoryPlan> perPool(board.pools.size());
  for (size_t bi = 0; bi < plan.buffers.size(); ++bi) {
    const PlacedBuffer& b = plan.buffers[bi];
    if (b.slot.pool < 0 || static_cast<size_t>(b.slot.pool) >= board.pools.size())
      return makeError("memory plan", fmt::format("buffer '{}' has no pool", name(b)));
    const MemoryPool& pool = board.pools[static_cast<size_t>(b.slot.pool)];
    const std::string where = fmt::format("memory plan: pool '{}'", pool.name);
    if (std::find(b.candidates.begin(), b.candidates.end(), b.slot.pool) == b.candidates.end())
      return makeError(where, fmt::format("buffer '{}' is in a pool that is not one of its candidates", name(b)));
    if (b.pinnedPool >= 0 && b.pinnedPool != b.slot.pool)
      return makeError(where, fmt::format("buffer '{}' is pinned to pool '{}' but placed here", name(b),
                                          board.pools[static_cast<size_t>(b.pinnedPool)].name));
    const int banks = std::max(1, pool.banks);
    if (b.slot.bank < 0 || b.slot.bank >= banks)
      return makeError(where, fmt::format("buffer '{}' is in bank {}, but the pool has {}", name(b), b.slot.bank, banks));
    if (b.pinnedBank >= 0 && b.pinnedBank != b.slot.bank)
      return makeError(where, fmt::format("buffer '{}' is pinned to bank {} but placed in bank {}", name(b), b.pinnedBank, b.slot.bank));
    if (b.role == BufferRole::Scratch && (b.firstStep < 0 || b.endStep != b.firstStep + 1))
      return makeError(where, fmt::format("scratch buffer '{}' must live exactly one step (its layer's), not steps [{}, {})", name(b),
                                          b.firstStep, b.endStep));
    if (b.pairedWith >= 0) {
      if (static_cast<size_t>(b.pairedWith) >= plan.buffers.size())
        return makeError(where, fmt::format("buffer '{}' names a ping-pong partner #{} that does not exist", name(b), b.pairedWith));
      const PlacedBuffer& other = plan.buffers[static_cast<size_t>(b.pairedWith)];
      if (banks > 1 && other.slot == b.slot)
        return makeError(where, fmt::format("ping-pong buffers '{}' and '{}' are both in bank {}: the halves of a double buffer must be in "
                                            "different banks so the DMA into one does not conflict with the compute on the other",
                                            name(b), name(other), b.slot.bank));
    }
    if (pool.alignment > 1 && b.offset % pool.alignment != 0)
      return makeError(where, fmt::format("buffer '{}' at offset {} is not aligned to {} bytes", name(b), b.offset, pool.alignment));
    const size_t end = b.offset + b.sizeBytes;
    if (banks > 1) {
      const size_t bankStart = static_cast<size_t>(b.slot.bank) * pool.bankSizeBytes;
      if (b.offset < bankStart || end > bankStart + pool.bankSizeBytes)
        return makeError(where, fmt::format("buffer '{}' bytes [{}, {}) leave bank {} [{}, {})", name(b), b.offset, end, b.slot.bank,
                                            bankStart, bankStart + pool.bankSizeBytes));
    }
    if (pool.sizeBytes && end > *pool.sizeBytes)
      return makeError(where, fmt::format("buffer '{}' bytes [{}, {}) end past the pool's {} bytes", name(b), b.offset, end, *pool.sizeBytes));
    if (b.aliasOf != kNoTensor) {
      // A declared alias: exactly its root's bytes (or a prefix), within the root's lifetime. The root stands
      // for the group in the overlap check below.
      const int r = plan.bufferOf(b.aliasOf);
      const PlacedBuffer* root = r >= 0 ? &plan.buffers[static_cast<size_t>(r)] : nullptr;
      if (root == nullptr || root->aliasOf != kNoTensor || root->role != BufferRole::Activation || b.role != BufferRole::Activation)
        return makeError(where, fmt::format("buffer '{}' is declared an alias of tensor #{}, which is not a planned activation buffer",
                                            name(b), b.aliasOf));
      if (root->slot != b.slot || root->offset != b.offset || b.sizeBytes > root->sizeBytes || b.firstStep < root->firstStep ||
          b.endStep > root->endStep)
        return makeError(where, fmt::format("buffer '{}' (bytes [{}, {}), steps {}..{}) is declared an alias of '{}' but is not "
                                            "inside its bytes [{}, {}) and steps {}..{}",
                                            name(b), b.offset, end, b.firstStep, b.endStep - 1, name(*root), root->offset,
                                            root->offset + root->sizeBytes, root->firstStep, root->endStep - 1));
      continue;
    }
    Buffer flat;
    flat.tensor = b.role == BufferRole::Scratch ? static_cast<TensorId>(-2 - static_cast<long long>(bi)) : b.tensor;
    flat.sizeBytes = b.sizeBytes;
    flat.alignment = std::max<size_t>(1, pool.alignment);
    flat.firstStep = b.firstStep;
    flat.endStep = b.endStep;
    MemoryPlan& mp = perPool[static_cast<size_t>(b.slot.pool)];
    mp.buffers.push_back(flat);
    mp.offsets.push_back(b.offset);
    mp.workspaceBytes = std::max(mp.workspaceBytes, end);
  }
  // Overlap in address while live, per pool (banks are disjoint ranges of the pool's offsets).
  for (size_t pi = 0; pi < perPool.size(); ++pi) {
    Status s = validatePlan(perPool[pi], flatName);
    if (!s.ok()) {
      Diagnostic d = s.error();
      d.location = fmt::format("memory plan: pool '{}'", board.pools[pi].name);
      return d;
    }
  }
  return Status::success();
}

}  // namespace stowage
