// Output folder handling (see OutputDir.h).
#include "stowage/driver/OutputDir.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

namespace stowage {

namespace fs = std::filesystem;

Status writeTextFile(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return makeError(path.string(), fmt::format("cannot create the file: {}", std::strerror(errno)));
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) return makeError(path.string(), "writing the file failed (disk full?)");
  return Status::success();
}

Result<fs::path> makeTempDir(const std::string& stem) {
  std::error_code ec;
  fs::path base = fs::temp_directory_path(ec);
  if (ec) base = "/tmp";
  std::string templ = (base / (stem + "-XXXXXX")).string();
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr)
    return makeError(templ, fmt::format("cannot create a temporary folder: {}", std::strerror(errno)),
                     "set TMPDIR to a writable folder");
  return fs::path(buf.data());
}

Result<BuildDir> BuildDir::open(const std::string& keepDir, const std::string& stem) {
  if (keepDir.empty()) {
    STOWAGE_ASSIGN_OR_RETURN(fs::path tmp, makeTempDir(stem));
    return BuildDir(tmp, false);
  }
  std::error_code ec;
  fs::create_directories(keepDir, ec);
  if (ec) return makeError(keepDir, fmt::format("cannot create the build folder: {}", ec.message()));
  return BuildDir(fs::absolute(keepDir), true);
}

BuildDir::~BuildDir() {
  if (!keep_ && !path_.empty()) {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
}

Status commitOutputDir(const std::string& dir, const std::function<Status(const fs::path& tmp)>& fill) {
  std::error_code ec;
  fs::path target = fs::absolute(fs::path(dir), ec).lexically_normal();
  if (ec || dir.empty()) return makeError(dir, "is not a valid output folder path");
  if (target.filename().empty()) target = target.parent_path();
  const fs::path parent = target.parent_path();
  auto fail = [&](const std::string& what) {
    return makeError(dir, fmt::format("cannot write the output folder: {}", what),
                     "choose an output folder in a writable location (-o DIR)");
  };
  if (fs::exists(target, ec) && !fs::is_directory(target, ec)) return fail("it exists and is not a folder");
  fs::create_directories(parent, ec);
  if (ec) return fail(fmt::format("cannot create '{}': {}", parent.string(), ec.message()));

  // A unique sibling: same file system, so the final rename is atomic.
  fs::path tmp;
  for (int attempt = 0;; ++attempt) {
    tmp = parent / fmt::format(".{}.tmp-{}-{}", target.filename().string(), ::getpid(), attempt);
    if (fs::create_directory(tmp, ec)) break;
    if (ec || attempt > 100) return fail(fmt::format("cannot create a folder in '{}': {}", parent.string(), ec ? ec.message() : "name clash"));
  }
  auto cleanup = [&] {
    std::error_code ignore;
    fs::remove_all(tmp, ignore);
  };
  Status filled = fill(tmp);
  if (!filled.ok()) {
    cleanup();
    return filled;
  }
  if (!fs::exists(target, ec)) {
    fs::rename(tmp, target, ec);
    if (ec) {
      cleanup();
      return fail(ec.message());
    }
    return Status::success();
  }
  // Existing folder: replace our files one by one, leave everything else in it alone.
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(tmp, ec)) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    // A generated subfolder (a firmware project's model/, runtime/) replaces the old one as a whole.
    if (fs::is_directory(f, ec) && fs::is_directory(target / f.filename(), ec)) fs::remove_all(target / f.filename(), ec);
    fs::rename(f, target / f.filename(), ec);
    if (ec) {
      cleanup();
      return fail(fmt::format("cannot replace '{}': {}", (target / f.filename()).string(), ec.message()));
    }
  }
  cleanup();
  return Status::success();
}

}  // namespace stowage
