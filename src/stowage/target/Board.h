// The memory description of a device: its targets (CPU, accelerators), memory pools, placement rules and
// pins, loaded from a TOML board file and/or --pool/--rule/--pin flags and validated before anything uses
// it. This header is the interface of target/; plan/, tile/ and codegen/ read a validated Board.
// The format is documented in docs/memory-description.md.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "stowage/support/Diagnostic.h"
#include "stowage/target/ByteSize.h"
#include "stowage/target/Device.h"
#include "stowage/target/Glob.h"
#include "stowage/target/KernelOverride.h"
#include "stowage/target/MemoryPool.h"
#include "stowage/target/PlacementRule.h"
#include "stowage/target/Target.h"

namespace stowage {

struct Board {
  std::string name;                  ///< board name (`name` key; file stem or "default" otherwise)
  std::string sourcePath;            ///< file it came from, empty for defaults/flags only
  std::vector<Target> targets;       ///< at least one cpu target once validated
  std::vector<MemoryPool> pools;     ///< in declaration order (flag pools replace in place or append)
  std::vector<PlacementRule> rules;  ///< board file rules first, then --rule flags
  std::vector<PoolPin> pins;         ///< board file pins first, then --pin flags
  std::vector<std::string> notes;    ///< remarks made while resolving (e.g. a --pool replaced a board pool)
  /// `[device]`: the CPU and the memories for code and the application's data (firmware/); nullopt = not described.
  std::optional<Device> device;
  /// `[[memories]]`: the physical memories of the address map (linker-script MEMORY regions), in declaration order.
  std::vector<DeviceMemory> memories;
  /// `[[kernels]]`: the board's own kernels, called instead of portable ones (docs/kernels.md), in declaration order.
  std::vector<KernelOverride> kernels;

  const MemoryPool* findPool(std::string_view name) const;
  const Target* findTarget(std::string_view name) const;
  const DeviceMemory* findMemory(std::string_view name) const;
  /// The board's kernel replacing portable kernel `kernel` for a call whose first tensor argument has element type
  /// `dtype` ("int8", see kernelDtypeName) on `target`, or null when the portable kernel is called.
  const KernelOverride* findKernel(std::string_view kernel, std::string_view dtype, const Target& target) const;
};

/// The memory that holds `pool` in the device's address map, or null when the board describes no memories or the
/// pool lives in none: its `memory` key; else the memory containing its `base`; else, for `user` and `static` pools
/// of a board with a [device], the device's `ram` memory (workspace pools) or `flash` memory (constant pools).
const DeviceMemory* poolMemory(const Board& board, const MemoryPool& pool);
/// The flash memory a RAM-resident `static` constant pool is copied from at boot (its `load_from`, else the device's
/// flash memory), or null when the pool needs no copy (it is in flash, or not a static constant pool).
const DeviceMemory* poolLoadMemory(const Board& board, const MemoryPool& pool);

/// Name of the default workspace pool (user placement, unlimited, cpu access).
inline constexpr std::string_view kDefaultWorkspacePool = "workspace";
/// Name of the default constant pool (static placement, unlimited), added when a board declares none.
inline constexpr std::string_view kDefaultConstantPool = "weights";

/// The board used with no board file and no --pool flags: one `cpu` target running every op, a `user`
/// workspace pool `workspace` of unlimited size and a static constant pool `weights` of unlimited size.
Board defaultBoard();

/// Parses and validates a board file's text. `sourceName` is used in diagnostics ("board.toml:12:5").
/// Defaults are filled in (a `cpu` target when there are no [[targets]], pool access = every cpu target,
/// the `weights` constant pool when none is declared). A board file must be complete on its own.
Result<Board> parseBoardToml(std::string_view text, const std::string& sourceName);
/// Reads `path` and calls parseBoardToml.
Result<Board> loadBoardFile(const std::string& path);

/// Parses one --pool flag: `key=value` items separated by `;`, list values separated by `,`, the same keys
/// as a [[pools]] table (e.g. "name=dtcm;size=64KiB;access=cpu;placement=static;section=.dtcm").
/// `index` is the 1-based position among the --pool flags, used in `origin` and messages ("--pool #2").
/// Access is left empty when not given (resolveBoard fills the default).
Result<MemoryPool> parsePoolFlag(std::string_view spec, int index);
/// Parses one --rule flag, e.g. "op=Conv;inputs=sram;outputs=act_mem,sram". `index` as for parsePoolFlag.
Result<PlacementRule> parseRuleFlag(std::string_view spec, int index);
/// Parses one --pin flag "tensor=pool" (split at the last `=`; the tensor may be a glob).
Result<PoolPin> parsePinFlag(std::string_view spec);

struct BoardFlags {
  std::string boardPath;           ///< --board FILE; empty = none
  std::vector<std::string> pools;  ///< --pool specs, in order
  std::vector<std::string> rules;  ///< --rule specs, in order
  std::vector<std::string> pins;   ///< --pin specs, in order
};

/// Board from an optional file plus CLI flags, validated. Flag pools are added; a flag pool with the name of
/// a board pool replaces it (recorded in Board::notes). Flag rules and pins come after the file's. No file
/// and no --pool flags: defaultBoard() plus the flag rules and pins. No file but --pool flags: a `cpu`
/// target and exactly those pools (plus `weights` when none is a constant pool).
Result<Board> resolveBoard(const BoardFlags& flags);

/// Checks a complete board: every pool's own keys (size > 0, power-of-two alignment, aligned base, banks,
/// placement-specific keys), unique pool and target names, access lists naming existing targets, at least
/// one cpu target and one workspace pool, rules and pins naming existing pools, rule op names that exist,
/// kernels naming existing targets that run kernels on cores, with no two for the same calls.
/// Errors point at each item's `origin`.
Status validateBoard(const Board& board);

}  // namespace stowage
