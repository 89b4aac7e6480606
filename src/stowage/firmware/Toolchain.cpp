// Cross toolchains (Toolchain.h): GCC's spelling of each CPU's features, newlib-nano on Arm, picolibc on RISC-V.
#include "stowage/firmware/Toolchain.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include <unistd.h>

namespace stowage {

Toolchain toolchainFor(const CpuSpec& cpu) {
  Toolchain t;
  t.compileFlags = {"-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-pedantic", "-ffunction-sections", "-fdata-sections"};
  if (cpu.isa == IsaFamily::RiscV) {
    t.triple = "riscv64-unknown-elf";
    t.debianPackages = {"gcc-riscv64-unknown-elf", "picolibc-riscv64-unknown-elf"};
    t.cpuFlags = {"-march=" + cpu.name, "-mabi=ilp32"};
    t.compileFlags.push_back("--specs=picolibc.specs");
    t.linkFlags = {"--specs=picolibc.specs", "-nostartfiles", "-Wl,--gc-sections", "-Wl,--no-warn-rwx-segments"};
  } else {
    t.triple = "arm-none-eabi";
    t.debianPackages = {"gcc-arm-none-eabi", "libnewlib-arm-none-eabi"};
    std::string mcpu = "-mcpu=" + cpu.name;
    if (cpu.name == "cortex-m33" && !cpu.dsp) mcpu += "+nodsp";
    if (cpu.name == "cortex-m55") {
      if (cpu.fpu.empty()) mcpu += "+nofp";
      if (cpu.mve.empty()) mcpu += "+nomve";
      else if (cpu.mve == "int" && !cpu.fpu.empty()) mcpu += "+nomve.fp";
    }
    t.cpuFlags = {mcpu, "-mthumb"};
    if (cpu.fpu.empty()) t.cpuFlags.push_back("-mfloat-abi=soft");
    else {
      t.cpuFlags.push_back("-mfloat-abi=hard");
      if (cpu.fpu != "auto") t.cpuFlags.push_back("-mfpu=" + cpu.fpu);
    }
    t.linkFlags = {"--specs=nano.specs", "-nostartfiles", "-Wl,--gc-sections", "-Wl,--no-warn-rwx-segments"};
  }
  t.compiler = t.triple + "-gcc";
  return t;
}

Result<std::string> findProgram(const std::string& program, const std::vector<std::string>& debianPackages) {
  namespace fs = std::filesystem;
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    const fs::path candidate = fs::path(dir) / program;
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec) && access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  std::string packages;
  for (const auto& p : debianPackages) packages += (packages.empty() ? "" : " ") + p;
  return makeError(program, "not found on PATH",
                   fmt::format("install the Debian package{} {} (`apt-get install {}`, or `make deps` in the Stowage sources)",
                               debianPackages.size() > 1 ? "s" : "", packages, packages));
}

}  // namespace stowage
