// Child processes for the host runner: the system C compiler and the built harness, started with
// posix_spawnp (argument vectors, never a shell) with stdout and stderr captured to a log file.
#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

#include "stowage/support/Diagnostic.h"

namespace stowage {

/// A started child. `logPath` receives its stdout and stderr.
struct ChildProcess {
  pid_t pid = -1;
  std::vector<std::string> argv;
  std::string logPath;
};

/// How a child ended.
struct ProcessOutcome {
  int exitCode = -1;   ///< exit status, or -1 when killed by a signal
  int signal = 0;      ///< the signal that killed it, or 0
  std::string output;  ///< its captured stdout and stderr
  bool ok() const { return exitCode == 0; }
};

/// Starts argv[0] (looked up in PATH) with the arguments argv[1..], in folder `cwd` when it is not empty. The error
/// names the program.
Result<ChildProcess> startProcess(const std::vector<std::string>& argv, const std::string& logPath, const std::string& cwd = "");
/// Waits for `child` to end and reads its log.
Result<ProcessOutcome> waitProcess(const ChildProcess& child);
/// startProcess then waitProcess.
Result<ProcessOutcome> runProcess(const std::vector<std::string>& argv, const std::string& logPath, const std::string& cwd = "");

/// `d` with a program's output added as notes, one per line, at most `maxLines` of them.
Diagnostic withProcessOutput(Diagnostic d, const std::string& output, int maxLines = 30);

/// "cc -c a.c -o a.o", each argument quoted when needed, for messages.
std::string commandLine(const std::vector<std::string>& argv);

}  // namespace stowage
