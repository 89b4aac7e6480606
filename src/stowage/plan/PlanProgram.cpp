// Program memory planner (see PlanProgram.h).
#include "stowage/plan/PlanProgram.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>

#include "stowage/plan/SeparateOverlaps.h"
#include "stowage/plan/ValidateProgram.h"
#include "stowage/plan/algo/OffsetAlgorithm.h"
#include "stowage/plan/analysis/Aliasing.h"
#include "stowage/plan/analysis/BufferConstraints.h"
#include "stowage/plan/analysis/NodeTargets.h"
#include "stowage/plan/analysis/PoolCost.h"
#include "stowage/plan/analysis/RowOverlap.h"

namespace stowage {

namespace {

constexpr size_t kUnlimited = std::numeric_limits<size_t>::max();

/// Bank-sized capacity of one bank of `pool`, or kUnlimited.
size_t bankCapacity(const MemoryPool& pool) {
  if (pool.banks > 1) return pool.bankSizeBytes;
  return pool.sizeBytes ? *pool.sizeBytes : kUnlimited;
}

std::string bytesText(size_t n) {
  if (n == kUnlimited) return "unlimited";
  if (n >= 1024 && n % 1024 == 0) return fmt::format("{} bytes ({} KiB)", n, n / 1024);
  return fmt::format("{} bytes", n);
}

std::string stepText(const Graph& g, int step) {
  if (step < 0 || static_cast<size_t>(step) >= g.nodes.size()) return fmt::format("step {}", step);
  const Node& n = g.nodes[static_cast<size_t>(step)];
  return fmt::format("step {} (node '{}', {})", step, n.name, opName(n.op));
}

/// Bytes reserved before an activation buffer in guard mode: the canary, rounded up to keep it aligned.
size_t guardBefore(const PlacedBuffer& p, size_t guardBytes, size_t alignment) {
  return p.role == BufferRole::Activation && guardBytes > 0 && p.sizeBytes > 0 ? alignUp(guardBytes, alignment) : 0;
}

/// Per buffer: for an overlapping layer's output (PlacedBuffer::overlapsInput), the index of its input's group root
/// and where the input starts in it; -1 for the others.
struct OverlapRoot {
  int root = -1;
  int64_t inRoot = 0;
};
std::vector<OverlapRoot> overlapRoots(const ProgramPlan& plan) {
  std::vector<OverlapRoot> roots(plan.buffers.size());
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const int x = plan.buffers[i].overlapsInput == kNoTensor ? -1 : plan.bufferOf(plan.buffers[i].overlapsInput);
    if (x < 0) continue;
    const PlacedBuffer& input = plan.buffers[static_cast<size_t>(x)];
    roots[i].root = input.aliasOf == kNoTensor ? x : plan.bufferOf(input.aliasOf);
    roots[i].inRoot = static_cast<int64_t>(input.aliasOffset);
  }
  return roots;
}

/// The Buffers (algorithm input) of `members`, aligned to `alignment`. Sizes are rounded up to the alignment:
/// a pool hands out whole alignment granules, which lets the live-bytes lower bound be reached (and proved)
/// exactly when no buffer has to wait for a gap. In guard mode each activation also holds its canaries. An
/// overlapping layer's output may overlap the root of its input's group (`roots`) when both are members; the
/// shifts count from the root's first byte.
std::vector<Buffer> algorithmInput(const std::vector<PlacedBuffer>& all, const std::vector<int>& members, size_t alignment,
                                   size_t guardBytes, const std::vector<OverlapRoot>& roots) {
  std::vector<Buffer> v;
  v.reserve(members.size());
  std::vector<int> position(all.size(), -1);
  for (size_t k = 0; k < members.size(); ++k) position[static_cast<size_t>(members[k])] = static_cast<int>(k);
  for (int i : members) {
    const PlacedBuffer& p = all[static_cast<size_t>(i)];
    const size_t before = guardBefore(p, guardBytes, alignment);
    Buffer b;
    b.tensor = p.tensor;
    b.sizeBytes = alignUp(before + p.sizeBytes + (before > 0 ? guardBytes : 0), alignment);
    b.alignment = alignment;
    b.firstStep = p.firstStep;
    b.endStep = p.endStep;
    const OverlapRoot& r = roots[static_cast<size_t>(i)];
    if (r.root >= 0 && position[static_cast<size_t>(r.root)] >= 0) {
      b.overlapsWith = position[static_cast<size_t>(r.root)];
      b.overlapBelow = p.overlapBelow + r.inRoot;
      b.overlapAbove = p.overlapAbove == std::numeric_limits<int64_t>::max() ? p.overlapAbove : p.overlapAbove + r.inRoot;
    }
    v.push_back(b);
  }
  return v;
}

/// Candidate slots of a buffer in order: each candidate pool, bank by bank.
std::vector<PoolSlot> slotsOf(const PlacedBuffer& b, const Board& board) {
  std::vector<PoolSlot> s;
  if (b.pinnedBank >= 0 && b.candidates.size() == 1) return {PoolSlot{b.candidates[0], b.pinnedBank}};
  for (int pi : b.candidates)
    for (int bank = 0; bank < std::max(1, board.pools[static_cast<size_t>(pi)].banks); ++bank) s.push_back({pi, bank});
  return s;
}

class Planner {
 public:
  Planner(const Graph& g, const Board& board, const PlanOptions& options, ProgramPlan& plan)
      : g_(g), board_(board), options_(options), plan_(plan), start_(std::chrono::steady_clock::now()) {}

  Status run() {
    auto& bufs = plan_.buffers;
    roots_ = overlapRoots(plan_);
    slotLists_.resize(bufs.size());
    choice_.assign(bufs.size(), 0);
    for (size_t i = 0; i < bufs.size(); ++i) {
      slotLists_[i] = slotsOf(bufs[i], board_);
      bufs[i].reason = bufs[i].pinnedPool >= 0 ? fmt::format("pinned by {}", bufs[i].pinOrigin)
                       : bufs[i].candidates.size() == 1 ? "its only candidate pool"
                                                        : "the cheapest of its candidate pools";
    }
    // Slots in the order pools are filled: cheapest pool first (candidate lists are sorted that way).
    std::vector<PoolSlot> order;
    // Every candidate list is sorted cheapest first, so filling pools in that order never revisits one.
    for (int pi : poolsCheapestFirst(board_))
      for (int bank = 0; bank < std::max(1, board_.pools[static_cast<size_t>(pi)].banks); ++bank) order.push_back({pi, bank});
    for (const PoolSlot& slot : order) STOWAGE_TRY(fillSlot(slot));
    separateNeedlessOverlaps(plan_, board_, [&](const PlacedBuffer& b) {
      const size_t before = guardBefore(b, options_.guardBytes, b.alignment);
      return std::pair<size_t, size_t>{before, before > 0 ? options_.guardBytes : 0};
    });
    placeAliases();
    summarize();
    return Status::success();
  }

 private:
  std::vector<int> membersOf(const PoolSlot& slot) const {
    std::vector<int> m;
    for (size_t i = 0; i < plan_.buffers.size(); ++i)
      if (plan_.buffers[i].aliasOf == kNoTensor && slotLists_[i][choice_[i]] == slot) m.push_back(static_cast<int>(i));
    return m;
  }

  /// Alias members (not planned themselves) take their root's placement.
  void placeAliases() {
    auto& bufs = plan_.buffers;
    for (PlacedBuffer& b : bufs) {
      if (b.aliasOf == kNoTensor) continue;
      const int r = plan_.bufferOf(b.aliasOf);
      if (r < 0) continue;  // the validator reports it
      const PlacedBuffer& root = bufs[static_cast<size_t>(r)];
      b.slot = root.slot;
      b.offset = root.offset + b.aliasOffset;
      b.alignment = root.alignment;
      if (b.aliasRunBytes != 0)
        b.reason = fmt::format("runs of {} bytes every {} bytes from byte {} of the buffer of '{}' (a channel slice of a "
                               "Concat, written in place by its producer with an output pixel stride)",
                               b.aliasRunBytes, b.aliasStrideBytes, b.aliasOffset, g_.tensor(root.tensor).name);
      else if (b.aliasOffset != 0 || b.sizeBytes != root.sizeBytes)
        b.reason = fmt::format("shares bytes [{}, {}) of the buffer of '{}' (a Concat slice, written in place by its producer)",
                               b.aliasOffset, b.aliasOffset + b.sizeBytes, g_.tensor(root.tensor).name);
      else
        b.reason = fmt::format("shares the buffer of '{}' ({})", g_.tensor(root.tensor).name,
                               g_.nodes[static_cast<size_t>(b.firstStep)].op == OpKind::Reshape ? "a view of it" : "written in place");
    }
  }

  Status fillSlot(const PoolSlot& slot) {
    const MemoryPool& pool = board_.pools[static_cast<size_t>(slot.pool)];
    const size_t capacity = bankCapacity(pool);
    std::vector<int> members = membersOf(slot);
    OffsetOptions opt;
    opt.timeLimitSeconds = remainingSeconds();
    opt.capacityBytes = capacity;
    OffsetResult placed;
    for (;;) {
      const std::vector<Buffer> in = algorithmInput(plan_.buffers, members, pool.alignment, options_.guardBytes, roots_);
      auto fits = [&](const OffsetResult& r) {
        return (in.empty() || !r.offsets.empty()) && r.peakBytes <= capacity &&
               (r.status == OffsetStatus::Feasible || r.status == OffsetStatus::Optimal);
      };
      if (capacity == kUnlimited) {
        STOWAGE_ASSIGN_OR_RETURN(placed, placeOffsets(options_.algorithm, in, opt));
        break;
      }
      // Cheap check first; the chosen algorithm (maybe exact) decides the final offsets or proves a spill needed.
      STOWAGE_ASSIGN_OR_RETURN(OffsetResult quick, placeOffsets("greedy-size", in, opt));
      if (fits(quick) && options_.algorithm == "greedy-size") {
        placed = std::move(quick);
        break;
      }
      opt.timeLimitSeconds = remainingSeconds();
      STOWAGE_ASSIGN_OR_RETURN(OffsetResult full, placeOffsets(options_.algorithm, in, opt));
      if (fits(full)) {
        placed = std::move(full);
        break;
      }
      if (fits(quick)) {
        plan_.remarks.push_back(fmt::format("pool '{}': planner '{}' found no plan within the {} s time limit; kept greedy-size's",
                                            pool.name, options_.algorithm, options_.timeLimitSeconds));
        placed = std::move(quick);
        break;
      }
      STOWAGE_ASSIGN_OR_RETURN(const int victim, pickSpill(members, in, capacity));
      if (victim < 0) return infeasible(slot, members, full);
      spill(victim, slot);
      members.erase(std::find(members.begin(), members.end(), victim));
    }
    const size_t bankStart = pool.banks > 1 ? static_cast<size_t>(slot.bank) * pool.bankSizeBytes : 0;
    for (size_t k = 0; k < members.size(); ++k) {
      PlacedBuffer& b = plan_.buffers[static_cast<size_t>(members[k])];
      b.slot = slot;
      b.alignment = pool.alignment;
      b.offset = bankStart + placed.offsets[k] + guardBefore(b, options_.guardBytes, pool.alignment);
    }
    slotResult_[{slot.pool, slot.bank}] = placed;
    return Status::success();
  }

  /// What is left of the planning budget (options_.timeLimitSeconds for the whole program), never negative.
  double remainingSeconds() const {
    const double used = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    return std::max(0.0, options_.timeLimitSeconds - used);
  }

  /// The buffer to move out of a full slot: one live at the busiest step that has another candidate slot,
  /// with the least traffic per byte (reads + 1 write), then the largest. -1 when none can move.
  Result<int> pickSpill(const std::vector<int>& members, const std::vector<Buffer>& in, size_t capacity) const {
    auto [peak, step] = peakLiveBytes(plan_.buffers, members);
    (void)peak;
    auto movable = [&](int i) { return choice_[static_cast<size_t>(i)] + 1 < slotLists_[static_cast<size_t>(i)].size(); };
    auto better = [&](int a, int b) {
      const PlacedBuffer &x = plan_.buffers[static_cast<size_t>(a)], &y = plan_.buffers[static_cast<size_t>(b)];
      if (x.reads != y.reads) return x.reads < y.reads;
      if (x.sizeBytes != y.sizeBytes) return x.sizeBytes > y.sizeBytes;
      return x.tensor > y.tensor;
    };
    int best = -1;
    for (int i : members) {
      const PlacedBuffer& b = plan_.buffers[static_cast<size_t>(i)];
      if (movable(i) && b.firstStep <= step && step < b.endStep && (best < 0 || better(i, best))) best = i;
    }
    if (best >= 0) return best;
    // Fragmentation rather than live bytes: move a buffer overlapping in time with one that greedy, without a
    // capacity, puts past the end.
    STOWAGE_ASSIGN_OR_RETURN(OffsetResult free, placeOffsets("greedy-size", in, OffsetOptions{}));
    for (size_t k = 0; k < members.size() && k < free.offsets.size(); ++k) {
      const PlacedBuffer& over = plan_.buffers[static_cast<size_t>(members[k])];
      if (free.offsets[k] + over.sizeBytes <= capacity) continue;
      for (int i : members) {
        const PlacedBuffer& b = plan_.buffers[static_cast<size_t>(i)];
        if (movable(i) && b.firstStep < over.endStep && over.firstStep < b.endStep && (best < 0 || better(i, best))) best = i;
      }
    }
    return best;
  }

  void spill(int victim, const PoolSlot& from) {
    PlacedBuffer& b = plan_.buffers[static_cast<size_t>(victim)];
    ++choice_[static_cast<size_t>(victim)];
    const PoolSlot& to = slotLists_[static_cast<size_t>(victim)][choice_[static_cast<size_t>(victim)]];
    auto slotName = [&](const PoolSlot& s) {
      const MemoryPool& p = board_.pools[static_cast<size_t>(s.pool)];
      return p.banks > 1 ? fmt::format("'{}' bank {}", p.name, s.bank) : fmt::format("'{}'", p.name);
    };
    b.reason = fmt::format("spilled from {} (full) to {}", slotName(from), slotName(to));
    plan_.remarks.push_back(fmt::format("spill: {} '{}' ({} bytes, live {}..{}) moved from {} to {}: {} was full", bufferRoleName(b.role),
                                        nameOf(b), b.sizeBytes, b.firstStep, b.endStep - 1, slotName(from),
                                        slotName(to), slotName(from)));
  }

  Status infeasible(const PoolSlot& slot, const std::vector<int>& members, const OffsetResult& attempt) const {
    const MemoryPool& pool = board_.pools[static_cast<size_t>(slot.pool)];
    const size_t capacity = bankCapacity(pool);
    auto [live, step] = peakLiveBytes(plan_.buffers, members);
    const std::string where = pool.banks > 1 ? fmt::format("pool '{}' bank {}", pool.name, slot.bank) : fmt::format("pool '{}'", pool.name);
    Diagnostic d;
    d.location = pool.origin.empty() ? where : fmt::format("{}: {}", pool.origin, where);
    if (attempt.status == OffsetStatus::TimedOut && live <= capacity)
      d.message = fmt::format("the planner found no placement within {} in {} s, and proved none impossible", bytesText(capacity),
                              options_.timeLimitSeconds);
    else
      d.message = fmt::format("is too small: {} hold the buffers {}, whose peak demand is {} at {}", bytesText(capacity),
                              pool.banks > 1 ? "placed in this bank" : "that can only live here", bytesText(live), stepText(g_, step));
    std::vector<int> atPeak;
    for (int i : members) {
      const PlacedBuffer& b = plan_.buffers[static_cast<size_t>(i)];
      if (b.firstStep <= step && step < b.endStep) atPeak.push_back(i);
    }
    std::sort(atPeak.begin(), atPeak.end(), [&](int a, int b) {
      return plan_.buffers[static_cast<size_t>(a)].sizeBytes > plan_.buffers[static_cast<size_t>(b)].sizeBytes;
    });
    d.notes.push_back(fmt::format("live at {}: {} buffers", stepText(g_, step), atPeak.size()));
    for (int i : atPeak) {
      const PlacedBuffer& b = plan_.buffers[static_cast<size_t>(i)];
      d.notes.push_back(fmt::format("  {} '{}': {} bytes, live steps {}..{}", bufferRoleName(b.role), nameOf(b),
                                    b.sizeBytes, b.firstStep, b.endStep - 1));
    }
    OffsetOptions unlimited;
    unlimited.timeLimitSeconds = std::max(remainingSeconds(), 0.5);  // a bound for the error message is worth half a second
    auto fit = placeOffsets(options_.algorithm, algorithmInput(plan_.buffers, members, pool.alignment, options_.guardBytes, roots_), unlimited);
    size_t need = live;
    std::string proof = "(the live-bytes lower bound)";
    if (fit.ok() && !fit->offsets.empty()) {
      need = fit->peakBytes;
      proof = fit->status == OffsetStatus::Optimal ? "(proved minimal)" : fmt::format("(found by '{}')", fit->algorithm);
    }
    const size_t needPool = pool.banks > 1 ? need * static_cast<size_t>(pool.banks) : need;
    d.notes.push_back(fmt::format("a {} of {} would fit them {}", pool.banks > 1 ? "bank" : "pool", bytesText(need), proof));
    // Banks: the buffers were spread over the banks for this bank size; with other sizes they may spread otherwise,
    // so `need` is enough but maybe not necessary (each bank must still hold the largest buffer placed in it).
    size_t largest = 0;
    for (int i : members) largest = std::max(largest, plan_.buffers[static_cast<size_t>(i)].sizeBytes);
    d.hint = pool.banks > 1 ? fmt::format("give '{}' banks of at least {} bytes (size {}) to fit them as placed (banks down to {} bytes, "
                                          "the largest of them, may do when the buffers spread over the banks otherwise), or let "
                                          "these tensors use another pool",
                                          pool.name, need, needPool, largest)
                            : fmt::format("set the size of pool '{}' to at least {} bytes, or let these tensors use another pool "
                                          "(pool access, rules, pins)", pool.name, need);
    return d;
  }

  void summarize() {
    std::map<int, std::vector<int>> byPool;
    for (size_t i = 0; i < plan_.buffers.size(); ++i)
      if (plan_.buffers[i].aliasOf == kNoTensor) byPool[plan_.buffers[i].slot.pool].push_back(static_cast<int>(i));
    for (size_t pi = 0; pi < board_.pools.size(); ++pi) {
      const MemoryPool& pool = board_.pools[pi];
      PoolUse u;
      u.pool = static_cast<int>(pi);
      u.capacityBytes = pool.sizeBytes ? *pool.sizeBytes : kUnlimited;
      u.bankUsedBytes.assign(static_cast<size_t>(std::max(1, pool.banks)), 0);
      const std::vector<int>& members = byPool[static_cast<int>(pi)];
      u.buffers = static_cast<int>(members.size());
      for (int i : members) {
        const PlacedBuffer& b = plan_.buffers[static_cast<size_t>(i)];
        // Guard mode: the canary after the buffer is part of the pool too.
        const size_t end = b.offset + b.sizeBytes + (guardBefore(b, options_.guardBytes, pool.alignment) > 0 ? options_.guardBytes : 0);
        u.usedBytes = std::max(u.usedBytes, end);
        const size_t bankStart = pool.banks > 1 ? static_cast<size_t>(b.slot.bank) * pool.bankSizeBytes : 0;
        auto& bu = u.bankUsedBytes[static_cast<size_t>(b.slot.bank)];
        bu = std::max(bu, end - bankStart);
      }
      std::tie(u.peakLiveBytes, u.peakStep) = peakLiveBytes(plan_.buffers, members);
      std::vector<int> forced;
      for (size_t i = 0; i < plan_.buffers.size(); ++i)
        if (plan_.buffers[i].aliasOf == kNoTensor && plan_.buffers[i].candidates.size() == 1 &&
            plan_.buffers[i].candidates[0] == static_cast<int>(pi))
          forced.push_back(static_cast<int>(i));
      u.lowerBoundBytes = peakLiveBytes(plan_.buffers, forced).first;
      std::vector<std::string> algos, statuses;
      for (int bank = 0; bank < std::max(1, pool.banks); ++bank) {
        auto it = slotResult_.find({static_cast<int>(pi), bank});
        if (it == slotResult_.end() || members.empty()) continue;
        if (std::find(algos.begin(), algos.end(), it->second.algorithm) == algos.end()) algos.push_back(it->second.algorithm);
        const char* st = it->second.status == OffsetStatus::Optimal ? "optimal" : "feasible";
        if (std::find(statuses.begin(), statuses.end(), st) == statuses.end()) statuses.push_back(st);
      }
      for (const auto& a : algos) u.algorithm += (u.algorithm.empty() ? "" : "+") + a;
      for (const auto& s : statuses) u.status += (u.status.empty() ? "" : "+") + s;
      if (members.empty()) u.status = "empty";
      plan_.pools.push_back(u);
    }
  }

  std::string nameOf(const PlacedBuffer& b) const { return b.tensor == kNoTensor ? b.name : g_.tensor(b.tensor).name; }

  const Graph& g_;
  const Board& board_;
  const PlanOptions& options_;
  ProgramPlan& plan_;
  std::vector<std::vector<PoolSlot>> slotLists_;
  std::vector<size_t> choice_;
  std::map<std::pair<int, int>, OffsetResult> slotResult_;
  std::vector<OverlapRoot> roots_;  ///< per buffer: its overlap input's group root (overlapRoots)
  std::chrono::steady_clock::time_point start_;
};

/// Tile buffers of offloaded layers (tile/): each pinned to its pool (and bank), live at its layer's step (from an
/// earlier step when the layer before loads its first weight tiles).
/// Activations keep out of the pools reserved for tiles when they have another candidate.
void addScratchBuffers(ProgramPlan& plan, const PlanOptions& options) {
  for (PlacedBuffer& b : plan.buffers) {
    if (b.role != BufferRole::Activation || b.pinnedPool >= 0) continue;
    std::vector<int> kept;
    for (int c : b.candidates)
      if (std::find(options.scratchPools.begin(), options.scratchPools.end(), c) == options.scratchPools.end()) kept.push_back(c);
    if (!kept.empty()) b.candidates = kept;
  }
  const size_t first = plan.buffers.size();
  for (const ScratchRequest& r : options.scratch) {
    PlacedBuffer b;
    b.role = BufferRole::Scratch;
    b.name = r.name;
    b.sizeBytes = r.sizeBytes;
    b.alignment = plan.board.pools[static_cast<size_t>(r.pool)].alignment;
    b.firstStep = r.firstStep >= 0 ? r.firstStep : r.step;
    b.endStep = r.step + 1;
    b.candidates = {r.pool};
    b.pinnedPool = r.pool;
    b.pinOrigin = "tile buffer of an offloaded layer";
    b.pinnedBank = r.bank;
    b.pairedWith = r.pairedWith >= 0 ? static_cast<int>(first) + r.pairedWith : -1;
    plan.buffers.push_back(std::move(b));
  }
}

}  // namespace

std::pair<size_t, int> peakLiveBytes(const std::vector<PlacedBuffer>& buffers, const std::vector<int>& include) {
  std::map<int, long long> delta;
  for (int i : include) {
    const PlacedBuffer& b = buffers[static_cast<size_t>(i)];
    if (b.sizeBytes == 0) continue;
    delta[b.firstStep] += static_cast<long long>(b.sizeBytes);
    delta[b.endStep] -= static_cast<long long>(b.sizeBytes);
  }
  long long live = 0, best = 0;
  int bestStep = -1;
  for (const auto& [step, d] : delta) {
    live += d;
    if (live > best) {
      best = live;
      bestStep = step;
    }
  }
  return {static_cast<size_t>(best), bestStep};
}

Result<ProgramPlan> planProgram(const Graph& g, const Board& board, const PlanOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  ProgramPlan plan;
  plan.board = board;
  plan.steps = static_cast<int>(g.nodes.size());
  plan.algorithm = options.algorithm;
  plan.guardBytes = options.guardBytes;
  NodeTargets targets = assignNodeTargets(g, board);
  if (!options.nodeTargets.empty()) {
    targets.targetOf = options.nodeTargets;
    targets.remarks = options.partitionRemarks;
  }
  plan.nodeTargets = targets.targetOf;
  plan.remarks = board.notes;
  plan.remarks.insert(plan.remarks.end(), targets.remarks.begin(), targets.remarks.end());
  STOWAGE_ASSIGN_OR_RETURN(plan.buffers, analyzeBuffers(g, board, targets, options.ioInPools, options.aliasing));
  for (const ResidentTensor& r : options.resident) {
    const int i = plan.bufferOf(r.tensor);
    if (i < 0) return makeError(fmt::format("tensor '{}'", g.tensor(r.tensor).name), "is resident in a local pool but has no buffer");
    PlacedBuffer& b = plan.buffers[static_cast<size_t>(i)];
    const std::string& pool = board.pools[static_cast<size_t>(r.pool)].name;
    if (std::find(b.candidates.begin(), b.candidates.end(), r.pool) == b.candidates.end())
      return makeError(fmt::format("tensor '{}'", g.tensor(r.tensor).name), fmt::format("is resident in pool '{}', which it may not use", pool));
    b.candidates = {r.pool};
    b.pinnedPool = r.pool;
    b.pinOrigin = fmt::format("resident in '{}' (made and read by layers on '{}')", pool, board.targets[static_cast<size_t>(r.target)].name);
  }
  addScratchBuffers(plan, options);
  // Strided Concat slices and overlapping layers only for nodes run untiled on a CPU target: tiles (an
  // accelerator's, or a CPU's streaming through its fast pool) are stored packed by DMA.
  std::vector<bool> stepOnCpu(g.nodes.size(), false);
  for (size_t step = 0; step < g.nodes.size() && step < targets.targetOf.size(); ++step) {
    const int t = targets.targetOf[step];
    stepOnCpu[step] = t >= 0 && static_cast<size_t>(t) < board.targets.size() &&
                      board.targets[static_cast<size_t>(t)].kind == TargetKind::Cpu;
  }
  for (const ScratchRequest& req : options.scratch)
    if (req.step >= 0 && static_cast<size_t>(req.step) < stepOnCpu.size()) stepOnCpu[static_cast<size_t>(req.step)] = false;
  if (options.aliasing) {
    AliasSummary aliases = assignAliases(g, plan.buffers, options.concatSlices, stepOnCpu);
    plan.remarks.insert(plan.remarks.end(), aliases.remarks.begin(), aliases.remarks.end());
    STOWAGE_TRY(restrictCopyingViews(g, board, targets, plan.buffers));
  }
  // In guard mode too (the generated guard code arms such an output after its layer: codegen/GuardCode.h).
  if (options.overlapLayers) {
    OverlapSummary overlaps = assignOverlaps(g, board, targets.targetOf, stepOnCpu, plan.buffers);
    plan.remarks.insert(plan.remarks.end(), overlaps.remarks.begin(), overlaps.remarks.end());
  }
  Planner planner(g, plan.board, options, plan);
  STOWAGE_TRY(planner.run());
  if (const int sharing = orientRowBands(plan); sharing > 0)
    plan.remarks.push_back(fmt::format("overlap: {} layer(s) write their output over the input rows they no longer read "
                                       "(report.json \"overlaps\"; --no-overlap plans them apart)",
                                       sharing));
  plan.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  STOWAGE_TRY(validateProgramPlan(plan, [&](TensorId id) { return id == kNoTensor ? std::string("scratch") : g.tensor(id).name; }, &g));
  return plan;
}

}  // namespace stowage
