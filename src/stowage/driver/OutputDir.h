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

/// Writes `text` to `path` (binary, exact bytes). The error names the path.
Status writeTextFile(const std::filesystem::path& path, const std::string& text);

}  // namespace stowage
