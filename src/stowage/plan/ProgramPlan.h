// The memory plan of a whole program over a board's pools: which pool (and bank) every buffer lives in, at
// which offset, why it landed there, and each pool's use against its lower bound. Produced by planProgram,
// checked by validateProgramPlan, read by the C emitter and the reports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "stowage/ir/Tensor.h"
#include "stowage/target/Board.h"

namespace stowage {

/// What a planned buffer holds; decides which pool kinds and rule roles apply.
enum class BufferRole {
  Activation,  ///< an intermediate tensor written by one node and read by later ones
  Constant,    ///< a weight or folded constant, live for the whole run
  Scratch,     ///< a tile buffer of one offloaded layer (tile/), live only at its layer's step
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
  int pinnedBank = -1;          ///< Scratch: the bank it must use (ping and pong halves apart), or -1
  std::string name;             ///< Scratch: "step3.x.ping" (it has no tensor: `tensor` is kNoTensor)
  int pairedWith = -1;          ///< Scratch: index in `buffers` of the other half of its ping-pong pair, or -1;
                                ///< in a pool with banks the two halves must be in different banks
  std::string pinOrigin;        ///< where the pin came from ("--pin #1", "board.toml:30")
  /// Shares the buffer of this tensor by design (a view of it, or written in place over it; see
  /// analysis/Aliasing.h), or kNoTensor. A member is not planned: it gets its root's pool, bank and offset, and
  /// the root's lifetime covers the member's. The validator accepts this overlap and no other.
  TensorId aliasOf = kNoTensor;
  /// Bytes from the start of the root's buffer where this alias begins: 0 for views and in-place writes, the
  /// slice's position for a Concat input written straight into its output. Always a multiple of the element
  /// size; offset = root's offset + aliasOffset.
  size_t aliasOffset = 0;
  /// A strided alias (a channel slice of an NHWC Concat output, written by its producer with an output pixel
  /// stride): the member's bytes are runs of `aliasRunBytes` every `aliasStrideBytes` from aliasOffset in
  /// its root, sizeBytes / aliasRunBytes runs. Both 0 for a contiguous alias (and for any non-alias).
  size_t aliasRunBytes = 0;
  size_t aliasStrideBytes = 0;
  /// The output of an overlapping layer (analysis/RowOverlap.h): the layer's input, whose bytes this buffer may
  /// share at the layer's step as far as the kernel's row order allows (kNoTensor: none). With shift = this
  /// buffer's offset - the input's, they may share bytes when shift <= overlapBelow (the kernel runs its rows in
  /// increasing order) or shift >= overlapAbove (decreasing order). After placement `rowBand` is the order the
  /// kernel must run (stowage_qconv_params.row_band: B > 0 bands of B rows increasing, -B decreasing, 0 any
  /// order: the two ended up apart, or the kernel has no band parameter and runs rows increasing anyway).
  TensorId overlapsInput = kNoTensor;
  int64_t overlapBelow = 0;
  int64_t overlapAbove = 0;
  int rowBand = 0;
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

/// A tile buffer an offloaded layer needs (tile/ asks, the planner places it like any buffer).
struct ScratchRequest {
  std::string name;      ///< "step3.x.ping"
  int step = 0;          ///< the layer's node step: live [firstStep, step + 1)
  /// First step the buffer is live: `step`, or an earlier layer's step when that layer's cores load this layer's
  /// first weight tiles into it (tile/WeightPrefetch.h); -1 = `step`.
  int firstStep = -1;
  size_t sizeBytes = 0;
  int pool = -1;         ///< index into Board::pools
  int bank = -1;         ///< pinned bank, or -1 for any
  int pairedWith = -1;   ///< index (in the request list) of the other half of its ping-pong pair, or -1
};

/// An activation the tiler keeps in an accelerator's local pool between the layers that make and read it (they
/// use it in place: tile/ResidentTensors.h); the planner pins it there.
struct ResidentTensor {
  TensorId tensor = kNoTensor;
  int pool = -1;    ///< index into Board::pools
  int target = -1;  ///< index into Board::targets: the target whose layers make and read it
  /// kNoTensor, or the resident tensor this one is a view of (a Reshape's output planned on its input's bytes,
  /// read by layers of the same target): it holds no bytes of its own.
  TensorId viewOf = kNoTensor;
};

/// A later layer whose first weight tiles an offloaded layer's cores load during their last tile (weight prefetch
/// across layers, tile/WeightPrefetch.h).
struct WeightPrefetchTo {
  int step = -1;  ///< the later layer's node step
  /// Cores mode: the DMA channel the issuing cores load them on (0, the input channel, or 1, the weight and store
  /// channel, on targets with two).
  int channel = 0;
  /// Per issuing core: cycles of that transfer still in flight when the issuing layer ends (0: done before; the two
  /// layers may have layers in between).
  std::vector<uint64_t> inFlight;
  bool operator==(const WeightPrefetchTo&) const = default;
};

/// One layer the tiler (tile/) offloaded: where it runs, its tiles and the cost model's estimate. The C
/// emitter rebuilds the tile table from it (tile/TileGeometry.h); the reports print it.
struct OffloadedLayer {
  int step = 0;                ///< node step
  int target = -1;             ///< index into Board::targets
  std::string mode;            ///< "engine" (matrix engine: mvin / compute / mvout) or "cores" (DMA + kernels on cores)
  std::string kernel;          ///< the compute intrinsic ("qconv2d_s8", ...)
  int cores = 1;               ///< cores the tiles are split over
  int64_t rowTile = 0;         ///< output rows per tile (conv: pixel rows; FC / Gemm: matrix rows)
  /// A pointwise convolution tiled with one output pixel per row (tile/TileGeometry.h PointwiseRows::Pixels): rowTile,
  /// firstRows and lastRows count pixels, and a tile may end inside an image row.
  bool rowsArePixels = false;
  int64_t channelTile = 0;     ///< output channels per tile
  /// Non-uniform row blocks (tile/TileGeometry.h RowBlocks): output rows of the layer's first and last row block, 0
  /// when that block is a uniform one of rowTile rows.
  int64_t firstRows = 0, lastRows = 0;
  bool rampRows = false;       ///< the blocks double from firstRows and to lastRows up to rowTile (RowBlocks::ramp)
  int tiles = 0;
  bool doubleBuffer = true;    ///< every operand has two buffer halves (see `doubled`)
  bool doubled[3] = {true, true, true};  ///< x, w, y: two buffer halves (ping-pong) or one
  bool rowsOuter = false;      ///< tile order: row blocks outer, channel blocks inner (else channel blocks outer)
  bool weightsSplit = false;   ///< each weight load split over both DMA channels (TileSchedule::weightsSplit)
  /// Cores mode: 0, or the cores (1 or all) that load each row block's input once into one buffer every core reads
  /// (tile/SharedInput.h; TileSchedule::sharedLoaders)
  int sharedInputLoaders = 0;
  /// x, w, y used in place where the tensor lives (a pool the target's cores reach directly: no tile buffer, no
  /// DMA; tile/ResidentTensors.h)
  bool direct[3] = {false, false, false};
  /// Weight prefetch across layers (tile/WeightPrefetch.h): the later layers on this target whose first weight tiles
  /// this layer's cores load during their last tile, in the order they issue them (empty: none; in cores mode other
  /// layers may run in between, their input transfers queued behind them: inputChannelBusy; engine mode: at most
  /// one, the layer before's last mvin), and how many of this layer's cores found their first weight tile loaded by
  /// an earlier layer on the target (0: it loads them itself).
  std::vector<WeightPrefetchTo> prefetches;
  int weightsPrefetchedCores = 0;
  /// Engine mode, input handover (tile/InputHandover.h): the step of the next layer (the very next step, on this
  /// engine) whose first input tile this layer loads after its last compute, while its last output tile is stored
  /// (-1: none); and whether this layer's first input tile was loaded so by the layer before.
  int handsInputTo = -1;
  bool inputHandedOver = false;
  /// Cores mode, shared scratch pool: the issuing layer's core that loads the first weight tiles of all
  /// weightsPrefetchedCores (= cores) of this layer in one 2-D transfer into their regions, coreStride[1] apart
  /// (onceWeightCopy, tile/WeightPrefetch.h); this layer's core of that number waits for its ticket and every core
  /// then meets at a barrier before reading them. -1: each issuing core loads its namesake's tile.
  int weightsOnceCore = -1;
  /// Per prefetched core: cycles after this layer starts that its first weight tile arrives (0: before it starts).
  std::vector<uint64_t> weightsReady;
  /// Cores mode, per core: cycles from this layer's start during which its input DMA channel still carries weight
  /// transfers earlier layers issued (for this layer, or for a later one passing over it); empty: none.
  std::vector<uint64_t> inputChannelBusy;
  /// The same for channel 1 (weights and stores; targets with two channels).
  std::vector<uint64_t> weightChannelBusy;
  size_t xBytes = 0, wBytes = 0, yBytes = 0;  ///< largest input / weight / output tile
  uint64_t computeCycles = 0;  ///< estimated: compute of every tile (busiest core in cores mode)
  uint64_t dmaCycles = 0;      ///< estimated: every transfer (busiest core in cores mode)
  uint64_t totalCycles = 0;    ///< estimated: the layer with DMA and compute overlapped as the code runs them
  /// Names of the scratch buffers: x/w/y halves 0 and 1 ("" when a half is not used).
  std::string buffers[3][2];
  /// Per scratch buffer: bytes between the regions of consecutive cores (shared pools in cores mode), 0 when
  /// each core has its own copy (per_core_stride) or one core runs the layer.
  size_t coreStride[3] = {0, 0, 0};
};

/// The program's plan.
struct ProgramPlan {
  Board board;
  int steps = 0;                       ///< number of node steps in the schedule
  std::vector<PlacedBuffer> buffers;   ///< activations then constants, in tensor-id order within each
  std::vector<PoolUse> pools;          ///< one per pool of the board, in board order
  std::vector<std::string> remarks;    ///< spills, fallbacks: every decision a user may want to know
  std::vector<OffloadedLayer> offloaded;  ///< layers tiled onto accelerators / cores, by step
  std::vector<int> nodeTargets;        ///< by step: the target (Board::targets index) that runs the node
  std::string algorithm;               ///< the offset algorithm asked for ("auto", ...)
  /// Guard mode: canary bytes reserved right before and right after every activation buffer (0 = off); the
  /// generated code fills, checks and poisons them (see codegen/GuardCode.h).
  size_t guardBytes = 0;
  double seconds = 0;                  ///< wall time of planning

  /// Index in `buffers` of `tensor`'s buffer, or -1.
  int bufferOf(TensorId tensor) const;
  /// The offloaded layer at `step`, or nullptr when the step runs on the CPU.
  const OffloadedLayer* offloadedAt(int step) const;
  /// Index in `buffers` of the scratch buffer named `name`, or -1.
  int scratchOf(const std::string& name) const;
};

/// The layer of `layers` at node step `step`, or nullptr (ProgramPlan::offloadedAt on a tiler's list).
const OffloadedLayer* offloadedAtStep(const std::vector<OffloadedLayer>& layers, int step);

/// True when placed buffers `x` and `y` hold the same bytes by design: one is a declared alias of the other, or both
/// of the same root (analysis/Aliasing.h), at the same pool, bank and offset, both contiguous. A view planned so runs
/// no code.
bool placedOnSameBytes(const PlacedBuffer& x, const PlacedBuffer& y);

/// True when `y` is an overlapping layer's output (overlapsInput) placed so that it shares bytes with that input.
bool sharesBytesWithInput(const ProgramPlan& plan, const PlacedBuffer& y);

/// Bytes from the start of `b` to the end of its last byte: sizeBytes, or for a strided alias
/// (runs - 1) * aliasStrideBytes + aliasRunBytes.
size_t bufferExtentBytes(const PlacedBuffer& b);

}  // namespace stowage
