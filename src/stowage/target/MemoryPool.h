// One memory pool of a board: a region the planner may place tensors in, with its size, alignment, who can
// reach it and how generated code gets at it (user pointer, static array, fixed address). Part of the
// memory description (target/), read by plan/, tile/ and codegen/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stowage {

/// What a pool holds: run-time data (activations, scratch) or constants (weights, biases).
enum class PoolKind { Workspace, Constant };

/// How generated code obtains the pool's memory.
enum class PoolPlacement {
  User,    ///< the application passes a pointer at run time
  Static,  ///< emitted as a static array (optionally in a linker `section`)
  Fixed,   ///< lives at `base` in the device's address space; code only computes base + offset
};

struct MemoryPool {
  std::string name;
  std::optional<size_t> sizeBytes;      ///< bytes; nullopt = unlimited (user and static pools only)
  size_t alignment = 16;                ///< bytes, power of two; every offset and `base` is a multiple
  PoolKind kind = PoolKind::Workspace;
  PoolPlacement placement = PoolPlacement::User;
  std::vector<std::string> access;      ///< target names that can read/write it
  std::string section;                  ///< static pools: linker section, may be empty
  std::optional<uint64_t> base;         ///< fixed pools: device address of byte 0; static pools: where the linker puts it
  std::string memory;                   ///< user / static pools: the board memory ([[memories]]) that holds it; "" = default
  std::string loadFrom;                 ///< static constant pools in a RAM memory: the flash memory copied from at boot
  int banks = 1;                        ///< number of separate physical blocks
  size_t bankSizeBytes = 0;             ///< bytes per bank when banks > 1 (banks * bankSizeBytes == size)
  std::vector<uint64_t> bankBases;      ///< fixed pools with non-contiguous banks: device address of each
                                        ///< bank; empty = contiguous from base
  /// Fixed pools private to each core: core c of the accessing target sees its own copy at base + c * stride
  /// (0 = one copy shared by every core).
  size_t perCoreStride = 0;
  double readBytesPerCycle = 0;         ///< bytes/cycle a target can read; 0 = unknown
  double writeBytesPerCycle = 0;        ///< bytes/cycle a target can write; 0 = unknown
  double latencyCycles = 0;             ///< cycles until the first byte of an access; 0 = unknown
  std::string origin;                   ///< "board.toml:12" or "--pool #2", for diagnostics

  /// True when target `target` is listed in `access`.
  bool canAccess(std::string_view target) const;
  /// Device address of byte `offset` of the pool (fixed pools; banks may be non-contiguous). Offsets are
  /// bytes from the start of the pool as if the banks were laid end to end. nullopt for non-fixed pools.
  std::optional<uint64_t> addressOf(size_t offset) const;
};

/// "workspace" / "constant" (the spelling in board files).
std::string_view poolKindName(PoolKind kind);
std::optional<PoolKind> poolKindFromName(std::string_view name);
/// "user" / "static" / "fixed" (the spelling in board files).
std::string_view poolPlacementName(PoolPlacement placement);
std::optional<PoolPlacement> poolPlacementFromName(std::string_view name);

}  // namespace stowage
