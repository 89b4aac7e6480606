// Program plan validator (see ValidateProgram.h).
#include "stowage/plan/ValidateProgram.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "stowage/plan/Validate.h"

namespace stowage {

Status validateProgramPlan(const ProgramPlan& plan, const std::function<std::string(TensorId)>& nameOf) {
  const Board& board = plan.board;
  auto name = [&](const PlacedBuffer& b) { return nameOf ? nameOf(b.tensor) : fmt::format("tensor #{}", b.tensor); };
  std::vector<MemoryPlan> perPool(board.pools.size());
  for (const PlacedBuffer& b : plan.buffers) {
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
    // A declared alias inside its root (a Concat slice) is aligned only to its element size; the root is checked.
    if (pool.alignment > 1 && b.offset % pool.alignment != 0 && b.aliasOf == kNoTensor)
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
      // A declared alias: bytes [aliasOffset, aliasOffset + size) of its root's, within the root's lifetime. The
      // root stands for the group in the overlap check below.
      const int r = plan.bufferOf(b.aliasOf);
      const PlacedBuffer* root = r >= 0 ? &plan.buffers[static_cast<size_t>(r)] : nullptr;
      if (root == nullptr || root->aliasOf != kNoTensor || root->role != BufferRole::Activation || b.role != BufferRole::Activation)
        return makeError(where, fmt::format("buffer '{}' is declared an alias of tensor #{}, which is not a planned activation buffer",
                                            name(b), b.aliasOf));
      if (root->slot != b.slot || b.aliasOffset > root->sizeBytes || b.sizeBytes > root->sizeBytes - b.aliasOffset ||
          b.offset != root->offset + b.aliasOffset || b.firstStep < root->firstStep || b.endStep > root->endStep)
        return makeError(where, fmt::format("buffer '{}' (bytes [{}, {}), steps {}..{}) is declared an alias of '{}' but is not "
                                            "inside its bytes [{}, {}) and steps {}..{}",
                                            name(b), b.offset, end, b.firstStep, b.endStep - 1, name(*root), root->offset,
                                            root->offset + root->sizeBytes, root->firstStep, root->endStep - 1));
      continue;
    }
    Buffer flat;
    flat.tensor = b.tensor;
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
    Status s = validatePlan(perPool[pi], nameOf);
    if (!s.ok()) {
      Diagnostic d = s.error();
      d.location = fmt::format("memory plan: pool '{}'", board.pools[pi].name);
      return d;
    }
  }
  return Status::success();
}

}  // namespace stowage
