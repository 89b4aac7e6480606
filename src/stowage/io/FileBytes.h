// Whole-file byte I/O for the tensor file formats (io/): every failure becomes a Diagnostic naming the
// file, so readers and writers above never deal with streams or errno.
#pragma once

#include <string>

#include "stowage/support/Diagnostic.h"

namespace stowage {

/// Reads the whole file at `path` as bytes. Errors (missing, a directory, unreadable) name the file.
Result<std::string> readFileBytes(const std::string& path);

/// Writes `bytes` to `path`, replacing any existing file. Errors (missing folder, permission, short
/// write) name the file.
Status writeFileBytes(const std::string& path, const std::string& bytes);

}  // namespace stowage
