// End-to-end checks of the firmware flow (docs/firmware.md): `stowage run --emulate MACHINE` builds each model with the
// cross toolchain and runs it on QEMU; its outputs must equal TensorFlow Lite Micro's reference outputs byte for byte
// (MLPerf Tiny int8 models on Cortex-M4F, RV32IMAC, Cortex-M7 with the cortex-m7 board's TCMs, Cortex-M55), the float
// ONNX MNIST model must match its reference within 1e-4. The kept ELF of the cortex-m7 board is checked against its
// linker script: pools at their memories, the ITCM constant pool loaded from flash, no workspace pool in the image.
// `stowage compile --project` gives a CMake project that builds, runs on QEMU and flashes through OpenOCD, and whose
// stowage.cmake works from another CMake project. Bad boards and flags fail with exit code 2 and a clear message.
// Skipped with a message when the cross toolchains, QEMU or ../shared are missing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <vector>

#include <unistd.h>

#include "E2eSupport.h"
#include "stowage/firmware/Toolchain.h"
#include "stowage/io/TensorFile.h"

namespace stowage::e2e {
namespace {

namespace fs = std::filesystem;

/// `program` in a folder of $PATH (empty when absent): the lookup `stowage run --emulate` itself uses.
std::string onPath(const std::string& program) {
  auto found = findProgram(program, {});
  return found.ok() ? *found : std::string();
}

/// Why the firmware tests cannot run here (empty: they can): a missing cross toolchain, QEMU or ../shared. The RISC-V
/// toolchain is opt-in (`make deps-riscv`), so only the RISC-V tests ask for it.
std::string missingPrerequisite(bool needShared = true, bool needRiscv = false) {
  const std::pair<const char*, const char*> tools[] = {
      {"arm-none-eabi-gcc", "gcc-arm-none-eabi libnewlib-arm-none-eabi"},
      {"qemu-system-arm", "qemu-system-arm"},
      {"timeout", "coreutils"},
  };
  const std::pair<const char*, const char*> riscvTools[] = {
      {"riscv64-unknown-elf-gcc", "gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf; make deps-riscv installs it"},
      {"qemu-system-riscv32", "qemu-system-misc; make deps-riscv installs it"},
  };
  for (const auto& [program, package] : tools)
    if (onPath(program).empty()) return std::string(program) + " not found on PATH (Debian package: " + package + "); skipping";
  if (needRiscv)
    for (const auto& [program, package] : riscvTools)
      if (onPath(program).empty()) return std::string(program) + " not found on PATH (Debian package: " + package + "); skipping";
  if (needShared && sharedPath("models").empty()) return "../shared/models not found; skipping";
  return "";
}

#define SKIP_WITHOUT_FIRMWARE_TOOLS(...)                                          \
  do {                                                                            \
    if (const std::string why = missingPrerequisite(__VA_ARGS__); !why.empty()) { \
      GTEST_SKIP() << why;                                                        \
    }                                                                             \
  } while (0)

fs::path mlperf() { return sharedPath("models/mlperf-tiny"); }
fs::path mlperfModel(const std::string& name) { return mlperf() / (name + ".tflite"); }
fs::path mlperfRef(const std::string& name) { return mlperf() / "reference" / name; }

/// One `stowage run --emulate` and what it printed.
struct EmulatedRun {
  CommandResult command;
  std::string output;             ///< bytes of output_0.<format>
  uint64_t instructions = 0;      ///< "MACHINE: N instructions per inference"
  uint64_t stackPeak = 0, stackSize = 0;
  bool sizesLine = false;         ///< "firmware: text ..., data ..., bss ... bytes (RAM ... bytes)"
  std::string elf;                ///< "elf: PATH" (with --keep)
};

EmulatedRun runEmulated(const fs::path& model, const fs::path& input, const std::string& machine, const std::string& scratch,
                        const std::string& extra = "", const std::string& format = "bin") {
  EmulatedRun r;
  const fs::path work = scratchDir(scratch);
  const fs::path out = work / "out", tmp = work / "tmp";
  fs::create_directories(tmp);
  // TMPDIR of its own: the temporary build folder must be gone afterwards.
  r.command = runCommand("env TMPDIR=" + shellQuote(tmp.string()) + " " + cli() + " run " + shellQuote(model.string()) + " --input " + shellQuote(input.string()) + " --output-dir " +
                         shellQuote(out.string()) + " --format " + format + " --emulate " + machine + (extra.empty() ? "" : " " + extra));
  EXPECT_EQ(r.command.exitCode, 0) << model.filename() << " " << input.filename() << " on " << machine << ":\n"
                                   << r.command.out << r.command.err;
  r.output = readFileBytes(out / ("output_0." + format));
  EXPECT_TRUE(fs::is_empty(tmp)) << "the temporary build folder was left in " << tmp;
  std::smatch m;
  const std::regex counts(machine + ": ([0-9]+) instructions per inference, stack peak ([0-9]+) of ([0-9]+) bytes");
  if (std::regex_search(r.command.out, m, counts)) {
    r.instructions = std::stoull(m[1]);
    r.stackPeak = std::stoull(m[2]);
    r.stackSize = std::stoull(m[3]);
  }
  r.sizesLine = std::regex_search(r.command.out, std::regex("firmware: text [0-9]+, data [0-9]+, bss [0-9]+ bytes \\(RAM [0-9]+ bytes\\)"));
  if (std::regex_search(r.command.out, m, std::regex("elf: ([^\n]+)"))) r.elf = m[1];
  if (r.command.exitCode == 0) fs::remove_all(work);
  return r;
}

/// The reference inputs of an MLPerf Tiny model: "0".."3", then "sample" when present.
std::vector<std::string> referenceInputs(const std::string& name) {
  std::vector<std::string> ks;
  for (const char* k : {"0", "1", "2", "3", "sample"})
    if (fs::exists(mlperfRef(name) / ("input_" + std::string(k) + ".bin"))) ks.push_back(k);
  return ks;
}

/// Runs `name` on reference input k on `machine` and checks output_k.bin byte for byte and the printed counts.
void expectReferenceOutput(const std::string& name, const std::string& k, const std::string& machine) {
  SCOPED_TRACE(name + " input_" + k + " on " + machine);
  const std::string want = readFileBytes(mlperfRef(name) / ("output_" + k + ".bin"));
  ASSERT_FALSE(want.empty());
  const EmulatedRun r = runEmulated(mlperfModel(name), mlperfRef(name) / ("input_" + k + ".bin"), machine, "fw_" + machine + "_" + name + "_" + k);
  ASSERT_EQ(r.command.exitCode, 0);
  EXPECT_TRUE(r.output == want) << "output differs from TFLM's (" << r.output.size() << " vs " << want.size() << " bytes)";
  EXPECT_GT(r.instructions, 0u) << "no instruction count printed:\n" << r.command.out;
  EXPECT_GT(r.stackPeak, 0u);
  EXPECT_LT(r.stackPeak, r.stackSize);
  EXPECT_TRUE(r.sizesLine) << r.command.out;
}

// ---------------------------------------------------------------------------------------------------------------
// 1. Every MLPerf Tiny int8 model on every reference input on the Cortex-M4F (one test per model).

class FirmwareMlperfTinyOnMps2An386 : public ::testing::TestWithParam<std::string> {};

TEST_P(FirmwareMlperfTinyOnMps2An386, MatchesTflmOnEveryReferenceInput) {
  SKIP_WITHOUT_FIRMWARE_TOOLS();
  const std::string name = GetParam();
  const std::vector<std::string> ks = referenceInputs(name);
  EXPECT_GE(ks.size(), 4u);
  for (const std::string& k : ks) expectReferenceOutput(name, k, "mps2-an386");
}

INSTANTIATE_TEST_SUITE_P(Firmware, FirmwareMlperfTinyOnMps2An386,
                         ::testing::Values("pretrainedResnet_quant", "kws_ref_model", "model_ToyCar_quant_fullint_micro",
                                           "model_ToyCar_quant_fullint_micro_intio"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// ---------------------------------------------------------------------------------------------------------------
// 2. RV32IMAC (QEMU virt, -bios none).

TEST(FirmwareRiscv32Virt, ResNet8MatchesTflm) {
  SKIP_WITHOUT_FIRMWARE_TOOLS(true, true);
  expectReferenceOutput("pretrainedResnet_quant", "1", "riscv32-virt");
}

TEST(FirmwareRiscv32Virt, DsCnnMatchesTflm) {
  SKIP_WITHOUT_FIRMWARE_TOOLS(true, true);
  expectReferenceOutput("kws_ref_model", "sample", "riscv32-virt");
}

// ---------------------------------------------------------------------------------------------------------------
// 4. Cortex-M55 (MPS3 AN547: ITCM, SRAM, DTCM).

TEST(FirmwareMps3An547, DsCnnMatchesTflm) {
  SKIP_WITHOUT_FIRMWARE_TOOLS();
  expectReferenceOutput("kws_ref_model", "0", "mps3-an547");
}

// The Helium (MVE) kernels on the im2col, border and 2x2 paths of ResNet-8's convolutions.
TEST(FirmwareMps3An547, ResNet8MatchesTflm) {
  SKIP_WITHOUT_FIRMWARE_TOOLS();
  expectReferenceOutput("pretrainedResnet_quant", "2", "mps3-an547");
}

// ---------------------------------------------------------------------------------------------------------------
// Per-layer instructions (--profile-layers): one row per CPU layer with its MACs; the rows add up to the model's MACs
// and, within the counter's resolution per layer, to the whole inference; the outputs do not change.

TEST(FirmwareProfileLayers, DsCnnLayersAddUpToTheInference) {
  SKIP_WITHOUT_FIRMWARE_TOOLS();
  const std::string want = readFileBytes(mlperfRef("kws_ref_model") / "output_0.bin");
  const EmulatedRun r = runEmulated(mlperfModel("kws_ref_model"), mlperfRef("kws_ref_model") / "input_0.bin", "mps2-an386",
                                    "fw_profile_layers", "--profile-layers");
  ASSERT_EQ(r.command.exitCode, 0);
  EXPECT_TRUE(r.output == want);
  const std::regex row("\\n([A-Z_0-9]+) +([0-9]+) +([0-9]+) +([0-9.]+|-) +[0-9.]+%");
  uint64_t instructions = 0, macs = 0;
  int rows = 0, convs = 0;
  for (auto it = std::sregex_iterator(r.command.out.begin(), r.command.out.end(), row); it != std::sregex_iterator(); ++it) {
    ++rows;
    instructions += std::stoull((*it)[2]);
    macs += std::stoull((*it)[3]);
    if ((*it)[1].str().rfind("CONV_2D", 0) == 0 || (*it)[1].str().rfind("DEPTHWISE_CONV_2D", 0) == 0) {
      ++convs;
      EXPECT_GT(std::stoull((*it)[3]), 0u) << (*it)[1];
    }
  }
  EXPECT_EQ(convs, 9) << r.command.out;  // DS-CNN: one convolution, four depthwise + pointwise pairs
  EXPECT_GE(rows, 12) << r.command.out;
  EXPECT_EQ(macs, 2656768u) << r.command.out;
  // Each layer is rounded to the counter's tick (40 instructions on MPS2) and the readings cost a few hundred.
  EXPECT_NEAR(static_cast<double>(instructions), static_cast<double>(r.instructions), 0.02 * static_cast<double>(r.instructions))
      << r.command.out;
}

// ---------------------------------------------------------------------------------------------------------------
// 3 and 6. The cortex-m7 board (DTCM static workspace pool at a base, ITCM constant pool copied from flash at boot)
// moved onto mps2-an500, checked in the kept ELF against the kept linker script.

/// The parts of a 32-bit little-endian ELF file these tests look at.
struct Elf32 {
  struct Section {
    std::string name;
    uint32_t type = 0, flags = 0, addr = 0, offset = 0, size = 0;
  };
  struct Segment {
    uint32_t type = 0, offset = 0, vaddr = 0, paddr = 0, filesz = 0, memsz = 0;
  };
  std::vector<Section> sections;
  std::vector<Segment> segments;
  std::map<std::string, uint32_t> symbols;

  const Section* section(const std::string& name) const {
    for (const Section& s : sections)
      if (s.name == name) return &s;
    return nullptr;
  }
};

constexpr uint32_t kShtSymtab = 2, kShtNobits = 8, kShtProgbits = 1, kPtLoad = 1;

std::optional<Elf32> readElf32(const fs::path& path, std::string* why) {
  const std::string b = readFileBytes(path);
  auto u8 = [&](size_t at) -> uint32_t { return at < b.size() ? static_cast<uint8_t>(b[at]) : 0; };
  auto u16 = [&](size_t at) -> uint32_t { return u8(at) | u8(at + 1) << 8; };
  auto u32 = [&](size_t at) -> uint32_t { return u16(at) | u16(at + 2) << 16; };
  auto cstr = [&](size_t at) { return at < b.size() ? std::string(b.c_str() + at) : std::string(); };
  if (b.size() < 52 || b.compare(0, 4, "\x7f" "ELF") != 0 || b[4] != 1 || b[5] != 1) {
    *why = path.string() + " is not a 32-bit little-endian ELF file";
    return std::nullopt;
  }
  Elf32 e;
  const uint32_t phoff = u32(28), shoff = u32(32), phentsize = u16(42), phnum = u16(44), shentsize = u16(46), shnum = u16(48),
                 shstrndx = u16(50);
  if (shentsize < 40 || shoff + uint64_t{shnum} * shentsize > b.size() || shstrndx >= shnum || phoff + uint64_t{phnum} * phentsize > b.size()) {
    *why = path.string() + " has damaged header tables";
    return std::nullopt;
  }
  const uint32_t names = u32(shoff + shstrndx * shentsize + 16);
  std::vector<uint32_t> links;
  for (uint32_t i = 0; i < shnum; ++i) {
    const size_t h = shoff + size_t{i} * shentsize;
    Elf32::Section s;
    s.name = cstr(names + u32(h));
    s.type = u32(h + 4);
    s.flags = u32(h + 8);
    s.addr = u32(h + 12);
    s.offset = u32(h + 16);
    s.size = u32(h + 20);
    links.push_back(u32(h + 24));
    e.sections.push_back(s);
  }
  for (uint32_t i = 0; i < phnum; ++i) {
    const size_t h = phoff + size_t{i} * phentsize;
    e.segments.push_back({u32(h), u32(h + 4), u32(h + 8), u32(h + 12), u32(h + 16), u32(h + 20)});
  }
  for (size_t i = 0; i < e.sections.size(); ++i) {
    const Elf32::Section& symtab = e.sections[i];
    if (symtab.type != kShtSymtab || links[i] >= e.sections.size()) continue;
    const uint32_t strtab = e.sections[links[i]].offset;
    for (uint32_t at = symtab.offset; at + 16 <= symtab.offset + symtab.size; at += 16) {
      const std::string name = cstr(strtab + u32(at));
      if (!name.empty()) e.symbols[name] = u32(at + 4);
    }
  }
  return e;
}

/// A MEMORY region of a linker script.
struct Region {
  uint64_t origin = 0, length = 0;
  bool contains(uint64_t lo, uint64_t hi) const { return origin <= lo && lo <= hi && hi <= origin + length; }
};

std::map<std::string, Region> memoryRegions(const std::string& script) {
  std::map<std::string, Region> out;
  static const std::regex line("([A-Za-z_][A-Za-z0-9_]*)\\s*\\([a-z]+\\)\\s*:\\s*ORIGIN\\s*=\\s*(0x[0-9A-Fa-f]+)\\s*,\\s*LENGTH\\s*=\\s*(0x[0-9A-Fa-f]+)");
  for (auto it = std::sregex_iterator(script.begin(), script.end(), line); it != std::sregex_iterator(); ++it)
    out[(*it)[1]] = {std::stoull((*it)[2].str(), nullptr, 16), std::stoull((*it)[3].str(), nullptr, 16)};
  return out;
}

/// Output sections the linker script marks (NOLOAD).
std::vector<std::string> noloadSections(const std::string& script) {
  std::vector<std::string> out;
  static const std::regex head("\\n\\s*(\\.[A-Za-z0-9_.]+)[^\\n{]*\\(NOLOAD\\)\\s*:");
  for (auto it = std::sregex_iterator(script.begin(), script.end(), head); it != std::sregex_iterator(); ++it) out.push_back((*it)[1]);
  return out;
}

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%08llX", static_cast<unsigned long long>(v));
  return buf;
}

TEST(FirmwareCortexM7Board, ResNet8OnMps2An500KeepsEachPoolInItsMemory) {
  SKIP_WITHOUT_FIRMWARE_TOOLS();
  const std::string name = "pretrainedResnet_quant";
  const fs::path work = scratchDir("fw_cortex_m7_resnet");
  const fs::path keep = work / "build";
  const fs::path board = fs::path(STOWAGE_SOURCE_DIR) / "examples/boards/cortex-m7.toml";
  const EmulatedRun r = runEmulated(mlperfModel(name), mlperfRef(name) / "input_2.bin", "mps2-an500", "fw_cortex_m7_resnet_run",
                                    "--board " + shellQuote(board.string()) + " --keep " + shellQuote(keep.string()));
  ASSERT_EQ(r.command.exitCode, 0);
  EXPECT_TRUE(r.output == readFileBytes(mlperfRef(name) / "output_2.bin")) << "output differs from TFLM's";
  EXPECT_GT(r.instructions, 0u) << r.command.out;
  // The board's memories are moved onto the machine, and the run says so.
  EXPECT_NE(r.command.out.find("note: mps2-an500: memory 'flash'"), std::string::npos) << r.command.out;
  EXPECT_EQ(r.elf, (keep / "net.elf").string());
  for (const char* f : {"net.elf", "net.ld", "net.map", "src/main.c"}) EXPECT_TRUE(fs::exists(keep / f)) << f << " not kept";

  const std::string script = readFileBytes(keep / "net.ld");
  const std::map<std::string, Region> regions = memoryRegions(script);
  for (const char* m : {"FLASH", "ITCM", "DTCM", "AXI_SRAM", "SRAM_D2"}) ASSERT_EQ(regions.count(m), 1u) << m << " not in net.ld:\n" << script;
  std::string why;
  const std::optional<Elf32> elf = readElf32(keep / "net.elf", &why);
  ASSERT_TRUE(elf) << why;

  // (3) DTCM: the static workspace pool starts at the DTCM region's origin, and takes no bytes in the file.
  ASSERT_EQ(elf->symbols.count("__stowage_pool_dtcm_start"), 1u);
  EXPECT_EQ(elf->symbols.at("__stowage_pool_dtcm_start"), regions.at("DTCM").origin)
      << hex(elf->symbols.at("__stowage_pool_dtcm_start")) << " vs DTCM ORIGIN " << hex(regions.at("DTCM").origin);
  const Elf32::Section* dtcm = elf->section(".dtcm");
  ASSERT_NE(dtcm, nullptr);
  EXPECT_EQ(dtcm->type, kShtNobits);
  EXPECT_GT(dtcm->size, 0u) << "the plan puts activations in DTCM";
  EXPECT_TRUE(regions.at("DTCM").contains(dtcm->addr, uint64_t{dtcm->addr} + dtcm->size)) << hex(dtcm->addr);
  EXPECT_EQ(elf->symbols.at("__stowage_pool_dtcm_end") - elf->symbols.at("__stowage_pool_dtcm_start"), dtcm->size);

  // (3) ITCM: the constant pool runs in ITCM and is loaded from FLASH (its load address, from the symbol and from the
  // program header that carries it, is inside FLASH).
  const Elf32::Section* itcm = elf->section(".itcm");
  ASSERT_NE(itcm, nullptr);
  EXPECT_GT(itcm->size, 0u) << "the plan puts constants in ITCM";
  EXPECT_TRUE(regions.at("ITCM").contains(itcm->addr, uint64_t{itcm->addr} + itcm->size))
      << ".itcm at " << hex(itcm->addr) << " is not inside ITCM " << hex(regions.at("ITCM").origin);
  EXPECT_EQ(elf->symbols.at("__stowage_pool_itcm_start"), itcm->addr);
  ASSERT_EQ(elf->symbols.count("__stowage_pool_itcm_load"), 1u);
  const uint32_t load = elf->symbols.at("__stowage_pool_itcm_load");
  EXPECT_TRUE(regions.at("FLASH").contains(load, uint64_t{load} + itcm->size)) << ".itcm loads from " << hex(load) << ", outside FLASH";
  bool carried = false;
  for (const Elf32::Segment& s : elf->segments) {
    if (s.type != kPtLoad || s.filesz == 0 || itcm->offset < s.offset || itcm->offset >= s.offset + s.filesz) continue;
    carried = true;
    EXPECT_EQ(s.paddr + (itcm->offset - s.offset), load) << "the segment carrying .itcm loads it elsewhere";
    EXPECT_EQ(s.vaddr + (itcm->offset - s.offset), itcm->addr);
  }
  EXPECT_TRUE(carried) << "no loadable segment carries .itcm";

  // (6) No zero-filled pool in the image: workspace pools, .bss and the stack are NOBITS (as is every section the
  // script marks NOLOAD), no loadable segment holds file bytes at their addresses; the constant pools are PROGBITS.
  const std::vector<std::string> noload = noloadSections(script);
  for (const char* s : {".dtcm", ".stowage.sram", ".bss", ".stack"}) {
    SCOPED_TRACE(s);
    EXPECT_NE(std::find(noload.begin(), noload.end(), s), noload.end()) << "not NOLOAD in net.ld";
    const Elf32::Section* sec = elf->section(s);
    ASSERT_NE(sec, nullptr);
    EXPECT_EQ(sec->type, kShtNobits);
  }
  for (const std::string& s : noload) {
    const Elf32::Section* sec = elf->section(s);
    if (!sec) continue;
    EXPECT_EQ(sec->type, kShtNobits) << s << " is NOLOAD in net.ld but has file bytes";
    for (const Elf32::Segment& seg : elf->segments) {
      if (seg.type != kPtLoad || seg.filesz == 0 || sec->size == 0) continue;
      EXPECT_FALSE(sec->addr < seg.vaddr + seg.filesz && seg.vaddr < sec->addr + sec->size)
          << s << " (" << hex(sec->addr) << ", " << sec->size << " bytes) lies in a loadable segment's file bytes at " << hex(seg.vaddr);
    }
  }
  for (const char* s : {".itcm", ".rodata.flash"}) {
    const Elf32::Section* sec = elf->section(s);
    ASSERT_NE(sec, nullptr) << s;
    EXPECT_EQ(sec->type, kShtProgbits) << s;
  }
  const Elf32::Section* flashPool = elf->section(".rodata.flash");
  EXPECT_TRUE(regions.at("FLASH").contains(flashPool->addr, uint64_t{flashPool->addr} + flashPool->size)) << hex(flashPool->addr);
  // The loadable segments carry the allocated PROGBITS sections and nothing else (up to alignment padding): no zeros for
  // the DTCM pool (tens of KiB) or the 16 KiB stack.
  uint64_t progbits = 0, fileBytes = 0, loads = 0;
  for (const Elf32::Section& s : elf->sections)
    if ((s.flags & 2u) && s.type != kShtNobits) progbits += s.size;
  for (const Elf32::Segment& s : elf->segments)
    if (s.type == kPtLoad) fileBytes += s.filesz, ++loads;
  EXPECT_GE(fileBytes, progbits);
  EXPECT_LE(fileBytes, progbits + 64 * loads) << "loadable segments carry " << fileBytes << " bytes for " << progbits << " bytes of PROGBITS";
  fs::remove_all(work);
}

// ---------------------------------------------------------------------------------------------------------------
// 5. A float ONNX model on the Cortex-M7 (hard float): within 1e-4 of the reference.

TEST(FirmwareOnnxFloat, Mnist8OnMps2An500MatchesReference) {
  SKIP_WITHOUT_FIRMWARE_TOOLS();
  const fs::path dir = sharedPath("models/onnx/mnist-8");
  if (dir.empty()) GTEST_SKIP() << "../shared/models/onnx/mnist-8 not found; skipping";
  const fs::path data = dir / "test_data_set_0";
  const EmulatedRun r = runEmulated(dir / "model.onnx", data / "input_0.pb", "mps2-an500", "fw_mnist8", "", "pb");
  ASSERT_EQ(r.command.exitCode, 0);
  EXPECT_GT(r.instructions, 0u);
  const fs::path got = scratchDir("fw_mnist8_out") / "output_0.pb";
  writeFileBytes(got, r.output);
  auto want = readTensorFile((data / "output_0.pb").string());
  auto have = readTensorFile(got.string());
  ASSERT_TRUE(want.ok()) << want.error().render();
  ASSERT_TRUE(have.ok()) << have.error().render();
  ASSERT_EQ(have->dtype, DType::Float32);
  ASSERT_EQ(have->shape, want->shape);
  ASSERT_EQ(have->data.size(), want->data.size());
  const size_t n = want->data.size() / sizeof(float);
  ASSERT_GT(n, 0u);
  for (size_t i = 0; i < n; ++i) {
    float a, b;
    std::memcpy(&a, have->data.data() + i * sizeof(float), sizeof a);
    std::memcpy(&b, want->data.data() + i * sizeof(float), sizeof b);
    EXPECT_LE(std::fabs(a - b), 1e-4 * std::max(1.0f, std::fabs(b))) << "element " << i << ": " << a << " vs " << b;
  }
  fs::remove_all(got.parent_path());
}

// ---------------------------------------------------------------------------------------------------------------
// 7. Firmware projects: `stowage compile --project` on the MPS2 AN386 board (maps onto its QEMU machine unchanged, so
// the project has a run target).

/// Writes DS-CNN from the zoo and compiles it with --project into work/P; returns the project folder (empty on failure).
fs::path dsCnnProject(const fs::path& work) {
  const fs::path model = work / "ds-cnn.onnx";
  auto z = runCommand(zoo() + " write ds-cnn -o " + shellQuote(model.string()));
  EXPECT_EQ(z.exitCode, 0) << z.err;
  if (z.exitCode != 0) return {};
  const fs::path project = work / "P";
  auto c = runCommand(cli() + " compile " + shellQuote(model.string()) + " -o " + shellQuote((work / "out").string()) + " --board " +
                      shellQuote((fs::path(STOWAGE_SOURCE_DIR) / "examples/boards/mps2-an386.toml").string()) + " --project " +
                      shellQuote(project.string()));
  EXPECT_EQ(c.exitCode, 0) << c.out << c.err;
  if (c.exitCode != 0) return {};
  for (const char* f : {"net.ld", "net_sections.ld", "net_memory.ld"}) EXPECT_TRUE(fs::exists(work / "out" / f)) << "out/" << f;
  for (const char* f : {"CMakeLists.txt", "toolchain-arm-none-eabi.cmake", "stowage.cmake", "net.ld", "src/main.c", "model/net.h"})
    EXPECT_TRUE(fs::exists(project / f)) << "P/" << f;
  return project;
}

std::string generatorFlag() { return onPath("ninja").empty() ? "" : " -G Ninja"; }

TEST(FirmwareProject, DsCnnProjectBuildsRunsOnQemuAndFlashes) {
  SKIP_WITHOUT_FIRMWARE_TOOLS(false);
  if (onPath("cmake").empty()) GTEST_SKIP() << "cmake not found on PATH (Debian package: cmake); skipping";
  const fs::path work = scratchDir("fw_project");
  const fs::path p = dsCnnProject(work);
  ASSERT_FALSE(p.empty());

  auto configure = runCommand("cmake -S " + shellQuote(p.string()) + " -B " + shellQuote((p / "b").string()) + generatorFlag());
  ASSERT_EQ(configure.exitCode, 0) << configure.out << configure.err;
  auto build = runCommand("cmake --build " + shellQuote((p / "b").string()));
  ASSERT_EQ(build.exitCode, 0) << build.out << build.err;
  EXPECT_TRUE(fs::exists(p / "b" / "net.elf"));
  std::string why;
  EXPECT_TRUE(readElf32(p / "b" / "net.elf", &why)) << why;

  auto run = runCommand("cmake --build " + shellQuote((p / "b").string()) + " --target run");
  ASSERT_EQ(run.exitCode, 0) << run.out << run.err;
  // QEMU writes the semihosting console to its stderr.
  const std::string console = run.out + run.err;
  EXPECT_NE(console.find("output '"), std::string::npos) << console;
  EXPECT_NE(console.find("instructions:"), std::string::npos) << console;

  // flash, with echo standing in for OpenOCD, in a second build folder.
  const fs::path b2 = p / "b2";
  auto configure2 = runCommand("cmake -S " + shellQuote(p.string()) + " -B " + shellQuote(b2.string()) + generatorFlag() +
                               " -DOPENOCD_EXECUTABLE=echo " + shellQuote("-DOPENOCD_CONFIG=-f interface/stlink.cfg -f target/stm32h7x.cfg"));
  ASSERT_EQ(configure2.exitCode, 0) << configure2.out << configure2.err;
  auto flash = runCommand("cmake --build " + shellQuote(b2.string()) + " --target flash");
  ASSERT_EQ(flash.exitCode, 0) << flash.out << flash.err;
  const std::string want = "-f interface/stlink.cfg -f target/stm32h7x.cfg -c program " + (b2 / "net.elf").string() + " verify reset exit";
  EXPECT_NE(flash.out.find(want), std::string::npos) << "expected `" << want << "` in:\n" << flash.out;
  fs::remove_all(work);
}

TEST(FirmwareProject, StowageCmakeBuildsTheModelLibraryInAnotherProject) {
  SKIP_WITHOUT_FIRMWARE_TOOLS(false);
  if (onPath("cmake").empty()) GTEST_SKIP() << "cmake not found on PATH (Debian package: cmake); skipping";
  const fs::path work = scratchDir("fw_project_include");
  const fs::path p = dsCnnProject(work);
  ASSERT_FALSE(p.empty());
  const fs::path app = work / "app";
  fs::create_directories(app);
  writeFileBytes(app / "CMakeLists.txt", "cmake_minimum_required(VERSION 3.16)\nproject(existing_firmware C)\ninclude(\"" +
                                        (p / "stowage.cmake").string() +
                                        "\")\nadd_library(app STATIC app.c)\ntarget_link_libraries(app PRIVATE net_model)\n");
  writeFileBytes(app / "app.c", "#include \"net.h\"\nint app_status(void) { return NET_OK; }\n");
  auto configure = runCommand("cmake -S " + shellQuote(app.string()) + " -B " + shellQuote((app / "b").string()) + generatorFlag() +
                              " -DCMAKE_TOOLCHAIN_FILE=" + shellQuote((p / "toolchain-arm-none-eabi.cmake").string()));
  ASSERT_EQ(configure.exitCode, 0) << configure.out << configure.err;
  EXPECT_NE(configure.out.find("arm-none-eabi-gcc"), std::string::npos) << "not the cross compiler:\n" << configure.out;
  auto build = runCommand("cmake --build " + shellQuote((app / "b").string()) + " --target app");
  ASSERT_EQ(build.exitCode, 0) << build.out << build.err;
  ASSERT_TRUE(fs::exists(app / "b" / "libnet_model.a"));
  // An Arm library: the first member's ELF header says EM_ARM (40).
  auto machine = runCommand("arm-none-eabi-readelf -h " + shellQuote((app / "b" / "libnet_model.a").string()));
  EXPECT_NE(machine.out.find("Machine:                           ARM"), std::string::npos) << machine.out;
  fs::remove_all(work);
}

// ---------------------------------------------------------------------------------------------------------------
// 8. Bad boards and flags: exit code 2, a clear message on stderr, no output folder.

/// A small Cortex board with memories; `memories` and `pools` are TOML appended after [device].
std::string boardText(const std::string& cpu, const std::string& memories, const std::string& pools) {
  return "name = \"fw-test\"\n\n[device]\ncpu = \"" + cpu + "\"\nflash = \"flash\"\nram = \"sram\"\n\n" + memories + "\n" + pools;
}

const char* kMemories = R"([[memories]]
name = "flash"
base = 0x00000000
size = "1MiB"
kind = "flash"

[[memories]]
name = "sram"
base = 0x20000000
size = "256KiB"
kind = "ram"

[[memories]]
name = "sram2"
base = 0x20040000
size = "128KiB"
kind = "ram"
)";

std::string pools(const std::string& activationSize) {
  return "[[pools]]\nname = \"act\"\nsize = \"" + activationSize +
         "\"\nkind = \"workspace\"\nplacement = \"static\"\nmemory = \"sram2\"\n\n"
         "[[pools]]\nname = \"weights\"\nkind = \"constant\"\nplacement = \"static\"\nmemory = \"flash\"\n";
}

/// Runs DS-CNN with `flags` (and `env` before the command); expects exit code 2, no output folder; returns stderr.
std::string expectRejected(const std::string& scratch, const std::string& flags, const std::string& env = "") {
  const fs::path work = scratchDir(scratch);
  const fs::path out = work / "out";
  auto r = runCommand(env + cli() + " run " + shellQuote(mlperfModel("kws_ref_model").string()) + " --input " +
                      shellQuote((mlperfRef("kws_ref_model") / "input_0.bin").string()) + " --output-dir " + shellQuote(out.string()) +
                      " --format bin " + flags);
  EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
  EXPECT_FALSE(fs::exists(out)) << "an output folder was left behind";
  EXPECT_NE(r.err.find("error: "), std::string::npos) << r.err;
  return r.err;
}

/// Writes `text` as work/<name>.toml; checks that `good` (the same board without the defect) is accepted by `compile`.
fs::path writeBoard(const std::string& scratch, const std::string& text, const std::string& good, const std::string& emulate) {
  const fs::path work = scratchDir(scratch + "_boards");
  writeFileBytes(work / "good.toml", good);
  auto ok = runCommand(cli() + " compile " + shellQuote(mlperfModel("kws_ref_model").string()) + " -o " + shellQuote((work / "out").string()) +
                       " --board " + shellQuote((work / "good.toml").string()) + " --emulate " + emulate);
  EXPECT_EQ(ok.exitCode, 0) << "the board without the defect is rejected too:\n" << ok.err;
  writeFileBytes(work / "board.toml", text);
  return work / "board.toml";
}

TEST(FirmwareBadInput, OverlappingMemoriesNameBoth) {
  if (sharedPath("models/mlperf-tiny").empty()) GTEST_SKIP() << "../shared/models/mlperf-tiny not found; skipping";
  std::string overlapping = kMemories;
  overlapping.replace(overlapping.find("base = 0x20040000"), 17, "base = 0x2003F000");
  const fs::path board = writeBoard("fw_bad_overlap", boardText("cortex-m4", overlapping, pools("64KiB")),
                                    boardText("cortex-m4", kMemories, pools("64KiB")), "mps2-an386");
  const std::string err = expectRejected("fw_bad_overlap", "--board " + shellQuote(board.string()) + " --emulate mps2-an386");
  EXPECT_NE(err.find("overlaps"), std::string::npos) << err;
  EXPECT_NE(err.find("'sram'"), std::string::npos) << err;
  EXPECT_NE(err.find("'sram2'"), std::string::npos) << err;
  EXPECT_NE(err.find("board.toml:"), std::string::npos) << "no file:line location: " << err;
}

TEST(FirmwareBadInput, PoolLargerThanItsMemory) {
  if (sharedPath("models/mlperf-tiny").empty()) GTEST_SKIP() << "../shared/models/mlperf-tiny not found; skipping";
  const fs::path board = writeBoard("fw_bad_pool_size", boardText("cortex-m4", kMemories, pools("256KiB")),
                                    boardText("cortex-m4", kMemories, pools("64KiB")), "mps2-an386");
  const std::string err = expectRejected("fw_bad_pool_size", "--board " + shellQuote(board.string()) + " --emulate mps2-an386");
  EXPECT_NE(err.find("pool 'act'"), std::string::npos) << err;
  EXPECT_NE(err.find("'sram2'"), std::string::npos) << err;
  EXPECT_NE(err.find("larger"), std::string::npos) << err;
}

TEST(FirmwareBadInput, UnknownCpuSuggestsTheNearestName) {
  if (sharedPath("models/mlperf-tiny").empty()) GTEST_SKIP() << "../shared/models/mlperf-tiny not found; skipping";
  const fs::path board = writeBoard("fw_bad_cpu", boardText("cortex-m77", kMemories, pools("64KiB")),
                                    boardText("cortex-m7", kMemories, pools("64KiB")), "mps2-an500");
  const std::string err = expectRejected("fw_bad_cpu", "--board " + shellQuote(board.string()) + " --emulate mps2-an500");
  EXPECT_NE(err.find("unknown CPU"), std::string::npos) << err;
  EXPECT_NE(err.find("did you mean 'cortex-m7'"), std::string::npos) << err;
}

TEST(FirmwareBadInput, UnknownMachineListsTheMachines) {
  if (sharedPath("models/mlperf-tiny").empty()) GTEST_SKIP() << "../shared/models/mlperf-tiny not found; skipping";
  const std::string err = expectRejected("fw_bad_machine", "--emulate nosuchmachine");
  EXPECT_NE(err.find("nosuchmachine"), std::string::npos) << err;
  for (const char* m : {"mps2-an386", "mps2-an500", "mps3-an547", "riscv32-virt"}) EXPECT_NE(err.find(m), std::string::npos) << m << ": " << err;
}

TEST(FirmwareBadInput, CortexM7BoardOnTheCortexM4MachineSuggestsMps2An500) {
  if (sharedPath("models/mlperf-tiny").empty()) GTEST_SKIP() << "../shared/models/mlperf-tiny not found; skipping";
  const fs::path board = fs::path(STOWAGE_SOURCE_DIR) / "examples/boards/cortex-m7.toml";
  const std::string err = expectRejected("fw_bad_cpu_machine", "--board " + shellQuote(board.string()) + " --emulate mps2-an386");
  EXPECT_NE(err.find("cortex-m7"), std::string::npos) << err;
  EXPECT_NE(err.find("mps2-an500"), std::string::npos) << err;
}

TEST(FirmwareBadInput, AcceleratorBoardCannotBeEmulated) {
  if (sharedPath("models/mlperf-tiny").empty()) GTEST_SKIP() << "../shared/models/mlperf-tiny not found; skipping";
  const fs::path board = fs::path(STOWAGE_SOURCE_DIR) / "examples/boards/gemmini-like.toml";
  const std::string err = expectRejected("fw_bad_accel", "--board " + shellQuote(board.string()) + " --emulate mps2-an386");
  EXPECT_NE(err.find("accelerator"), std::string::npos) << err;
  EXPECT_NE(err.find("gemmini-like.toml"), std::string::npos) << err;
}

TEST(FirmwareBadInput, ProfileLayersWithoutEmulateSaysToAddIt) {
  if (sharedPath("models/mlperf-tiny").empty()) GTEST_SKIP() << "../shared/models/mlperf-tiny not found; skipping";
  const std::string err = expectRejected("fw_bad_profile", "--profile-layers");
  EXPECT_NE(err.find("--emulate"), std::string::npos) << err;
}

TEST(FirmwareBadInput, MissingCrossCompilerNamesTheDebianPackage) {
  SKIP_WITHOUT_FIRMWARE_TOOLS();
  // PATH holds `timeout` and QEMU only: the run finds no arm-none-eabi-gcc.
  const fs::path bin = scratchDir("fw_bad_toolchain_bin");
  for (const char* program : {"timeout", "qemu-system-arm"}) fs::create_symlink(onPath(program), bin / program);
  const std::string err =
      expectRejected("fw_bad_toolchain", "--emulate mps2-an386", "env PATH=" + shellQuote(bin.string() + ":/nonexistent") + " ");
  EXPECT_NE(err.find("arm-none-eabi-gcc"), std::string::npos) << err;
  EXPECT_NE(err.find("gcc-arm-none-eabi"), std::string::npos) << err;
  fs::remove_all(bin);
}

}  // namespace
}  // namespace stowage::e2e
