// The first weight tiles of an offloaded layer's core chunks, as the layer before on the same target loads them
// for it (tile/WeightPrefetch.h): their copies, their DMA cycles, and the one transfer that loads them for all cores.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "stowage/plan/ProgramPlan.h"
#include "stowage/target/Board.h"
#include "stowage/tile/CostModel.h"

namespace stowage {

/// The first weight copy of each of the first `n` core chunks of `schedule` (rows 0 when that chunk loads none): the
/// transfers a layer before on the target makes for it.
std::vector<TileCopy> firstWeightCopies(const TileSchedule& schedule, int n);

/// The DMA cycles on `target` of those copies (0 for a chunk that loads none).
std::vector<uint64_t> firstWeightTransferCycles(const Target& target, const TileSchedule& schedule, int n);

/// Weights loaded once for all cores: the first weight tiles of the first `n` core chunks of `schedule` as one
/// transfer into a shared scratch pool whose cores' regions are `coreStride` bytes apart. Possible when n >= 2 and
/// every chunk loads its first weight tile as one contiguous run of the same bytes (at most coreStride) at evenly
/// spaced offsets; else nullopt. Two kinds:
/// - **shared** (rows 1): every chunk's first tile is the same block, no chunk but the first has a later tile that
///   reads its half 0 without loading it, and the first chunk loads nothing into half 0 after its first tile: the
///   block moves once into core 0's region of half 0 and every core's first tile reads it there (onceWeightsShared);
/// - **spread** (rows n): row c, read at `offset + c * stride` in main memory, goes to core c's region.
/// Either way one DMA setup instead of n (dma_setup_cycles is most of a small transfer on hexagon-vtcm), and the
/// other cores' channels stay free.
std::optional<TileCopy> onceWeightCopy(const TileSchedule& schedule, int n, size_t coreStride);
/// True when `once` (from onceWeightCopy, for n >= 2 cores) is the shared kind: one block read by every core.
inline bool onceWeightsShared(const TileCopy& once) { return once.rows == 1; }

/// The DMA cycles per issuing core of `receiver`'s first weight tiles (`schedule` is its schedule): each core's own
/// (firstWeightTransferCycles), or with OffloadedLayer::weightsOnceCore the one transfer of onceWeightCopy on that
/// core and 0 on the others.
std::vector<uint64_t> receiverTransferCycles(const Target& target, const TileSchedule& schedule, const OffloadedLayer& receiver);

}  // namespace stowage
