// Internal to target/: reading one board item (a target, pool, rule or pin) from key/value pairs that came
// either from a TOML table or from a `key=value;...` flag, so both spellings share one set of keys, types,
// defaults and per-item checks. Not used outside target/.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "stowage/support/Diagnostic.h"
#include "stowage/target/Device.h"
#include "stowage/target/KernelOverride.h"
#include "stowage/target/MemoryPool.h"
#include "stowage/target/PlacementRule.h"
#include "stowage/target/Target.h"

namespace stowage {

/// Typed access to the keys of one item. Getters are called only for keys that `has()`; their errors are
/// located at `where(key)` and prefixed with `label` ("pool 'dtcm'").
class ItemReader {
 public:
  virtual ~ItemReader() = default;
  /// Keys in the order they were written.
  virtual std::vector<std::string> keys() const = 0;
  virtual bool has(std::string_view key) const = 0;
  /// Location of `key` for diagnostics ("board.toml:12:8", "--pool #2 'size=0'"); "" = the item itself.
  virtual std::string where(std::string_view key) const = 0;
  virtual Result<std::string> getString(std::string_view key) const = 0;
  /// A list of strings; a single string counts as a one-element list.
  virtual Result<std::vector<std::string>> getStringList(std::string_view key) const = 0;
  /// A non-negative integer (decimal or hex).
  virtual Result<uint64_t> getUnsigned(std::string_view key) const = 0;
  /// A byte count: an integer or a string such as "64KiB" (see parseByteSize).
  virtual Result<uint64_t> getByteSize(std::string_view key) const = 0;
  virtual Result<double> getNumber(std::string_view key) const = 0;
  virtual Result<std::vector<uint64_t>> getUnsignedList(std::string_view key) const = 0;
  /// A boolean (board files only).
  virtual Result<bool> getBool(std::string_view key) const {
    return error(key, "'" + std::string(key) + "' must be true or false");
  }
  /// True when `key` holds a boolean (board files only).
  virtual bool holdsBool(std::string_view) const { return false; }
  /// A table of intrinsic renamings: `{ mvin = { name = "...", args = [...] }, ... }` (board files only).
  virtual Result<std::vector<IntrinsicSpec>> getIntrinsics(std::string_view key) const {
    return error(key, "'" + std::string(key) + "' can only be given in a board file ([targets.intrinsics] table)");
  }

  /// Error at `key` with the label prefixed.
  Diagnostic error(std::string_view key, const std::string& message, std::string hint = {}) const;
  /// Fails on the first key not in `known`, suggesting the closest known key.
  Status checkKnownKeys(const std::vector<std::string>& known) const;

  std::string label;  ///< "pool 'dtcm'", "rule #2", ... set by the read functions below
};

/// The keys each item accepts, in documentation order.
const std::vector<std::string>& targetKeys();
const std::vector<std::string>& poolKeys();
const std::vector<std::string>& ruleKeys();
const std::vector<std::string>& pinKeys();
const std::vector<std::string>& memoryKeys();
const std::vector<std::string>& deviceKeys();
const std::vector<std::string>& kernelKeys();

/// Reads and checks one item (unknown keys, types, values that are wrong on their own). Cross-item checks
/// (names that must exist, duplicates) are validateBoard's. `what` names the item when it has no name yet
/// ("[[pools]] #2", "--rule #1"). The returned item's `origin` is `where("")`.
Result<Target> readTarget(ItemReader& in, const std::string& what);
/// Pool `access` stays empty when not given (the board fills in every cpu target).
Result<MemoryPool> readPool(ItemReader& in, const std::string& what);
Result<PlacementRule> readRule(ItemReader& in, const std::string& what);
Result<PoolPin> readPin(ItemReader& in, const std::string& what);
/// A `[[memories]]` table: name, base, size, kind.
Result<DeviceMemory> readMemory(ItemReader& in, const std::string& what);
/// A `[[kernels]]` table: kernel, dtype, target, function, header, source. `baseDir` is the board file's folder, against
/// which relative header and source paths are resolved; both files must exist.
Result<KernelOverride> readKernel(ItemReader& in, const std::string& what, const std::string& baseDir);
/// The `[device]` table. The memories it names are checked by validateBoard (they may come later in the file).
Result<Device> readDevice(ItemReader& in);

}  // namespace stowage
