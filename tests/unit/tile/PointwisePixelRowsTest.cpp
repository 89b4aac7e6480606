// Unit tests of pointwise convolutions tiled in pixels (tile/TileGeometry.h PointwiseRows): an int8 NHWC 1x1 stride-1
// convolution of a small image is seen as one pixel per row (the same bytes), other layers and fused bands keep image
// rows, and on hexagon-vtcm MLPerf Tiny VWW's 6 x 6 pointwise layers split their 36 pixels over all 4 HVX contexts,
// which whole rows of 6 pixels cannot (3 tiles of 2 rows). The bytes: e2e Accelerator.WeightsLoadedOnceBitExactOnHexagon
// and bench/accel.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "ReleaseOnly.h"
#include "ZooTestGraphs.h"
#include "stowage/driver/Compiler.h"
#include "stowage/frontend/TfliteImporter.h"
#include "stowage/tile/TileGeometry.h"

namespace stowage {
namespace {

std::filesystem::path vwwModel() { return std::filesystem::path(STOWAGE_SHARED_DIR) / "models/mlperf-tiny/vww_96_int8.tflite"; }

const Node* nodeNamed(const Graph& g, const std::string& name) {
  for (const Node& n : g.nodes)
    if (n.name == name) return &n;
  return nullptr;
}

TEST(PointwisePixelRows, SmallPointwiseInt8ConvolutionRowsArePixels) {
  if (!std::filesystem::exists(vwwModel())) GTEST_SKIP() << vwwModel() << " not present";
  auto g = importTfliteFile(vwwModel().string());
  ASSERT_TRUE(g.ok()) << g.error().render();
  // CONV_2D_14: 6 x 6 x 128 -> 128, pointwise.
  const Node* pw = nodeNamed(*g, "CONV_2D_14");
  ASSERT_NE(pw, nullptr);
  const auto pixels = layerShapeOf(*g, *pw).shape;
  ASSERT_TRUE(pixels);
  EXPECT_EQ(pixels->rows, 36);
  EXPECT_EQ(pixels->rowPixels, 1);
  EXPECT_EQ(pixels->imageRowPixels, 6);
  const auto& p = std::get<stowage_qconv_params>(std::get<QuantCall>(pixels->call.params).params);
  EXPECT_EQ(p.h, 36);
  EXPECT_EQ(p.w, 1);
  EXPECT_EQ(p.oh, 36);
  EXPECT_EQ(p.ow, 1);
  const auto image = layerShapeOf(*g, *pw, PointwiseRows::Image).shape;
  ASSERT_TRUE(image);
  EXPECT_EQ(image->rows, 6);
  EXPECT_EQ(image->rowPixels, 6);
  EXPECT_EQ(image->imageRowPixels, 0);
  // Same MACs either way.
  EXPECT_EQ(pixels->rows * pixels->rowPixels, image->rows * image->rowPixels);
  // Windows wider than one pixel, strided ones, and pointwise layers of more than kMaxPixelRows pixels keep image rows.
  for (const std::string name : {"DEPTHWISE_CONV_2D_13", "CONV_2D_0", "CONV_2D_2"}) {
    const Node* n = nodeNamed(*g, name);
    ASSERT_NE(n, nullptr) << name;
    const auto s = layerShapeOf(*g, *n).shape;
    ASSERT_TRUE(s) << name;
    EXPECT_EQ(s->imageRowPixels, 0) << name;
    EXPECT_GT(s->rowPixels, 1) << name;
  }
}

// ~1 s: one compile, no host build.
TEST(PointwisePixelRows, VwwSixBySixPointwiseLayersUseEveryHexagonCore) {
  STOWAGE_RELEASE_BUILD_ONLY("a whole model's tile search");
  if (!std::filesystem::exists(vwwModel())) GTEST_SKIP() << vwwModel() << " not present";
  auto g = importTfliteFile(vwwModel().string());
  ASSERT_TRUE(g.ok()) << g.error().render();
  auto r = compileGraphOnBoard(*g, testing::exampleBoard("hexagon-vtcm"), testing::quickPlannerOptions());
  ASSERT_TRUE(r.ok()) << r.error().render();
  int sixBySix = 0;
  for (const OffloadedLayer& l : r->plan.offloaded) {
    const Node& n = r->graph.nodes[static_cast<size_t>(l.step)];
    if (n.op != OpKind::QConv2d || r->graph.tensor(n.outputs[0]).shape != std::vector<int64_t>{1, 6, 6, 128}) continue;
    const auto image = layerShapeOf(r->graph, n, PointwiseRows::Image).shape;
    ASSERT_TRUE(image);
    if (image->reduction != 128) continue;  // pointwise 128 -> 128
    ++sixBySix;
    EXPECT_TRUE(l.rowsArePixels) << n.name;
    EXPECT_EQ(l.cores, 4) << n.name;
    // Every core computes at most a quarter of the pixels: 9, where whole rows give one core 12 (2 rows of 6).
    EXPECT_LE(l.rowTile * ((l.tiles + l.cores - 1) / l.cores), 9) << n.name << ": " << l.tiles << " tiles of " << l.rowTile;
    EXPECT_EQ(l.computeCycles, 1152u) << n.name;  // 36 * 128 * 128 MACs / 4 cores / 128 per cycle
  }
  EXPECT_EQ(sixBySix, 5);  // CONV_2D_14 .. CONV_2D_22
}

}  // namespace
}  // namespace stowage
