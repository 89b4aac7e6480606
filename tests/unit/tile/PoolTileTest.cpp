// Unit tests of the tile geometry of pooling layers (float MaxPool / AveragePool NCHW, TFLite int8 AVERAGE_POOL_2D /
// MAX_POOL_2D NHWC): every tiling of a layer with padding, strides, dilation, a window running past the trailing pad
// (ceil mode) and count_include_pad, run tile by tile with the portable kernels on the copies the tiles describe,
// gives the untiled kernel's outputs bit for bit; pooling tiles load no weights. Global pools (GlobalAveragePool /
// GlobalMaxPool, NaN included) tile by channel blocks of whole planes and give the untiled outputs bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "../codegen/TestGraphs.h"

#include "stowage_kernels.h"
#include "stowage_kernels_int8.h"
#include "stowage/tile/CostModel.h"
#include "stowage/tile/TileGeometry.h"

namespace stowage {
namespace {

/// The bytes `copy` describes in `tensor`, packed (rows of rowBytes).
std::vector<uint8_t> gather(const std::vector<uint8_t>& tensor, const TileCopy& copy) {
  std::vector<uint8_t> out(copy.bytes());
  for (size_t r = 0; r < copy.rows; ++r) std::memcpy(out.data() + r * copy.rowBytes, tensor.data() + copy.offset + r * copy.stride, copy.rowBytes);
  return out;
}

/// Writes the packed `local` back where `copy` says in `tensor`.
void scatter(std::vector<uint8_t>& tensor, const TileCopy& copy, const std::vector<uint8_t>& local) {
  for (size_t r = 0; r < copy.rows; ++r) std::memcpy(tensor.data() + copy.offset + r * copy.stride, local.data() + r * copy.rowBytes, copy.rowBytes);
}

/// The tiler's view of a pooling call: oh rows of ow outputs by c channels, kh * kw taps each.
LayerShape poolShape(TileKernel kernel, KernelParams call, int64_t batches, int64_t oh, int64_t ow, int64_t c, int64_t taps, size_t elemBytes) {
  LayerShape s;
  s.kernel = kernel;
  s.call = KernelCall{std::move(call), {}, kNoTensor};
  s.batches = batches;
  s.rows = oh;
  s.rowPixels = ow;
  s.channels = c;
  s.reduction = taps;
  s.elemBytes = s.outElemBytes = elemBytes;
  return s;
}

/// Float pooling: x [2, 3, 9, 7], 3x2 windows, stride 2 x 1, pads top 1 / bottom 2 (a last window past the image,
/// as ceil mode gives), left 1 / right 0, dilation 2 x 1.
LayerShape floatPool(bool max, bool countIncludePad) {
  PoolCall c;
  c.max = max;
  stowage_pool2d_params& p = c.params;
  std::memset(&p, 0, sizeof p);
  p.n = 2, p.c = 3, p.h = 9, p.w = 7, p.kh = 3, p.kw = 2, p.stride_h = 2, p.stride_w = 1;
  p.pad_top = 1, p.pad_bottom = 2, p.pad_left = 1, p.pad_right = 0, p.dil_h = 2, p.dil_w = 1;
  p.oh = (p.h + p.pad_top + p.pad_bottom - ((p.kh - 1) * p.dil_h + 1)) / p.stride_h + 1;
  p.ow = (p.w + p.pad_left + p.pad_right - ((p.kw - 1) * p.dil_w + 1)) / p.stride_w + 1;
  p.count_include_pad = countIncludePad ? 1 : 0;
  return poolShape(max ? TileKernel::MaxPoolF32 : TileKernel::AvgPoolF32, c, p.n, p.oh, p.ow, p.c, p.kh * p.kw, 4);
}

void expectFloatTilesMatch(bool max, bool countIncludePad) {
  const LayerShape s = floatPool(max, countIncludePad);
  const stowage_pool2d_params& p = std::get<PoolCall>(s.call.params).params;
  std::vector<float> x(static_cast<size_t>(p.n * p.c * p.h * p.w));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>((i * 37) % 101) - 50) / 7.0f;
  std::vector<float> want(static_cast<size_t>(p.n * p.c * p.oh * p.ow));
  (max ? stowage_maxpool2d_f32 : stowage_avgpool2d_f32)(x.data(), want.data(), &p);
  std::vector<uint8_t> xb(x.size() * 4);
  std::memcpy(xb.data(), x.data(), xb.size());
  for (int64_t rows = 1; rows <= s.rows; ++rows)
    for (int64_t channels = 1; channels <= s.channels; ++channels) {
      const TileSchedule sched = scheduleTiles(s, rows, channels, 2, true);
      std::vector<uint8_t> yb(want.size() * 4, 0xFF);
      for (const TileDesc& t : sched.tiles) {
        EXPECT_EQ(t.w.bytes(), 0u);
        EXPECT_FALSE(t.loadW) << "pooling has no weights";
        const std::vector<uint8_t> local = gather(xb, t.x);
        std::vector<uint8_t> out(t.y.bytes());
        (max ? stowage_maxpool2d_f32 : stowage_avgpool2d_f32)(reinterpret_cast<const float*>(local.data()), reinterpret_cast<float*>(out.data()),
                                                               &t.poolParams());
        scatter(yb, t.y, out);
      }
      std::vector<float> got(want.size());
      std::memcpy(got.data(), yb.data(), yb.size());
      EXPECT_EQ(0, std::memcmp(got.data(), want.data(), yb.size())) << rows << " rows x " << channels << " channels";
    }
}

TEST(PoolTiles, FloatAveragePoolTilesGiveTheUntiledOutputs) {
  expectFloatTilesMatch(false, false);
  expectFloatTilesMatch(false, true);
}

TEST(PoolTiles, FloatMaxPoolTilesGiveTheUntiledOutputs) { expectFloatTilesMatch(true, false); }

TEST(PoolTiles, GlobalPoolTilesGiveTheUntiledOutputs) {
  for (bool max : {false, true}) {
    // x [2, 5, 4, 3] -> Global{Average,Max}Pool -> y [2, 5, 1, 1], lowered as the compiler does.
    Graph g;
    const TensorId x = testing::addInput(g, "x", {2, 5, 4, 3});
    const TensorId y = testing::addTensor(g, "y", {2, 5, 1, 1});
    testing::addNode(g, "pool", max ? OpKind::GlobalMaxPool : OpKind::GlobalAveragePool, {x}, y);
    g.outputs = {y};
    const LayerShapeResult r = layerShapeOf(g, g.nodes[0]);
    ASSERT_TRUE(r.shape.has_value()) << r.whyNot;
    const LayerShape& s = *r.shape;
    EXPECT_EQ(s.kernel, max ? TileKernel::GlobalMaxPoolF32 : TileKernel::GlobalAvgPoolF32);
    EXPECT_TRUE(runsOnCoresOnly(s.kernel));
    std::vector<float> xv(2 * 5 * 4 * 3);
    for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>(static_cast<int>((i * 29) % 97) - 48) / 3.0f;
    xv[17] = std::nanf("");  // channel 1 of image 0: the max keeps the NaN, the average spreads it
    std::vector<float> want(10);
    (max ? stowage_global_maxpool_f32 : stowage_global_avgpool_f32)(xv.data(), want.data(), 10, 12);
    std::vector<uint8_t> xb(xv.size() * 4);
    std::memcpy(xb.data(), xv.data(), xb.size());
    for (int64_t channels = 1; channels <= s.channels; ++channels) {
      const TileSchedule sched = scheduleTiles(s, 1, channels, 2, true);
      std::vector<uint8_t> yb(want.size() * 4, 0xFF);
      for (const TileDesc& t : sched.tiles) {
        EXPECT_FALSE(t.loadW);
        EXPECT_EQ(t.x.rows * t.x.rowBytes, t.x.bytes());
        const std::vector<uint8_t> local = gather(xb, t.x);
        std::vector<uint8_t> out(t.y.bytes());
        (max ? stowage_global_maxpool2d_f32 : stowage_global_avgpool2d_f32)(reinterpret_cast<const float*>(local.data()),
                                                                             reinterpret_cast<float*>(out.data()), &t.poolParams());
        scatter(yb, t.y, out);
      }
      EXPECT_EQ(0, std::memcmp(yb.data(), want.data(), yb.size())) << channels << " channels";
    }
  }
}

TEST(PoolTiles, Int8NhwcPoolTilesGiveTheUntiledOutputs) {
  for (bool max : {false, true}) {
    QuantCall c;
    c.kernel = max ? QuantKernel::MaxPool2d : QuantKernel::AvgPool2d;
    stowage_qpool_params p;
    std::memset(&p, 0, sizeof p);
    p.n = 1, p.h = 8, p.w = 6, p.c = 5, p.kh = 3, p.kw = 3, p.stride_h = 2, p.stride_w = 2, p.pad_top = 1, p.pad_left = 1;
    p.oh = 4, p.ow = 3, p.act_min = -100, p.act_max = 90;
    c.params = p;
    const LayerShape s = poolShape(max ? TileKernel::QMaxPoolS8 : TileKernel::QAvgPoolS8, c, p.n, p.oh, p.ow, p.c, p.kh * p.kw, 1);
    std::vector<uint8_t> x(static_cast<size_t>(p.h * p.w * p.c));
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<uint8_t>((i * 53) % 256);
    std::vector<uint8_t> want(static_cast<size_t>(p.oh * p.ow * p.c));
    (max ? stowage_qmaxpool2d_s8 : stowage_qavgpool2d_s8)(reinterpret_cast<const int8_t*>(x.data()), reinterpret_cast<int8_t*>(want.data()), &p);
    for (int64_t rows = 1; rows <= s.rows; ++rows)
      for (int64_t channels = 1; channels <= s.channels; ++channels) {
        const TileSchedule sched = scheduleTiles(s, rows, channels, 3, true);
        std::vector<uint8_t> y(want.size(), 0);
        for (const TileDesc& t : sched.tiles) {
          EXPECT_EQ(t.w.bytes(), 0u);
          EXPECT_EQ(t.macs, t.outRows * p.ow * t.channels * 9);
          const std::vector<uint8_t> local = gather(x, t.x);
          std::vector<uint8_t> out(t.y.bytes());
          (max ? stowage_qmaxpool2d_s8 : stowage_qavgpool2d_s8)(reinterpret_cast<const int8_t*>(local.data()),
                                                                reinterpret_cast<int8_t*>(out.data()), &t.qpoolParams());
          scatter(y, t.y, out);
        }
        EXPECT_EQ(y, want) << (max ? "max " : "avg ") << rows << " rows x " << channels << " channels";
      }
  }
}

TEST(PoolTiles, CoresComputeOneTapPerCycleAndMacOfTheirShare) {
  const LayerShape s = floatPool(false, false);
  Target t;
  t.kind = TargetKind::Accelerator;
  t.macsPerCycle = 4;
  const TileSchedule sched = scheduleTiles(s, 2, 3, 1, true);
  const TileDesc& tile = sched.tiles.front();
  EXPECT_EQ(tile.macs, 2 * s.rowPixels * 3 * 6);
  EXPECT_EQ(tileComputeCycles(t, s, tile), static_cast<uint64_t>((tile.macs + 3) / 4));
  EXPECT_TRUE(runsOnCoresOnly(s.kernel));
  EXPECT_EQ(std::string(tileKernelFunction(TileKernel::AvgPoolF32)), "stowage_avgpool2d_f32");
  EXPECT_EQ(std::string(tileKernelParamsType(TileKernel::QMaxPoolS8)), "stowage_qpool_params");
}

}  // namespace
}  // namespace stowage
