// Emulator runner (see EmulatorRunner.h).
#include "stowage/driver/EmulatorRunner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "stowage/driver/FirmwareObjectCache.h"
#include "stowage/driver/HostRunner.h"
#include "stowage/driver/OutputDir.h"
#include "stowage/driver/Process.h"
#include "stowage/firmware/FirmwareMain.h"
#include "stowage/firmware/FirmwareProject.h"
#include "stowage/io/TensorFile.h"

namespace stowage {

namespace fs = std::filesystem;

namespace {

struct ElfSection {
  std::string name;
  uint32_t type = 0, flags = 0, addr = 0, size = 0;
};

constexpr uint32_t kShtNobits = 8, kShfWrite = 1, kShfAlloc = 2;

Result<std::vector<ElfSection>> readElfSections(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes(std::istreambuf_iterator<char>(in), {});
  auto u16 = [&](size_t at) -> uint32_t { return at + 2 <= bytes.size() ? static_cast<uint8_t>(bytes[at]) | static_cast<uint8_t>(bytes[at + 1]) << 8 : 0; };
  auto u32 = [&](size_t at) -> uint32_t {
    return at + 4 <= bytes.size() ? u16(at) | u16(at + 2) << 16 : 0;
  };
  if (bytes.size() < 52 || bytes.compare(0, 4, "\x7f" "ELF") != 0 || bytes[4] != 1 || bytes[5] != 1)
    return makeError(path, "is not a 32-bit little-endian ELF file");
  const uint32_t shoff = u32(32), shentsize = u16(46), shnum = u16(48), shstrndx = u16(50);
  if (shentsize < 40 || shoff + static_cast<uint64_t>(shnum) * shentsize > bytes.size() || shstrndx >= shnum)
    return makeError(path, "has a damaged section header table");
  const uint32_t strOffset = u32(shoff + shstrndx * shentsize + 16);
  std::vector<ElfSection> out;
  for (uint32_t i = 0; i < shnum; ++i) {
    const size_t h = shoff + static_cast<size_t>(i) * shentsize;
    ElfSection s;
    const size_t nameAt = strOffset + u32(h);
    if (nameAt < bytes.size()) s.name = std::string(bytes.c_str() + nameAt);
    s.type = u32(h + 4);
    s.flags = u32(h + 8);
    s.addr = u32(h + 12);
    s.size = u32(h + 20);
    out.push_back(s);
  }
  return out;
}

/// "instructions: N" style lines of the firmware's console.
std::optional<uint64_t> consoleNumber(const std::string& console, const std::string& key) {
  const size_t at = console.find(key + ": ");
  if (at == std::string::npos) return std::nullopt;
  return std::stoull(console.substr(at + key.size() + 2));
}

/// "layer NAME: N instructions M macs" lines of fw_profile.c.
std::vector<LayerProfile> consoleLayers(const std::string& console) {
  std::vector<LayerProfile> out;
  size_t at = 0;
  while ((at = console.find("layer ", at)) != std::string::npos) {
    const size_t end = console.find('\n', at);
    const std::string line = console.substr(at, end == std::string::npos ? std::string::npos : end - at);
    at = end == std::string::npos ? console.size() : end + 1;
    const size_t colon = line.rfind(": ");
    unsigned long long n = 0, m = 0;
    if (colon == std::string::npos || std::sscanf(line.c_str() + colon + 2, "%llu instructions %llu macs", &n, &m) != 2) continue;
    out.push_back(LayerProfile{line.substr(6, colon - 6), n, m});
  }
  return out;
}

}  // namespace

std::string layerProfileTable(const std::vector<LayerProfile>& layers) {
  uint64_t total = 0, macs = 0;
  size_t width = 5;
  for (const LayerProfile& l : layers) {
    total += l.instructions;
    macs += l.macs;
    width = std::max(width, l.layer.size());
  }
  auto perMac = [](uint64_t n, uint64_t m) { return m > 0 ? fmt::format("{:.2f}", static_cast<double>(n) / static_cast<double>(m)) : std::string("-"); };
  std::string t = fmt::format("{:<{}}  {:>13}  {:>11}  {:>7}  {:>6}\n", "layer", width, "instructions", "MACs", "per MAC", "share");
  for (const LayerProfile& l : layers)
    t += fmt::format("{:<{}}  {:>13}  {:>11}  {:>7}  {:>5.1f}%\n", l.layer, width, l.instructions, l.macs, perMac(l.instructions, l.macs),
                     total > 0 ? 100.0 * static_cast<double>(l.instructions) / static_cast<double>(total) : 0.0);
  t += fmt::format("{:<{}}  {:>13}  {:>11}  {:>7}\n", "total", width, total, macs, perMac(total, macs));
  return t;
}

Result<FirmwareSizes> readFirmwareSizes(const std::string& path, const std::vector<DeviceMemory>& memories) {
  STOWAGE_ASSIGN_OR_RETURN(std::vector<ElfSection> sections, readElfSections(path));
  FirmwareSizes s;
  for (const ElfSection& x : sections) {
    if (!(x.flags & kShfAlloc) || x.size == 0) continue;
    auto in = std::find_if(memories.begin(), memories.end(), [&](const DeviceMemory& m) { return m.contains(x.addr, uint64_t{x.addr} + x.size); });
    const bool ram = in != memories.end() ? in->kind == MemoryKind::Ram : (x.flags & kShfWrite) != 0;
    if (x.type == kShtNobits) s.bss += x.size;
    else if (ram) s.data += x.size;
    else s.text += x.size;
    if (x.type != kShtNobits && !ram && x.name.rfind(".stowage.", 0) == 0) s.constantPoolBytes += x.size;
    if (ram) s.ramBytes += x.size;
    if (x.name == ".stack") s.stackBytes = x.size;
  }
  return s;
}

Result<std::vector<Tensor>> runOnEmulator(const CompileResult& compiled, const std::vector<Tensor>& inputs, const EmulatedMachine& machine,
                                          const EmulatorRunOptions& options, EmulatorReport* report) {
  STOWAGE_TRY(checkInputs(compiled, inputs));
  const Board& board = compiled.plan.board;
  if (!board.device || board.device->qemuMachine != machine.name)
    return makeError("--emulate", fmt::format("the model was not compiled for {} (CompileOptions::emulate)", machine.name));
  FirmwareProjectOptions projectOptions;
  projectOptions.runtimeDir = runtimeSourceDir();
  projectOptions.machine = &machine;
  projectOptions.noSimd = compiled.kernelIsa.noSimd;
  STOWAGE_ASSIGN_OR_RETURN(FirmwareProject fw, makeFirmwareProject(compiled.graph, compiled.plan, compiled.code, compiled.name, projectOptions));
  const Toolchain& tc = fw.toolchain;
  STOWAGE_ASSIGN_OR_RETURN(std::string cc, findProgram(tc.compiler, tc.debianPackages));
  STOWAGE_ASSIGN_OR_RETURN(std::string qemu, findProgram(machine.qemuBinary, {machine.debianPackage}));

  STOWAGE_ASSIGN_OR_RETURN(BuildDir build, BuildDir::open(options.keepDir, "stowage-emulate"));
  const fs::path dir = build.path();
  STOWAGE_TRY(writeFirmwareProject(fw, dir.string()));

  // Build: the same flags as the project's CMake files, plus what the emulated checks want: workspace pools poisoned at
  // boot (nothing may read them before writing) and, on Armv6-M (no unaligned access in hardware), a fault on every
  // unaligned access. Armv7-M and later cores load words at any address, and the int8 kernels' DSP paths do so.
  std::vector<std::string> defines = {"-DSTOWAGE_FW_POISON=0xA5"};
  if (board.device->cpu.isa == IsaFamily::Arm && board.device->cpu.name == "cortex-m0plus")
    defines.push_back("-DSTOWAGE_FW_TRAP_UNALIGNED");
  if (options.profileLayers) defines.push_back("-DSTOWAGE_PROFILE_LAYERS");
  for (const std::string& d : fw.modelDefines) defines.push_back("-D" + d);
  const fs::path objDir = dir / "obj";
  fs::create_directories(objDir);
  auto compileArgs = [&](const std::string& src, size_t index) {
    std::vector<std::string> a = {cc};
    a.insert(a.end(), tc.cpuFlags.begin(), tc.cpuFlags.end());
    a.insert(a.end(), tc.compileFlags.begin(), tc.compileFlags.end());
    if (src == fw.weightsSource) a.push_back("-O0");
    a.insert(a.end(), defines.begin(), defines.end());
    for (const auto& inc : fw.includeDirs) a.insert(a.end(), {"-I", (dir / inc).string()});
    a.insert(a.end(), {"-c", (dir / src).string(), "-o", (objDir / fmt::format("{}.o", index)).string()});
    return a;
  };
  // At most two compilers at once: the weights (slowest) in the background, the rest one after another. With
  // STOWAGE_FIRMWARE_CACHE, an object compiled before from the same text with the same command is copied instead.
  const FirmwareObjectCache cache = FirmwareObjectCache::fromEnvironment();
  std::vector<std::string> objects;
  ChildProcess weightsJob;
  std::vector<std::string> weightsArgs;
  std::string weightsKey, weightsObject;
  Status buildStatus;
  for (size_t i = 0; i < fw.sources.size(); ++i) {
    objects.push_back((objDir / fmt::format("{}.o", i)).string());
    std::vector<std::string> args = compileArgs(fw.sources[i], i);
    const std::string key = cache.enabled() ? cache.key(fw, fw.sources[i], args, dir.string()) : "";
    if (cache.restore(key, objects.back())) continue;
    if (fw.sources[i] == fw.weightsSource) {
      weightsArgs = args;
      weightsKey = key;
      weightsObject = objects.back();
      STOWAGE_ASSIGN_OR_RETURN(weightsJob, startProcess(args, (objDir / "cc_weights.log").string()));
      continue;
    }
    if (!buildStatus.ok()) continue;
    auto out = runProcess(args, (objDir / fmt::format("cc_{}.log", i)).string());
    if (!out.ok()) buildStatus = out.error();
    else if (!out->ok())
      buildStatus = withProcessOutput(makeError(fw.sources[i], "failed to compile for " + board.device->cpu.name + ": " + commandLine(args)), out->output);
    else if (cache.enabled())
      cache.store(key, objects.back());
  }
  if (weightsJob.pid > 0) {
    auto out = waitProcess(weightsJob);
    if (!out.ok()) return out.error();
    if (buildStatus.ok() && !out->ok())
      buildStatus = withProcessOutput(makeError(fw.weightsSource, "failed to compile: " + commandLine(weightsArgs)), out->output);
    else if (out->ok() && cache.enabled())
      cache.store(weightsKey, weightsObject);
  }
  STOWAGE_TRY(buildStatus);
  const std::string elf = (dir / (fw.name + ".elf")).string();
  std::vector<std::string> link = {cc};
  link.insert(link.end(), tc.cpuFlags.begin(), tc.cpuFlags.end());
  link.insert(link.end(), tc.linkFlags.begin(), tc.linkFlags.end());
  link.insert(link.end(), {"-T", (dir / fw.linkerScript).string()});
  link.insert(link.end(), objects.begin(), objects.end());
  link.insert(link.end(), {"-lm", "-Wl,-Map=" + (dir / (fw.name + ".map")).string(), "-o", elf});
  STOWAGE_ASSIGN_OR_RETURN(ProcessOutcome linked, runProcess(link, (dir / "link.log").string()));
  if (!linked.ok())
    return withProcessOutput(makeError(fw.linkerScript, "linking the firmware failed: " + commandLine(link)), linked.output);

  // Run: inputs and outputs as files in the build folder, named relative to it (QEMU's semihosting works in its cwd).
  std::vector<std::string> run = {"timeout", "--kill-after=5", std::to_string(options.timeoutSeconds), qemu, "-M", machine.qemuMachine,
                                  "-nographic", "-monitor", "none", "-serial", "none", "-icount", "shift=0,sleep=off"};
  run.insert(run.end(), machine.qemuArgs.begin(), machine.qemuArgs.end());
  std::string semihosting = "enable=on,target=native,arg=" + fw.name;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string file = fmt::format("input_{}.bin", i);
    STOWAGE_TRY(writeRaw((dir / file).string(), inputs[i]));
    semihosting += ",arg=" + file;
  }
  for (size_t i = 0; i < compiled.graph.outputs.size(); ++i) {
    std::error_code ec;
    fs::remove(dir / fmt::format("output_{}.bin", i), ec);
    semihosting += fmt::format(",arg=output_{}.bin", i);
  }
  run.insert(run.end(), {"-semihosting-config", semihosting, "-kernel", elf});
  STOWAGE_ASSIGN_OR_RETURN(ProcessOutcome ran, runProcess(run, (dir / "run.log").string(), dir.string()));
  if (!ran.ok()) {
    const std::string why = ran.exitCode == 124 ? fmt::format("did not finish within {} s", options.timeoutSeconds)
                            : ran.exitCode >= 128 ? fmt::format("faulted (exit code {}: 128 + the exception number)", ran.exitCode)
                                                  : fmt::format("exited with code {}", ran.exitCode);
    return withProcessOutput(makeError(machine.name, fmt::format("the firmware {}: {}", why, commandLine(run))), ran.output);
  }
  std::vector<Tensor> outputs;
  for (size_t i = 0; i < compiled.graph.outputs.size(); ++i) {
    const Tensor& o = compiled.graph.tensor(compiled.graph.outputs[i]);
    STOWAGE_ASSIGN_OR_RETURN(Tensor t, readRawTensor((dir / fmt::format("output_{}.bin", i)).string(), o.dtype, o.shape));
    t.name = o.name;
    t.kind = TensorKind::Activation;
    outputs.push_back(std::move(t));
  }
  if (report) {
    report->console = ran.output;
    report->instructions = consoleNumber(ran.output, "instructions").value_or(0);
    report->stackPeakBytes = consoleNumber(ran.output, "stack_peak_bytes").value_or(0);
    report->layers = consoleLayers(ran.output);
    STOWAGE_ASSIGN_OR_RETURN(report->sizes, readFirmwareSizes(elf, board.memories));
    report->elfPath = build.kept() ? elf : "";
  }
  if (report && report->sizes.stackBytes > 0 && report->stackPeakBytes >= report->sizes.stackBytes)
    return makeError(machine.name, fmt::format("the firmware used all of its {}-byte stack: it may have overflowed", report->sizes.stackBytes),
                     "give the board a larger stack ([device] stack = \"...\")");
  return outputs;
}

}  // namespace stowage
