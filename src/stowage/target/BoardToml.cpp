// The TOML spelling of a board (parseBoardToml, loadBoardFile): toml++ tables read through ItemReader so
// every diagnostic names the file, line and key. Format: docs/memory-description.md.
#include <toml++/toml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "stowage/target/Board.h"
#include "stowage/target/BoardCheck.h"
#include "stowage/target/BoardItem.h"
#include "stowage/target/BoardToml.h"
#include "stowage/target/ByteSize.h"
#include "stowage/target/Suggest.h"

namespace stowage {
namespace {

std::string locate(const std::string& source, const toml::source_region& region) {
  if (region.begin.line == 0) return source;
  return source + ":" + std::to_string(region.begin.line) + ":" + std::to_string(region.begin.column);
}

std::string typeName(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    default: return "nothing";
  }
}

/// One TOML table as an ItemReader.
class TomlItem : public ItemReader {
 public:
  TomlItem(const toml::table& table, const std::string& source) : table_(table), source_(source) {}

  std::vector<std::string> keys() const override {
    std::vector<std::string> out;
    for (const auto& [k, v] : table_) out.emplace_back(k.str());
    return out;
  }
  bool has(std::string_view key) const override { return table_.contains(key); }
  std::string where(std::string_view key) const override {
    const toml::node* n = key.empty() ? nullptr : table_.get(key);
    if (n) return locate(source_, n->source());
    return locate(source_, table_.source());
  }
  Result<std::string> getString(std::string_view key) const override {
    const toml::node& n = *table_.get(key);
    if (auto s = n.as_string()) return s->get();
    return typeError(key, n, "a string");
  }
  Result<std::vector<std::string>> getStringList(std::string_view key) const override {
    const toml::node& n = *table_.get(key);
    if (auto s = n.as_string()) return std::vector<std::string>{s->get()};
    auto a = n.as_array();
    if (!a) return typeError(key, n, "an array of strings");
    std::vector<std::string> out;
    for (const auto& e : *a) {
      auto s = e.as_string();
      if (!s) return typeError(key, e, "an array of strings (an element is " + typeName(e) + ")");
      out.push_back(s->get());
    }
    return out;
  }
  Result<uint64_t> getUnsigned(std::string_view key) const override { return unsignedOf(key, *table_.get(key)); }
  bool holdsBool(std::string_view key) const override { return table_.get(key) && table_.get(key)->is_boolean(); }
  Result<bool> getBool(std::string_view key) const override {
    const toml::node& n = *table_.get(key);
    if (auto b = n.as_boolean()) return b->get();
    return typeError(key, n, "true or false");
  }
  Result<uint64_t> getByteSize(std::string_view key) const override {
    const toml::node& n = *table_.get(key);
    if (auto i = n.as_integer()) {
      if (i->get() < 0) return error(key, "'" + std::string(key) + "' is negative");
      return static_cast<uint64_t>(i->get());
    }
    if (auto s = n.as_string()) {
      auto r = parseByteSize(s->get());
      if (!r) return error(key, "'" + std::string(key) + "': " + r.error().message, r.error().hint);
      return static_cast<uint64_t>(*r);
    }
    return typeError(key, n, "a byte count (an integer or a string such as \"64KiB\")");
  }
  Result<double> getNumber(std::string_view key) const override {
    const toml::node& n = *table_.get(key);
    if (auto f = n.as_floating_point()) return f->get();
    if (auto i = n.as_integer()) return static_cast<double>(i->get());
    return typeError(key, n, "a number");
  }
  Result<std::vector<uint64_t>> getUnsignedList(std::string_view key) const override {
    const toml::node& n = *table_.get(key);
    auto a = n.as_array();
    if (!a) return typeError(key, n, "an array of integers");
    std::vector<uint64_t> out;
    for (const auto& e : *a) {
      STOWAGE_ASSIGN_OR_RETURN(uint64_t v, unsignedOf(key, e));
      out.push_back(v);
    }
    return out;
  }
  Result<std::vector<IntrinsicSpec>> getIntrinsics(std::string_view key) const override {
    const toml::node& n = *table_.get(key);
    auto t = n.as_table();
    if (!t) return typeError(key, n, "a table of intrinsics ([targets.intrinsics])");
    std::vector<std::string> known;
    for (const auto& d : defaultIntrinsics()) known.push_back(d.intrinsic);
    std::vector<IntrinsicSpec> out;
    for (const auto& [k, v] : *t) {
      const std::string name(k.str());
      auto def = std::find_if(defaultIntrinsics().begin(), defaultIntrinsics().end(),
                              [&](const IntrinsicSpec& d) { return d.intrinsic == name; });
      if (def == defaultIntrinsics().end()) {
        std::string close = closestMatch(name, known);
        std::string all;
        for (const auto& kk : known) all += " " + kk;
        return makeError(locate(source_, v.source()), label + ": unknown intrinsic '" + name + "'",
                         close.empty() ? "intrinsics:" + all : "did you mean '" + close + "'?");
      }
      IntrinsicSpec spec = *def;
      auto e = v.as_table();
      if (!e) return typeError(key, v, "a table { name = \"...\", args = [...] } for intrinsic '" + name + "'");
      for (const auto& [ek, ev] : *e) {
        const std::string field(ek.str());
        if (field == "name") {
          auto s = ev.as_string();
          if (!s || s->get().empty()) return makeError(locate(source_, ev.source()), label + ": intrinsic '" + name + "': 'name' must be a non-empty string");
          spec.name = s->get();
        } else if (field == "args") {
          auto a = ev.as_array();
          if (!a) return makeError(locate(source_, ev.source()), label + ": intrinsic '" + name + "': 'args' must be an array of strings");
          std::vector<std::string> args;
          for (const auto& x : *a) {
            auto s = x.as_string();
            if (!s) return makeError(locate(source_, x.source()), label + ": intrinsic '" + name + "': 'args' must be an array of strings");
            args.push_back(s->get());
          }
          std::vector<std::string> want = def->args, got = args;
          std::sort(want.begin(), want.end());
          std::sort(got.begin(), got.end());
          if (want != got) {
            std::string list;
            for (const auto& x : def->args) list += (list.empty() ? "" : ", ") + x;
            return makeError(locate(source_, ev.source()),
                             label + ": intrinsic '" + name + "': 'args' must name each of its arguments exactly once",
                             "the arguments of " + def->name + " are: " + list);
          }
          spec.args = std::move(args);
        } else {
          return makeError(locate(source_, ev.source()), label + ": intrinsic '" + name + "': unknown key '" + field + "'",
                           "an intrinsic has 'name' and 'args'");
        }
      }
      out.push_back(std::move(spec));
    }
    return out;
  }

 private:
  Diagnostic typeError(std::string_view key, const toml::node& n, const std::string& expected) const {
    return makeError(locate(source_, n.source()),
                     label + ": '" + std::string(key) + "' must be " + expected + ", not " + typeName(n));
  }
  Result<uint64_t> unsignedOf(std::string_view key, const toml::node& n) const {
    if (auto i = n.as_integer()) {
      if (i->get() < 0) return makeError(locate(source_, n.source()), label + ": '" + std::string(key) + "' is negative");
      return static_cast<uint64_t>(i->get());
    }
    if (auto s = n.as_string()) {
      auto r = parseUnsigned(s->get());
      if (!r)
        return makeError(locate(source_, n.source()), label + ": '" + std::string(key) + "': " + r.error().message);
      return *r;
    }
    return typeError(key, n, "a non-negative integer");
  }

  const toml::table& table_;
  const std::string& source_;
};

const std::vector<std::string>& topKeys() {
  static const std::vector<std::string> k = {"name", "description", "extends", "device", "memories", "targets", "pools", "rules", "pins", "kernels"};
  return k;
}

/// Reads the array of tables `key` ([[key]]) with `read`, recording each item's key locations.
template <typename T, typename ReadFn>
Status readArray(const toml::table& root, const std::string& key, const std::string& source, ReadFn read,
                 std::vector<T>& out, std::vector<BoardLocations::Keys>& locs) {
  const toml::node* n = root.get(key);
  if (!n) return Status::success();
  auto a = n->as_array();
  if (!a)
    return makeError(locate(source, n->source()), "'" + key + "' must be an array of tables, not " + typeName(*n),
                     "write each item as a [[" + key + "]] table");
  for (size_t i = 0; i < a->size(); ++i) {
    const toml::node& e = (*a)[i];
    auto t = e.as_table();
    if (!t)
      return makeError(locate(source, e.source()), "'" + key + "' item #" + std::to_string(i + 1) +
                                                       " must be a table, not " + typeName(e));
    TomlItem item(*t, source);
    auto r = read(item, "[[" + key + "]] #" + std::to_string(i + 1));
    if (!r) return r.error();
    out.push_back(std::move(*r));
    BoardLocations::Keys k;
    k[""] = item.where("");
    for (const auto& name : item.keys()) k[name] = item.where(name);
    locs.push_back(std::move(k));
  }
  return Status::success();
}

/// How many boards deep `extends` may go (a cycle stops here too).
constexpr int kMaxExtendsDepth = 8;

Result<Board> readBoardTomlAt(std::string_view text, const std::string& sourceName, BoardLocations& locs, int depth);

/// The board `extends` names (a path relative to this file's folder), read as written, with its locations in `locs`.
Result<Board> readBaseBoard(const toml::node& n, const std::string& sourceName, BoardLocations& locs, int depth) {
  auto s = n.as_string();
  if (!s) return makeError(locate(sourceName, n.source()), "'extends' must be a string (a board file's path), not " + typeName(n));
  std::filesystem::path base(s->get());
  if (base.is_relative()) base = std::filesystem::path(sourceName).parent_path() / base;
  if (depth >= kMaxExtendsDepth)
    return makeError(locate(sourceName, n.source()), "'extends' goes more than " + std::to_string(kMaxExtendsDepth) + " boards deep",
                     "a board probably extends itself through others: check the chain of 'extends'");
  // A regular file only: a directory reads as an empty board, and a device such as /dev/zero would never end.
  std::error_code ec;
  std::ifstream in;
  if (std::filesystem::is_regular_file(base, ec)) in.open(base, std::ios::binary);
  if (!in.is_open())
    return makeError(locate(sourceName, n.source()), "'extends' names \"" + s->get() + "\", which is not a readable file (looked for " +
                                                         base.lexically_normal().string() + ")",
                     "the path is relative to this board file's folder");
  std::ostringstream text;
  text << in.rdbuf();
  return readBoardTomlAt(text.str(), base.lexically_normal().string(), locs, depth + 1);
}

/// Reads a board file without defaults or validation (resolveBoard merges flags first).
Result<Board> readBoardTomlAt(std::string_view text, const std::string& sourceName, BoardLocations& locs, int depth) {
  toml::table root;
  try {
    root = toml::parse(text, sourceName);
  } catch (const toml::parse_error& e) {
    return makeError(locate(sourceName, e.source()), "invalid TOML: " + std::string(e.description()));
  }
  for (const auto& [k, v] : root) {
    std::string key(k.str());
    if (std::find(topKeys().begin(), topKeys().end(), key) != topKeys().end()) continue;
    std::string close = closestMatch(key, topKeys());
    return makeError(locate(sourceName, v.source()), "unknown top-level key '" + key + "'",
                     close.empty() ? "a board file has name, description, extends, [device], [[memories]], [[targets]], [[pools]], [[rules]], [[pins]] and [[kernels]]"
                                   : "did you mean '" + close + "'?");
  }
  // `extends`: the base board's items first (each located in its own file), then this file's, appended.
  Board b;
  if (const toml::node* n = root.get("extends")) {
    STOWAGE_ASSIGN_OR_RETURN(b, readBaseBoard(*n, sourceName, locs, depth));
  }
  b.sourcePath = sourceName;
  b.name = std::filesystem::path(sourceName).stem().string();
  for (const char* key : {"name", "description"}) {
    const toml::node* n = root.get(key);
    if (!n) continue;
    if (!n->as_string())
      return makeError(locate(sourceName, n->source()), std::string("'") + key + "' must be a string, not " + typeName(*n));
    if (std::string_view(key) == "name") b.name = n->as_string()->get();
  }
  if (const toml::node* n = root.get("device")) {
    auto t = n->as_table();
    if (!t)
      return makeError(locate(sourceName, n->source()), "'device' must be a table, not " + typeName(*n),
                       "write it as a [device] table with cpu = \"...\"");
    TomlItem item(*t, sourceName);
    STOWAGE_ASSIGN_OR_RETURN(b.device, readDevice(item));
    locs.device.clear();  // replaces the base board's [device]
    locs.device[""] = item.where("");
    for (const auto& name : item.keys()) locs.device[name] = item.where(name);
  }
  STOWAGE_TRY(readArray(root, "memories", sourceName, readMemory, b.memories, locs.memories));
  STOWAGE_TRY(readArray(root, "targets", sourceName, readTarget, b.targets, locs.targets));
  STOWAGE_TRY(readArray(root, "pools", sourceName, readPool, b.pools, locs.pools));
  STOWAGE_TRY(readArray(root, "rules", sourceName, readRule, b.rules, locs.rules));
  STOWAGE_TRY(readArray(root, "pins", sourceName, readPin, b.pins, locs.pins));
  const std::string baseDir = std::filesystem::path(sourceName).parent_path().string();
  STOWAGE_TRY(readArray(root, "kernels", sourceName,
                        [&](ItemReader& in, const std::string& what) { return readKernel(in, what, baseDir); }, b.kernels, locs.kernels));
  return b;
}

}  // namespace

Result<Board> readBoardToml(std::string_view text, const std::string& sourceName, BoardLocations& locs) {
  return readBoardTomlAt(text, sourceName, locs, 0);
}

Result<Board> parseBoardToml(std::string_view text, const std::string& sourceName) {
  BoardLocations locs;
  STOWAGE_ASSIGN_OR_RETURN(Board b, readBoardToml(text, sourceName, locs));
  finalizeBoard(b);
  STOWAGE_TRY(validateBoardAt(b, locs));
  return b;
}

Result<std::string> readBoardText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return makeError(path, "cannot read the board file", "check the --board path");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return makeError(path, "error while reading the board file");
  return ss.str();
}

Result<Board> loadBoardFile(const std::string& path) {
  STOWAGE_ASSIGN_OR_RETURN(std::string text, readBoardText(path));
  return parseBoardToml(text, path);
}

}  // namespace stowage
