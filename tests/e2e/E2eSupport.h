// Helpers for end-to-end tests that drive the `stowage` CLI as a user would: run a command, capture its
// exit code and output, make scratch folders, find ../shared.
#pragma once

#include <filesystem>
#include <string>

namespace stowage::e2e {

struct CommandResult {
  int exitCode = -1;
  std::string out;
  std::string err;
};

/// Runs `command` with /bin/sh, capturing stdout and stderr.
CommandResult runCommand(const std::string& command);
/// Single-quotes `s` for /bin/sh.
std::string shellQuote(const std::string& s);
/// A fresh empty folder under the build dir for one test.
std::filesystem::path scratchDir(const std::string& name);
/// ../shared/<relative> when it exists, else empty (tests then GTEST_SKIP with a message).
std::filesystem::path sharedPath(const std::string& relative);
/// The bytes of file `p` ("" when it cannot be read).
std::string readFileBytes(const std::filesystem::path& p);
/// Writes `bytes` to file `p` exactly (binary).
void writeFileBytes(const std::filesystem::path& p, const std::string& bytes);

inline std::string cli() { return STOWAGE_CLI; }
inline std::string zoo() { return STOWAGE_ZOO; }

}  // namespace stowage::e2e
