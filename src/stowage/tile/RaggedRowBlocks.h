// Non-uniform row blocks in the tile choice: a uniform tiling's first and / or last row block made smaller (so the
// layer's first load and last store, its pipeline fill and drain, are short), kept when the cost model says so.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "stowage/target/Target.h"
#include "stowage/tile/TileChoice.h"
#include "stowage/tile/TileGeometry.h"

namespace stowage {

/// The ragged variants tried for walks of `rows` output rows in blocks of `rowTile`: every (first, last) with each
/// 0 or one of 1, 2, 3 and 1/4, 1/3, 1/2, 2/3, 3/4 of min(rowTile, rows) (rounded down), below that, not both 0,
/// first + last < rows; each also as a ramp (RowBlocks::ramp) when 2 first or 2 last is below the row tile.
/// `unit` > 1 (a pointwise convolution whose rows are pixels: LayerShape::imageRowPixels): the same in whole image
/// rows of `unit` pixels (1, 2, 3 image rows, the fractions rounded down to whole rows), so that a layer of many
/// pixels tries no more variants than one of image rows.
std::vector<RowBlocks> raggedRowBlockCandidates(int64_t rows, int64_t rowTile, int64_t unit = 1);

/// The cheapest variant of `uniform` (a tiling chooseTiles built, with its schedule, operands in place and cost)
/// with smaller first and / or last row blocks (several cores: at both ends of each core's chunk, see
/// scheduleTiles) whose estimate is below uniform's, or nullopt. Its tiles fit
/// uniform's buffers (no block has more rows); an operand uniform uses in place must stay contiguous in every
/// tile, and weight loads are split over both channels when that is faster, as for uniform tilings. `observe`, when
/// given, sees every variant that fits, cheaper or not (TileSearchObserver).
std::optional<TileChoice> cheapestRaggedVariant(const Target& target, const LayerShape& s, const TileChoice& uniform,
                                                const std::function<void(const TileChoice&)>* observe = nullptr);

/// A copy of `c` without its schedule (the ragged variants rebuild it; a schedule may be megabytes): the schedule
/// is moved out for the copy and back, never copied.
TileChoice copyWithoutSchedule(TileChoice& c);

/// The `size` cheapest tilings offered (their schedules dropped: the variants rebuild them), to try ragged variants
/// of after the search.
class RaggedShortlist {
 public:
  explicit RaggedShortlist(size_t size) : size_(size) {}
  void offer(TileChoice& uniform);
  const std::vector<TileChoice>& tilings() const { return tilings_; }

 private:
  size_t size_;
  std::vector<TileChoice> tilings_;  ///< cheapest first
};

}  // namespace stowage
