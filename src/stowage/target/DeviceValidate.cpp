// The checks of a board's device description (Device.h): memories that do not overlap, the [device] table's CPU
// memories, and every pool against the memory that holds it (placement keys, base inside, capacity fits). Called by
// validateBoardAt after the pools' own checks; each failure a diagnostic at the offending key.
#include <algorithm>
#include <cstdio>

#include "stowage/target/BoardCheck.h"
#include "stowage/target/ByteSize.h"
#include "stowage/target/Suggest.h"

namespace stowage {
namespace {

/// "0x20000000 .. 0x2001FFFF" for the half-open range [lo, hi).
std::string span(uint64_t lo, uint64_t hi) { return hexAddress(lo) + " .. " + hexAddress(hi - 1); }

std::string memoryList(const Board& board) {
  std::string s;
  for (const auto& m : board.memories) s += " " + m.name;
  return s.empty() ? " (none)" : s;
}

class DeviceChecker {
 public:
  DeviceChecker(const Board& board, const BoardLocations& locs) : board_(board), locs_(locs) {}

  Status run() {
    STOWAGE_TRY(checkMemories());
    STOWAGE_TRY(checkDevice());
    for (size_t i = 0; i < board_.pools.size(); ++i) STOWAGE_TRY(checkPoolHome(i));
    return checkPlacedPoolsApart();
  }

 private:
  std::string memoryAt(size_t i, std::string_view key) const { return locs_.where(board_, BoardItem::Memory, i, key); }
  std::string poolAt(size_t i, std::string_view key) const { return locs_.where(board_, BoardItem::Pool, i, key); }
  std::string deviceAt(std::string_view key) const {
    if (auto it = locs_.device.find(key); it != locs_.device.end()) return it->second;
    if (auto it = locs_.device.find(std::string_view()); it != locs_.device.end()) return it->second;
    return board_.device ? board_.device->origin : boardWhere();
  }
  std::string boardWhere() const { return board_.sourcePath.empty() ? "board" : board_.sourcePath; }

  Status checkMemories() const {
    std::vector<size_t> order;
    for (size_t i = 0; i < board_.memories.size(); ++i) {
      const DeviceMemory& m = board_.memories[i];
      if (!isIdentifier(m.name))
        return makeError(memoryAt(i, "name"), "memory '" + m.name + "': the name must be an identifier (letters, digits, '_'; not starting with a digit)");
      for (size_t j = 0; j < i; ++j)
        if (board_.memories[j].name == m.name) {
          Diagnostic d = makeError(memoryAt(i, "name"), "memory '" + m.name + "' is defined twice", "memory names must be unique");
          d.notes.push_back("first defined at " + board_.memories[j].origin);
          return d;
        }
      order.push_back(i);
    }
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return board_.memories[a].base < board_.memories[b].base; });
    for (size_t k = 0; k + 1 < order.size(); ++k) {
      const DeviceMemory& lo = board_.memories[order[k]];
      const DeviceMemory& hi = board_.memories[order[k + 1]];
      if (hi.base >= lo.end()) continue;
      const size_t later = std::max(order[k], order[k + 1]);
      const DeviceMemory& other = board_.memories[later == order[k] ? order[k + 1] : order[k]];
      const DeviceMemory& mine = board_.memories[later];
      Diagnostic d = makeError(memoryAt(later, "base"), "memory '" + mine.name + "' (" + span(mine.base, mine.end()) + ") overlaps memory '" +
                                                            other.name + "' (" + span(other.base, other.end()) + ")",
                               "memories are the device's separate physical memories and cannot share an address; describe one memory once");
      d.notes.push_back("memory '" + other.name + "' is defined at " + other.origin);
      return d;
    }
    return Status::success();
  }

  Status checkDevice() const {
    if (!board_.device) return Status::success();
    const Device& dev = *board_.device;
    struct Role {
      const char* key;
      const std::string& name;
      MemoryKind kind;
      const char* what;
    };
    for (const Role& r : {Role{"flash", dev.flashMemory, MemoryKind::Flash, "code and read-only data"},
                          Role{"ram", dev.ramMemory, MemoryKind::Ram, "the stack, .data and .bss"}}) {
      if (r.name.empty()) {
        if (board_.memories.empty()) continue;
        std::string candidates;
        for (const auto& m : board_.memories)
          if (m.kind == r.kind) candidates += " " + m.name;
        return makeError(deviceAt(""), std::string("[device]: which memory holds ") + r.what + "?",
                         candidates.empty() ? std::string("add a [[memories]] table with kind = \"") + std::string(memoryKindName(r.kind)) + "\""
                                            : std::string("say ") + r.key + " = \"...\", one of:" + candidates);
      }
      const DeviceMemory* m = board_.findMemory(r.name);
      std::vector<std::string> names;
      for (const auto& x : board_.memories) names.push_back(x.name);
      if (!m)
        return makeError(deviceAt(r.key), std::string("[device]: '") + r.key + "' names memory '" + r.name + "', which does not exist" +
                                              didYouMean(r.name, names),
                         "memories of this board:" + memoryList(board_));
      if (m->kind != r.kind)
        return makeError(deviceAt(r.key), std::string("[device]: '") + r.key + "' names memory '" + r.name + "', which is kind \"" +
                                              std::string(memoryKindName(m->kind)) + "\"",
                         std::string("name a memory of kind \"") + std::string(memoryKindName(r.kind)) + "\"");
    }
    if (const DeviceMemory* ram = board_.findMemory(dev.ramMemory); ram && dev.stackBytes > ram->sizeBytes)
      return makeError(deviceAt("stack"), "[device]: the stack (" + formatByteSize(dev.stackBytes) + ") is larger than memory '" + ram->name +
                                              "' (" + formatByteSize(ram->sizeBytes) + ")");
    return Status::success();
  }

  Status checkPoolHome(size_t i) const {
    const MemoryPool& p = board_.pools[i];
    const std::string label = "pool '" + p.name + "': ";
    const bool fixed = p.placement == PoolPlacement::Fixed, isStatic = p.placement == PoolPlacement::Static;
    if (!p.memory.empty()) {
      if (fixed)
        return makeError(poolAt(i, "memory"), label + "'memory' is for user and static pools; a fixed pool is at its 'base'", "remove 'memory'");
      if (board_.memories.empty())
        return makeError(poolAt(i, "memory"), label + "'memory' names '" + p.memory + "' but the board has no [[memories]]",
                         "describe the device's memories in [[memories]] tables (name, base, size, kind)");
      if (!board_.findMemory(p.memory)) {
        std::vector<std::string> names;
        for (const auto& x : board_.memories) names.push_back(x.name);
        return makeError(poolAt(i, "memory"), label + "'memory' names memory '" + p.memory + "', which does not exist" + didYouMean(p.memory, names),
                         "memories of this board:" + memoryList(board_));
      }
    }
    if (!p.loadFrom.empty()) {
      if (!isStatic || p.kind != PoolKind::Constant)
        return makeError(poolAt(i, "load_from"), label + "'load_from' is for static constant pools (constants kept in RAM, copied at boot)",
                         "remove 'load_from'");
      const DeviceMemory* from = board_.findMemory(p.loadFrom);
      if (!from)
        return makeError(poolAt(i, "load_from"), label + "'load_from' names memory '" + p.loadFrom + "', which does not exist",
                         "memories of this board:" + memoryList(board_));
      if (from->kind != MemoryKind::Flash)
        return makeError(poolAt(i, "load_from"), label + "'load_from' names memory '" + p.loadFrom + "', which is not kind \"flash\"",
                         "constants are copied at boot from a flash memory");
    }
    if (isStatic && p.base && !p.sizeBytes)
      return makeError(poolAt(i, "base"), label + "a static pool with a 'base' needs a 'size'", "add size = \"...\" (the bytes at 'base')");
    if (board_.memories.empty()) return Status::success();

    const DeviceMemory* home = poolMemory(board_, p);
    const std::string key = !p.memory.empty() ? "memory" : p.base ? "base" : "";
    if (p.base && p.sizeBytes) {
      const uint64_t lo = *p.base, hi = *p.base + *p.sizeBytes;
      if (!home) {
        if (fixed) {
          // A fixed pool outside every memory is device memory the linker does not manage (e.g. a scratchpad); one that
          // straddles a memory would be overwritten by what the linker puts there.
          for (const auto& m : board_.memories)
            if (lo < m.end() && m.base < hi)
              return makeError(poolAt(i, "base"), label + "its addresses " + span(lo, hi) + " run over the edge of memory '" + m.name + "' (" +
                                                      span(m.base, m.end()) + ")",
                               "place the pool inside the memory or outside it");
          return Status::success();
        }
        return makeError(poolAt(i, "base"), label + "its address " + hexAddress(lo) + " is in no memory of the board",
                         "add a [[memories]] table for the memory at " + hexAddress(lo) + " or move 'base'; memories:" + memoryList(board_));
      }
      if (lo < home->base || lo >= home->end())  // only when `memory` names another memory than the one at `base`
        return makeError(poolAt(i, "base"), label + "its address " + hexAddress(lo) + " is not in memory '" + home->name + "' (" +
                                                span(home->base, home->end()) + ") that 'memory' names",
                         "move 'base' into memory '" + home->name + "', or remove 'memory' (the memory at 'base' holds the pool)");
      if (!home->contains(lo, hi))
        return makeError(poolAt(i, "size"), label + "its addresses " + span(lo, hi) + " run past the end of memory '" + home->name + "' (" +
                                                span(home->base, home->end()) + ")",
                         "a pool of at most " + formatByteSize(home->end() > lo ? home->end() - lo : 0) + " fits at this base");
    }
    if (!home) {
      if (fixed || p.placement == PoolPlacement::User || !board_.device) return Status::success();
      return makeError(poolAt(i, ""), label + "no memory holds this pool", "give it memory = \"...\" or a 'base'; memories:" + memoryList(board_));
    }
    if (p.sizeBytes && *p.sizeBytes > home->sizeBytes)
      return makeError(poolAt(i, p.memory.empty() ? "size" : "memory"),
                       label + "it is larger (" + formatByteSize(*p.sizeBytes) + ") than memory '" + home->name + "' (" +
                           formatByteSize(home->sizeBytes) + ") that holds it",
                       "make the pool at most " + formatByteSize(home->sizeBytes) + ", or put it in a larger memory");
    if (p.kind == PoolKind::Workspace && home->kind == MemoryKind::Flash)
      return makeError(poolAt(i, key), label + "a workspace pool cannot live in flash memory '" + home->name + "' (read-only while running)",
                       "put it in a memory of kind \"ram\"");
    if (isStatic && p.kind == PoolKind::Constant && home->kind == MemoryKind::Ram && !poolLoadMemory(board_, p))
      return makeError(poolAt(i, key), label + "its constants live in RAM memory '" + home->name + "' but no flash memory holds their copy for boot",
                       "add a memory of kind \"flash\" and name it in [device] flash = \"...\" or in the pool's load_from");
    if (!p.loadFrom.empty() && home->kind == MemoryKind::Flash)
      return makeError(poolAt(i, "load_from"), label + "'load_from' is for constants kept in RAM; this pool is in flash memory '" + home->name + "'",
                       "remove 'load_from'");
    return Status::success();
  }

  /// Static pools with a base must not share an address with each other or with a fixed pool the CPU can reach.
  Status checkPlacedPoolsApart() const {
    for (size_t i = 0; i < board_.pools.size(); ++i) {
      const MemoryPool& p = board_.pools[i];
      if (p.placement != PoolPlacement::Static || !p.base || !p.sizeBytes) continue;
      for (size_t j = 0; j < board_.pools.size(); ++j) {
        const MemoryPool& q = board_.pools[j];
        if (j == i || !q.base || !q.sizeBytes || (q.placement == PoolPlacement::Static && j > i)) continue;
        if (q.placement == PoolPlacement::User) continue;
        const uint64_t lo = std::max(*p.base, *q.base), hi = std::min(*p.base + *p.sizeBytes, *q.base + *q.sizeBytes);
        if (lo >= hi) continue;
        Diagnostic d = makeError(poolAt(i, "base"), "pool '" + p.name + "': its addresses " + span(*p.base, *p.base + *p.sizeBytes) +
                                                        " overlap pool '" + q.name + "' (" + span(*q.base, *q.base + *q.sizeBytes) + ")",
                                 "buffers placed in the two would alias; move one of them");
        d.notes.push_back("pool '" + q.name + "' is defined at " + q.origin);
        return d;
      }
    }
    return Status::success();
  }

  const Board& board_;
  const BoardLocations& locs_;
};

}  // namespace

Status checkDeviceAt(const Board& board, const BoardLocations& locations) { return DeviceChecker(board, locations).run(); }

void finalizeDevice(Board& board) {
  // With memories described, each static pool has a section of its own for the linker script to place.
  if (!board.memories.empty())
    for (MemoryPool& p : board.pools)
      if (p.placement == PoolPlacement::Static && p.section.empty()) p.section = ".stowage." + p.name;
  if (!board.device || board.memories.empty()) return;
  auto only = [&](MemoryKind kind) {
    std::string name;
    for (const auto& m : board.memories)
      if (m.kind == kind) {
        if (!name.empty()) return std::string();
        name = m.name;
      }
    return name;
  };
  if (board.device->flashMemory.empty()) board.device->flashMemory = only(MemoryKind::Flash);
  if (board.device->ramMemory.empty()) board.device->ramMemory = only(MemoryKind::Ram);
}

}  // namespace stowage
