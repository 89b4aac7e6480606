// The command-line spelling of a board (--pool, --rule, --pin; tvmc-style `key=value;key=a,b`) and
// resolveBoard, which merges the flags into an optional board file and validates the result.
#include <algorithm>
#include <charconv>
#include <cctype>

#include "stowage/target/Board.h"
#include "stowage/target/BoardCheck.h"
#include "stowage/target/BoardItem.h"
#include "stowage/target/BoardToml.h"
#include "stowage/target/ByteSize.h"
#include "stowage/support/Text.h"

namespace stowage {
namespace {

/// One `key=value;...` flag as an ItemReader. Values are strings; lists are separated by `,`.
class FlagItem : public ItemReader {
 public:
  struct Entry {
    std::string key, value, item;  ///< item = the text "key=value" as written
  };

  static Result<FlagItem> parse(std::string_view spec, std::string flag) {
    FlagItem f;
    f.flag_ = std::move(flag);
    if (trimSpaces(spec).empty()) return makeError(f.flag_, "the flag value is empty", "write key=value items separated by ';'");
    size_t start = 0;
    while (start <= spec.size()) {
      size_t end = spec.find(';', start);
      if (end == std::string_view::npos) end = spec.size();
      std::string_view item = trimSpaces(spec.substr(start, end - start));
      start = end + 1;
      if (item.empty()) continue;
      size_t eq = item.find('=');
      if (eq == std::string_view::npos)
        return makeError(f.flag_ + " '" + std::string(item) + "'", "item is not key=value",
                         "separate items with ';' and list values with ','");
      Entry e{std::string(trimSpaces(item.substr(0, eq))), std::string(trimSpaces(item.substr(eq + 1))), std::string(item)};
      if (e.key.empty()) return makeError(f.flag_ + " '" + e.item + "'", "item has no key");
      for (const auto& other : f.entries_)
        if (other.key == e.key) return makeError(f.flag_ + " '" + e.item + "'", "key '" + e.key + "' is given twice");
      f.entries_.push_back(std::move(e));
    }
    return f;
  }

  std::vector<std::string> keys() const override {
    std::vector<std::string> out;
    for (const auto& e : entries_) out.push_back(e.key);
    return out;
  }
  bool has(std::string_view key) const override { return find(key) != nullptr; }
  std::string where(std::string_view key) const override {
    const Entry* e = key.empty() ? nullptr : find(key);
    return e ? flag_ + " '" + e->item + "'" : flag_;
  }
  Result<std::string> getString(std::string_view key) const override { return find(key)->value; }
  Result<std::vector<std::string>> getStringList(std::string_view key) const override {
    std::vector<std::string> out;
    std::string_view v = find(key)->value;
    if (trimSpaces(v).empty()) return out;
    size_t start = 0;
    while (start <= v.size()) {
      size_t end = v.find(',', start);
      if (end == std::string_view::npos) end = v.size();
      std::string_view name = trimSpaces(v.substr(start, end - start));
      if (name.empty()) return error(key, "'" + std::string(key) + "' has an empty element");
      out.emplace_back(name);
      start = end + 1;
    }
    return out;
  }
  Result<uint64_t> getUnsigned(std::string_view key) const override {
    auto r = parseUnsigned(find(key)->value);
    if (!r) return error(key, "'" + std::string(key) + "': " + r.error().message);
    return *r;
  }
  Result<uint64_t> getByteSize(std::string_view key) const override {
    auto r = parseByteSize(find(key)->value);
    if (!r) return error(key, "'" + std::string(key) + "': " + r.error().message, r.error().hint);
    return static_cast<uint64_t>(*r);
  }
  Result<double> getNumber(std::string_view key) const override {
    std::string_view v = trimSpaces(find(key)->value);
    double d = 0;
    auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), d);
    if (ec != std::errc() || ptr != v.data() + v.size() || v.empty())
      return error(key, "'" + std::string(key) + "' must be a number, not '" + std::string(v) + "'");
    return d;
  }
  Result<std::vector<uint64_t>> getUnsignedList(std::string_view key) const override {
    STOWAGE_ASSIGN_OR_RETURN(std::vector<std::string> items, getStringList(key));
    std::vector<uint64_t> out;
    for (const auto& s : items) {
      auto r = parseUnsigned(s);
      if (!r) return error(key, "'" + std::string(key) + "': " + r.error().message);
      out.push_back(*r);
    }
    return out;
  }

 private:
  const Entry* find(std::string_view key) const {
    for (const auto& e : entries_)
      if (e.key == key) return &e;
    return nullptr;
  }

  std::string flag_;
  std::vector<Entry> entries_;
};

Diagnostic withNotes(Diagnostic d, const std::vector<std::string>& notes) {
  d.notes.insert(d.notes.end(), notes.begin(), notes.end());
  return d;
}

}  // namespace

Result<MemoryPool> parsePoolFlag(std::string_view spec, int index) {
  std::string flag = "--pool #" + std::to_string(index);
  STOWAGE_ASSIGN_OR_RETURN(FlagItem item, FlagItem::parse(spec, flag));
  return readPool(item, flag);
}

Result<PlacementRule> parseRuleFlag(std::string_view spec, int index) {
  std::string flag = "--rule #" + std::to_string(index);
  STOWAGE_ASSIGN_OR_RETURN(FlagItem item, FlagItem::parse(spec, flag));
  return readRule(item, flag);
}

Result<PoolPin> parsePinFlag(std::string_view spec) {
  std::string where = "--pin '" + std::string(spec) + "'";
  size_t eq = spec.rfind('=');
  if (eq == std::string_view::npos)
    return makeError(where, "expected tensor=pool", "e.g. --pin conv1_out=dtcm (the tensor may be a glob)");
  PoolPin pin;
  pin.tensor = std::string(trimSpaces(spec.substr(0, eq)));
  pin.pool = std::string(trimSpaces(spec.substr(eq + 1)));
  pin.origin = "--pin " + std::string(spec);
  if (pin.tensor.empty()) return makeError(where, "the tensor name is empty", "write --pin tensor=pool");
  if (pin.pool.empty()) return makeError(where, "the pool name is empty", "write --pin tensor=pool");
  return pin;
}

Result<Board> resolveBoard(const BoardFlags& flags) {
  Board b;
  BoardLocations locs;
  if (!flags.boardPath.empty()) {
    STOWAGE_ASSIGN_OR_RETURN(std::string text, readBoardText(flags.boardPath));
    STOWAGE_ASSIGN_OR_RETURN(b, readBoardToml(text, flags.boardPath, locs));
  } else if (flags.pools.empty()) {
    b = defaultBoard();
  } else {
    b.name = "flags";
  }
  for (size_t i = 0; i < flags.pools.size(); ++i) {
    STOWAGE_ASSIGN_OR_RETURN(MemoryPool pool, parsePoolFlag(flags.pools[i], static_cast<int>(i + 1)));
    auto it = std::find_if(b.pools.begin(), b.pools.end(), [&](const MemoryPool& p) { return p.name == pool.name; });
    if (it == b.pools.end()) {
      b.pools.push_back(std::move(pool));
      continue;
    }
    // Replace in place; the file's key locations no longer apply to this item.
    size_t at = static_cast<size_t>(it - b.pools.begin());
    b.notes.push_back(pool.origin + " replaces pool '" + pool.name + "' from " + it->origin);
    *it = std::move(pool);
    if (at < locs.pools.size()) locs.pools[at].clear();
  }
  for (size_t i = 0; i < flags.rules.size(); ++i) {
    STOWAGE_ASSIGN_OR_RETURN(PlacementRule rule, parseRuleFlag(flags.rules[i], static_cast<int>(i + 1)));
    b.rules.push_back(std::move(rule));
  }
  for (const auto& spec : flags.pins) {
    STOWAGE_ASSIGN_OR_RETURN(PoolPin pin, parsePinFlag(spec));
    b.pins.push_back(std::move(pin));
  }
  finalizeBoard(b);
  Status s = validateBoardAt(b, locs);
  if (!s) return withNotes(s.error(), b.notes);
  return b;
}

}  // namespace stowage
