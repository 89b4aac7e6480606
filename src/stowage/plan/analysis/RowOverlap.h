// Overlapping layers: a CPU layer whose kernel finishes its output rows band after band may write its output over
// the part of its input that no later band reads. The kernels' row order, the overlap it allows, and its check.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "stowage/ir/Graph.h"
#include "stowage/plan/ProgramPlan.h"
#include "stowage/target/Board.h"

namespace stowage {

/// The access order of a layer's kernel over its input and output rows (one image, NHWC, packed rows): band j
/// writes output rows [j * band, (j + 1) * band) and reads only the input rows those rows' windows cover; bands run
/// in increasing order. stowage_qconv_params.row_band (runtime/include/stowage_kernels_int8.h) asks the int8
/// convolution kernels for it; the int8 pooling kernels run pixel after pixel, which is that order for any band.
struct RowOrder {
  int64_t inRows = 0, outRows = 0;          ///< H and OH
  int64_t inRowBytes = 0, outRowBytes = 0;  ///< bytes of one input row (W * C) and one output row (OW * M)
  int64_t stride = 1, pad = 0;              ///< stride_h, pad_top
  int64_t taps = 1, dilation = 1;           ///< kh, dil_h
  int64_t band = 1;                         ///< output rows per band
  bool descending = false;                  ///< bands from the last to the first (only kernels that take a band)
  bool takesBand = false;                   ///< the kernel needs row_band set to run in this order (convolutions)
};

/// The row order of node `n` run by its portable CPU kernel on `target`, or nothing: an op without one (only the
/// int8 NHWC convolution, depthwise convolution and pools have it), a batch above 1, or a board kernel
/// replacing the portable one.
std::optional<RowOrder> rowOrderOf(const Graph& g, const Node& n, const Board& board, int target);

/// The largest shift (output start - input start, in bytes; negative: the output starts below) at which bands in
/// increasing order never write a byte of an input row that they or a later band still read. Closed form.
int64_t overlapBelowShift(const RowOrder& order);

/// The smallest shift at which bands in decreasing order never overwrite an input row still to be read; INT64_MAX
/// when the kernel cannot run its bands that way (it takes no band).
int64_t overlapAboveShift(const RowOrder& order);

/// The check the validator runs, independent of the closed forms: walks the bands in the kernel's order and the rows
/// each reads, and returns an empty string when an output placed `shift` bytes after its input never overwrites
/// an input byte before its last read, else what goes wrong ("band 3 (output rows 3..3) writes input row 2,
/// which band 4 reads").
std::string checkRowOverlap(const RowOrder& order, int64_t shift);

/// What assignOverlaps did.
struct OverlapSummary {
  int layers = 0;                    ///< layers whose output may overlap their input
  std::vector<std::string> remarks;  ///< one per layer given up for a reason a user may want to know
};

/// Marks every CPU layer (`stepOnCpu`) with a row order whose output may overlap its dying input: the output's
/// buffer gets overlapsInput, overlapBelow, overlapAbove and the band size in rowBand (ProgramPlan.h; the planner
/// gives it its sign, or 0, once placed: orientRowBands). Run after assignAliases: the input's
/// group must end at the layer's step and hold no strided alias; the output must be its own group's root.
OverlapSummary assignOverlaps(const Graph& g, const Board& board, const std::vector<int>& nodeTargets,
                              const std::vector<bool>& stepOnCpu, std::vector<PlacedBuffer>& buffers);

/// After placement: each overlapping output's rowBand becomes the order its kernel must run: +band when it sits
/// at or below overlapBelow, -band at or above overlapAbove, 0 when it ended up apart from its input (or its
/// kernel takes no band). Returns the number of layers whose output shares bytes with its input.
int orientRowBands(ProgramPlan& plan);

}  // namespace stowage
