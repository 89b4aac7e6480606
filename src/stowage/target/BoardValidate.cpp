// validateBoard and the per-item checks behind it (BoardCheck.h): what makes a board usable by the planner,
// each failure a diagnostic at the offending key.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>

#include "stowage/ir/Op.h"
#include "stowage/target/BoardCheck.h"
#include "stowage/target/Suggest.h"

namespace stowage {
namespace {

bool isPowerOfTwo(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

Diagnostic err(const KeyWhere& where, std::string_view key, const std::string& label, const std::string& message,
               std::string hint = {}) {
  return makeError(where(key), label + ": " + message, std::move(hint));
}

std::vector<std::string> opNames() {
  std::vector<std::string> names;
  for (OpKind k : allOpKinds()) names.emplace_back(opName(k));
  return names;
}

/// The device address ranges [lo, hi) a fixed pool occupies: its banks (bank_bases) or base .. base + size, and with
/// a per-core stride one copy per core of the busiest target that can access it. Empty when it has no base or size.
std::vector<std::pair<uint64_t, uint64_t>> fixedPoolRanges(const Board& board, const MemoryPool& p) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  if (p.placement != PoolPlacement::Fixed || !p.sizeBytes || *p.sizeBytes == 0) return out;
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  auto add = [&](uint64_t lo, uint64_t bytes) { out.emplace_back(lo, bytes > kMax - lo ? kMax : lo + bytes); };
  if (!p.bankBases.empty()) {
    for (uint64_t b : p.bankBases) add(b, p.bankSizeBytes);
    return out;
  }
  if (!p.base) return out;
  int copies = 1;
  if (p.perCoreStride != 0)
    for (const Target& t : board.targets)
      if (p.canAccess(t.name)) copies = std::max(copies, t.cores);
  for (int c = 0; c < copies; ++c) {
    const uint64_t offset = static_cast<uint64_t>(c) * p.perCoreStride;
    if (offset > kMax - *p.base) break;
    add(*p.base + offset, *p.sizeBytes);
  }
  return out;
}

/// Two fixed pools that one target can access must not share an address: buffers placed in each would alias. Every
/// fixed pool's ranges once, sorted by start: a range can only overlap the ones after it that start before it ends.
Status checkFixedPoolsApart(const Board& board, const std::function<KeyWhere(size_t)>& at) {
  struct Range {
    uint64_t lo, hi;
    size_t pool;
  };
  std::vector<Range> ranges;
  for (size_t i = 0; i < board.pools.size(); ++i)
    for (const auto& [lo, hi] : fixedPoolRanges(board, board.pools[i])) ranges.push_back({lo, hi, i});
  std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) { return a.lo < b.lo; });
  for (size_t r = 0; r < ranges.size(); ++r)
    for (size_t o = r + 1; o < ranges.size() && ranges[o].lo < ranges[r].hi; ++o) {
      if (ranges[o].pool == ranges[r].pool) continue;  // a pool's own banks are checked apart in checkPool
      // Reported at the pool defined later.
      const bool later = ranges[o].pool > ranges[r].pool;
      const Range& mine = later ? ranges[o] : ranges[r];
      const Range& theirs = later ? ranges[r] : ranges[o];
      const MemoryPool& p = board.pools[mine.pool];
      const MemoryPool& q = board.pools[theirs.pool];
      const auto both = std::find_if(p.access.begin(), p.access.end(), [&](const std::string& a) { return q.canAccess(a); });
      if (both == p.access.end()) continue;
      const std::string key = p.bankBases.empty() ? "base" : "bank_bases";
      Diagnostic d = err(at(mine.pool), key, "pool '" + p.name + "'",
                         "its addresses " + hexAddress(mine.lo) + " .. " + hexAddress(mine.hi - 1) + " overlap pool '" + q.name + "' (" + hexAddress(theirs.lo) +
                             " .. " + hexAddress(theirs.hi - 1) + "), and target '" + *both + "' can access both: buffers placed in the two would alias",
                         "place this pool at " + hexAddress(theirs.hi) + " or above (after '" + q.name + "'), or '" + q.name +
                             "' elsewhere; memory both describe is one pool");
      d.notes.push_back("pool '" + q.name + "' is defined at " + q.origin);
      return d;
    }
  return Status::success();
}

}  // namespace

std::string hexAddress(uint64_t v) { return formatAddress(v, 1); }

bool isIdentifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

std::string ruleLabel(const PlacementRule& rule) {
  if (!rule.op.empty() && !rule.node.empty()) return "rule for op '" + rule.op + "', node '" + rule.node + "'";
  if (!rule.op.empty()) return "rule for op '" + rule.op + "'";
  if (!rule.node.empty()) return "rule for node '" + rule.node + "'";
  return "rule for every node";
}

Status checkOpPattern(const std::string& pattern, const std::string& label, const std::string& key,
                      const std::string& where) {
  if (pattern.empty()) return makeError(where, label + ": '" + key + "' has an empty op name");
  if (isGlob(pattern)) {
    for (OpKind k : allOpKinds())
      if (globMatch(pattern, opName(k))) return Status::success();
    return makeError(where, label + ": '" + key + "' pattern '" + pattern + "' matches no IR op",
                     "op names are the IR names (Conv, MatMul, MaxPool, ...), case-sensitive (the op table of `stowage info`)");
  }
  if (opKindFromName(pattern)) return Status::success();
  std::string close = closestMatch(pattern, opNames());
  return makeError(where, label + ": '" + key + "' names op '" + pattern + "', which is not an IR op",
                   close.empty() ? "op names are the IR names (Conv, MatMul, MaxPool, ...), case-sensitive"
                                 : "did you mean '" + close + "'?");
}

Status checkTarget(const Target& t, const KeyWhere& where) {
  std::string label = "target '" + t.name + "'";
  if (!isIdentifier(t.name))
    return err(where, "name", label, "the name must be an identifier (letters, digits, '_'; not starting with a digit)");
  if (t.cores < 1 || t.cores > 4096)
    return err(where, "cores", label, "'cores' must be between 1 and 4096, not " + std::to_string(t.cores));
  for (const auto& op : t.ops) STOWAGE_TRY(checkOpPattern(op, label, "ops", where("ops")));
  if (t.engineDim < 0 || t.engineDim > 4096)
    return err(where, "engine_dim", label, "'engine_dim' must be between 0 and 4096, not " + std::to_string(t.engineDim));
  if (t.engineDim > 0 && t.kind != TargetKind::Accelerator)
    return err(where, "engine_dim", label, "'engine_dim' is only for kind = \"accelerator\"",
               "a cpu target runs kernels on its cores: give 'macs_per_cycle' instead");
  if (t.engineDtypes.empty()) return err(where, "engine_dtypes", label, "'engine_dtypes' is empty", "e.g. engine_dtypes = [\"int8\"]");
  for (const auto& d : t.engineDtypes)
    if (d != "int8" && d != "float32")
      return err(where, "engine_dtypes", label, "'engine_dtypes' names \"" + d + "\"; the engine types are \"int8\" and \"float32\"");
  // Cost-model numbers in ranges whose cycle counts fit 64 bits (a setup of 1e19 cycles wrapped, 1e300 was an
  // undefined float-to-integer conversion).
  if (!std::isfinite(t.macsPerCycle) || t.macsPerCycle < 1e-6 || t.macsPerCycle > 1e9)
    return err(where, "macs_per_cycle", label, "'macs_per_cycle' must be a number from 1e-6 to 1e9");
  if (t.dmaChannels < 1 || t.dmaChannels > 64)
    return err(where, "dma_channels", label, "'dma_channels' must be between 1 and 64, not " + std::to_string(t.dmaChannels));
  if (!std::isfinite(t.dmaBytesPerCycle) || t.dmaBytesPerCycle < 0 || (t.dmaBytesPerCycle > 0 && t.dmaBytesPerCycle < 1e-6) ||
      t.dmaBytesPerCycle > 1e9)
    return err(where, "dma_bytes_per_cycle", label, "'dma_bytes_per_cycle' must be 0 (no DMA) or a number from 1e-6 to 1e9");
  if (!std::isfinite(t.dmaSetupCycles) || t.dmaSetupCycles < 0 || t.dmaSetupCycles > 1e9)
    return err(where, "dma_setup_cycles", label, "'dma_setup_cycles' must be a number from 0 to 1e9");
  for (const auto& in : t.intrinsics)
    if (!isIdentifier(in.name))
      return err(where, "intrinsics", label, "intrinsic '" + in.intrinsic + "' is renamed to '" + in.name + "', which is not a C identifier");
  return Status::success();
}

Status checkPool(const MemoryPool& p, const KeyWhere& where) {
  const std::string label = "pool '" + p.name + "'";
  if (!isIdentifier(p.name))
    return err(where, "name", label,
               "the name must be an identifier (letters, digits, '_'; not starting with a digit): it becomes part "
               "of C symbols");
  if (p.sizeBytes && *p.sizeBytes == 0)
    return err(where, "size", label, "'size' is 0", "give the pool's capacity, e.g. size = \"64KiB\"");
  if (!isPowerOfTwo(p.alignment))
    return err(where, "alignment", label, "'alignment' " + std::to_string(p.alignment) + " is not a power of two");
  const bool fixed = p.placement == PoolPlacement::Fixed;
  if (fixed && !p.sizeBytes)
    return err(where, "", label, "a fixed pool needs a 'size'", "add size = \"...\" (the bytes at 'base')");
  if (fixed && !p.base)
    return err(where, "", label, "a fixed pool needs a 'base' address", "add base = 0x... (or bank_bases = [...])");
  if (!fixed && !p.bankBases.empty())
    return err(where, "bank_bases", label, "'bank_bases' is only for placement = \"fixed\"");
  if (p.placement == PoolPlacement::User && p.base)
    return err(where, "base", label, "'base' is for placement = \"fixed\" or \"static\" (this pool is \"user\": the application passes its memory)",
               "set placement = \"fixed\" or \"static\", or remove 'base'");
  if (p.placement != PoolPlacement::Static && !p.section.empty())
    return err(where, "section", label, "'section' is only for placement = \"static\" (this pool is \"" +
                                            std::string(poolPlacementName(p.placement)) + "\")",
               "set placement = \"static\" or remove 'section'");
  if (p.base && *p.base % p.alignment != 0)
    return err(where, "base", label, "'base' " + hexAddress(*p.base) + " is not a multiple of 'alignment' " +
                                         std::to_string(p.alignment));
  if (p.base && p.sizeBytes && *p.sizeBytes - 1 > std::numeric_limits<uint64_t>::max() - *p.base)
    return err(where, "size", label, "'base' + 'size' runs past the end of the 64-bit address space");
  if (p.banks < 1) return err(where, "banks", label, "'banks' must be at least 1");
  if (p.banks > 1 || (p.bankSizeBytes != 0 && p.sizeBytes)) {
    if (p.banks > 1 && p.bankSizeBytes == 0) return err(where, "bank_size", label, "'bank_size' must be greater than 0");
    if (p.banks > 1 && !p.sizeBytes) return err(where, "size", label, "a banked pool needs a 'size'");
    const size_t banks = static_cast<size_t>(p.banks);
    if (p.bankSizeBytes > std::numeric_limits<size_t>::max() / banks || p.bankSizeBytes * banks != *p.sizeBytes)
      return err(where, "bank_size", label,
                 "'banks' * 'bank_size' = " + std::to_string(p.banks) + " * " + formatByteSize(p.bankSizeBytes) +
                     " is not 'size' " + formatByteSize(*p.sizeBytes),
                 "give two of size, banks and bank_size; the third is derived");
    if (p.banks > 1 && p.bankSizeBytes % p.alignment != 0)
      return err(where, "bank_size", label, "'bank_size' " + formatByteSize(p.bankSizeBytes) +
                                                " is not a multiple of 'alignment' " + std::to_string(p.alignment));
  }
  if (!p.bankBases.empty()) {
    if (p.bankBases.size() != static_cast<size_t>(p.banks))
      return err(where, "bank_bases", label, "'bank_bases' lists " + std::to_string(p.bankBases.size()) +
                                                 " addresses but the pool has " + std::to_string(p.banks) + " banks");
    for (uint64_t b : p.bankBases)
      if (b % p.alignment != 0)
        return err(where, "bank_bases", label, "bank address " + hexAddress(b) + " is not a multiple of 'alignment' " +
                                                   std::to_string(p.alignment));
    if (p.base && *p.base != p.bankBases.front())
      return err(where, "base", label, "'base' " + hexAddress(*p.base) + " is not the first of 'bank_bases' (" +
                                           hexAddress(p.bankBases.front()) + ")",
                 "leave 'base' out; it defaults to the first bank address");
    std::vector<uint64_t> sorted = p.bankBases;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < sorted.size(); ++i) {
      if (p.bankSizeBytes - 1 > std::numeric_limits<uint64_t>::max() - sorted[i])
        return err(where, "bank_bases", label, "bank at " + hexAddress(sorted[i]) + " runs past the end of the address space");
      if (i + 1 < sorted.size() && sorted[i] + p.bankSizeBytes > sorted[i + 1])
        return err(where, "bank_bases", label, "banks at " + hexAddress(sorted[i]) + " and " + hexAddress(sorted[i + 1]) +
                                                   " overlap (bank_size " + formatByteSize(p.bankSizeBytes) + ")");
    }
  }
  if (p.perCoreStride != 0) {
    if (!fixed) return err(where, "per_core_stride", label, "'per_core_stride' is only for placement = \"fixed\"");
    if (p.sizeBytes && p.perCoreStride < *p.sizeBytes)
      return err(where, "per_core_stride", label, "'per_core_stride' " + formatByteSize(p.perCoreStride) +
                                                      " is smaller than 'size' " + formatByteSize(*p.sizeBytes) + ": the cores' copies would overlap");
    if (p.perCoreStride % p.alignment != 0)
      return err(where, "per_core_stride", label, "'per_core_stride' is not a multiple of 'alignment' " + std::to_string(p.alignment));
    if (!p.bankBases.empty())
      return err(where, "per_core_stride", label, "'per_core_stride' and 'bank_bases' cannot be combined");
  }
  const char* costKeys[] = {"read_bytes_per_cycle", "write_bytes_per_cycle", "latency_cycles"};
  const double costs[] = {p.readBytesPerCycle, p.writeBytesPerCycle, p.latencyCycles};
  for (int i = 0; i < 3; ++i)
    if (!std::isfinite(costs[i]) || costs[i] < 0)
      return err(where, costKeys[i], label, std::string("'") + costKeys[i] + "' must be a number >= 0 (0 = unknown)");
  for (const auto& a : p.access)
    if (a.empty()) return err(where, "access", label, "'access' contains an empty target name");
  return Status::success();
}

Status checkRule(const PlacementRule& r, const KeyWhere& where) {
  const std::string label = ruleLabel(r);
  if (!r.op.empty()) STOWAGE_TRY(checkOpPattern(r.op, label, "op", where("op")));
  bool any = false;
  for (TensorRole role : {TensorRole::Input, TensorRole::Output, TensorRole::Weight, TensorRole::Scratch}) {
    const auto& allowed = r.allowed(role);
    if (!allowed) continue;
    any = true;
    std::string key(tensorRoleKey(role));
    if (allowed->empty())
      return err(where, key, label, "'" + key + "' is empty: no pool would be allowed",
                 "list at least one pool, or leave '" + key + "' out for no restriction");
    for (const auto& pool : *allowed)
      if (pool.empty()) return err(where, key, label, "'" + key + "' contains an empty pool name");
  }
  if (!any)
    return err(where, "", label, "the rule restricts nothing", "give at least one of inputs, outputs, weights, scratch");
  return Status::success();
}

std::string BoardLocations::where(const Board& board, BoardItem item, size_t index, std::string_view key) const {
  const std::vector<Keys>* table = nullptr;
  std::string origin;
  switch (item) {
    case BoardItem::Target: table = &targets; origin = board.targets[index].origin; break;
    case BoardItem::Pool: table = &pools; origin = board.pools[index].origin; break;
    case BoardItem::Rule: table = &rules; origin = board.rules[index].origin; break;
    case BoardItem::Pin: table = &pins; origin = board.pins[index].origin; break;
    case BoardItem::Memory: table = &memories; origin = board.memories[index].origin; break;
    case BoardItem::Kernel: table = &kernels; origin = board.kernels[index].origin; break;
  }
  if (index < table->size()) {
    const Keys& keys = (*table)[index];
    if (auto it = keys.find(key); it != keys.end()) return it->second;
    if (auto it = keys.find(std::string_view()); it != keys.end()) return it->second;
  }
  return origin;
}

void finalizeBoard(Board& board) {
  if (board.targets.empty()) {
    Target cpu;
    cpu.name = "cpu";
    cpu.ops = {"*"};
    cpu.origin = "default";
    board.targets.push_back(cpu);
  }
  std::vector<std::string> cpus;
  for (const auto& t : board.targets)
    if (t.kind == TargetKind::Cpu) cpus.push_back(t.name);
  for (auto& p : board.pools)
    if (p.access.empty()) p.access = cpus;
  bool anyConstant = std::any_of(board.pools.begin(), board.pools.end(),
                                 [](const MemoryPool& p) { return p.kind == PoolKind::Constant; });
  if (!anyConstant) {
    MemoryPool w;
    w.name = std::string(kDefaultConstantPool);
    if (board.findPool(w.name)) w.name += "_default";
    w.kind = PoolKind::Constant;
    w.placement = PoolPlacement::Static;
    w.access = cpus;
    w.origin = "default";
    board.pools.push_back(w);
  }
  finalizeDevice(board);
}

Status validateBoardAt(const Board& board, const BoardLocations& locs) {
  const std::string boardWhere = board.sourcePath.empty() ? "board" : board.sourcePath;
  auto at = [&](BoardItem item, size_t i) {
    return KeyWhere([&board, &locs, item, i](std::string_view key) { return locs.where(board, item, i, key); });
  };

  if (board.targets.empty()) return makeError(boardWhere, "the board has no targets", "add a [[targets]] table named \"cpu\"");
  std::vector<std::string> targetNames;
  bool anyCpu = false;
  for (size_t i = 0; i < board.targets.size(); ++i) {
    const Target& t = board.targets[i];
    STOWAGE_TRY(checkTarget(t, at(BoardItem::Target, i)));
    for (size_t j = 0; j < i; ++j)
      if (board.targets[j].name == t.name) {
        Diagnostic d = makeError(at(BoardItem::Target, i)("name"), "target '" + t.name + "' is defined twice");
        d.notes.push_back("first defined at " + board.targets[j].origin);
        return d;
      }
    targetNames.push_back(t.name);
    anyCpu = anyCpu || t.kind == TargetKind::Cpu;
  }
  if (!anyCpu)
    return makeError(boardWhere, "the board has no cpu target: generated code needs one to run",
                     "add [[targets]] name = \"cpu\" kind = \"cpu\"");

  std::vector<std::string> poolNames;
  bool anyWorkspace = false;
  for (size_t i = 0; i < board.pools.size(); ++i) {
    const MemoryPool& p = board.pools[i];
    KeyWhere where = at(BoardItem::Pool, i);
    STOWAGE_TRY(checkPool(p, where));
    for (size_t j = 0; j < i; ++j)
      if (board.pools[j].name == p.name) {
        Diagnostic d = makeError(where("name"), "pool '" + p.name + "' is defined twice", "pool names must be unique");
        d.notes.push_back("first defined at " + board.pools[j].origin);
        return d;
      }
    if (p.access.empty())
      return err(where, "access", "pool '" + p.name + "'", "no target can access the pool",
                 "list targets in 'access' (this board has no cpu target to default to)");
    for (const auto& a : p.access)
      if (!board.findTarget(a))
        return err(where, "access", "pool '" + p.name + "'",
                   "'access' names target '" + a + "', which does not exist" + didYouMean(a, targetNames),
                   "targets of this board:" + [&] {
                     std::string s;
                     for (const auto& n : targetNames) s += " " + n;
                     return s;
                   }());
    poolNames.push_back(p.name);
    anyWorkspace = anyWorkspace || p.kind == PoolKind::Workspace;
  }
  STOWAGE_TRY(checkFixedPoolsApart(board, [&](size_t i) { return at(BoardItem::Pool, i); }));
  if (!anyWorkspace)
    return makeError(boardWhere, "the board has no workspace pool: activations would have nowhere to go",
                     "add a pool with kind = \"workspace\" (the default kind)");

  auto unknownPool = [&](const KeyWhere& where, std::string_view key, const std::string& label, const std::string& name) {
    std::string list;
    for (const auto& n : poolNames) list += " " + n;
    return err(where, key, label,
               "'" + std::string(key) + "' names pool '" + name + "', which does not exist" + didYouMean(name, poolNames),
               "pools of this board:" + list);
  };
  for (size_t i = 0; i < board.rules.size(); ++i) {
    const PlacementRule& r = board.rules[i];
    KeyWhere where = at(BoardItem::Rule, i);
    STOWAGE_TRY(checkRule(r, where));
    for (TensorRole role : {TensorRole::Input, TensorRole::Output, TensorRole::Weight, TensorRole::Scratch}) {
      const auto& allowed = r.allowed(role);
      if (!allowed) continue;
      std::string key(tensorRoleKey(role));
      for (const auto& name : *allowed) {
        const MemoryPool* pool = board.findPool(name);
        if (!pool) return unknownPool(where, key, ruleLabel(r), name);
        if (role != TensorRole::Weight && pool->kind == PoolKind::Constant)
          return err(where, key, ruleLabel(r),
                     "'" + key + "' names constant pool '" + name + "': only weights may live in constant pools",
                     "name a workspace pool");
      }
    }
  }
  for (size_t i = 0; i < board.pins.size(); ++i) {
    const PoolPin& pin = board.pins[i];
    KeyWhere where = at(BoardItem::Pin, i);
    const std::string label = "pin '" + pin.tensor + "'";
    if (pin.tensor.empty()) return err(where, "tensor", label, "the tensor name is empty");
    if (!board.findPool(pin.pool)) return unknownPool(where, "pool", label, pin.pool);
  }
  STOWAGE_TRY(checkKernelsAt(board, locs));
  return checkDeviceAt(board, locs);
}

Status validateBoard(const Board& board) { return validateBoardAt(board, BoardLocations{}); }

}  // namespace stowage
