// Layer and tile geometry of offloaded layers (see TileGeometry.h).
#include "stowage/tile/TileGeometry.h"

#include <algorithm>
#include <string_view>
#include <tuple>

namespace stowage {

namespace {

bool isConv(TileKernel k) {
  return k == TileKernel::QConv2d || k == TileKernel::QDepthwiseConv2d || k == TileKernel::Conv2dF32 || k == TileKernel::QLinearConv ||
         k == TileKernel::ConvInteger;
}

bool isQLinear(TileKernel k) {
  return k == TileKernel::QLinearConv || k == TileKernel::ConvInteger || k == TileKernel::QLinearMatMul || k == TileKernel::MatMulInteger;
}

/// Conv geometry in one place whatever the kernel: sizes, groups and padding.
struct ConvDims {
  int64_t c, h, w, m, kh, kw, oh, ow, sh, dh, padTop, groups, kc;
  bool nchw;
};

ConvDims convDims(const LayerShape& s) {
  ConvDims d{};
  if (isFloatPool(s.kernel)) {
    // A pooling layer reads its windows as a depthwise convolution does (one input channel per output channel).
    const auto& p = std::get<PoolCall>(s.call.params).params;
    d = {p.c, p.h, p.w, p.c, p.kh, p.kw, p.oh, p.ow, p.stride_h, p.dil_h, p.pad_top, p.c, 1, true};
  } else if (s.kernel == TileKernel::QAvgPoolS8 || s.kernel == TileKernel::QMaxPoolS8) {
    const auto& p = std::get<stowage_qpool_params>(std::get<QuantCall>(s.call.params).params);
    d = {p.c, p.h, p.w, p.c, p.kh, p.kw, p.oh, p.ow, p.stride_h, 1, p.pad_top, p.c, 1, false};
  } else if (s.kernel == TileKernel::Conv2dF32) {
    const auto& p = std::get<ConvCall>(s.call.params).params;
    d = {p.c, p.h, p.w, p.m, p.kh, p.kw, p.oh, p.ow, p.stride_h, p.dil_h, p.pad_top, p.group, p.c / p.group, true};
  } else if (isQLinear(s.kernel)) {
    const auto& p = std::get<stowage_qlinear_conv_params>(std::get<QLinearCall>(s.call.params).params);
    d = {p.c, p.h, p.w, p.m, p.kh, p.kw, p.oh, p.ow, p.stride_h, p.dil_h, p.pad_top, p.group, p.c / p.group, true};
  } else {
    const auto& p = std::get<stowage_qconv_params>(std::get<QuantCall>(s.call.params).params);
    const bool dw = s.kernel == TileKernel::QDepthwiseConv2d;
    d = {p.c, p.h, p.w, p.m, p.kh, p.kw, p.oh, p.ow, p.stride_h, p.dil_h, p.pad_top, dw ? p.c : p.c / p.kc, dw ? 1 : p.kc, false};
  }
  return d;
}

/// Input rows [first, end) a block of output rows [oy0, oy1) reads, and the tile's pad rows above and below them.
RowSpan inputRows(const ConvDims& d, int64_t oy0, int64_t oy1) {
  const int64_t r0 = oy0 * d.sh - d.padTop;
  const int64_t rEnd = (oy1 - 1) * d.sh - d.padTop + (d.kh - 1) * d.dh + 1;
  RowSpan r;
  r.first = std::max<int64_t>(0, r0);
  r.end = std::max(r.first, std::min(d.h, rEnd));
  r.padTop = r.first - r0;
  r.padBottom = std::max<int64_t>(0, rEnd - r.end);
  return r;
}

/// Input channels a block of output channels [n0, n0 + tn) reads: [first, first + count).
std::pair<int64_t, int64_t> inputChannels(const ConvDims& d, int64_t n0, int64_t tn) {
  if (d.groups == 1) return {0, d.c};
  const int64_t perGroupOut = d.m / d.groups, perGroupIn = d.c / d.groups;
  return {(n0 / perGroupOut) * perGroupIn, (tn / perGroupOut) * perGroupIn};
}

TileCopy copy2d(size_t offset, size_t rows, size_t rowBytes, size_t stride) {
  if (rows > 1 && rowBytes == stride) return TileCopy{offset, 1, rows * rowBytes, rows * rowBytes};
  return TileCopy{offset, rows, rowBytes, rows <= 1 ? rowBytes : stride};
}

/// What a tile of image `batch` of a windowed layer (conv or pool) is whatever its kernel: the input rows its output
/// rows read (`rs`) of the input channels its output channels read (`tcin` of them), its output block, its MACs.
/// The copies start at that image (the kernel sees batch 1).
TileDesc windowTile(const LayerShape& s, const ConvDims& d, int64_t batch, int64_t oy0, int64_t th, int64_t n0, int64_t tn, RowSpan& rs,
                    int64_t& tcin) {
  const size_t e = s.elemBytes, ye = s.outElemBytes;
  const size_t xImage = static_cast<size_t>(batch * d.c * d.h * d.w) * e, yImage = static_cast<size_t>(batch * d.m * d.oh * d.ow) * ye;
  rs = inputRows(d, oy0, oy0 + th);
  // A conv tile over every output row of a channel-major image whose windows end before its last rows (a strided
  // 1x1 conv skips the last row) takes those rows too: its copy of each channel is then the whole plane, one
  // contiguous run, which a tensor resident in the scratch pool serves in place (the kernel reads no row past its
  // last window either way). Not for pools, whose bottom padding the loaded rows describe.
  if (d.nchw && !isPoolTileKernel(s.kernel) && rs.first == 0 && rs.padBottom == 0 && oy0 + th == d.oh && rs.end < d.h) rs.end = d.h;
  const int64_t ih = rs.end - rs.first;
  int64_t cin0 = 0;
  std::tie(cin0, tcin) = inputChannels(d, n0, tn);
  TileDesc t;
  t.outRows = th;
  t.channels = tn;
  t.channelOffset = n0;
  t.macs = th * d.ow * tn * s.reduction;  // pools: one add or compare per tap
  if (d.nchw) {
    t.x = copy2d(static_cast<size_t>((cin0 * d.h + rs.first) * d.w) * e, static_cast<size_t>(tcin), static_cast<size_t>(ih * d.w) * e,
                 static_cast<size_t>(d.h * d.w) * e);
    t.y = copy2d(static_cast<size_t>((n0 * d.oh + oy0) * d.ow) * ye, static_cast<size_t>(tn), static_cast<size_t>(th * d.ow) * ye,
                 static_cast<size_t>(d.oh * d.ow) * ye);
  } else {
    t.x = copy2d(static_cast<size_t>(rs.first * d.w * d.c + cin0), static_cast<size_t>(ih * d.w), static_cast<size_t>(tcin),
                 static_cast<size_t>(d.c));
    t.y = copy2d(static_cast<size_t>(oy0 * d.ow * d.m + n0), static_cast<size_t>(th * d.ow), static_cast<size_t>(tn),
                 static_cast<size_t>(d.m));
  }
  t.x.offset += xImage;
  t.y.offset += yImage;
  return t;
}

/// A tile of image `batch` of a conv: the window tile, its output channels' weights and kernel parameters.
TileDesc convTile(const LayerShape& s, const ConvDims& d, int64_t batch, int64_t oy0, int64_t th, int64_t n0, int64_t tn) {
  const size_t e = s.elemBytes;
  RowSpan rs;
  int64_t tcin = 0;
  TileDesc t = windowTile(s, d, batch, oy0, th, n0, tn, rs, tcin);
  const int64_t ih = rs.end - rs.first;
  if (d.nchw) {
    t.w = copy2d(static_cast<size_t>(n0 * s.reduction) * e, 1, static_cast<size_t>(tn * s.reduction) * e, 0);
    const int32_t group = static_cast<int32_t>(d.groups == 1 ? 1 : tn / (d.m / d.groups));
    if (isQLinear(s.kernel)) {
      t.qlconvParams() = std::get<stowage_qlinear_conv_params>(std::get<QLinearCall>(s.call.params).params);
      t.qlconvParams().c = static_cast<int32_t>(tcin);
      t.qlconvParams().h = static_cast<int32_t>(ih);
      t.qlconvParams().m = static_cast<int32_t>(tn);
      t.qlconvParams().oh = static_cast<int32_t>(th);
      t.qlconvParams().pad_top = static_cast<int32_t>(rs.padTop);
      t.qlconvParams().group = group;
      t.qlconvParams().n = 1;
      // Per-channel weight scales / zero points are read at the tile's channel offset.
      if (t.qlconvParams().w_quant_count > 1) t.qlconvParams().w_quant_count = static_cast<int32_t>(tn);
    } else {
      t.convParams() = std::get<ConvCall>(s.call.params).params;
      t.convParams().c = static_cast<int32_t>(tcin);
      t.convParams().h = static_cast<int32_t>(ih);
      t.convParams().m = static_cast<int32_t>(tn);
      t.convParams().oh = static_cast<int32_t>(th);
      t.convParams().pad_top = static_cast<int32_t>(rs.padTop);
      t.convParams().group = group;
      t.convParams().n = 1;
    }
  } else {
    if (s.kernel == TileKernel::QDepthwiseConv2d)
      t.w = copy2d(static_cast<size_t>(n0), static_cast<size_t>(d.kh * d.kw), static_cast<size_t>(tn), static_cast<size_t>(d.m));
    else
      t.w = copy2d(static_cast<size_t>(n0 * s.reduction), 1, static_cast<size_t>(tn * s.reduction), 0);
    t.qconvParams() = std::get<stowage_qconv_params>(std::get<QuantCall>(s.call.params).params);
    t.qconvParams().c = static_cast<int32_t>(tcin);
    t.qconvParams().h = static_cast<int32_t>(ih);
    t.qconvParams().m = static_cast<int32_t>(tn);
    t.qconvParams().oh = static_cast<int32_t>(th);
    t.qconvParams().pad_top = static_cast<int32_t>(rs.padTop);
    t.qconvParams().n = 1;
  }
  return t;
}

/// A tile of image `batch` of a pooling layer: the window tile (one input channel per output channel; no weights)
/// and its kernel parameters. The tile's h, pad_top (and pad_bottom, kept only where the tile reaches the image's
/// last row: elsewhere its windows end inside the loaded rows) describe the loaded rows.
TileDesc poolTile(const LayerShape& s, const ConvDims& d, int64_t batch, int64_t oy0, int64_t th, int64_t n0, int64_t tn) {
  RowSpan rs;
  int64_t tcin = 0;
  TileDesc t = windowTile(s, d, batch, oy0, th, n0, tn, rs, tcin);
  const int32_t ih = static_cast<int32_t>(rs.end - rs.first);
  if (d.nchw) {
    t.poolParams() = std::get<PoolCall>(s.call.params).params;
    t.poolParams().n = 1;
    t.poolParams().c = static_cast<int32_t>(tn);
    t.poolParams().h = ih;
    t.poolParams().oh = static_cast<int32_t>(th);
    t.poolParams().pad_top = static_cast<int32_t>(rs.padTop);
    if (rs.end < d.h) t.poolParams().pad_bottom = 0;
  } else {
    t.qpoolParams() = std::get<stowage_qpool_params>(std::get<QuantCall>(s.call.params).params);
    t.qpoolParams().n = 1;
    t.qpoolParams().c = static_cast<int32_t>(tn);
    t.qpoolParams().h = ih;
    t.qpoolParams().oh = static_cast<int32_t>(th);
    t.qpoolParams().pad_top = static_cast<int32_t>(rs.padTop);
  }
  return t;
}

/// Element offsets of batch `b`'s A and B in a batched product (the kernels' batch walk: last dim fastest).
std::pair<int64_t, int64_t> batchOffsets(int32_t rank, const int32_t* shape, const int64_t* aStride, const int64_t* bStride, int64_t b) {
  int64_t a = 0, w = 0;
  for (int32_t d = rank - 1; d >= 0; --d) {
    const int64_t i = b % shape[d];
    b /= shape[d];
    a += i * aStride[d];
    w += i * bStride[d];
  }
  return {a, w};
}

bool isMatMul(TileKernel k) { return k == TileKernel::MatMulF32 || k == TileKernel::QLinearMatMul || k == TileKernel::MatMulInteger; }

TileDesc matrixTile(const LayerShape& s, int64_t batch, int64_t r0, int64_t tr, int64_t n0, int64_t tn) {
  const size_t e = s.elemBytes, ye = s.outElemBytes;
  const int64_t k = s.reduction, n = s.channels;
  TileDesc t;
  t.outRows = tr;
  t.channels = tn;
  t.channelOffset = n0;
  t.rowOffset = r0;
  t.macs = tr * tn * k;
  if (isMatMul(s.kernel)) {
    // A: the tile's rows of this batch's matrix; B: its columns (k rows of tn); y: rows x columns of this batch.
    std::pair<int64_t, int64_t> off;
    if (s.kernel == TileKernel::MatMulF32) {
      const stowage_matmul_params& p = std::get<MatMulCall>(s.call.params).params;
      off = batchOffsets(p.batch_rank, p.batch_shape, p.a_stride, p.b_stride, batch);
      t.matmulParams() = p;
      t.matmulParams().batch_rank = 0;
      t.matmulParams().m = static_cast<int32_t>(tr);
      t.matmulParams().n = static_cast<int32_t>(tn);
    } else {
      const auto& p = std::get<stowage_qlinear_matmul_params>(std::get<QLinearCall>(s.call.params).params);
      off = batchOffsets(p.batch_rank, p.batch_shape, p.a_stride, p.b_stride, batch);
      t.qlmatmulParams() = p;
      t.qlmatmulParams().batch_rank = 0;
      t.qlmatmulParams().m = static_cast<int32_t>(tr);
      t.qlmatmulParams().n = static_cast<int32_t>(tn);
      // Per-row (A, y) and per-column (B) scales / zero points are read at the tile's row / column offset.
      if (p.a_quant_count > 1) t.qlmatmulParams().a_quant_count = static_cast<int32_t>(tr);
      if (p.y_quant_count > 1) t.qlmatmulParams().y_quant_count = static_cast<int32_t>(tr);
      if (p.b_quant_count > 1) t.qlmatmulParams().b_quant_count = static_cast<int32_t>(tn);
    }
    const int64_t m = s.rows;
    t.x = copy2d(static_cast<size_t>(off.first + r0 * k) * e, 1, static_cast<size_t>(tr * k) * e, 0);
    t.w = copy2d(static_cast<size_t>(off.second + n0) * e, static_cast<size_t>(k), static_cast<size_t>(tn) * e, static_cast<size_t>(n) * e);
    t.y = copy2d(static_cast<size_t>((batch * m + r0) * n + n0) * ye, static_cast<size_t>(tr), static_cast<size_t>(tn) * ye,
                 static_cast<size_t>(n) * ye);
    return t;
  }
  t.x = copy2d(static_cast<size_t>(r0 * k) * e, 1, static_cast<size_t>(tr * k) * e, 0);
  if (s.kernel == TileKernel::GemmF32 && std::get<GemmCall>(s.call.params).params.trans_a)
    // A stored [K][M]: the tile's columns r0 .. r0 + tr of every one of the K rows, packed as [K][tr].
    t.x = copy2d(static_cast<size_t>(r0) * e, static_cast<size_t>(k), static_cast<size_t>(tr) * e, static_cast<size_t>(s.rows) * e);
  t.y = copy2d(static_cast<size_t>(r0 * n + n0) * e, static_cast<size_t>(tr), static_cast<size_t>(tn) * e, static_cast<size_t>(n) * e);
  if (s.kernel == TileKernel::QFullyConnected) {
    t.w = copy2d(static_cast<size_t>(n0 * k), 1, static_cast<size_t>(tn * k), 0);
    t.qfcParams() = std::get<stowage_qfc_params>(std::get<QuantCall>(s.call.params).params);
    t.qfcParams().batches = static_cast<int32_t>(tr);
    t.qfcParams().m = static_cast<int32_t>(tn);
  } else {
    const stowage_gemm_params& p = std::get<GemmCall>(s.call.params).params;
    if (p.trans_b) t.w = copy2d(static_cast<size_t>(n0 * k) * e, 1, static_cast<size_t>(tn * k) * e, 0);
    else t.w = copy2d(static_cast<size_t>(n0) * e, static_cast<size_t>(k), static_cast<size_t>(tn) * e, static_cast<size_t>(n) * e);
    t.gemmParams() = p;
    t.gemmParams().m = static_cast<int32_t>(tr);
    t.gemmParams().n = static_cast<int32_t>(tn);
    // C is read in place in main memory: its offset for this tile (rows of c_cols, columns when c_cols = n).
    t.channelOffset = (p.c_rows == 1 ? 0 : r0 * p.c_cols) + (p.c_cols == 1 ? 0 : n0);
  }
  return t;
}

/// Rows [r0, r0 + tr) of an element-wise Add (float or int8): the same bytes of A (x), B (w) and y, one flat run each.
TileDesc addTile(const LayerShape& s, int64_t r0, int64_t tr) {
  const size_t e = s.elemBytes;
  const size_t offset = static_cast<size_t>(r0 * s.rowPixels) * e, bytes = static_cast<size_t>(tr * s.rowPixels) * e;
  TileDesc t;
  t.outRows = tr;
  t.channels = 1;
  t.macs = tr * s.rowPixels;  // one add per element
  t.x = copy2d(offset, 1, bytes, 0);
  t.w = copy2d(offset, 1, bytes, 0);
  t.y = copy2d(offset, 1, bytes, 0);
  const int32_t count = static_cast<int32_t>(tr * s.rowPixels);
  if (s.kernel == TileKernel::QAddS8) {
    t.qbinaryParams() = std::get<stowage_qbinary_params>(std::get<QuantCall>(s.call.params).params);  // scales, activation range
    t.qbinaryParams().rank = 1;
    t.qbinaryParams().shape[0] = count;
    t.qbinaryParams().a_stride[0] = t.qbinaryParams().b_stride[0] = 1;
    return t;
  }
  t.binaryParams() = std::get<BinaryCall>(s.call.params).params;  // keeps the fused clamp
  t.binaryParams().rank = 1;
  t.binaryParams().shape[0] = count;
  t.binaryParams().a_stride[0] = t.binaryParams().b_stride[0] = 1;
  return t;
}

/// The conv geometry of a windowed layer (conv or pool), else zeros: computed once per layer, not per tile.
ConvDims windowDims(const LayerShape& s) { return isConv(s.kernel) || isPoolTileKernel(s.kernel) ? convDims(s) : ConvDims{}; }

/// Tile (batch, rows [r0, r0 + tr), channels [n0, n0 + tn)) of `s`, whose windowDims are `d`.
TileDesc makeTile(const LayerShape& s, const ConvDims& d, int64_t batch, int64_t r0, int64_t tr, int64_t n0, int64_t tn) {
  TileDesc t = isElementwiseTileKernel(s.kernel) ? addTile(s, r0, tr)
               : isPoolTileKernel(s.kernel)   ? poolTile(s, d, batch, r0, tr, n0, tn)
               : isConv(s.kernel)             ? convTile(s, d, batch, r0, tr, n0, tn)
                                              : matrixTile(s, batch, r0, tr, n0, tn);
  t.batch = batch;
  t.firstRow = r0;
  return t;
}

/// True when both operands of a broadcast iteration space step densely through the output (no broadcast).
bool denseSameShape(int32_t rank, const int32_t* shape, const int64_t* aStride, const int64_t* bStride) {
  int64_t stride = 1;
  for (int32_t d = rank - 1; d >= 0; --d) {
    if (aStride[d] != stride || bStride[d] != stride) return false;
    stride *= shape[d];
  }
  return true;
}

/// An element-wise layer's rows: the output's last dim is a row, one output "channel", one op per element.
/// Empty string, or why the layer cannot be tiled.
std::string setElementwiseRows(const Graph& g, const Node& node, LayerShape& s) {
  const Tensor& out = g.tensor(node.outputs[0]);
  if (out.shape.empty() || out.shape.back() <= 0) return "the output has no rows to tile";
  s.rowPixels = out.shape.back();
  s.rows = out.numElements() / s.rowPixels;
  s.channels = 1;
  s.reduction = 1;
  return {};
}

}  // namespace

RowSpan windowInputRows(const LayerShape& s, int64_t oy0, int64_t oy1) { return inputRows(convDims(s), oy0, oy1); }

bool isWindowLayer(const LayerShape& s) { return isConv(s.kernel) || isPoolTileKernel(s.kernel); }

namespace {

/// A pointwise int8 NHWC convolution written as an image of one pixel per row (PointwiseRows::Pixels): `p` as the
/// kernel sees the same bytes then (h = oh = pixels, w = ow = 1), when it is one whose rows may be pixels.
bool pointwiseAsPixelRows(stowage_qconv_params& p) {
  const bool pointwise = p.kh == 1 && p.kw == 1 && p.stride_h == 1 && p.stride_w == 1 && p.pad_top == 0 && p.pad_left == 0 &&
                         p.oh == p.h && p.ow == p.w;
  const bool packed = p.out_pixel_stride == 0 || p.out_pixel_stride == p.m;
  if (!pointwise || !packed || p.row_band != 0 || p.ow <= 1 || static_cast<int64_t>(p.oh) * p.ow > kMaxPixelRows) return false;
  p.h = p.oh = p.oh * p.ow;
  p.w = p.ow = 1;
  return true;
}

}  // namespace

LayerShapeResult layerShapeOf(const Graph& g, const Node& node, PointwiseRows rows) {
  LayerShapeResult r;
  auto lowered = lowerNode(g, node);
  if (!lowered.ok()) {
    r.whyNot = "its kernel lowering failed: " + lowered.error().message;
    return r;
  }
  if (lowered->size() != 1) {
    r.whyNot = "it lowers to " + std::to_string(lowered->size()) + " kernel calls, not one";
    return r;
  }
  LayerShape s;
  s.call = lowered->front();
  if (const auto* q = std::get_if<QuantCall>(&s.call.params)) {
    s.elemBytes = 1;
    if (q->kernel == QuantKernel::Conv2d || q->kernel == QuantKernel::DepthwiseConv2d) {
      auto& p = std::get<stowage_qconv_params>(std::get<QuantCall>(s.call.params).params);
      const bool dw = q->kernel == QuantKernel::DepthwiseConv2d;
      const int32_t imageRowPixels = p.ow;
      if (!dw && rows == PointwiseRows::Pixels && pointwiseAsPixelRows(p)) s.imageRowPixels = imageRowPixels;
      s.batches = p.n;  // one image after another
      s.kernel = dw ? TileKernel::QDepthwiseConv2d : TileKernel::QConv2d;
      s.rows = p.oh;
      s.rowPixels = p.ow;
      s.channels = p.m;
      s.reduction = static_cast<int64_t>(p.kh) * p.kw * (dw ? 1 : p.kc);
      // A channel tile holds whole groups: a depthwise layer's depth_multiplier output channels of one input
      // channel go together (the kernel walks input channel x multiplier), also when there is one input channel.
      const int64_t groups = dw ? p.c : p.c / std::max(1, p.kc);
      s.channelStep = groups == 1 && !dw ? 1 : p.m / std::max<int64_t>(1, groups);
    } else if (q->kernel == QuantKernel::FullyConnected) {
      const auto& p = std::get<stowage_qfc_params>(q->params);
      s.kernel = TileKernel::QFullyConnected;
      s.rows = p.batches;
      s.channels = p.m;
      s.reduction = p.k;
    } else if (q->kernel == QuantKernel::AvgPool2d || q->kernel == QuantKernel::MaxPool2d) {
      // AVERAGE_POOL_2D / MAX_POOL_2D, NHWC: output rows by channels, kh x kw taps per output.
      const auto& p = std::get<stowage_qpool_params>(q->params);
      s.kernel = q->kernel == QuantKernel::AvgPool2d ? TileKernel::QAvgPoolS8 : TileKernel::QMaxPoolS8;
      s.batches = p.n;
      s.rows = p.oh;
      s.rowPixels = p.ow;
      s.channels = p.c;
      s.reduction = static_cast<int64_t>(p.kh) * p.kw;
    } else if (q->kernel == QuantKernel::Add) {
      // ADD of two int8 tensors of the output's shape (no broadcast): rows of the last dim, as the float Add.
      const auto& p = std::get<stowage_qbinary_params>(q->params);
      if (!denseSameShape(p.rank, p.shape, p.a_stride, p.b_stride)) {
        r.whyNot = "a broadcasting ADD has no tiled lowering";
        return r;
      }
      if (std::string why = setElementwiseRows(g, node, s); !why.empty()) {
        r.whyNot = why;
        return r;
      }
      s.kernel = TileKernel::QAddS8;
    } else {
      r.whyNot = "no tiled lowering for this int8 kernel";
      return r;
    }
  } else if (const auto* c = std::get_if<ConvCall>(&s.call.params)) {
    const auto& p = c->params;
    if (c->transpose) {
      r.whyNot = "ConvTranspose has no tiled lowering";
      return r;
    }
    // 1-D convolutions are 2-D ones of one row (h = kh = oh = 1 in the params): their tiles split channels only.
    s.batches = p.n;
    s.kernel = TileKernel::Conv2dF32;
    s.elemBytes = 4;
    s.rows = p.oh;
    s.rowPixels = p.ow;
    s.channels = p.m;
    s.reduction = static_cast<int64_t>(p.kh) * p.kw * (p.c / p.group);
    s.channelStep = p.group == 1 ? 1 : p.m / p.group;
  } else if (const auto* gm = std::get_if<GemmCall>(&s.call.params)) {
    if (gm->w8) {
      r.whyNot = "a Gemm with int8 weights (dequantized in the kernel) has no tiled lowering";
      return r;
    }
    s.kernel = TileKernel::GemmF32;  // transA: each tile gathers its columns of the stored [K][M] A
    s.elemBytes = 4;
    s.rows = gm->params.m;
    s.channels = gm->params.n;
    s.reduction = gm->params.k;
  } else if (const auto* mm = std::get_if<MatMulCall>(&s.call.params)) {
    const auto& p = mm->params;
    s.kernel = TileKernel::MatMulF32;
    s.elemBytes = 4;
    s.rows = p.m;
    s.channels = p.n;
    s.reduction = p.k;
    for (int32_t d = 0; d < p.batch_rank; ++d) s.batches *= p.batch_shape[d];
  } else if (const auto* ql = std::get_if<QLinearCall>(&s.call.params)) {
    s.elemBytes = 1;
    if (const auto* p = std::get_if<stowage_qlinear_conv_params>(&ql->params)) {
      s.batches = p->n;
      s.kernel = ql->kernel == QLinearKernel::QLinearConv ? TileKernel::QLinearConv : TileKernel::ConvInteger;
      s.outElemBytes = p->y_type == STOWAGE_ELEM_S32 ? 4 : 1;
      s.rows = p->oh;
      s.rowPixels = p->ow;
      s.channels = p->m;
      s.reduction = static_cast<int64_t>(p->kh) * p->kw * (p->c / p->group);
      s.channelStep = p->group == 1 ? 1 : p->m / p->group;
    } else if (const auto* q = std::get_if<stowage_qlinear_matmul_params>(&ql->params)) {
      s.kernel = ql->kernel == QLinearKernel::QLinearMatMul ? TileKernel::QLinearMatMul : TileKernel::MatMulInteger;
      s.outElemBytes = q->y_type == STOWAGE_ELEM_S32 ? 4 : 1;
      s.rows = q->m;
      s.channels = q->n;
      s.reduction = q->k;
      for (int32_t d = 0; d < q->batch_rank; ++d) s.batches *= q->batch_shape[d];
    } else {
      r.whyNot = "no tiled lowering for this op";
      return r;
    }
  } else if (const auto* pc = std::get_if<PoolCall>(&s.call.params)) {
    // MaxPool / AveragePool, 2-D (or 1-D as one row), NCHW: output rows by channels, kh x kw taps per output.
    const stowage_pool2d_params& p = pc->params;
    if (node.outputs.size() > 1 && node.outputs[1] != kNoTensor) {
      r.whyNot = "MaxPool's Indices output has no tiled lowering";
      return r;
    }
    s.kernel = pc->max ? TileKernel::MaxPoolF32 : TileKernel::AvgPoolF32;
    s.elemBytes = 4;
    s.batches = p.n;
    s.rows = p.oh;
    s.rowPixels = p.ow;
    s.channels = p.c;
    s.reduction = static_cast<int64_t>(p.kh) * p.kw;
  } else if (const auto* gp = std::get_if<GlobalPoolCall>(&s.call.params)) {
    // GlobalAveragePool / GlobalMaxPool over 2-D (or 1-D) NCHW planes: a pool whose one window is the whole plane,
    // so tiles are channel blocks of whole planes (each tile's kernel runs the untiled one's loop on its channels).
    const Shape& in = g.tensor(node.inputs[0]).shape;
    if (in.size() < 3 || in.size() > 4) {
      r.whyNot = "only 1-D and 2-D global pooling is tiled";
      return r;
    }
    stowage_pool2d_params p{};
    p.n = static_cast<int32_t>(in[0]);
    p.c = static_cast<int32_t>(in[1]);
    p.h = in.size() == 4 ? static_cast<int32_t>(in[2]) : 1;
    p.w = static_cast<int32_t>(in.back());
    p.kh = p.h;
    p.kw = p.w;
    p.oh = p.ow = 1;
    p.stride_h = p.stride_w = p.dil_h = p.dil_w = 1;
    const bool max = gp->max;
    s.call.params = PoolCall{p, max};
    s.kernel = max ? TileKernel::GlobalMaxPoolF32 : TileKernel::GlobalAvgPoolF32;
    s.elemBytes = 4;
    s.batches = p.n;
    s.rows = 1;
    s.rowPixels = 1;
    s.channels = p.c;
    s.reduction = static_cast<int64_t>(p.h) * p.w;
  } else if (const auto* bc = std::get_if<BinaryCall>(&s.call.params)) {
    // Add of two tensors of the output's shape (no broadcast): rows of the last dim, one add per element.
    const stowage_broadcast_params& p = bc->params;
    if (bc->op != STOWAGE_BINARY_ADD || !denseSameShape(p.rank, p.shape, p.a_stride, p.b_stride)) {
      r.whyNot = bc->op == STOWAGE_BINARY_ADD ? "a broadcasting Add has no tiled lowering" : "no tiled lowering for this op";
      return r;
    }
    if (std::string why = setElementwiseRows(g, node, s); !why.empty()) {
      r.whyNot = why;
      return r;
    }
    s.kernel = TileKernel::AddF32;
    s.elemBytes = 4;
  } else {
    r.whyNot = "no tiled lowering for this op";
    return r;
  }
  if (tileKernelDtype(s.kernel) == std::string_view("float32")) s.outElemBytes = 4;
  if (s.rows <= 0 || s.channels <= 0 || s.reduction <= 0 || s.batches <= 0) {
    r.whyNot = "the layer is empty";
    return r;
  }
  r.shape = std::move(s);
  return r;
}

TileBytes tileBytes(const LayerShape& s, int64_t rowTile, int64_t channelTile) {
  TileBytes b;
  // The buffers must hold the largest tile of any row block of at most rowTile rows, wherever it starts (uniform,
  // ragged and ramped blocks alike). A block away from the image's edges reads the most input rows, but a small image
  // may have no such block: with 2 output rows of a stride-3 kernel-3 conv padded by 1 at the top, the first block
  // reads 2 input rows and the second 3 (the first and the middle block alone, as sampled before, are the same
  // block there: found by the random differential runs of issue 27). So every start is tried near the edges, where
  // the padding clips the window, and one in the middle.
  // Where each output row reads its own input row (matrix and element-wise rows; windows of one row, stride 1, no
  // padding, such as a pointwise convolution, in pixels or not) every block of rowTile rows is the same size and the
  // first block, the largest, is enough.
  const ConvDims d = windowDims(s);
  const bool rowForRow = !isWindowLayer(s) || (d.kh == 1 && d.sh == 1 && d.padTop == 0 && d.oh == d.h);
  std::vector<int64_t> starts;
  const int64_t edge = 64;
  for (int64_t r0 = 0; r0 < s.rows; ++r0)
    if (r0 == 0 || (!rowForRow && (r0 < edge || r0 >= s.rows - rowTile - edge || r0 == (s.rows - rowTile) / 2))) starts.push_back(r0);
  for (int64_t r0 : starts) {
    const TileDesc t = makeTile(s, d, 0, r0, std::min(rowTile, s.rows - r0), 0, channelTile);
    b.x = std::max(b.x, t.x.bytes());
    b.w = std::max(b.w, t.w.bytes());
    b.y = std::max(b.y, t.y.bytes());
  }
  return b;
}

std::string operandBuffersText(const OperandBuffers& b) {
  if (b.all()) return "double-buffered";
  if (b.none()) return "single-buffered";
  const char* names[3] = {"x", "w", "y"};
  std::string single, dbl;
  for (int op = 0; op < 3; ++op) {
    std::string& list = b.doubled[op] ? dbl : single;
    list += (list.empty() ? "" : "/") + std::string(names[op]);
  }
  return single + " single, " + dbl + " double-buffered";
}

TileSchedule scheduleTiles(const LayerShape& s, int64_t rowTile, int64_t channelTile, int cores, bool doubleBuffer) {
  return scheduleTiles(s, rowTile, channelTile, cores, OperandBuffers::uniform(doubleBuffer), TileOrder::ChannelsOuter);
}

std::vector<std::pair<int64_t, int64_t>> rowBlocks(int64_t rows, int64_t rowTile, int64_t first, int64_t last, bool ramp) {
  std::vector<std::pair<int64_t, int64_t>> out;
  rowTile = std::max<int64_t>(1, rowTile);
  if (first <= 0 && last <= 0) {
    for (int64_t r0 = 0; r0 < rows; r0 += rowTile) out.emplace_back(r0, std::min(rowTile, rows - r0));
    return out;
  }
  first = std::clamp<int64_t>(first, 0, rows);
  last = std::clamp<int64_t>(last, 0, rows - first);
  // The head and tail blocks: `first` and `last`, with a ramp also 2x, 4x, ... of them while below rowTile.
  std::vector<int64_t> head, tail;
  int64_t left = rows - first - last;
  if (first > 0) head.push_back(first);
  if (last > 0) tail.push_back(last);
  for (int64_t n = 2 * first; ramp && first > 0 && n < rowTile && n <= left; n *= 2) {
    head.push_back(n);
    left -= n;
  }
  for (int64_t n = 2 * last; ramp && last > 0 && n < rowTile && n <= left; n *= 2) {
    tail.push_back(n);
    left -= n;
  }
  int64_t r0 = 0;
  for (int64_t n : head) {
    out.emplace_back(r0, n);
    r0 += n;
  }
  if (left > 0) {
    const int64_t blocks = (left + rowTile - 1) / rowTile;
    for (int64_t i = 0; i < blocks; ++i) {
      const int64_t n = left / blocks + (i < left % blocks ? 1 : 0);
      out.emplace_back(r0, n);
      r0 += n;
    }
  }
  for (auto it = tail.rbegin(); it != tail.rend(); ++it) {
    out.emplace_back(r0, *it);
    r0 += *it;
  }
  return out;
}

std::string rowBlocksText(const RowBlocks& r) {
  std::string s;
  const char* ramp = r.ramp ? " doubling" : "";
  if (r.first > 0) s += ", first rows " + std::to_string(r.first) + ramp;
  if (r.last > 0) s += ", last rows " + std::to_string(r.last) + ramp;
  return s;
}

void assignBufferHalves(TileSchedule& out, const OperandBuffers& buffers) {
  const size_t c = out.chunkStart.size() - 1;
  // Buffer halves and loads, per chunk (each core walks its own chunk).
  for (size_t k = 0; k < c; ++k) {
    std::optional<TileCopy> holdsX[2], holdsW[2];
    int prevX = 1, prevW = 1;
    for (size_t i = out.chunkStart[k]; i < out.chunkStart[k + 1]; ++i) {
      TileDesc& t = out.tiles[i];
      auto place = [&](const TileCopy& want, std::optional<TileCopy>* holds, int& prev, int& buf, bool& load, bool doubleBuffer) {
        const int halves = doubleBuffer ? 2 : 1;
        for (int h = 0; h < halves; ++h)
          if (holds[h] && *holds[h] == want) {
            buf = h;
            load = false;
            prev = h;
            return;
          }
        buf = doubleBuffer ? 1 - prev : 0;
        load = want.bytes() > 0;
        holds[buf] = want;
        prev = buf;
      };
      place(t.x, holdsX, prevX, t.xBuf, t.loadX, buffers.doubled[0]);
      place(t.w, holdsW, prevW, t.wBuf, t.loadW, buffers.doubled[1]);
      t.yBuf = buffers.doubled[2] ? static_cast<int>((i - out.chunkStart[k]) % 2) : 0;
    }
  }
}

TileSchedule scheduleTiles(const LayerShape& s, int64_t rowTile, int64_t channelTile, int cores, const OperandBuffers& buffers,
                           TileOrder order, RowBlocks ragged) {
  TileSchedule out;
  const ConvDims dims = windowDims(s);
  // Channel blocks, then row blocks inner: a weight tile is loaded once per channel block. Matrix products walk
  // their batches outermost (each batch may have its own B); a batched conv's images share the weights, so they
  // go inside the channel blocks.
  const bool imagesShareWeights = isConv(s.kernel);
  const size_t c = static_cast<size_t>(std::max(1, cores));
  // Each tile's block (batch, first row, rows, first channel, channels), to cut chunk ends with ragged blocks.
  struct Block {
    int64_t batch, r0, rows, n0, channels;
  };
  std::vector<Block> blocks;
  const int64_t walks = s.batches * ((s.channels + channelTile - 1) / channelTile);
  int64_t walk = 0;
  const auto uniformWalk = rowBlocks(s.rows, rowTile, 0, 0);  // every walk but the ragged ones: cut once
  blocks.reserve(static_cast<size_t>(walks) * (uniformWalk.size() + 2));
  auto rowWalk = [&](int64_t b, int64_t n0) {
    // One core: the layer's first and last blocks are ragged (rows outer: every walk, so row blocks stay aligned).
    const bool layerWide = c == 1, rowsOuter = order == TileOrder::RowsOuter;
    const int64_t first = layerWide && (rowsOuter || walk == 0) ? ragged.first : 0;
    const int64_t last = layerWide && (rowsOuter || walk + 1 == walks) ? ragged.last : 0;
    ++walk;
    const int64_t tn = std::min(channelTile, s.channels - n0);
    if (first <= 0 && last <= 0) {
      for (const auto& [r0, rows] : uniformWalk) blocks.push_back({b, r0, rows, n0, tn});
      return;
    }
    for (const auto& [r0, rows] : rowBlocks(s.rows, rowTile, first, last, ragged.ramp)) blocks.push_back({b, r0, rows, n0, tn});
  };
  if (imagesShareWeights) {
    for (int64_t n0 = 0; n0 < s.channels; n0 += channelTile)
      for (int64_t b = 0; b < s.batches; ++b) rowWalk(b, n0);
  } else {
    for (int64_t b = 0; b < s.batches; ++b)
      for (int64_t n0 = 0; n0 < s.channels; n0 += channelTile) rowWalk(b, n0);
  }
  // Row blocks outer: the same tiles, each row block's channel blocks in a row (an input tile once per row block).
  if (order == TileOrder::RowsOuter)
    std::stable_sort(blocks.begin(), blocks.end(), [](const Block& a, const Block& b) { return std::pair(a.batch, a.r0) < std::pair(b.batch, b.r0); });
  // Cores: contiguous chunks; with ragged blocks each core's first tile gives its first `ragged.first` rows a tile
  // of their own, and its last tile its last `ragged.last` rows (every core's fill and drain get short).
  out.chunkStart.push_back(0);
  out.tiles.reserve(blocks.size() + (c > 1 && !ragged.uniform() ? 2 * c : 0));  // a tile is large: grow once
  for (size_t k = 0; k < c; ++k) {
    std::vector<Block> chunk(blocks.begin() + static_cast<std::ptrdiff_t>(blocks.size() * k / c),
                             blocks.begin() + static_cast<std::ptrdiff_t>(blocks.size() * (k + 1) / c));
    // The first block gives its first `first` rows (with a ramp then 2 first, 4 first, ...) blocks of their own while
    // it has more rows than the cut; the last block likewise from its end.
    if (c > 1 && !chunk.empty() && ragged.first > 0) {
      size_t at = 0;
      for (int64_t n = ragged.first; n > 0 && chunk[at].rows > n; n = ragged.ramp ? 2 * n : 0, ++at) {
        Block rest = chunk[at];
        rest.r0 += n;
        rest.rows -= n;
        chunk[at].rows = n;
        chunk.insert(chunk.begin() + static_cast<std::ptrdiff_t>(at) + 1, rest);
      }
    }
    if (c > 1 && !chunk.empty() && ragged.last > 0) {
      const size_t at = chunk.size() - 1;
      for (int64_t n = ragged.last; n > 0 && chunk[at].rows > n; n = ragged.ramp ? 2 * n : 0) {
        Block tail = chunk[at];
        chunk[at].rows -= n;
        tail.r0 += chunk[at].rows;
        tail.rows = n;
        chunk.insert(chunk.begin() + static_cast<std::ptrdiff_t>(at) + 1, tail);
      }
    }
    for (const Block& b : chunk) out.tiles.push_back(makeTile(s, dims, b.batch, b.r0, b.rows, b.n0, b.channels));
    out.chunkStart.push_back(out.tiles.size());
  }
  assignBufferHalves(out, buffers);
  return out;
}

std::string directOperandsText(const DirectOperands& d) {
  static const char* const names[3] = {"x", "w", "y"};
  std::string out;
  for (int op = 0; op < 3; ++op)
    if (d.direct[op]) out += (out.empty() ? "" : "/") + std::string(names[op]);
  return out;
}

bool copiesContiguous(const TileSchedule& schedule, int op) {
  for (const TileDesc& t : schedule.tiles) {
    const TileCopy& c = op == 0 ? t.x : op == 1 ? t.w : t.y;
    if (c.rows > 1 && c.stride != c.rowBytes) return false;
  }
  return true;
}

namespace {
/// A contiguous one-row copy as two rows of half its bytes, when each half stays a multiple of 4 bytes.
std::optional<TileCopy> asTwoRows(const TileCopy& w) {
  if (w.rows != 1 || w.rowBytes % 8 != 0) return std::nullopt;
  return TileCopy{w.offset, 2, w.rowBytes / 2, w.rowBytes / 2};
}
}  // namespace

void splitWeightLoads(TileSchedule& schedule) {
  schedule.weightsSplit = true;
  for (TileDesc& t : schedule.tiles)
    if (auto two = asTwoRows(t.w)) t.w = *two;
}

std::pair<TileCopy, TileCopy> weightLoadParts(const TileCopy& w) {
  if (auto two = asTwoRows(w)) return weightLoadParts(*two);
  TileCopy first = w, rest = w;
  first.rows = (w.rows + 1) / 2;
  rest.rows = w.rows - first.rows;
  rest.offset = w.offset + first.rows * w.stride;
  return {first, rest};
}

void applyDirectOperands(TileSchedule& schedule, const DirectOperands& d) {
  if (!d.any()) return;
  for (TileDesc& t : schedule.tiles) {
    if (d.direct[0]) {
      t.loadX = false;
      t.xBuf = 0;
    }
    if (d.direct[1]) {
      t.loadW = false;
      t.wBuf = 0;
    }
    if (d.direct[2]) {
      t.storeY = false;
      t.yBuf = 0;
    }
  }
}

}  // namespace stowage
