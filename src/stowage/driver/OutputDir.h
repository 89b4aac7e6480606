// Crash-safe output folders for the driver: files are written into a temporary folder beside the target
// and moved into place only when every write succeeded, so a failure never leaves a half-written folder.
#pragma once

#include <filesystem>
#include <functional>
#include <string>

#include "stowage/support/Diagnostic.h"

namespace stowage {

/// Creates a fresh temporary folder beside `dir` (creating `dir`'s parents if needed), calls `fill` with it,
/// then moves its files into `dir`: a missing `dir` is created by one rename; in an existing folder each file
/// is replaced, others are left alone. On any failure (of `fill`, or `dir` unwritable or not a folder) the
/// temporary folder is removed and the error names `dir`.
Status commitOutputDir(const std::string& dir, const std::function<Status(const std::filesystem::path& tmp)>& fill);

/// A fresh empty folder under the system temp folder ("<tmp>/<stem>-XXXXXX"), for builds.
Result<std::filesystem::path> makeTempDir(const std::string& stem);

/// A build folder for `stowage run`: the folder the user asked to keep (created if missing, left in place), or a fresh
/// temporary one that is removed with this object.
class BuildDir {
 public:
  /// `keepDir` when not empty, else a new "<tmp>/<stem>-XXXXXX". The error names the folder.
  static Result<BuildDir> open(const std::string& keepDir, const std::string& stem);
  BuildDir(BuildDir&& other) noexcept : path_(std::move(other.path_)), keep_(other.keep_) { other.path_.clear(); }
  BuildDir(const BuildDir&) = delete;
  BuildDir& operator=(const BuildDir&) = delete;
  BuildDir& operator=(BuildDir&&) = delete;
  ~BuildDir();
  const std::filesystem::path& path() const { return path_; }
  bool kept() const { return keep_; }

 private:
  BuildDir(std::filesystem::path path, bool keep) : path_(std::move(path)), keep_(keep) {}
  std::filesystem::path path_;
  bool keep_ = false;
};

/// Writes `text` to `path` (binary, exact bytes). The error names the path.
Status writeTextFile(const std::filesystem::path& path, const std::string& text);

}  // namespace stowage
