// The machine table and the mapping of a board onto a machine (EmulatedMachine.h). Memory maps: QEMU's MPS2/MPS3
// models (Arm AN386, AN500, AN547) and its RISC-V `virt` machine, checked by running firmware on each.
#include "stowage/firmware/EmulatedMachine.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "stowage/target/ByteSize.h"
#include "stowage/target/Suggest.h"

namespace stowage {

namespace {

DeviceMemory memory(const char* name, uint64_t base, uint64_t size, MemoryKind kind) {
  DeviceMemory m;
  m.name = name;
  m.base = base;
  m.sizeBytes = size;
  m.kind = kind;
  m.origin = "emulated machine";
  return m;
}

constexpr uint64_t KiB = 1024, MiB = 1024 * 1024;

std::vector<EmulatedMachine> makeMachines() {
  std::vector<EmulatedMachine> v;
  // MPS2 AN386: ZBT SSRAM1 at 0 (code; the vector table is read there at reset), SSRAM2/3 at 0x20000000, PSRAM.
  v.push_back({"mps2-an386", "qemu-system-arm", "mps2-an386", "qemu-system-arm", "cortex-m4", "Arm MPS2 AN386, Cortex-M4F",
               {memory("code", 0x00000000, 4 * MiB, MemoryKind::Flash), memory("ram", 0x20000000, 4 * MiB, MemoryKind::Ram),
                memory("psram", 0x21000000, 16 * MiB, MemoryKind::Ram)},
               "code", "ram", 0x00000000, {}});
  v.push_back({"mps2-an500", "qemu-system-arm", "mps2-an500", "qemu-system-arm", "cortex-m7", "Arm MPS2 AN500, Cortex-M7",
               {memory("code", 0x00000000, 4 * MiB, MemoryKind::Flash), memory("ram", 0x20000000, 4 * MiB, MemoryKind::Ram),
                memory("psram", 0x60000000, 16 * MiB, MemoryKind::Ram)},
               "code", "ram", 0x00000000, {}});
  // MPS3 AN547: ITCM at 0x10000000 (also seen at 0, where VTOR points at reset), DTCM at 0x30000000, SRAM at 0x11000000.
  v.push_back({"mps3-an547", "qemu-system-arm", "mps3-an547", "qemu-system-arm", "cortex-m55", "Arm MPS3 AN547, Cortex-M55 with Helium",
               {memory("itcm", 0x10000000, 512 * KiB, MemoryKind::Flash), memory("sram", 0x11000000, 2 * MiB, MemoryKind::Ram),
                memory("dtcm", 0x30000000, 512 * KiB, MemoryKind::Ram)},
               "itcm", "dtcm", 0x10000000, {}});
  // RISC-V virt with -bios none: execution starts at 0x80000000 in DRAM (128 MiB by default); its first 4 MiB stand in
  // for flash.
  v.push_back({"riscv32-virt", "qemu-system-riscv32", "virt", "qemu-system-misc", "rv32imac", "QEMU RISC-V virt, RV32IMAC",
               {memory("flash", 0x80000000, 4 * MiB, MemoryKind::Flash), memory("ram", 0x80400000, 124 * MiB, MemoryKind::Ram)},
               "flash", "ram", 0x80000000, {"-bios", "none"}});
  return v;
}

/// The largest power of two dividing `base`, between 4 KiB and 64 KiB: where a moved memory may start so that the
/// alignment of the pools inside it is kept.
uint64_t moveAlignment(uint64_t base) {
  uint64_t a = base == 0 ? 64 * KiB : (base & (~base + 1));
  return std::clamp<uint64_t>(a, 4 * KiB, 64 * KiB);
}

struct Range {
  uint64_t lo, hi;
};

/// Address space used so far on the machine, and the search for a free place.
class MachineSpace {
 public:
  explicit MachineSpace(const EmulatedMachine& m) : machine_(m) {}

  bool isFree(uint64_t lo, uint64_t hi) const {
    return std::none_of(used_.begin(), used_.end(), [&](const Range& r) { return lo < r.hi && r.lo < hi; });
  }
  const DeviceMemory* inside(uint64_t lo, uint64_t hi) const {
    for (const auto& mm : machine_.memories)
      if (mm.contains(lo, hi)) return &mm;
    return nullptr;
  }
  void take(uint64_t lo, uint64_t hi) { used_.push_back({lo, hi}); }

  /// The lowest free place of `bytes` aligned to `align`, in a machine memory of `kind` (then in any memory).
  std::optional<uint64_t> carve(uint64_t bytes, uint64_t align, MemoryKind kind) const {
    for (int pass = 0; pass < 2; ++pass)
      for (const auto& mm : machine_.memories) {
        if (pass == 0 && mm.kind != kind) continue;
        uint64_t at = (mm.base + align - 1) / align * align;
        while (at + bytes <= mm.end()) {
          auto clash = std::find_if(used_.begin(), used_.end(), [&](const Range& r) { return at < r.hi && r.lo < at + bytes; });
          if (clash == used_.end()) return at;
          at = (clash->hi + align - 1) / align * align;
        }
      }
    return std::nullopt;
  }

 private:
  const EmulatedMachine& machine_;
  std::vector<Range> used_;
};

/// Moves every pool with a base inside [lo, hi) by `delta` (unsigned wrap-around arithmetic).
void movePools(Board& b, uint64_t lo, uint64_t hi, uint64_t delta) {
  for (MemoryPool& p : b.pools) {
    if (!p.base || *p.base < lo || *p.base >= hi) continue;
    p.base = *p.base + delta;
    for (uint64_t& bb : p.bankBases) bb += delta;
  }
}

}  // namespace

const std::vector<EmulatedMachine>& emulatedMachines() {
  static const std::vector<EmulatedMachine> machines = makeMachines();
  return machines;
}

Result<const EmulatedMachine*> findEmulatedMachine(std::string_view name) {
  std::vector<std::string> names;
  std::string list;
  for (const auto& m : emulatedMachines()) {
    if (m.name == name) return &m;
    names.push_back(m.name);
    list += fmt::format("\n  {} ({})", m.name, m.description);
  }
  return makeError("--emulate", fmt::format("unknown machine '{}'{}", name, didYouMean(name, names)), "the machines are:" + list);
}

Result<Board> boardForMachine(const Board& board, const EmulatedMachine& machine, std::vector<std::string>* remarks) {
  const std::string where = board.sourcePath.empty() ? "board '" + board.name + "'" : board.sourcePath;
  for (const Target& t : board.targets)
    if (t.kind == TargetKind::Accelerator)
      return makeError(t.origin.empty() ? where : t.origin,
                       fmt::format("target '{}' is an accelerator; {} emulates the CPU only", t.name, machine.name),
                       "run accelerator boards on the host simulator (stowage run without --emulate)");
  if (board.device && board.device->cpu.name != machine.cpu) {
    std::string fits;
    for (const auto& m : emulatedMachines())
      if (m.cpu == board.device->cpu.name) fits = m.name;
    return makeError(board.device->origin,
                     fmt::format("the board's CPU is a {} but {} emulates a {}", board.device->cpu.name, machine.name, machine.cpu),
                     fits.empty() ? std::string("no emulated machine has this CPU") : "use --emulate " + fits);
  }
  Board b = board;
  auto note = [&](const std::string& s) {
    if (remarks) remarks->push_back(s);
  };
  if (!b.device) {
    Device d;
    d.cpu = *defaultCpuSpec(machine.cpu);
    d.origin = "emulated machine " + machine.name;
    b.device = d;
  }
  b.device->qemuMachine = machine.name;
  MachineSpace space(machine);
  if (b.memories.empty()) {
    b.memories = machine.memories;
    b.device->flashMemory = machine.flashMemory;
    b.device->ramMemory = machine.ramMemory;
    for (const auto& m : b.memories) space.take(m.base, m.end());
    note(fmt::format("{}: the board describes no memories; using the machine's ({})", machine.name, [&] {
      std::string s;
      for (const auto& m : machine.memories) s += (s.empty() ? "" : ", ") + fmt::format("{} {} {}", m.name, formatAddress(m.base), formatByteSize(m.sizeBytes));
      return s;
    }()));
  } else {
    // The board's copy of each memory, moved where the machine has room.
    std::vector<bool> placed(b.memories.size(), false);
    auto moveTo = [&](size_t i, uint64_t base, const std::string& why) {
      DeviceMemory& m = b.memories[i];
      if (base != m.base) {
        note(fmt::format("{}: memory '{}' ({}) moved from {} to {} ({})", machine.name, m.name, formatByteSize(m.sizeBytes), formatAddress(m.base),
                         formatAddress(base), why));
        movePools(b, m.base, m.end(), base - m.base);
        m.base = base;
      }
      space.take(m.base, m.end());
      placed[i] = true;
    };
    for (size_t i = 0; i < b.memories.size(); ++i) {
      if (b.memories[i].name != b.device->flashMemory) continue;
      const DeviceMemory* home = space.inside(machine.bootAddress, machine.bootAddress + b.memories[i].sizeBytes);
      if (!home)
        return makeError(b.memories[i].origin, fmt::format("flash memory '{}' ({}) does not fit {}'s boot memory at {}", b.memories[i].name,
                                                           formatByteSize(b.memories[i].sizeBytes), machine.name, formatAddress(machine.bootAddress)));
      moveTo(i, machine.bootAddress, "the machine boots from there");
    }
    for (size_t i = 0; i < b.memories.size(); ++i) {
      const DeviceMemory& m = b.memories[i];
      if (!placed[i] && space.inside(m.base, m.end()) && space.isFree(m.base, m.end())) moveTo(i, m.base, "");
    }
    for (size_t i = 0; i < b.memories.size(); ++i) {
      if (placed[i]) continue;
      const DeviceMemory& m = b.memories[i];
      auto at = space.carve(m.sizeBytes, moveAlignment(m.base), m.kind);
      if (!at)
        return makeError(m.origin, fmt::format("memory '{}' ({}) finds no free room on {}", m.name, formatByteSize(m.sizeBytes), machine.name),
                         "describe smaller memories, or use a machine with more memory");
      moveTo(i, *at, "QEMU's " + machine.name + " has no memory there");
    }
  }
  // Fixed pools in no board memory: CPU-visible device memory, which must exist on the machine too.
  for (MemoryPool& p : b.pools) {
    if (p.placement != PoolPlacement::Fixed || !p.base || !p.sizeBytes || poolMemory(b, p)) continue;
    const uint64_t lo = p.bankBases.empty() ? *p.base : *std::min_element(p.bankBases.begin(), p.bankBases.end());
    uint64_t hi = *p.base + *p.sizeBytes;
    for (uint64_t bb : p.bankBases) hi = std::max(hi, bb + p.bankSizeBytes);
    if (space.inside(lo, hi) && space.isFree(lo, hi)) {
      space.take(lo, hi);
      continue;
    }
    auto at = space.carve(hi - lo, moveAlignment(lo), MemoryKind::Ram);
    if (!at) return makeError(p.origin, fmt::format("fixed pool '{}' finds no free room on {}", p.name, machine.name));
    note(fmt::format("{}: fixed pool '{}' moved from {} to {}", machine.name, p.name, formatAddress(lo), formatAddress(*at)));
    const uint64_t delta = *at - lo;
    p.base = *p.base + delta;
    for (uint64_t& bb : p.bankBases) bb += delta;
    space.take(*at, *at + (hi - lo));
  }
  for (MemoryPool& p : b.pools)
    if (p.placement == PoolPlacement::Static && p.section.empty()) p.section = ".stowage." + p.name;
  STOWAGE_TRY(validateBoard(b));
  return b;
}

}  // namespace stowage
