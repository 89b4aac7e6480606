// GNU ld linker scripts from a board's memories and pools: MEMORY regions for the memories, one output section per
// pool section (zero-filled workspace pools NOLOAD, RAM-resident constants loaded from flash with `AT>`), and for a
// board with a [device] a complete script with the vector table, code, data, stack and the boot tables that
// runtime/firmware's startup reads. Stage firmware/, after codegen (pool sizes come from the plan).
#pragma once

#include <string>

#include "stowage/plan/ProgramPlan.h"
#include "stowage/support/Diagnostic.h"
#include "stowage/target/Board.h"

namespace stowage {

/// The linker-script region of a board memory: its name in upper case ("dtcm" -> "DTCM").
std::string linkerRegionName(const DeviceMemory& memory);
/// The section generated code and the firmware main put pool `pool`'s memory in ("" when it has none): a static
/// pool's `section`; for a user workspace pool that lives in a memory, ".stowage.<pool>".
std::string poolSectionName(const Board& board, const MemoryPool& pool);

/// `MEMORY { ... }` with one region per board memory ("" when the board describes none).
std::string linkerMemoryFragment(const Board& board);

/// Output sections for the pools, to INCLUDE inside an existing script's SECTIONS: each static pool's section (and each
/// user pool's, for the application's buffer) in the region of its memory, at its base when it has one; workspace pools
/// (NOLOAD) are neither loaded nor zeroed; a constant pool in RAM is loaded from its flash memory (`AT>`); fixed pools
/// inside a memory are reserved. Each pool section gets __stowage_pool_<pool>_start / _end (and _load for a copied
/// one) for boot code that copies or checks it. `name` is the model name, for the header comment.
std::string linkerSectionsFragment(const Board& board, const ProgramPlan& plan, const std::string& name);

/// A complete script for a board with a [device] and memories: the vector table (Arm) or entry (RISC-V) at the start
/// of the device's flash memory, the pool sections as in linkerSectionsFragment, code and read-only data in flash,
/// .data copied to and .bss zeroed in the device's ram memory, the stack there, and the copy / zero / poison tables of
/// runtime/firmware (README.md there). Errors: no [device] or no memories; pools that cannot fit their memory.
Result<std::string> fullLinkerScript(const Board& board, const ProgramPlan& plan, const std::string& name);

}  // namespace stowage
