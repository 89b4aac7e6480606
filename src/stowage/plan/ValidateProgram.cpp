// Program plan validator (see ValidateProgram.h).
#include "stowage/plan/ValidateProgram.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "stowage/plan/analysis/RowOverlap.h"

namespace stowage {

namespace {

/// A buffer's bytes as `count` runs of `run` bytes, `stride` apart, from `start` (a contiguous buffer: one run).
struct Runs {
  size_t start = 0, run = 0, stride = 1, count = 0;
};

Runs runsOf(const PlacedBuffer& b) {
  if (b.aliasRunBytes == 0) return {b.offset, b.sizeBytes, std::max<size_t>(1, b.sizeBytes), b.sizeBytes > 0 ? 1u : 0u};
  return {b.offset, b.aliasRunBytes, std::max<size_t>(1, b.aliasStrideBytes), b.sizeBytes / b.aliasRunBytes};
}

/// True when bytes [x, x + len) meet a run of `r`.
bool meets(size_t x, size_t len, const Runs& r) {
  if (len == 0 || r.count == 0 || r.run == 0 || x + len <= r.start) return false;
  const size_t lo = x < r.start + r.run ? 0 : (x - r.start - r.run) / r.stride + 1;  // first run ending after x
  const size_t hi = std::min(r.count - 1, (x + len - 1 - r.start) / r.stride);        // last run starting before x + len
  return lo <= hi;
}

/// True when the byte sets of `a` and `b` intersect (checks each run of the one with fewer runs).
bool runsMeet(const Runs& a, const Runs& b) {
  const Runs& few = a.count <= b.count ? a : b;
  const Runs& many = a.count <= b.count ? b : a;
  for (size_t k = 0; k < few.count; ++k)
    if (meets(few.start + k * few.stride, few.run, many)) return true;
  return false;
}

}  // namespace

const char* programPlanFailureName(ProgramPlanFailure failure) {
  switch (failure) {
    case ProgramPlanFailure::None: return "none";
    case ProgramPlanFailure::NoPool: return "no-pool";
    case ProgramPlanFailure::NotACandidate: return "not-a-candidate";
    case ProgramPlanFailure::NotInPinnedPool: return "not-in-pinned-pool";
    case ProgramPlanFailure::NoSuchBank: return "no-such-bank";
    case ProgramPlanFailure::NotInPinnedBank: return "not-in-pinned-bank";
    case ProgramPlanFailure::ScratchLifetime: return "scratch-lifetime";
    case ProgramPlanFailure::PingPongSameBank: return "ping-pong-same-bank";
    case ProgramPlanFailure::Misaligned: return "misaligned";
    case ProgramPlanFailure::OutOfBank: return "out-of-bank";
    case ProgramPlanFailure::OutOfPool: return "out-of-pool";
    case ProgramPlanFailure::BadAlias: return "bad-alias";
    case ProgramPlanFailure::AliasOutsideRoot: return "alias-outside-root";
    case ProgramPlanFailure::EmptyLifetime: return "empty-lifetime";
    case ProgramPlanFailure::Overlap: return "overlap";
  }
  return "?";
}

ProgramPlanCheck checkProgramPlan(const ProgramPlan& plan, const std::function<std::string(TensorId)>& nameOf,
                                  const Graph* graph) {
  const Board& board = plan.board;
  auto name = [&](const PlacedBuffer& b) {
    if (b.role == BufferRole::Scratch) return fmt::format("scratch {}", b.name);
    return nameOf ? nameOf(b.tensor) : fmt::format("tensor #{}", b.tensor);
  };
  auto fail = [](ProgramPlanFailure kind, size_t first, size_t second, int pool, std::string location,
                 std::string message) {
    ProgramPlanCheck c;
    c.failure = kind;
    c.first = first;
    c.second = second;
    c.pool = pool;
    c.diagnostic = makeError(std::move(location), std::move(message));
    return c;
  };
  // Per pool: the planned (non-alias) buffers flattened for checkOffsets, and their indices in plan.buffers.
  std::vector<std::vector<Buffer>> flatOf(board.pools.size());
  std::vector<std::vector<size_t>> offsetsOf(board.pools.size()), indexOf(board.pools.size());
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const PlacedBuffer& b = plan.buffers[i];
    if (b.slot.pool < 0 || static_cast<size_t>(b.slot.pool) >= board.pools.size())
      return fail(ProgramPlanFailure::NoPool, i, kNoBufferIndex, -1, "memory plan",
                  fmt::format("buffer '{}' has no pool", name(b)));
    const int p = b.slot.pool;
    const MemoryPool& pool = board.pools[static_cast<size_t>(p)];
    const std::string where = fmt::format("memory plan: pool '{}'", pool.name);
    auto failHere = [&](ProgramPlanFailure kind, std::string message, size_t second = kNoBufferIndex) {
      return fail(kind, i, second, p, where, std::move(message));
    };
    if (std::find(b.candidates.begin(), b.candidates.end(), p) == b.candidates.end())
      return failHere(ProgramPlanFailure::NotACandidate,
                      fmt::format("buffer '{}' is in a pool that is not one of its candidates", name(b)));
    if (b.pinnedPool >= 0 && b.pinnedPool != p)
      return failHere(ProgramPlanFailure::NotInPinnedPool,
                      fmt::format("buffer '{}' is pinned to pool '{}' but placed here", name(b),
                                  static_cast<size_t>(b.pinnedPool) < board.pools.size()
                                      ? board.pools[static_cast<size_t>(b.pinnedPool)].name
                                      : fmt::format("#{}", b.pinnedPool)));
    const int banks = std::max(1, pool.banks);
    if (b.slot.bank < 0 || b.slot.bank >= banks)
      return failHere(ProgramPlanFailure::NoSuchBank,
                      fmt::format("buffer '{}' is in bank {}, but the pool has {}", name(b), b.slot.bank, banks));
    if (b.pinnedBank >= 0 && b.pinnedBank != b.slot.bank)
      return failHere(ProgramPlanFailure::NotInPinnedBank,
                      fmt::format("buffer '{}' is pinned to bank {} but placed in bank {}", name(b), b.pinnedBank, b.slot.bank));
    if (b.role == BufferRole::Scratch && (b.firstStep < 0 || b.endStep <= b.firstStep))
      return failHere(ProgramPlanFailure::ScratchLifetime,
                      fmt::format("scratch buffer '{}' must live at least one step (its layer's), not steps [{}, {})", name(b),
                                  b.firstStep, b.endStep));
    if (b.pairedWith >= 0) {
      if (static_cast<size_t>(b.pairedWith) >= plan.buffers.size())
        return failHere(ProgramPlanFailure::PingPongSameBank,
                        fmt::format("buffer '{}' names a ping-pong partner #{} that does not exist", name(b), b.pairedWith));
      const PlacedBuffer& other = plan.buffers[static_cast<size_t>(b.pairedWith)];
      if (banks > 1 && other.slot == b.slot)
        return failHere(ProgramPlanFailure::PingPongSameBank,
                        fmt::format("ping-pong buffers '{}' and '{}' are both in bank {}: the halves of a double buffer must be "
                                    "in different banks so the DMA into one does not conflict with the compute on the other",
                                    name(b), name(other), b.slot.bank),
                        static_cast<size_t>(b.pairedWith));
    }
    // A declared alias inside its root (a Concat slice) is aligned only to its element size; the root is checked.
    if (pool.alignment > 1 && b.offset % pool.alignment != 0 && b.aliasOf == kNoTensor)
      return failHere(ProgramPlanFailure::Misaligned, fmt::format("buffer '{}' at offset {} is not aligned to {} bytes",
                                                                  name(b), b.offset, pool.alignment));
    if ((b.aliasRunBytes != 0 || b.aliasStrideBytes != 0) &&
        (b.aliasOf == kNoTensor || b.aliasRunBytes == 0 || b.aliasStrideBytes < b.aliasRunBytes || b.sizeBytes % b.aliasRunBytes != 0))
      return failHere(ProgramPlanFailure::BadAlias,
                      fmt::format("buffer '{}' declares runs of {} bytes every {} bytes, which do not describe its {} bytes "
                                  "as a strided slice of a root buffer",
                                  name(b), b.aliasRunBytes, b.aliasStrideBytes, b.sizeBytes));
    const size_t extent = bufferExtentBytes(b);  // a strided alias spans more than its own bytes
    const size_t end = b.offset + extent;
    if (end < b.offset)
      return failHere(ProgramPlanFailure::OutOfPool,
                      fmt::format("buffer '{}' at offset {} with {} bytes overflows the address space", name(b),
                                  b.offset, b.sizeBytes));
    if (banks > 1) {
      const size_t bankStart = static_cast<size_t>(b.slot.bank) * pool.bankSizeBytes;
      if (b.offset < bankStart || end > bankStart + pool.bankSizeBytes)
        return failHere(ProgramPlanFailure::OutOfBank,
                        fmt::format("buffer '{}' bytes [{}, {}) leave bank {} [{}, {})", name(b), b.offset, end,
                                    b.slot.bank, bankStart, bankStart + pool.bankSizeBytes));
    }
    if (pool.sizeBytes && end > *pool.sizeBytes)
      return failHere(ProgramPlanFailure::OutOfPool, fmt::format("buffer '{}' bytes [{}, {}) end past the pool's {} bytes",
                                                                 name(b), b.offset, end, *pool.sizeBytes));
    if (b.aliasOf != kNoTensor) {
      // A declared alias: bytes [aliasOffset, aliasOffset + size) of its root's, within the root's lifetime. The
      // root stands for the group in the overlap check below.
      const int r = plan.bufferOf(b.aliasOf);
      const PlacedBuffer* root = r >= 0 ? &plan.buffers[static_cast<size_t>(r)] : nullptr;
      if (root == nullptr || root->aliasOf != kNoTensor || root->role != BufferRole::Activation ||
          b.role != BufferRole::Activation)
        return failHere(ProgramPlanFailure::BadAlias,
                        fmt::format("buffer '{}' is declared an alias of tensor #{}, which is not a planned activation "
                                    "buffer",
                                    name(b), b.aliasOf),
                        r >= 0 ? static_cast<size_t>(r) : kNoBufferIndex);
      if (root->slot != b.slot || b.aliasOffset > root->sizeBytes || extent > root->sizeBytes - b.aliasOffset ||
          b.offset != root->offset + b.aliasOffset || b.firstStep < root->firstStep || b.endStep > root->endStep)
        return failHere(ProgramPlanFailure::AliasOutsideRoot,
                        fmt::format("buffer '{}' (bytes [{}, {}), steps {}..{}) is declared an alias of '{}' but is not "
                                    "inside its bytes [{}, {}) and steps {}..{}",
                                    name(b), b.offset, end, b.firstStep, b.endStep - 1, name(*root), root->offset,
                                    root->offset + root->sizeBytes, root->firstStep, root->endStep - 1),
                        static_cast<size_t>(r));
      continue;
    }
    Buffer flat;
    flat.tensor = b.role == BufferRole::Scratch ? static_cast<TensorId>(-2 - static_cast<long long>(i)) : b.tensor;
    flat.sizeBytes = b.sizeBytes;
    flat.alignment = 1;  // checked above against the pool's alignment
    flat.firstStep = b.firstStep;
    flat.endStep = b.endStep;
    flatOf[static_cast<size_t>(p)].push_back(flat);
    offsetsOf[static_cast<size_t>(p)].push_back(b.offset);
    indexOf[static_cast<size_t>(p)].push_back(i);
  }
  // Strided aliases (channel slices of one Concat output) share their root by design, but not with each other.
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const PlacedBuffer& a = plan.buffers[i];
    if (a.aliasRunBytes == 0) continue;
    for (size_t j = i + 1; j < plan.buffers.size(); ++j) {
      const PlacedBuffer& b = plan.buffers[j];
      if (b.aliasRunBytes == 0 || b.aliasOf != a.aliasOf || a.firstStep >= b.endStep || b.firstStep >= a.endStep) continue;
      if (runsMeet(runsOf(a), runsOf(b)))
        return fail(ProgramPlanFailure::Overlap, i, j, a.slot.pool,
                    fmt::format("memory plan: pool '{}'", board.pools[static_cast<size_t>(a.slot.pool)].name),
                    fmt::format("strided slices '{}' (runs of {} bytes every {} from byte {}) and '{}' (runs of {} every {} "
                                "from byte {}) of the same buffer share bytes while both are live",
                                name(a), a.aliasRunBytes, a.aliasStrideBytes, a.offset, name(b), b.aliasRunBytes,
                                b.aliasStrideBytes, b.offset));
    }
  }
  // Overlapping layers: an output sharing bytes with its input is checked against the kernel's row order, by
  // walking its bands over the rows as placed (analysis/RowOverlap.h checkRowOverlap); the overlap check below
  // then accepts exactly that placement.
  std::vector<size_t> flatPos(plan.buffers.size(), kNoBufferIndex);
  for (size_t p = 0; p < board.pools.size(); ++p)
    for (size_t k = 0; k < indexOf[p].size(); ++k) flatPos[indexOf[p][k]] = k;
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const PlacedBuffer& y = plan.buffers[i];
    if (flatPos[i] == kNoBufferIndex || !sharesBytesWithInput(plan, y)) continue;  // none, or apart after all
    // A buffer's group root: itself, or the buffer it is an alias of.
    auto rootOf = [&](int b) {
      const TensorId of = plan.buffers[static_cast<size_t>(b)].aliasOf;
      return of == kNoTensor ? b : plan.bufferOf(of);
    };
    const int xi = plan.bufferOf(y.overlapsInput);
    const PlacedBuffer& x = plan.buffers[static_cast<size_t>(xi)];
    const int ri = rootOf(xi);
    if (ri < 0 || flatPos[static_cast<size_t>(ri)] == kNoBufferIndex) continue;
    const std::string where = fmt::format("memory plan: pool '{}'", board.pools[static_cast<size_t>(y.slot.pool)].name);
    auto overlapFail = [&](const std::string& why) {
      return fail(ProgramPlanFailure::Overlap, std::min<size_t>(i, static_cast<size_t>(xi)), std::max<size_t>(i, static_cast<size_t>(xi)),
                  y.slot.pool, where,
                  fmt::format("buffer '{}' (bytes [{}, {})) overlaps its layer's input '{}' (bytes [{}, {})): {}", name(y), y.offset,
                              y.offset + y.sizeBytes, name(x), x.offset, x.offset + x.sizeBytes, why));
    };
    if (graph == nullptr) return overlapFail("the plan's overlaps can only be checked with its graph");
    if (y.firstStep < 0 || static_cast<size_t>(y.firstStep) >= graph->nodes.size()) return overlapFail("no layer writes it");
    const Node& n = graph->nodes[static_cast<size_t>(y.firstStep)];
    if (n.inputs.empty() || n.inputs[0] != y.overlapsInput || n.outputs.size() != 1 || n.outputs[0] != y.tensor)
      return overlapFail(fmt::format("node '{}' at its first step does not read the one and write the other", n.name));
    // A graph output planned in a pool (--io-in-pools) is read by the application after the run.
    for (TensorId out : graph->outputs) {
      const int oi = out == kNoTensor ? -1 : plan.bufferOf(out);
      if (oi >= 0 && rootOf(oi) == ri)
        return overlapFail(fmt::format("its bytes hold graph output '{}', which the application reads after the run",
                                       graph->tensor(out).name));
    }
    const int target = static_cast<size_t>(y.firstStep) < plan.nodeTargets.size() ? plan.nodeTargets[static_cast<size_t>(y.firstStep)] : -1;
    std::optional<RowOrder> order = rowOrderOf(*graph, n, board, target);
    if (!order || plan.offloadedAt(y.firstStep) != nullptr)
      return overlapFail(fmt::format("the kernel of node '{}' ({}) has no row order to allow it", n.name, opName(n.op)));
    if (order->takesBand) {
      if (y.rowBand == 0) return overlapFail(fmt::format("node '{}' runs its rows in any order (no row band)", n.name));
      order->band = std::abs(y.rowBand);
      order->descending = y.rowBand < 0;
    } else if (y.rowBand != 0) {
      return overlapFail(fmt::format("node '{}' ({}) takes no row band", n.name, opName(n.op)));
    }
    const int64_t shift = static_cast<int64_t>(y.offset) - static_cast<int64_t>(x.offset);
    if (std::string why = checkRowOverlap(*order, shift); !why.empty())
      return overlapFail(fmt::format("placed {} bytes from it, node '{}' ({}) would read overwritten bytes: {}", shift, n.name,
                                     opName(n.op), why));
    Buffer& flat = flatOf[static_cast<size_t>(y.slot.pool)][flatPos[i]];
    flat.overlapsWith = static_cast<int>(flatPos[static_cast<size_t>(ri)]);
    flat.overlapBelow = flat.overlapAbove =
        static_cast<int64_t>(y.offset) - static_cast<int64_t>(plan.buffers[static_cast<size_t>(ri)].offset);
  }
  // Overlap in address while live, per pool (banks are disjoint ranges of the pool's offsets).
  for (size_t p = 0; p < board.pools.size(); ++p) {
    const std::vector<size_t>& index = indexOf[p];
    PlanCheck c = checkOffsets(flatOf[p], offsetsOf[p], std::numeric_limits<size_t>::max(),
                               [&](size_t k) { return name(plan.buffers[index[k]]); });
    if (c.ok()) continue;
    // Offsets are present, alignment 1 and the capacity unlimited, so only these three remain possible.
    const ProgramPlanFailure kind = c.failure == PlanFailure::Overlap         ? ProgramPlanFailure::Overlap
                                    : c.failure == PlanFailure::EmptyLifetime ? ProgramPlanFailure::EmptyLifetime
                                                                              : ProgramPlanFailure::OutOfPool;
    return fail(kind, c.first == kNoBufferIndex ? kNoBufferIndex : index[c.first],
                c.second == kNoBufferIndex ? kNoBufferIndex : index[c.second], static_cast<int>(p),
                fmt::format("memory plan: pool '{}'", board.pools[p].name), c.message);
  }
  return ProgramPlanCheck{};
}

Status validateProgramPlan(const ProgramPlan& plan, const std::function<std::string(TensorId)>& nameOf, const Graph* graph) {
  ProgramPlanCheck c = checkProgramPlan(plan, nameOf, graph);
  if (c.ok()) return Status::success();
  return c.diagnostic;
}

}  // namespace stowage
