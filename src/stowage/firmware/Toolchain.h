// The cross toolchain for a device's CPU: the GCC to call, the Debian packages that ship it, and the flags for its
// instruction set, C library and linking. Shared by the firmware project's CMake files and `stowage run --emulate`
// so both build the same way. Stage firmware/.
#pragma once

#include <string>
#include <vector>

#include "stowage/support/Diagnostic.h"
#include "stowage/target/Device.h"

namespace stowage {

struct Toolchain {
  std::string triple;                       ///< "arm-none-eabi", "riscv64-unknown-elf"
  std::string compiler;                     ///< "arm-none-eabi-gcc"
  std::vector<std::string> debianPackages;  ///< what `make deps` installs for it
  std::vector<std::string> cpuFlags;        ///< -mcpu/-mthumb/-mfloat-abi/-mfpu or -march/-mabi (compile and link)
  std::vector<std::string> compileFlags;    ///< C99, warnings as errors, sections for --gc-sections, the C library's specs
  std::vector<std::string> linkFlags;       ///< no start files (runtime/firmware has them), the C library, --gc-sections
};

/// The toolchain for `cpu`.
Toolchain toolchainFor(const CpuSpec& cpu);

/// The full path of `program` on $PATH, or an error naming the Debian packages to install (`make deps` installs them).
Result<std::string> findProgram(const std::string& program, const std::vector<std::string>& debianPackages);

}  // namespace stowage
