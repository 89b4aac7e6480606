// The QEMU machines generated firmware runs on (`stowage run --emulate`): each one's CPU, memory map and boot
// address, and how a board's device description is mapped onto it (boardForMachine). QEMU models no TCMs: a
// board memory the machine lacks is carved out of the machine's memory of the same kind. Stage firmware/.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "stowage/support/Diagnostic.h"
#include "stowage/target/Board.h"

namespace stowage {

struct EmulatedMachine {
  std::string name;                   ///< the --emulate spelling ("mps2-an386")
  std::string qemuBinary;             ///< "qemu-system-arm"
  std::string qemuMachine;            ///< -M value ("mps2-an386", "virt")
  std::string debianPackage;          ///< the package that ships qemuBinary
  std::string cpu;                    ///< CPU the machine emulates ("cortex-m4")
  std::string description;            ///< one line for --help and errors
  std::vector<DeviceMemory> memories; ///< its memory map: code memory (kind flash: loaded by QEMU) and RAM
  std::string flashMemory, ramMemory; ///< defaults for a board without memories
  uint64_t bootAddress = 0;           ///< where the vector table (Arm) or the entry (RISC-V) must be
  std::vector<std::string> qemuArgs;  ///< machine-specific QEMU arguments ("-bios none": no firmware before ours)
};

/// Every machine `--emulate` knows, in documentation order.
const std::vector<EmulatedMachine>& emulatedMachines();
/// The machine called `name`, or an error listing the known ones.
Result<const EmulatedMachine*> findEmulatedMachine(std::string_view name);

/// `board` as it runs on `machine`. A board without memories gets the machine's memories (and its CPU when it has no
/// [device]); otherwise the board's device flash memory is moved to the machine's boot address, each board memory that
/// lies inside a machine memory stays, and each other one (a TCM, an external RAM) is carved out of the free space of a
/// machine memory of its kind, the pools with a base in it moved along; fixed pools outside every memory likewise. Errors:
/// a CPU other than the machine's, accelerator targets (QEMU runs the CPU only), memories that do not fit. `remarks`
/// receives one line per memory moved.
Result<Board> boardForMachine(const Board& board, const EmulatedMachine& machine, std::vector<std::string>* remarks = nullptr);

}  // namespace stowage
