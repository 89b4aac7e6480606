// Internal to target/: the checks behind validateBoard, with diagnostics located at the exact key when the
// item came from a board file (BoardLocations), and the defaults every board gets (finalizeBoard).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "stowage/target/Board.h"

namespace stowage {

/// Maps a key of one item to a location for diagnostics; "" = the item itself.
using KeyWhere = std::function<std::string(std::string_view key)>;

/// "0x20000000": an address as diagnostics print it.
std::string hexAddress(uint64_t v);
/// True for a C-style identifier ([A-Za-z_][A-Za-z0-9_]*): pool, target and memory names become parts of C symbols.
bool isIdentifier(std::string_view s);

/// Checks of one item on its own (no other items needed). Messages start with the item's label.
Status checkPool(const MemoryPool& pool, const KeyWhere& where);
Status checkTarget(const Target& target, const KeyWhere& where);
Status checkRule(const PlacementRule& rule, const KeyWhere& where);
/// "rule for op 'Conv'", "rule for node 'conv*'", "rule for every node".
std::string ruleLabel(const PlacementRule& rule);
/// Checks that `pattern` (an IR op name or glob) names at least one IR op; errors at `where`.
Status checkOpPattern(const std::string& pattern, const std::string& label, const std::string& key,
                      const std::string& where);

enum class BoardItem { Target, Pool, Rule, Pin, Memory, Kernel };

/// Where each key of each item was written, per item index (filled from a board file). Missing entries
/// fall back to the item's `origin`.
struct BoardLocations {
  using Keys = std::map<std::string, std::string, std::less<>>;
  std::vector<Keys> targets, pools, rules, pins, memories, kernels;
  Keys device;  ///< keys of [device]
  std::string where(const Board& board, BoardItem item, size_t index, std::string_view key) const;
};

/// Defaults: a `cpu` target when there are none, pool access = every cpu target when not given, the
/// `weights` constant pool when no pool is a constant pool.
void finalizeBoard(Board& board);
/// The device description's checks (DeviceValidate.cpp): memories, [device], each pool against its memory.
Status checkDeviceAt(const Board& board, const BoardLocations& locations);
/// Device defaults: [device] flash / ram default to the board's only memory of that kind.
void finalizeDevice(Board& board);
/// The board's [[kernels]] against each other and its targets (KernelValidate.cpp): targets that exist and run kernels
/// on cores, no two tables for the same calls, no two files of one name.
Status checkKernelsAt(const Board& board, const BoardLocations& locations);
/// validateBoard with locations from a board file.
Status validateBoardAt(const Board& board, const BoardLocations& locations);

}  // namespace stowage
