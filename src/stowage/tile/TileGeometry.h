// The geometry of one offloaded layer and of each of its tiles: which kernel it is, its sizes, and per tile
// the DMA transfers (rows, row bytes, main-memory stride and offset) and the kernel parameters describing the
// tile in local memory (adjusted h / pad_top, channel subsets and the offsets into weights and bias). Read by
// the tile chooser (sizes, costs) and the C emitter (descriptor tables).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "stowage/lower/KernelCall.h"
#include "stowage/lower/TileKernel.h"
#include "stowage/ir/Graph.h"

namespace stowage {

/// A layer as the tiler sees it: output rows (pixel rows of a conv, matrix rows of a FC / Gemm) by output
/// channels, each output computed from a full reduction of length `reduction`.
struct LayerShape {
  TileKernel kernel = TileKernel::QConv2d;
  KernelCall call;          ///< the untiled call (inputs: x, w, bias?, multiplier, shift / a, b, c?)
  int64_t rows = 0;         ///< output rows: conv oh, FC batches, Gemm m
  int64_t rowPixels = 1;    ///< outputs per row per channel: conv ow, else 1
  int64_t channels = 0;     ///< output channels: conv m, FC m, Gemm n
  int64_t reduction = 0;    ///< K per output: kh*kw*kc (depthwise kh*kw), FC / Gemm k
  int64_t channelStep = 1;  ///< channel tiles are multiples of this (grouped conv: outputs per group)
  size_t elemBytes = 1;     ///< bytes of an input / weight element: 1 (int8, uint8) or 4 (float32)
  size_t outElemBytes = 1;  ///< bytes of an output element: 1, or 4 (float32, int32 accumulators)
  int64_t batches = 1;      ///< matrix products: independent products (the batch dims of MatMul), tiled one after another
  /// A pointwise convolution whose rows are pixels (PointwiseRows::Pixels): the pixels of one row of its image (ow);
  /// 0 otherwise. The tile search tries whole image rows and blocks that split the pixels evenly over the cores.
  int64_t imageRowPixels = 0;
};

/// The layer behind `node` when it can be tiled, else the reason it cannot (for the fallback remark).
struct LayerShapeResult {
  std::optional<LayerShape> shape;
  std::string whyNot;
};
/// How the rows of a pointwise convolution (1x1 windows, stride 1, no padding: each output pixel reads the input
/// pixel at its place) are counted. `Pixels`, the tiles' view: an image of oh x ow pixels is one of oh * ow rows of one
/// pixel (the same bytes, NHWC), so a tile may end inside an image row: the 36 pixels of a 6 x 6 layer split 9 / 9 /
/// 9 / 9 over 4 cores, where rows of 6 pixels give 3 tiles of 2 rows (one core idle) or channel blocks that are not
/// contiguous in NHWC. Only for int8 NHWC convolutions of at most kMaxPixelRows pixels (more rows, more tile sizes
/// to search, where the rows of an image already split evenly). `Image`: the image's own rows (fused bands, whose
/// bands are image rows of a whole chain).
enum class PointwiseRows { Pixels, Image };
inline constexpr int64_t kMaxPixelRows = 256;
LayerShapeResult layerShapeOf(const Graph& g, const Node& node, PointwiseRows rows = PointwiseRows::Pixels);

/// The input rows a block of output rows of a windowed layer (conv, depthwise, pool) reads: [first, end), clipped to
/// the input, and the padding rows its windows cover above (padTop) and below (padBottom) them. The one place that
/// maps output rows to input rows: offloaded tiles, CPU streaming and fused bands (tile/FusedBands.h) all use it.
struct RowSpan {
  int64_t first = 0, end = 0, padTop = 0, padBottom = 0;
};
RowSpan windowInputRows(const LayerShape& s, int64_t oy0, int64_t oy1);
/// True for the layers windowInputRows describes: convolutions (any kernel) and 2-D pools.
bool isWindowLayer(const LayerShape& s);

/// One 2-D copy between main memory and a packed local buffer: `rows` rows of `rowBytes`, main-memory rows
/// `stride` bytes apart starting `offset` bytes from the tensor's first byte.
struct TileCopy {
  size_t offset = 0, rows = 0, rowBytes = 0, stride = 0;
  size_t bytes() const { return rows * rowBytes; }
  bool operator==(const TileCopy&) const = default;
};

/// One tile: what to load, which buffer halves it uses, what to compute and what to store.
struct TileDesc {
  TileCopy x, w, y;           ///< input and weight loads, output store
  int xBuf = 0, wBuf = 0, yBuf = 0;  ///< half (0/1) of each ping-pong buffer the tile uses
  bool loadX = true, loadW = true;   ///< false when the half already holds this tile's data (or the operand is direct)
  bool storeY = true;                ///< false when the output is direct (computed in place, see DirectOperands)
  int64_t channelOffset = 0;  ///< first output channel: offset (elements) into bias / multiplier / shift / c /
                              ///< per-channel (per-column) scales and zero points
  int64_t rowOffset = 0;      ///< first output row: offset into per-row scales and zero points (QLinearMatMul)
  int64_t macs = 0;           ///< multiply-accumulates of the tile
  int64_t outRows = 0, channels = 0;  ///< the tile's output rows and channels
  int64_t batch = 0, firstRow = 0;    ///< the tile's product (matrix batches) and first output row (the tile order)
  /// The kernel parameters describing the tile: one of the param structs, by kernel. One variant rather than a
  /// member per kernel: the tile search builds millions of tiles (MobileNetV2 224 on hexagon-vtcm), and zeroing and
  /// copying eleven structs per tile was a third of its time.
  std::variant<std::monostate, stowage_qconv_params, stowage_qfc_params, stowage_conv2d_params, stowage_gemm_params, stowage_matmul_params, stowage_qlinear_conv_params, stowage_qlinear_matmul_params, stowage_broadcast_params, stowage_qbinary_params, stowage_pool2d_params, stowage_qpool_params> params;
  /// The parameters as `P`: the mutable form makes them `P` (zeroed) when the tile holds no `P`; the const form
  /// gives zeros then.
  template <class P>
  P& param() {
    if (P* p = std::get_if<P>(&params)) return *p;
    return params.template emplace<P>();
  }
  template <class P>
  const P& param() const {
    static const P zero{};
    const P* p = std::get_if<P>(&params);
    return p ? *p : zero;
  }
  stowage_qconv_params& qconvParams() { return param<stowage_qconv_params>(); }
  const stowage_qconv_params& qconvParams() const { return param<stowage_qconv_params>(); }
  stowage_qfc_params& qfcParams() { return param<stowage_qfc_params>(); }
  const stowage_qfc_params& qfcParams() const { return param<stowage_qfc_params>(); }
  stowage_conv2d_params& convParams() { return param<stowage_conv2d_params>(); }
  const stowage_conv2d_params& convParams() const { return param<stowage_conv2d_params>(); }
  stowage_gemm_params& gemmParams() { return param<stowage_gemm_params>(); }
  const stowage_gemm_params& gemmParams() const { return param<stowage_gemm_params>(); }
  stowage_matmul_params& matmulParams() { return param<stowage_matmul_params>(); }
  const stowage_matmul_params& matmulParams() const { return param<stowage_matmul_params>(); }
  stowage_qlinear_conv_params& qlconvParams() { return param<stowage_qlinear_conv_params>(); }
  const stowage_qlinear_conv_params& qlconvParams() const { return param<stowage_qlinear_conv_params>(); }
  stowage_qlinear_matmul_params& qlmatmulParams() { return param<stowage_qlinear_matmul_params>(); }
  const stowage_qlinear_matmul_params& qlmatmulParams() const { return param<stowage_qlinear_matmul_params>(); }
  stowage_broadcast_params& binaryParams() { return param<stowage_broadcast_params>(); }
  const stowage_broadcast_params& binaryParams() const { return param<stowage_broadcast_params>(); }
  stowage_qbinary_params& qbinaryParams() { return param<stowage_qbinary_params>(); }
  const stowage_qbinary_params& qbinaryParams() const { return param<stowage_qbinary_params>(); }
  stowage_pool2d_params& poolParams() { return param<stowage_pool2d_params>(); }
  const stowage_pool2d_params& poolParams() const { return param<stowage_pool2d_params>(); }
  stowage_qpool_params& qpoolParams() { return param<stowage_qpool_params>(); }
  const stowage_qpool_params& qpoolParams() const { return param<stowage_qpool_params>(); }
};

/// Bytes of the largest input, weight and output tile for tiles of `rowTile` rows by `channelTile` channels.
struct TileBytes {
  size_t x = 0, w = 0, y = 0;
};
TileBytes tileBytes(const LayerShape& s, int64_t rowTile, int64_t channelTile);

/// Per operand (x input, w weights, y output): two buffer halves (ping-pong: the next tile's load, or the previous
/// tile's store, overlaps this tile's compute) or one (the next load waits for this tile's compute).
struct OperandBuffers {
  bool doubled[3] = {true, true, true};
  static OperandBuffers uniform(bool doubleBuffer) { return {{doubleBuffer, doubleBuffer, doubleBuffer}}; }
  bool all() const { return doubled[0] && doubled[1] && doubled[2]; }
  bool none() const { return !doubled[0] && !doubled[1] && !doubled[2]; }
  int halves(int op) const { return doubled[op] ? 2 : 1; }
  bool operator==(const OperandBuffers&) const = default;
};
/// "double-buffered", "single-buffered", or which operands have two halves: "x single, w/y double-buffered".
std::string operandBuffersText(const OperandBuffers& b);

/// The order the tiles are walked in (within a batch): channel blocks outer and row blocks inner (a weight tile is
/// loaded once per channel block), or row blocks outer and channel blocks inner (an input tile once per row block).
enum class TileOrder { ChannelsOuter, RowsOuter };

/// Non-uniform row blocks: the layer's first tile has `first` output rows and its last tile `last` rows (0: a
/// uniform block of rowTile rows), so that the pipeline's fill (the first load) and drain (the last store) are
/// short. Each is below rowTile; see scheduleTiles for the walks they shape.
struct RowBlocks {
  int64_t first = 0, last = 0;
  /// The blocks grow from `first` to the row tile (first, 2 first, 4 first, ... while below rowTile) and shrink
  /// likewise to `last`: a ramp, so each small tile's store overlaps the next (larger) tile's compute.
  bool ramp = false;
  bool uniform() const { return first == 0 && last == 0; }
  bool operator==(const RowBlocks&) const = default;
};

/// The row blocks (first row, rows) of one walk over `rows` output rows. Uniform (first = last = 0): blocks of
/// `rowTile`, the last one shorter when rowTile does not divide rows. Otherwise a block of `first` rows (when > 0),
/// the rows between cut into ceil(rows between / rowTile) blocks as equal as possible (larger first), and a block of
/// `last` rows (when > 0); no block has more than rowTile rows.
std::vector<std::pair<int64_t, int64_t>> rowBlocks(int64_t rows, int64_t rowTile, int64_t first, int64_t last, bool ramp = false);
/// For reports and comments: "" when uniform, else ", first rows 1, last rows 2" (either part alone); for a ramp
/// each part ends in " doubling" (", first rows 3 doubling, last rows 2 doubling").
std::string rowBlocksText(const RowBlocks& r);

/// The tiles of `s` for `rowTile` x `channelTile` (batch outer, then channel blocks, then row blocks; a batched
/// conv's images inside its channel blocks, so they share the weight tile; row blocks before channel blocks with
/// TileOrder::RowsOuter), split into `cores` contiguous chunks (chunk c is
/// [chunkStart[c], chunkStart[c + 1])); buffer halves and load flags assume each core walks its chunk in
/// order with double buffering when `doubleBuffer` (per operand: `buffers`), else with one half.
struct TileSchedule {
  std::vector<TileDesc> tiles;
  std::vector<size_t> chunkStart;  ///< cores + 1 entries
  /// Cores mode with two DMA channels: each weight load is two transfers, its first part on the weight channel (1)
  /// and the rest on the input channel (0), so a big weight tile arrives in about half the time (splitWeightLoads).
  bool weightsSplit = false;
  /// Cores mode: 0, or the cores (1 or all) that load each row block's input, once, into one buffer all cores share
  /// (tile/SharedInput.h): chunk c then holds core c's channel blocks of every row block, row blocks in order.
  int sharedLoaders = 0;
};
TileSchedule scheduleTiles(const LayerShape& s, int64_t rowTile, int64_t channelTile, int cores, bool doubleBuffer);
/// `ragged` shapes the row walks. One core: with TileOrder::ChannelsOuter the first walk starts with a block of
/// `first` rows and the last walk ends with one of `last` rows, every other walk uniform; with TileOrder::RowsOuter
/// every walk has the same ragged blocks (row blocks stay aligned across channel blocks, so each input row block is
/// still loaded once). Several cores: the walks are uniform and each core's chunk is cut instead: its first tile's
/// first `first` rows and its last tile's last `last` rows become tiles of their own (when that tile has more rows).
TileSchedule scheduleTiles(const LayerShape& s, int64_t rowTile, int64_t channelTile, int cores, const OperandBuffers& buffers,
                           TileOrder order, RowBlocks ragged = {});

/// Buffer halves and load flags of every chunk of `out` (each core walks its chunk in order): an operand with two
/// halves alternates them, a half already holding a tile's copy is not loaded again.
void assignBufferHalves(TileSchedule& out, const OperandBuffers& buffers);

/// Splits every weight load of `schedule` over both DMA channels (TileSchedule::weightsSplit). A contiguous
/// one-row weight copy becomes two rows of half its bytes when that keeps each half a multiple of 4 bytes (the
/// packed local buffer is the same), so that it has two parts; a copy that cannot be split stays one transfer.
void splitWeightLoads(TileSchedule& schedule);
/// The two transfers of a split weight load `w`: its first ceil(rows / 2) rows (weight channel) and the rest (input
/// channel), which lands `w.rowBytes * first.rows` bytes into the local buffer; a one-row copy as splitWeightLoads
/// describes it (two rows of half its bytes, or one transfer: rest.rows 0). The cost model needs only
/// TileSchedule::weightsSplit, the emitter the copies splitWeightLoads rewrote.
std::pair<TileCopy, TileCopy> weightLoadParts(const TileCopy& w);

/// Per operand (x, w, y): used in place where its tensor lives (a pool the target's cores reach directly, see
/// tile/ResidentTensors.h): the kernel reads or writes the tensor at the tile's offset, with no tile buffer and no
/// DMA. Only for operands whose every tile copy is one contiguous run (copiesContiguous).
struct DirectOperands {
  bool direct[3] = {false, false, false};
  bool any() const { return direct[0] || direct[1] || direct[2]; }
  bool operator==(const DirectOperands&) const = default;
};
/// "x/y" for the direct operands ("" when none).
std::string directOperandsText(const DirectOperands& d);

/// True when every tile's copy of operand `op` (0 x, 1 w, 2 y) in `schedule` is one contiguous run of bytes.
bool copiesContiguous(const TileSchedule& schedule, int op);

/// Marks the direct operands of every tile: no load, no store, half 0 (their copies keep the offsets, which the
/// kernel uses to address the tensor).
void applyDirectOperands(TileSchedule& schedule, const DirectOperands& d);

}  // namespace stowage
