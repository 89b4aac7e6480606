// The device description of a board ([device], [[memories]], pool memory / load_from / base on static pools):
// every field and default of a parsed board, where pools land (poolMemory, poolLoadMemory), and each invalid
// description giving a diagnostic at the file, line and column of the offending key.
#include <gtest/gtest.h>

#include <string>

#include "BoardTestUtil.h"
#include "stowage/target/Board.h"

namespace stowage {
namespace {

using namespace stowage::testing;

/// "bad.toml:LINE:COLUMN" of the `nth` line of `text` that starts with `line`: the column of the value after
/// "= " for a key, column 1 for a table header ("[device]", "[[pools]]").
std::string at(const std::string& text, const std::string& line, int nth = 1) {
  size_t pos = 0;
  int lineNo = 1, seen = 0;
  while (pos <= text.size()) {
    const size_t eol = text.find('\n', pos);
    const std::string l = text.substr(pos, eol == std::string::npos ? std::string::npos : eol - pos);
    if (l.rfind(line, 0) == 0 && ++seen == nth) {
      const size_t eq = l.find("= ");
      const size_t col = line[0] == '[' || eq == std::string::npos ? 1 : eq + 3;
      return "bad.toml:" + std::to_string(lineNo) + ":" + std::to_string(col);
    }
    if (eol == std::string::npos) break;
    pos = eol + 1;
    ++lineNo;
  }
  ADD_FAILURE() << "no line starting with '" << line << "'";
  return "bad.toml:?";
}

/// A flash and a RAM memory (one of each: [device] flash and ram default to them) before the rest of a board.
const std::string kTwoMemories =
    "[[memories]]\nname = \"flash\"\nbase = 0x08000000\nsize = \"1MiB\"\nkind = \"flash\"\n\n"
    "[[memories]]\nname = \"ram\"\nbase = 0x20000000\nsize = \"128KiB\"\nkind = \"ram\"\n\n";

/// A board with a workspace pool (every board needs one) and the given [device] lines.
std::string withCpu(const std::string& deviceLines) {
  return "[device]\n" + deviceLines + "\n" + kTwoMemories + "[[pools]]\nname = \"act\"\n";
}

// ---- a full description: every field ----

const std::string kFull = R"(name = "dev"

[device]
cpu = "cortex-m7"
flash = "flash"
ram = "sram"
stack = "16KiB"
openocd = ["interface/stlink.cfg", "target/stm32h7x.cfg"]
qemu = "mps2-an500"

[[memories]]
name = "itcm"
base = 0x00000000
size = "64KiB"
kind = "ram"

[[memories]]
name = "flash"
base = 0x08000000
size = "2MiB"
kind = "flash"

[[memories]]
name = "dtcm"
base = 0x20000000
size = "128KiB"
kind = "ram"

[[memories]]
name = "sram"
base = 0x24000000
size = "512KiB"

[[pools]]
name = "dtcm"
size = "64KiB"
placement = "static"
base = 0x20000000

[[pools]]
name = "act"
size = "256KiB"
memory = "sram"

[[pools]]
name = "itcm"
size = "32KiB"
kind = "constant"
placement = "static"
base = 0x00000000
load_from = "flash"

[[pools]]
name = "weights"
kind = "constant"
placement = "static"

[[pools]]
name = "scratch"

[[pools]]
name = "spad"
size = "4KiB"
placement = "fixed"
base = 0x40000000

[[pools]]
name = "tables"
size = "4KiB"
kind = "constant"
placement = "static"
memory = "dtcm"
section = ".tables"
)";

TEST(Device, FullDescriptionEveryField) {
  Board b = parse(kFull);
  ASSERT_TRUE(b.device.has_value());
  const Device& d = *b.device;
  EXPECT_EQ(d.cpu.name, "cortex-m7");
  EXPECT_EQ(d.cpu.isa, IsaFamily::Arm);
  EXPECT_EQ(d.cpu.fpu, "fpv5-d16");  // the Cortex-M7's default: double-precision FPv5
  EXPECT_TRUE(d.cpu.dsp);
  EXPECT_EQ(d.cpu.mve, "");
  EXPECT_EQ(d.flashMemory, "flash");
  EXPECT_EQ(d.ramMemory, "sram");
  EXPECT_EQ(d.stackBytes, 16u << 10);
  EXPECT_EQ(d.openocdConfigs, (std::vector<std::string>{"interface/stlink.cfg", "target/stm32h7x.cfg"}));
  EXPECT_EQ(d.qemuMachine, "mps2-an500");
  EXPECT_EQ(d.origin, "good.toml:3:1");

  ASSERT_EQ(b.memories.size(), 4u);
  const DeviceMemory* flash = b.findMemory("flash");
  ASSERT_NE(flash, nullptr);
  EXPECT_EQ(flash->base, 0x08000000u);
  EXPECT_EQ(flash->sizeBytes, 2u << 20);
  EXPECT_EQ(flash->end(), 0x08200000u);
  EXPECT_EQ(flash->kind, MemoryKind::Flash);
  EXPECT_EQ(b.findMemory("itcm")->base, 0u);
  EXPECT_EQ(b.findMemory("sram")->kind, MemoryKind::Ram);  // kind defaults to ram
  EXPECT_EQ(b.memories[0].name, "itcm");                  // declaration order
  EXPECT_NE(b.memories[3].origin.find("good.toml:"), std::string::npos);

  // Static pools without a section get one of their own; a given section is kept.
  EXPECT_EQ(b.findPool("dtcm")->section, ".stowage.dtcm");
  EXPECT_EQ(b.findPool("itcm")->section, ".stowage.itcm");
  EXPECT_EQ(b.findPool("weights")->section, ".stowage.weights");
  EXPECT_EQ(b.findPool("tables")->section, ".tables");
  EXPECT_EQ(b.findPool("act")->section, "");  // user pools have none
  EXPECT_EQ(b.findPool("act")->memory, "sram");
  EXPECT_EQ(b.findPool("itcm")->loadFrom, "flash");
  EXPECT_EQ(*b.findPool("dtcm")->base, 0x20000000u);
}

TEST(Device, PoolMemoryRules) {
  Board b = parse(kFull);
  auto home = [&](const char* pool) {
    const DeviceMemory* m = poolMemory(b, *b.findPool(pool));
    return m ? m->name : std::string("(none)");
  };
  EXPECT_EQ(home("act"), "sram");       // its `memory` key
  EXPECT_EQ(home("tables"), "dtcm");    // its `memory` key
  EXPECT_EQ(home("dtcm"), "dtcm");      // the memory containing its base
  EXPECT_EQ(home("itcm"), "itcm");      // base 0 is a base too
  EXPECT_EQ(home("weights"), "flash");  // a constant pool: the device's flash memory
  EXPECT_EQ(home("scratch"), "sram");   // a workspace pool: the device's ram memory
  EXPECT_EQ(home("spad"), "(none)");    // a fixed pool outside every memory (device memory the linker does not manage)

  auto load = [&](const char* pool) {
    const DeviceMemory* m = poolLoadMemory(b, *b.findPool(pool));
    return m ? m->name : std::string("(none)");
  };
  EXPECT_EQ(load("itcm"), "flash");       // its load_from
  EXPECT_EQ(load("tables"), "flash");     // RAM-resident constants without load_from: the device's flash
  EXPECT_EQ(load("weights"), "(none)");   // already in flash
  EXPECT_EQ(load("dtcm"), "(none)");      // a workspace pool is not loaded
  EXPECT_EQ(load("act"), "(none)");
}

TEST(Device, DefaultsFromTheOnlyMemoryOfEachKind) {
  Board b = parse(withCpu("cpu = \"cortex-m4\""));
  ASSERT_TRUE(b.device.has_value());
  EXPECT_EQ(b.device->flashMemory, "flash");
  EXPECT_EQ(b.device->ramMemory, "ram");
  EXPECT_EQ(b.device->stackBytes, 8192u);
  EXPECT_TRUE(b.device->openocdConfigs.empty());
  EXPECT_EQ(b.device->qemuMachine, "");
  EXPECT_EQ(b.device->cpu.fpu, "fpv4-sp-d16");
  EXPECT_TRUE(b.device->cpu.dsp);
  EXPECT_EQ(b.device->cpu.mve, "");
  // The default constant pool lands in flash, the workspace pool in ram.
  EXPECT_EQ(poolMemory(b, *b.findPool("act"))->name, "ram");
  EXPECT_EQ(poolMemory(b, *b.findPool("weights"))->name, "flash");
}

TEST(Device, CpuFeatures) {
  // fpu = false: soft floating point.
  EXPECT_EQ(parse(withCpu("cpu = \"cortex-m4\"\nfpu = false")).device->cpu.fpu, "");
  EXPECT_EQ(parse(withCpu("cpu = \"cortex-m7\"\nfpu = \"fpv5-sp-d16\"")).device->cpu.fpu, "fpv5-sp-d16");
  Board m55 = parse(withCpu("cpu = \"cortex-m55\""));
  EXPECT_EQ(m55.device->cpu.fpu, "auto");
  EXPECT_EQ(m55.device->cpu.mve, "float");
  // Without the FPU, Helium has integer vectors only.
  Board m55soft = parse(withCpu("cpu = \"cortex-m55\"\nfpu = false"));
  EXPECT_EQ(m55soft.device->cpu.fpu, "");
  EXPECT_EQ(m55soft.device->cpu.mve, "int");
  EXPECT_EQ(parse(withCpu("cpu = \"cortex-m55\"\nmve = \"none\"")).device->cpu.mve, "");
  EXPECT_FALSE(parse(withCpu("cpu = \"cortex-m33\"\ndsp = false")).device->cpu.dsp);
  Board rv = parse(withCpu("cpu = \"rv32imac\""));
  EXPECT_EQ(rv.device->cpu.isa, IsaFamily::RiscV);
  EXPECT_EQ(rv.device->cpu.fpu, "");
  EXPECT_FALSE(rv.device->cpu.dsp);
  Board m0 = parse(withCpu("cpu = \"cortex-m0plus\""));
  EXPECT_EQ(m0.device->cpu.fpu, "");
  EXPECT_FALSE(m0.device->cpu.dsp);
  // Stating an absent feature's absence is accepted (regression: dsp = false was an error on CPUs without DSP,
  // mve = "none" on CPUs without Helium).
  EXPECT_FALSE(parse(withCpu("cpu = \"cortex-m3\"\ndsp = false")).device->cpu.dsp);
  EXPECT_FALSE(parse(withCpu("cpu = \"rv32imac\"\ndsp = false")).device->cpu.dsp);
  EXPECT_EQ(parse(withCpu("cpu = \"cortex-m4\"\nmve = \"none\"")).device->cpu.mve, "");
}

TEST(Device, MemoriesWithoutDevice) {
  // Memories alone: static pools still get sections of their own; user pools without `memory` land nowhere.
  Board b = parse(kTwoMemories + "[[pools]]\nname = \"act\"\n\n[[pools]]\nname = \"w\"\nkind = \"constant\"\nplacement = \"static\"\nmemory = \"flash\"\n");
  EXPECT_FALSE(b.device.has_value());
  EXPECT_EQ(b.findPool("w")->section, ".stowage.w");
  EXPECT_EQ(poolMemory(b, *b.findPool("w"))->name, "flash");
  EXPECT_EQ(poolMemory(b, *b.findPool("act")), nullptr);
}

TEST(Device, NoMemoriesKeepsOldBehaviour) {
  // Without [[memories]] a static pool keeps its empty section (the board files written before devices).
  Board b = parse("[[pools]]\nname = \"act\"\nplacement = \"static\"\n");
  EXPECT_EQ(b.findPool("act")->section, "");
  EXPECT_EQ(poolMemory(b, *b.findPool("act")), nullptr);
}

// ---- errors: each at FILE:LINE:COLUMN of the offending key ----

TEST(DeviceErrors, UnknownCpu) {
  // A misspelled CPU suggests the closest known one and lists them all.
  const std::string t = withCpu("cpu = \"cortex-m77\"");
  expectError(t, {at(t, "cpu ="), "[device]: unknown CPU 'cortex-m77'", "did you mean 'cortex-m7'?", "known CPUs: cortex-m0plus"});
}

TEST(DeviceErrors, MissingCpu) {
  // [device] without a cpu: reported at the table, with the list of CPUs.
  const std::string t = withCpu("qemu = \"virt\"");
  expectError(t, {at(t, "[device]"), "has no 'cpu'", "rv32imac"});
}

TEST(DeviceErrors, OverlappingMemories) {
  // Two memories sharing addresses: reported at the later one's base, naming both.
  const std::string t = kTwoMemories + "[[memories]]\nname = \"sram2\"\nbase = 0x2001F000\nsize = \"64KiB\"\n\n[[pools]]\nname = \"act\"\n";
  expectError(t, {at(t, "base = 0x2001F000"), "memory 'sram2' (0x2001F000 .. 0x2002EFFF) overlaps memory 'ram' (0x20000000 .. 0x2001FFFF)",
                  "is defined at bad.toml:7:"});
}

TEST(DeviceErrors, DuplicateMemoryName) {
  // A memory name given twice.
  const std::string t = kTwoMemories + "[[memories]]\nname = \"ram\"\nbase = 0x30000000\nsize = \"64KiB\"\n\n[[pools]]\nname = \"act\"\n";
  expectError(t, {at(t, "name = \"ram\"", 2), "memory 'ram' is defined twice"});
}

TEST(DeviceErrors, PoolLargerThanItsMemory) {
  // 256 KiB cannot fit in the 128 KiB memory its `memory` key names.
  const std::string t = withCpu("cpu = \"cortex-m4\"") + "\n[[pools]]\nname = \"big\"\nsize = \"256KiB\"\nmemory = \"ram\"\n";
  expectError(t, {at(t, "memory = \"ram\""), "pool 'big': it is larger (256KiB) than memory 'ram' (128KiB)", "at most 128KiB"});
}

TEST(DeviceErrors, PoolLargerThanDefaultMemory) {
  // Without `memory`, the default (the device's ram) is checked too, at `size`.
  const std::string t = withCpu("cpu = \"cortex-m4\"") + "\n[[pools]]\nname = \"big\"\nsize = \"1MiB\"\nplacement = \"static\"\n";
  expectError(t, {at(t, "size = \"1MiB\"", 2), "pool 'big': it is larger (1MiB) than memory 'ram' (128KiB)"});
}

TEST(DeviceErrors, StaticPoolBaseInNoMemory) {
  // A static pool is placed by the linker, so its base must be inside a described memory.
  const std::string t = withCpu("cpu = \"cortex-m4\"") + "\n[[pools]]\nname = \"tcm\"\nsize = \"4KiB\"\nplacement = \"static\"\nbase = 0x30000000\n";
  expectError(t, {at(t, "base = 0x30000000"), "pool 'tcm': its address 0x30000000 is in no memory of the board", "memories: flash ram"});
}

TEST(DeviceErrors, PoolRunsPastTheEndOfItsMemory) {
  // Starts inside `ram` but 4 KiB past its end: reported at `size`, with the size that would fit.
  const std::string t = withCpu("cpu = \"cortex-m4\"") + "\n[[pools]]\nname = \"tcm\"\nsize = \"8KiB\"\nplacement = \"static\"\nbase = 0x2001F000\n";
  expectError(t, {at(t, "size = \"8KiB\""), "pool 'tcm': its addresses 0x2001F000 .. 0x20020FFF run past the end of memory 'ram'",
                  "at most 4KiB fits"});
}

TEST(DeviceErrors, BaseOutsideTheNamedMemory) {
  // `memory` and `base` disagree: the base is in another memory (regression: reported as running past the end of
  // 'flash' with a nonsensical "at most" size).
  const std::string t = withCpu("cpu = \"cortex-m4\"") +
                        "\n[[pools]]\nname = \"tcm\"\nsize = \"4KiB\"\nkind = \"constant\"\nplacement = \"static\"\nmemory = \"flash\"\nbase = 0x20000000\n";
  expectError(t, {at(t, "base = 0x20000000", 2), "pool 'tcm': its address 0x20000000 is not in memory 'flash' (0x8000000 .. 0x80FFFFF)",
                  "that 'memory' names"});
}

TEST(DeviceErrors, FixedPoolStraddlingAMemory) {
  // A fixed pool half inside a memory: the linker would put other data over its other half.
  const std::string t = withCpu("cpu = \"cortex-m4\"") + "\n[[pools]]\nname = \"spad\"\nsize = \"8KiB\"\nplacement = \"fixed\"\nbase = 0x1FFFF000\n";
  expectError(t, {at(t, "base = 0x1FFFF000"), "pool 'spad': its addresses 0x1FFFF000 .. 0x20000FFF run over the edge of memory 'ram'"});
}

TEST(DeviceErrors, WorkspacePoolInFlash) {
  // Flash is read-only while running: no activations there.
  const std::string t = withCpu("cpu = \"cortex-m4\"") + "\n[[pools]]\nname = \"ws\"\nmemory = \"flash\"\n";
  expectError(t, {at(t, "memory = \"flash\""), "pool 'ws': a workspace pool cannot live in flash memory 'flash'", "kind \"ram\""});
}

TEST(DeviceErrors, LoadFromNamesRam) {
  // Constants are copied at boot from flash, not from another RAM.
  const std::string t = withCpu("cpu = \"cortex-m4\"") +
                        "\n[[pools]]\nname = \"w\"\nkind = \"constant\"\nplacement = \"static\"\nmemory = \"ram\"\nload_from = \"ram\"\n";
  expectError(t, {at(t, "load_from ="), "pool 'w': 'load_from' names memory 'ram', which is not kind \"flash\""});
}

TEST(DeviceErrors, LoadFromUnknownMemory) {
  // load_from naming a memory that does not exist lists the board's memories.
  const std::string t = withCpu("cpu = \"cortex-m4\"") +
                        "\n[[pools]]\nname = \"w\"\nkind = \"constant\"\nplacement = \"static\"\nmemory = \"ram\"\nload_from = \"rom\"\n";
  expectError(t, {at(t, "load_from ="), "'load_from' names memory 'rom', which does not exist", "memories of this board: flash ram"});
}

TEST(DeviceErrors, LoadFromOnWorkspacePoolOrFlashPool) {
  // Only static constant pools are copied at boot.
  const std::string t = withCpu("cpu = \"cortex-m4\"") + "\n[[pools]]\nname = \"w\"\nplacement = \"static\"\nload_from = \"flash\"\n";
  expectError(t, {at(t, "load_from ="), "'load_from' is for static constant pools"});
  // A constant pool already in flash has nothing to copy.
  const std::string u = withCpu("cpu = \"cortex-m4\"") +
                        "\n[[pools]]\nname = \"w\"\nkind = \"constant\"\nplacement = \"static\"\nload_from = \"flash\"\n";
  expectError(u, {at(u, "load_from ="), "this pool is in flash memory 'flash'"});
}

TEST(DeviceErrors, RamConstantsWithNothingToLoadFrom) {
  // No [device] (so no default flash) and no load_from: nothing holds the constants' boot copy.
  const std::string t = kTwoMemories + "[[pools]]\nname = \"act\"\n\n[[pools]]\nname = \"w\"\nkind = \"constant\"\nplacement = \"static\"\nmemory = \"ram\"\n";
  expectError(t, {at(t, "memory = \"ram\""), "pool 'w': its constants live in RAM memory 'ram' but no flash memory holds their copy for boot",
                  "load_from"});
}

TEST(DeviceErrors, DeviceFlashNamesRam) {
  // [device] flash must be a flash memory (code runs from it).
  const std::string t = withCpu("cpu = \"cortex-m4\"\nflash = \"ram\"");
  expectError(t, {at(t, "flash = \"ram\""), "[device]: 'flash' names memory 'ram', which is kind \"ram\"", "kind \"flash\""});
}

TEST(DeviceErrors, DeviceRamUnknown) {
  // A misspelled memory name in [device] suggests the closest.
  const std::string t = withCpu("cpu = \"cortex-m4\"\nram = \"rams\"");
  expectError(t, {at(t, "ram = \"rams\""), "'ram' names memory 'rams', which does not exist", "did you mean 'ram'?"});
}

TEST(DeviceErrors, AmbiguousRam) {
  // Two RAM memories and no `ram` key: which holds the stack? Reported at [device], listing the candidates.
  const std::string t = "[device]\ncpu = \"cortex-m4\"\n\n" + kTwoMemories +
                        "[[memories]]\nname = \"sram2\"\nbase = 0x30000000\nsize = \"64KiB\"\n\n[[pools]]\nname = \"act\"\n";
  expectError(t, {at(t, "[device]"), "[device]: which memory holds the stack, .data and .bss?", "say ram = \"...\", one of: ram sram2"});
}

TEST(DeviceErrors, NoFlashMemory) {
  // A [device] with memories but none of kind flash: code has nowhere to go.
  const std::string t = "[device]\ncpu = \"cortex-m4\"\n\n[[memories]]\nname = \"ram\"\nbase = 0x20000000\nsize = \"64KiB\"\n\n[[pools]]\nname = \"act\"\n";
  expectError(t, {at(t, "[device]"), "which memory holds code and read-only data?", "kind = \"flash\""});
}

TEST(DeviceErrors, MemoryKeyOnFixedPool) {
  // A fixed pool is at its base; `memory` would contradict it.
  const std::string t = withCpu("cpu = \"cortex-m4\"") +
                        "\n[[pools]]\nname = \"spad\"\nsize = \"4KiB\"\nplacement = \"fixed\"\nbase = 0x40000000\nmemory = \"ram\"\n";
  expectError(t, {at(t, "memory = \"ram\""), "pool 'spad': 'memory' is for user and static pools"});
}

TEST(DeviceErrors, MemoryKeyUnknownOrWithoutMemories) {
  // A misspelled memory suggests the closest.
  const std::string t = withCpu("cpu = \"cortex-m4\"") + "\n[[pools]]\nname = \"w\"\nmemory = \"ramm\"\n";
  expectError(t, {at(t, "memory = \"ramm\""), "'memory' names memory 'ramm', which does not exist (did you mean 'ram'?)"});
  // `memory` on a board without [[memories]].
  const std::string u = "[[pools]]\nname = \"w\"\nmemory = \"ram\"\n";
  expectError(u, {at(u, "memory ="), "but the board has no [[memories]]"});
}

TEST(DeviceErrors, StackLargerThanRam) {
  // The stack cannot exceed the memory that holds it.
  const std::string t = withCpu("cpu = \"cortex-m4\"\nstack = \"256KiB\"");
  expectError(t, {at(t, "stack ="), "[device]: the stack (256KiB) is larger than memory 'ram' (128KiB)"});
}

TEST(DeviceErrors, BadStack) {
  // A stack below 256 bytes or not 8-byte aligned.
  const std::string t = withCpu("cpu = \"cortex-m4\"\nstack = 100");
  expectError(t, {at(t, "stack ="), "'stack' must be at least 256 bytes and a multiple of 8"});
}

TEST(DeviceErrors, StaticPoolOverlapsFixedPool) {
  // A static pool placed at a base where a fixed pool already is: buffers in the two would alias.
  const std::string t = withCpu("cpu = \"cortex-m4\"") +
                        "\n[[pools]]\nname = \"spad\"\nsize = \"8KiB\"\nplacement = \"fixed\"\nbase = 0x20000000\n"
                        "\n[[pools]]\nname = \"tcm\"\nsize = \"4KiB\"\nplacement = \"static\"\nbase = 0x20001000\n";
  expectError(t, {at(t, "base = 0x20001000"), "pool 'tcm': its addresses 0x20001000 .. 0x20001FFF overlap pool 'spad' (0x20000000 .. 0x20001FFF)",
                  "pool 'spad' is defined at bad.toml:"});
}

TEST(DeviceErrors, TwoStaticPoolsOverlap) {
  // Two based static pools sharing addresses: reported once, at the later one.
  const std::string t = withCpu("cpu = \"cortex-m4\"") +
                        "\n[[pools]]\nname = \"a\"\nsize = \"8KiB\"\nplacement = \"static\"\nbase = 0x20000000\n"
                        "\n[[pools]]\nname = \"b\"\nsize = \"4KiB\"\nplacement = \"static\"\nbase = 0x20001000\n";
  expectError(t, {at(t, "base = 0x20001000"), "pool 'b': its addresses", "overlap pool 'a'"});
}

TEST(DeviceErrors, UnknownKeyInDevice) {
  // A misspelled [device] key suggests the closest.
  const std::string t = withCpu("cpu = \"cortex-m4\"\nstak = \"4KiB\"");
  expectError(t, {at(t, "stak ="), "[device]: unknown key 'stak'", "did you mean 'stack'?"});
}

TEST(DeviceErrors, UnknownKeyInMemories) {
  // A misspelled [[memories]] key suggests the closest.
  const std::string t = "[[memories]]\nname = \"ram\"\nbase = 0x20000000\nsize = \"64KiB\"\nknid = \"ram\"\n\n[[pools]]\nname = \"act\"\n";
  expectError(t, {at(t, "knid ="), "memory 'ram': unknown key 'knid'", "did you mean 'kind'?"});
}

TEST(DeviceErrors, BadMemoryTables) {
  // Missing base, a kind that is neither flash nor ram, a name that is no identifier.
  const std::string t = "[[memories]]\nname = \"ram\"\nsize = \"64KiB\"\n\n[[pools]]\nname = \"act\"\n";
  expectError(t, {at(t, "[[memories]]"), "memory 'ram': has no 'base'"});
  const std::string u = "[[memories]]\nname = \"ram\"\nbase = 0x20000000\nsize = \"64KiB\"\nkind = \"rom\"\n\n[[pools]]\nname = \"act\"\n";
  expectError(u, {at(u, "kind ="), "'kind' must be \"flash\"", "not \"rom\""});
  const std::string v = "[[memories]]\nname = \"2ram\"\nbase = 0x20000000\nsize = \"64KiB\"\n\n[[pools]]\nname = \"act\"\n";
  expectError(v, {at(v, "name ="), "memory '2ram': the name must be an identifier"});
}

TEST(DeviceErrors, CpuFeatureConflicts) {
  // The Cortex-M3 has no FPU to turn on.
  const std::string t = withCpu("cpu = \"cortex-m3\"\nfpu = true");
  expectError(t, {at(t, "fpu ="), "'cortex-m3' has no floating-point unit"});
  // An FPU name the CPU does not have.
  const std::string u = withCpu("cpu = \"cortex-m4\"\nfpu = \"fpv5-d16\"");
  expectError(u, {at(u, "fpu ="), "'cortex-m4' has no FPU called 'fpv5-d16'"});
  // RISC-V CPUs state their extensions in their name.
  const std::string v = withCpu("cpu = \"rv32imac\"\nfpu = false");
  expectError(v, {at(v, "fpu ="), "'fpu' is for Arm CPUs"});
  // Helium with floating point needs the FPU.
  const std::string w = withCpu("cpu = \"cortex-m55\"\nfpu = false\nmve = \"float\"");
  expectError(w, {at(w, "mve ="), "mve = \"float\" needs the FPU"});
  // Only the Cortex-M55 has Helium.
  const std::string x = withCpu("cpu = \"cortex-m7\"\nmve = \"int\"");
  expectError(x, {at(x, "mve ="), "'cortex-m7' has no Helium (MVE)"});
  // The Cortex-M4's DSP extension is not optional.
  const std::string y = withCpu("cpu = \"cortex-m4\"\ndsp = false");
  expectError(y, {at(y, "dsp ="), "the DSP extension cannot be left out of 'cortex-m4'"});
  // An mve value that is not one of the three words.
  const std::string z = withCpu("cpu = \"cortex-m55\"\nmve = \"yes\"");
  expectError(z, {at(z, "mve ="), "'mve' must be \"none\", \"int\" or \"float\""});
}

}  // namespace
}  // namespace stowage
