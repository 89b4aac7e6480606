// Objects of earlier emulated firmware builds (see FirmwareObjectCache.h).
#include "stowage/driver/FirmwareObjectCache.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <utility>
#include <vector>
#include <thread>

namespace fs = std::filesystem;

namespace stowage {

namespace {

/// Objects kept at most (each firmware has one per runtime kernel file, the model code and its weights).
constexpr size_t kMaxObjects = 2000;

/// Two 64-bit FNV-1a hashes with different offsets, fed the same bytes: a 128-bit key.
struct Hash128 {
  uint64_t a = 14695981039346656037ull, b = 0x9ae16a3b2f90404full;
  void add(std::string_view s) {
    for (unsigned char c : s) {
      a = (a ^ c) * 1099511628211ull;
      b = (b ^ c) * 1099511628211ull;
    }
    // The length too, so that ("ab", "c") and ("a", "bc") differ.
    const std::string n = fmt::format("|{}|", s.size());
    for (unsigned char c : n) {
      a = (a ^ c) * 1099511628211ull;
      b = (b ^ c) * 1099511628211ull;
    }
  }
  std::string hex() const { return fmt::format("{:016x}{:016x}", a, b); }
};

bool endsWith(const std::string& s, std::string_view end) { return s.size() >= end.size() && s.compare(s.size() - end.size(), end.size(), end) == 0; }

}  // namespace

FirmwareObjectCache FirmwareObjectCache::fromEnvironment() {
  FirmwareObjectCache cache;
  const char* env = std::getenv("STOWAGE_FIRMWARE_CACHE");
  if (!env || !*env) return cache;
  std::error_code ec;
  fs::create_directories(env, ec);
  if (!ec) cache.dir_ = env;
  return cache;
}

std::string FirmwareObjectCache::key(const FirmwareProject& project, const std::string& source, const std::vector<std::string>& args,
                                     const std::string& projectDir) const {
  Hash128 h;
  for (const std::string& arg : args) {
    std::string a = arg;
    for (size_t at = a.find(projectDir); !projectDir.empty() && at != std::string::npos; at = a.find(projectDir, at))
      a.replace(at, projectDir.size(), "<project>");
    h.add(a);
  }
  for (const ProjectFile& f : project.files)
    if (f.path == source || endsWith(f.path, ".h")) {
      h.add(f.path);
      h.add(f.text);
    }
  return h.hex();
}

bool FirmwareObjectCache::restore(const std::string& key, const std::string& object) const {
  if (!enabled()) return false;
  std::error_code ec;
  const fs::path stored = fs::path(dir_) / (key + ".o");
  if (!fs::exists(stored, ec)) return false;
  fs::copy_file(stored, object, fs::copy_options::overwrite_existing, ec);
  return !ec;
}

void FirmwareObjectCache::store(const std::string& key, const std::string& object) const {
  if (!enabled()) return;
  std::error_code ec;
  // Copied under a name of this process and thread, then renamed: no other one ever sees half an object.
  const fs::path tmp = fs::path(dir_) / fmt::format("{}.{}.{}.tmp", key, static_cast<long>(getpid()),
                                                     std::hash<std::thread::id>{}(std::this_thread::get_id()));
  fs::copy_file(object, tmp, fs::copy_options::overwrite_existing, ec);
  if (!ec) fs::rename(tmp, fs::path(dir_) / (key + ".o"), ec);
  if (ec) fs::remove(tmp, ec);
  // Bounded: past kMaxObjects the oldest quarter goes (a weights object is as large as the model's constants).
  std::vector<std::pair<fs::file_time_type, fs::path>> objects;
  for (const auto& e : fs::directory_iterator(dir_, ec))
    if (e.path().extension() == ".o") objects.emplace_back(e.last_write_time(ec), e.path());
  if (objects.size() <= kMaxObjects) return;
  std::sort(objects.begin(), objects.end());
  for (size_t i = 0; i < objects.size() / 4; ++i) fs::remove(objects[i].second, ec);
}

}  // namespace stowage
