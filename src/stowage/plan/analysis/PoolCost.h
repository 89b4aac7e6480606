// The planner's cost model of a pool: cycles per byte moved, from the board's bandwidth and latency numbers.
// Pool assignment puts each buffer in its cheapest candidate first and spills to the next when that is full.
#pragma once

#include <optional>
#include <vector>

#include "stowage/target/Board.h"

namespace stowage {

/// Cycles to write a byte once and read it once: 1/read_bytes_per_cycle + 1/write_bytes_per_cycle plus
/// latency_cycles; nullopt when the pool states none of these numbers.
std::optional<double> poolCyclesPerByte(const MemoryPool& pool);

/// Board::pools indices from cheapest to dearest: pools with cost numbers first, by cost; then pools without,
/// in board order (users list the fast ones first). Ties keep board order.
std::vector<int> poolsCheapestFirst(const Board& board);

}  // namespace stowage
