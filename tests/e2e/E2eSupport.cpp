// Command and folder helpers for the end-to-end tests (see E2eSupport.h).
#include "E2eSupport.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

namespace stowage::e2e {

namespace fs = std::filesystem;

std::string shellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

CommandResult runCommand(const std::string& command) {
  static int counter = 0;
  fs::path base = fs::path(STOWAGE_BINARY_DIR) / "e2e-tmp";
  fs::create_directories(base);
  std::string stem = (base / ("cmd" + std::to_string(::getpid()) + "_" + std::to_string(counter++))).string();
  std::string full = command + " > " + shellQuote(stem + ".out") + " 2> " + shellQuote(stem + ".err");
  int rc = std::system(full.c_str());
  CommandResult r;
  r.exitCode = WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + (WIFSIGNALED(rc) ? WTERMSIG(rc) : 0);
  r.out = readFileBytes(stem + ".out");
  r.err = readFileBytes(stem + ".err");
  fs::remove(stem + ".out");
  fs::remove(stem + ".err");
  return r;
}

fs::path scratchDir(const std::string& name) {
  fs::path dir = fs::path(STOWAGE_BINARY_DIR) / "e2e-tmp" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

fs::path sharedPath(const std::string& relative) {
  fs::path p = fs::path(STOWAGE_SHARED_DIR) / relative;
  return fs::exists(p) ? p : fs::path();
}

std::string readFileBytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeFileBytes(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary);
  out << bytes;
}

}  // namespace stowage::e2e
