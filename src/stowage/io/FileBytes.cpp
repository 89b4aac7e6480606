// Whole-file byte I/O with diagnostics (see FileBytes.h).
#include "stowage/io/FileBytes.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace stowage {

namespace fs = std::filesystem;

Result<std::string> readFileBytes(const std::string& path) {
  std::error_code ec;
  fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st))
    return makeError(path, "file not found", "check the path; relative paths start from the current folder");
  if (fs::is_directory(st)) return makeError(path, "is a folder, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return makeError(path, std::string("cannot open for reading: ") + std::strerror(errno));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return makeError(path, "read error");
  return bytes;
}

Status writeFileBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    std::string why = std::strerror(errno);
    fs::path parent = fs::path(path).parent_path();
    std::error_code ec;
    if (!parent.empty() && !fs::is_directory(parent, ec))
      return makeError(path, "cannot open for writing: folder '" + parent.string() + "' does not exist",
                       "create the folder first");
    return makeError(path, "cannot open for writing: " + why);
  }
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return makeError(path, "write error (disk full?)");
  return Status::success();
}

}  // namespace stowage
