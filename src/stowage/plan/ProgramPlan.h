// The memory plan of a whole program over a board's pools: which pool (and bank) every buffer lives in, at
// which offset, why it landed there, and each pool's use against its lower bound. Produced by planProgram,
// checked by validateProgramPlan, read by the C emitter and the reports.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "stowage/ir/Tensor.h"
#include "stowage/target/Board.h"

namespace stowage {

/// What a planned buffer holds; decides which pool kinds and rule roles apply.
enum class BufferRole {
  Activation,  ///< an intermediate tensor written by one node and read by later ones
  Constant,    ///< a weight or folded constant, live for the whole run
};

const char* bufferRoleName(BufferRole role);

/// One place a buffer may live: a pool of the board, and a bank of it when the pool has banks.
struct PoolSlot {
  int pool = -1;  ///< index into Board::pools
  int bank = 0;   ///< bank of that pool (0 when it has one bank)
  bool operator==(const PoolSlot&) const = default;
};

/// One buffer of the program and where it was placed.
struct PlacedBuffer {
  TensorId tensor = kNoTensor;
  BufferRole role = BufferRole::Activation;
  size_t sizeBytes = 0;
  size_t alignment = 16;  ///< bytes; the pool's alignment
  int firstStep = 0;      ///< half-open lifetime [firstStep, endStep) over node steps
  int endStep = 0;
  int reads = 0;          ///< how many node inputs read it per run (the cost model's traffic)
  std::vector<int> candidates;  ///< pools it may live in (Board::pools indices), fastest first
  int pinnedPool = -1;          ///< from a pin, or -1
  std::string pinOrigin;        ///< where the pin came from ("--pin #1", "board.toml:30")
  /// Shares the buffer of this tensor by design (a view of it, or written in place over it; see
  /// analysis/Aliasing.h), or kNoTensor. A member is not planned: it gets its root's pool, bank and offset, and
  /// the root's lifetime covers the member's. The validator accepts this overlap and no other.
  TensorId aliasOf = kNoTensor;
  /// Bytes from the start of the root's buffer where this alias begins: 0 for views and in-place writes, the
  /// slice's position for a Concat input written straight into its output. Always a multiple of the element
  /// size; offset = root's offset + aliasOffset.
  size_t aliasOffset = 0;
  // The placement:
  PoolSlot slot;
  size_t offset = 0;     ///< bytes from the start of its pool (banked pools: from the start of bank 0, as if
                         ///< the banks were contiguous; offsetInBank = offset - bank * bankSizeBytes)
  std::string reason;    ///< why this pool: "only candidate", "fastest candidate", "spilled from dtcm (full)", ...
};

/// One pool's result. Banked pools are planned bank by bank; offsets and `usedBytes` read as if the banks
/// were contiguous (bank b starts at b * bankSizeBytes).
struct PoolUse {
  int pool = -1;               ///< index into Board::pools
  size_t capacityBytes = 0;    ///< SIZE_MAX when unlimited
  size_t usedBytes = 0;        ///< max over its buffers of offset + size
  std::vector<size_t> bankUsedBytes;  ///< per bank: max over its buffers of offsetInBank + size
  size_t lowerBoundBytes = 0;  ///< max over steps of the live bytes of buffers that can only be here
  size_t peakLiveBytes = 0;    ///< max over steps of the live bytes of buffers placed here
  int peakStep = -1;           ///< the step where peakLiveBytes is reached (-1: no buffers)
  int buffers = 0;
  std::string algorithm;       ///< offset algorithm that placed it
  std::string status;          ///< "optimal", "feasible", "unplanned" (no buffers)
};

/// The program's plan.
struct ProgramPlan {
  Board board;
  int steps = 0;                       ///< number of node steps in the schedule
  std::vector<PlacedBuffer> buffers;   ///< activations then constants, in tensor-id order within each
  std::vector<PoolUse> pools;          ///< one per pool of the board, in board order
  std::vector<std::string> remarks;    ///< spills, fallbacks: every decision a user may want to know
  std::string algorithm;               ///< the offset algorithm asked for ("auto", ...)
  /// Guard mode: canary bytes reserved right before and right after every activation buffer (0 = off); the
  /// generated code fills, checks and poisons them (see codegen/GuardCode.h).
  size_t guardBytes = 0;
  double seconds = 0;                  ///< wall time of planning

  /// Index in `buffers` of `tensor`'s buffer, or -1.
  int bufferOf(TensorId tensor) const;
};

}  // namespace stowage
