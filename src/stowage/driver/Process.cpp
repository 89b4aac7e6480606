// Child process handling (see Process.h).
#include "stowage/driver/Process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

extern char** environ;

namespace stowage {

Diagnostic withProcessOutput(Diagnostic d, const std::string& output, int maxLines) {
  std::istringstream lines(output);
  std::string line;
  int count = 0;
  while (std::getline(lines, line)) {
    if (++count > maxLines) {
      d.notes.push_back("... (output truncated)");
      break;
    }
    d.notes.push_back(line);
  }
  return d;
}

std::string commandLine(const std::vector<std::string>& argv) {
  std::string s;
  for (const std::string& a : argv) {
    if (!s.empty()) s += ' ';
    const bool plain = !a.empty() && a.find_first_of(" \t\n'\"\\$`*?[]{}()<>|&;#~") == std::string::npos;
    if (plain) {
      s += a;
      continue;
    }
    s += '\'';
    for (char c : a) s += c == '\'' ? std::string("'\\''") : std::string(1, c);
    s += '\'';
  }
  return s;
}

Result<ChildProcess> startProcess(const std::vector<std::string>& argv, const std::string& logPath, const std::string& cwd) {
  if (argv.empty()) return makeError("process", "empty command");
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  ChildProcess child;
  child.argv = argv;
  child.logPath = logPath;
  const int rc = posix_spawnp(&child.pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0)
    return makeError(argv[0], fmt::format("cannot start the program: {}", std::strerror(rc)),
                     argv[0] == "cc" ? "install a C compiler (e.g. apt-get install build-essential)" : "");
  return child;
}

Result<ProcessOutcome> waitProcess(const ChildProcess& child) {
  int status = 0;
  pid_t r;
  do r = ::waitpid(child.pid, &status, 0);
  while (r < 0 && errno == EINTR);
  if (r < 0) return makeError(child.argv.at(0), fmt::format("waiting for the program failed: {}", std::strerror(errno)));
  ProcessOutcome out;
  if (WIFEXITED(status)) out.exitCode = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) out.signal = WTERMSIG(status);
  std::ifstream log(child.logPath, std::ios::binary);
  out.output.assign(std::istreambuf_iterator<char>(log), {});
  return out;
}

Result<ProcessOutcome> runProcess(const std::vector<std::string>& argv, const std::string& logPath, const std::string& cwd) {
  STOWAGE_ASSIGN_OR_RETURN(ChildProcess child, startProcess(argv, logPath, cwd));
  return waitProcess(child);
}

}  // namespace stowage
