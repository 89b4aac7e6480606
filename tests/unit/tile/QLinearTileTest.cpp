// Unit tests of the tile geometry of the ONNX integer kernels (QLinearConv, ConvInteger: NCHW rows x output
// channels; QLinearMatMul, MatMulInteger and float MatMul: rows of A x columns of B, batch by batch): the copies
// of each tile, its kernel parameters, the channel / row offsets of per-channel and per-row scales, weight
// reuse across batches of a broadcast B, and the engine cycles of a tile; batched convolutions (one image after
// another), float Gemm with transA (each tile gathers its columns of A) and element-wise float and int8 Add (rows of
// both inputs).
#include <gtest/gtest.h>

#include <cstring>

#include "stowage/target/Target.h"
#include "stowage/tile/CostModel.h"
#include "stowage/tile/TileGeometry.h"

namespace stowage {
namespace {

/// A QLinearConv (or ConvInteger) layer: x u8 [1,2,5,5], w [4,2,3,3], pad 1, stride 1, per-channel weights.
LayerShape qconvLayer(bool integer) {
  stowage_qlinear_conv_params p;
  std::memset(&p, 0, sizeof p);
  p.n = 1, p.c = 2, p.h = 5, p.w = 5, p.m = 4, p.oh = 5, p.ow = 5, p.kh = 3, p.kw = 3, p.group = 1;
  p.stride_h = p.stride_w = p.dil_h = p.dil_w = 1;
  p.pad_top = p.pad_left = 1;
  p.x_type = STOWAGE_ELEM_U8, p.w_type = STOWAGE_ELEM_S8, p.y_type = integer ? STOWAGE_ELEM_S32 : STOWAGE_ELEM_S8;
  p.w_quant_count = 4;
  QLinearCall call;
  call.kernel = integer ? QLinearKernel::ConvInteger : QLinearKernel::QLinearConv;
  call.params = p;
  LayerShape s;
  s.kernel = integer ? TileKernel::ConvInteger : TileKernel::QLinearConv;
  s.call = KernelCall{call, {}, kNoTensor};
  s.rows = 5;
  s.rowPixels = 5;
  s.channels = 4;
  s.reduction = 18;
  s.elemBytes = 1;
  s.outElemBytes = integer ? 4 : 1;
  return s;
}

TEST(QLinearTiles, ConvTileReadsItsInputRowsAndChannelBlock) {
  const LayerShape s = qconvLayer(false);
  const TileSchedule sched = scheduleTiles(s, 2, 2, 1, true);
  ASSERT_EQ(sched.tiles.size(), 6u);  // 2 channel blocks x 3 row blocks (2, 2, 1 rows)
  // Channel block 1 (channels 2..3), row block 1 (output rows 2..3): input rows 1..4 of both channels.
  const TileDesc& t = sched.tiles[4];
  EXPECT_EQ(t.x, (TileCopy{5, 2, 20, 25}));  // from row 1, 2 channel planes of 4 rows x 5 bytes
  EXPECT_EQ(t.w, (TileCopy{36, 1, 36, 36}));  // weights of channels 2..3
  EXPECT_EQ(t.y, (TileCopy{60, 2, 10, 25}));  // channel 2, row 2; 2 planes of 2 rows
  EXPECT_EQ(t.channelOffset, 2);
  EXPECT_EQ(t.qlconvParams().c, 2);
  EXPECT_EQ(t.qlconvParams().h, 4);
  EXPECT_EQ(t.qlconvParams().m, 2);
  EXPECT_EQ(t.qlconvParams().oh, 2);
  EXPECT_EQ(t.qlconvParams().pad_top, 0);
  EXPECT_EQ(t.qlconvParams().w_quant_count, 2);  // per-channel scales read from channel 2 on
  EXPECT_EQ(t.macs, 2 * 5 * 2 * 18);
  // The first row block reads padding above the image.
  EXPECT_EQ(sched.tiles[0].qlconvParams().pad_top, 1);
  EXPECT_EQ(sched.tiles[0].qlconvParams().h, 3);
}

TEST(QLinearTiles, ConvIntegerStoresInt32Accumulators) {
  const LayerShape s = qconvLayer(true);
  const TileSchedule sched = scheduleTiles(s, 2, 2, 1, true);
  EXPECT_EQ(sched.tiles[4].y, (TileCopy{240, 2, 40, 100}));
  const TileBytes b = tileBytes(s, 2, 2);
  EXPECT_EQ(b.y, 2u * 2u * 5u * 4u);
  EXPECT_EQ(b.w, 36u);
}

TEST(QLinearTiles, BatchedConvTilesWalkTheImagesWithBatchOneKernels) {
  LayerShape s = qconvLayer(false);
  auto& p = std::get<stowage_qlinear_conv_params>(std::get<QLinearCall>(s.call.params).params);
  p.n = 2;
  s.batches = 2;
  const TileSchedule sched = scheduleTiles(s, 2, 2, 1, true);
  ASSERT_EQ(sched.tiles.size(), 12u);  // 2 channel blocks x 2 images x 3 row blocks
  // Image 1 starts 2 * 5 * 5 input bytes and 4 * 5 * 5 output bytes in; its tiles equal image 0's otherwise.
  const TileDesc& a = sched.tiles[1];
  const TileDesc& b = sched.tiles[4];
  EXPECT_EQ(b.batch, 1);
  EXPECT_EQ(b.x, (TileCopy{a.x.offset + 50, a.x.rows, a.x.rowBytes, a.x.stride}));
  EXPECT_EQ(b.y, (TileCopy{a.y.offset + 100, a.y.rows, a.y.rowBytes, a.y.stride}));
  EXPECT_EQ(b.w, a.w);
  EXPECT_EQ(b.qlconvParams().n, 1);
  EXPECT_EQ(a.qlconvParams().n, 1);
  EXPECT_EQ(b.channelOffset, a.channelOffset);
  // The images of a channel block share its weight tile: loaded once per channel block, not per image.
  int weightLoads = 0;
  for (const TileDesc& t : sched.tiles) weightLoads += t.loadW ? 1 : 0;
  EXPECT_EQ(weightLoads, 2);
}

/// A QLinearMatMul [2,3,4] x [4,5] (B broadcast over the batch), per-row A / y and per-column B quantization.
LayerShape qmatmulLayer() {
  stowage_qlinear_matmul_params p;
  std::memset(&p, 0, sizeof p);
  p.batch_rank = 1;
  p.batch_shape[0] = 2;
  p.a_stride[0] = 12;
  p.b_stride[0] = 0;
  p.m = 3, p.n = 5, p.k = 4;
  p.a_type = STOWAGE_ELEM_S8, p.b_type = STOWAGE_ELEM_U8, p.y_type = STOWAGE_ELEM_S8;
  p.a_quant_count = 3, p.b_quant_count = 5, p.y_quant_count = 3;
  QLinearCall call;
  call.kernel = QLinearKernel::QLinearMatMul;
  call.params = p;
  LayerShape s;
  s.kernel = TileKernel::QLinearMatMul;
  s.call = KernelCall{call, {}, kNoTensor};
  s.rows = 3;
  s.channels = 5;
  s.reduction = 4;
  s.batches = 2;
  return s;
}

TEST(QLinearTiles, MatMulTilesWalkTheBatchWithRowAndColumnOffsets) {
  const LayerShape s = qmatmulLayer();
  const TileSchedule sched = scheduleTiles(s, 2, 3, 1, true);
  ASSERT_EQ(sched.tiles.size(), 8u);  // 2 batches x 2 column blocks x 2 row blocks
  // Batch 1, columns 3..4, rows 2..2.
  const TileDesc& t = sched.tiles[7];
  EXPECT_EQ(t.x, (TileCopy{20, 1, 4, 4}));   // A[1][2][:]
  EXPECT_EQ(t.w, (TileCopy{3, 4, 2, 5}));    // B[:, 3..4]
  EXPECT_EQ(t.y, (TileCopy{28, 1, 2, 2}));   // y[1][2][3..4] (one row: its own stride)
  EXPECT_EQ(t.rowOffset, 2);
  EXPECT_EQ(t.channelOffset, 3);
  EXPECT_EQ(t.qlmatmulParams().batch_rank, 0);
  EXPECT_EQ(t.qlmatmulParams().m, 1);
  EXPECT_EQ(t.qlmatmulParams().n, 2);
  EXPECT_EQ(t.qlmatmulParams().a_quant_count, 1);
  EXPECT_EQ(t.qlmatmulParams().y_quant_count, 1);
  EXPECT_EQ(t.qlmatmulParams().b_quant_count, 2);
  // The broadcast B's columns of the first tile of batch 1 are still in their half: not loaded again.
  EXPECT_FALSE(sched.tiles[4].loadW);
  EXPECT_EQ(sched.tiles[4].w, sched.tiles[0].w);
  EXPECT_TRUE(sched.tiles[4].loadX);
}

TEST(QLinearTiles, FloatMatMulBatchOffsetsFollowTheKernelsBatchWalk) {
  MatMulCall call;
  std::memset(&call.params, 0, sizeof call.params);
  call.params.batch_rank = 2;
  call.params.batch_shape[0] = 2;
  call.params.batch_shape[1] = 3;
  call.params.a_stride[0] = 3 * 6, call.params.a_stride[1] = 6;  // A [2,3,2,3]
  call.params.b_stride[0] = 12, call.params.b_stride[1] = 0;     // B [2,1,3,4]
  call.params.m = 2, call.params.n = 4, call.params.k = 3;
  LayerShape s;
  s.kernel = TileKernel::MatMulF32;
  s.call = KernelCall{call, {}, kNoTensor};
  s.rows = 2;
  s.channels = 4;
  s.reduction = 3;
  s.batches = 6;
  s.elemBytes = s.outElemBytes = 4;
  const TileSchedule sched = scheduleTiles(s, 2, 4, 1, false);
  ASSERT_EQ(sched.tiles.size(), 6u);
  // Batch 4 = index (1, 1): A at 18 + 6 elements, B at 12, y at 4 * 8.
  EXPECT_EQ(sched.tiles[4].x, (TileCopy{24 * 4, 1, 24, 24}));
  EXPECT_EQ(sched.tiles[4].w, (TileCopy{12 * 4, 1, 48, 48}));
  EXPECT_EQ(sched.tiles[4].y, (TileCopy{32 * 4, 1, 32, 32}));
  EXPECT_EQ(sched.tiles[4].matmulParams().batch_rank, 0);
}

TEST(QLinearTiles, EngineCyclesOfATileAndDtypes) {
  const LayerShape s = qmatmulLayer();
  const TileSchedule sched = scheduleTiles(s, 3, 5, 1, true);
  Target t;
  t.engineDim = 4;
  // ceil(5/4) * ceil(4/4) * (3 + 4)
  EXPECT_EQ(tileComputeCycles(t, s, sched.tiles[0]), 14u);
  EXPECT_STREQ(tileKernelDtype(TileKernel::QLinearMatMul), "int8");
  EXPECT_STREQ(tileKernelDtype(TileKernel::MatMulF32), "float32");
  EXPECT_STREQ(tileKernelIntrinsic(TileKernel::ConvInteger), "conv_integer");
  EXPECT_EQ(tileKernelFunction(TileKernel::QLinearConv), "stowage_qlinear_conv");
}

TEST(FloatTiles, GemmWithTransAGathersEachTilesColumnsOfA) {
  // y [6, 4] = A^T B with A stored [K = 3][M = 6], B [3, 4]; tiles of 2 rows x 4 columns.
  GemmCall call;
  std::memset(&call.params, 0, sizeof call.params);
  call.params.m = 6, call.params.n = 4, call.params.k = 3;
  call.params.trans_a = 1;
  call.params.alpha = 1.0f;
  LayerShape s;
  s.kernel = TileKernel::GemmF32;
  s.call = KernelCall{call, {}, kNoTensor};
  s.rows = 6;
  s.channels = 4;
  s.reduction = 3;
  s.elemBytes = s.outElemBytes = 4;
  const TileSchedule sched = scheduleTiles(s, 2, 4, 1, true);
  ASSERT_EQ(sched.tiles.size(), 3u);
  const TileDesc& t = sched.tiles[1];  // output rows 2..3 = columns 2..3 of A
  EXPECT_EQ(t.x, (TileCopy{8, 3, 8, 24}));  // 3 rows of 2 floats, 6 floats apart, from column 2
  EXPECT_EQ(t.gemmParams().trans_a, 1);
  EXPECT_EQ(t.gemmParams().m, 2);  // the packed tile is [K][2]
  EXPECT_EQ(tileBytes(s, 2, 4).x, 3u * 2u * 4u);
}

TEST(FloatTiles, AddTilesAreTheSameRowsOfBothInputsAndTheOutput) {
  // y [2, 3, 4] = a + b (no broadcast), with a fused Relu: rows of the last dim (6 rows of 4 floats).
  BinaryCall call;
  call.op = STOWAGE_BINARY_ADD;
  std::memset(&call.params, 0, sizeof call.params);
  call.params.rank = 1;
  call.params.shape[0] = 24;
  call.params.a_stride[0] = call.params.b_stride[0] = 1;
  call.params.clamp = 1;
  call.params.clamp_max = 6.0f;
  LayerShape s;
  s.kernel = TileKernel::AddF32;
  s.call = KernelCall{call, {}, kNoTensor};
  s.rows = 6;
  s.rowPixels = 4;
  s.channels = 1;
  s.reduction = 1;
  s.elemBytes = s.outElemBytes = 4;
  const TileSchedule sched = scheduleTiles(s, 4, 1, 1, true);
  ASSERT_EQ(sched.tiles.size(), 2u);
  const TileDesc& t = sched.tiles[1];  // rows 4..5
  EXPECT_EQ(t.x, (TileCopy{64, 1, 32, 32}));
  EXPECT_EQ(t.w, t.x);
  EXPECT_EQ(t.y, t.x);
  EXPECT_EQ(t.binaryParams().shape[0], 8);
  EXPECT_EQ(t.binaryParams().clamp, 1);
  EXPECT_EQ(t.binaryParams().clamp_max, 6.0f);
  EXPECT_EQ(t.macs, 8);
  EXPECT_TRUE(sched.tiles[0].loadW) << "B is an activation loaded like weights, tile by tile";
  EXPECT_TRUE(t.loadW);
}

TEST(Int8Tiles, QAddTilesKeepTheQuantizationAndSplitRows) {
  // int8 ADD of two [1, 4, 4, 8] NHWC tensors: rows of 8 bytes; tiles of 3 rows.
  stowage_qbinary_params p;
  std::memset(&p, 0, sizeof p);
  p.rank = 1;
  p.shape[0] = 128;
  p.a_stride[0] = p.b_stride[0] = 1;
  p.a_offset = 5, p.b_offset = -3, p.output_offset = 7, p.left_shift = 20;
  p.a_multiplier = 1 << 30, p.b_multiplier = 1 << 29, p.output_multiplier = 1 << 30;
  p.act_min = 0, p.act_max = 127;
  QuantCall call;
  call.kernel = QuantKernel::Add;
  call.params = p;
  LayerShape s;
  s.kernel = TileKernel::QAddS8;
  s.call = KernelCall{call, {}, kNoTensor};
  s.rows = 16;
  s.rowPixels = 8;
  s.channels = 1;
  s.reduction = 1;
  const TileSchedule sched = scheduleTiles(s, 3, 1, 2, true);
  ASSERT_EQ(sched.tiles.size(), 6u);  // 3+3+3+3+3+1 rows, split over 2 cores
  const TileDesc& last = sched.tiles.back();
  EXPECT_EQ(last.x, (TileCopy{120, 1, 8, 8}));
  EXPECT_EQ(last.w, last.x);
  EXPECT_EQ(last.y, last.x);
  EXPECT_EQ(last.qbinaryParams().shape[0], 8);
  EXPECT_EQ(last.qbinaryParams().output_offset, 7);
  EXPECT_EQ(last.qbinaryParams().left_shift, 20);
  EXPECT_EQ(last.qbinaryParams().act_min, 0);
  EXPECT_TRUE(isElementwiseTileKernel(s.kernel));
  EXPECT_FALSE(isElementwiseTileKernel(TileKernel::Conv2dF32));
  EXPECT_STREQ(tileKernelDtype(s.kernel), "int8");
}

}  // namespace
}  // namespace stowage
