// How a fuzz target (tests/fuzz/*FuzzTarget.cpp) declares its entry point: built with -DSTOWAGE_LIBFUZZER it is
// libFuzzer's LLVMFuzzerTestOneInput (`make fuzz`); otherwise it registers under its name for stowage_fuzz_replay.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "stowage/support/Diagnostic.h"

namespace stowage::fuzz {

/// One fuzz target: takes any bytes, returns 0; a bug is a crash, a sanitizer report or abortOnBug.
using FuzzEntry = int (*)(const uint8_t* data, size_t size);

struct RegisteredFuzzTarget {
  std::string name;  ///< "onnx", "board_toml", ... (the folder name under tests/fuzz/regressions/)
  FuzzEntry entry;
};

/// Adds a target to fuzzTargets(); called by STOWAGE_FUZZ_TARGET at static initialisation.
bool registerFuzzTarget(const char* name, FuzzEntry entry);
/// Every target linked into this program, sorted by name.
std::vector<RegisteredFuzzTarget> fuzzTargets();

/// Aborts (a finding for libFuzzer, a failure for the replay test) when `d` admits to being Stowage's own fault
/// ("internal error", "this is a bug in the ... importer"): bad input must get an error about the input. A phrase
/// that `input` itself contains does not count (libFuzzer learns the phrases and writes them into inputs, which
/// diagnostics then quote).
void abortIfDiagnosticAdmitsBug(const Diagnostic& d, std::string_view input);
/// Prints `what` to stderr and aborts.
[[noreturn]] void abortOnBug(const std::string& what);

}  // namespace stowage::fuzz

#if defined(STOWAGE_LIBFUZZER)
#define STOWAGE_FUZZ_TARGET(id) extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
#else
#define STOWAGE_FUZZ_TARGET(id)                                                                                 \
  static int stowageFuzzEntry_##id(const uint8_t* data, size_t size);                                        \
  [[maybe_unused]] static const bool stowageFuzzRegistered_##id =                                             \
      ::stowage::fuzz::registerFuzzTarget(#id, stowageFuzzEntry_##id);                                        \
  static int stowageFuzzEntry_##id(const uint8_t* data, size_t size)
#endif
