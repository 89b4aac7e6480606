// Unit tests of non-uniform row blocks (a smaller first and / or last row block, tile/RaggedRowBlocks.h): the row
// walk covers every row once with no block above the row tile; a ragged schedule covers every output once, in
// either tile order (rows outer: every channel block walks the same blocks, so each input row block is loaded once)
// and on several cores (each core's chunk cut at both ends);
// a ramp doubles the blocks from the first and towards the last up to the row tile;
// the chooser takes ragged blocks only when its estimate is lower than the same tiling's uniform one; and the zoo
// ResNet-8 on gemmini-like, whose convolutions take them, runs bit-exact against the CPU with the simulator's cycles
// equal to the estimates and the reports showing the blocks.
#include <gtest/gtest.h>

#include <vector>

#include "ZooTestGraphs.h"
#include "stowage/driver/Compiler.h"
#include "stowage/report/OffloadSummary.h"
#include "stowage/report/ReportJson.h"
#include "stowage/tile/CostModel.h"
#include "stowage/tile/RaggedRowBlocks.h"
#include "stowage/tile/TileChoice.h"
#include "stowage/tile/TileProgram.h"

namespace stowage {
namespace {

std::string walkName(int64_t rows, int64_t tile, int64_t first, int64_t last) {
  return "rows " + std::to_string(rows) + " tile " + std::to_string(tile) + " first " + std::to_string(first) + " last " + std::to_string(last);
}

/// `blocks` (a walk over `rows` rows in blocks of at most `tile`) cover every row once, in order, and start with a
/// block of `first` rows and end with one of `last` rows where those are above 0.
void expectWalkCoversRows(const std::vector<std::pair<int64_t, int64_t>>& blocks, int64_t rows, int64_t tile, int64_t first, int64_t last,
                          const std::string& where) {
  int64_t next = 0;
  for (const auto& [r0, n] : blocks) {
    EXPECT_EQ(r0, next) << where;
    EXPECT_GE(n, 1) << where;
    EXPECT_LE(n, tile) << where;
    next = r0 + n;
  }
  EXPECT_EQ(next, rows) << where;
  if (first > 0) {
    EXPECT_EQ(blocks.front().second, first) << where;
  }
  if (last > 0) {
    EXPECT_EQ(blocks.back().second, last) << where;
  }
}

TEST(RaggedRows, RowWalkCoversEveryRowOnceWithinTheRowTile) {
  for (int64_t rows = 1; rows <= 20; ++rows)
    for (int64_t tile = 1; tile <= rows; ++tile)
      for (int64_t first = 0; first <= tile; ++first)
        for (int64_t last = 0; last <= tile && first + last <= rows; ++last) {
          const auto blocks = rowBlocks(rows, tile, first, last);
          const std::string where = walkName(rows, tile, first, last);
          ASSERT_FALSE(blocks.empty()) << where;
          expectWalkCoversRows(blocks, rows, tile, first, last, where);
          const int64_t between = rows - first - last;
          const size_t expected = (first > 0 ? 1u : 0u) + (last > 0 ? 1u : 0u) + static_cast<size_t>((between + tile - 1) / tile);
          EXPECT_EQ(blocks.size(), expected) << where;
        }
  // Uniform: blocks of the row tile, the remainder last.
  EXPECT_EQ(rowBlocks(10, 4, 0, 0), (std::vector<std::pair<int64_t, int64_t>>{{0, 4}, {4, 4}, {8, 2}}));
  // Ragged: the rows between are split evenly, larger blocks first.
  EXPECT_EQ(rowBlocks(10, 4, 1, 2), (std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {1, 4}, {5, 3}, {8, 2}}));
  EXPECT_EQ(rowBlocksText(RowBlocks{}), "");
  EXPECT_EQ(rowBlocksText(RowBlocks{1, 2}), ", first rows 1, last rows 2");
  EXPECT_EQ(rowBlocksText(RowBlocks{0, 3}), ", last rows 3");
  EXPECT_EQ(rowBlocksText(RowBlocks{1, 0, true}), ", first rows 1 doubling");
  EXPECT_EQ(rowBlocksText(RowBlocks{3, 2, true}), ", first rows 3 doubling, last rows 2 doubling");
}

TEST(RaggedRows, RampDoublesTowardsTheRowTileAndCoversEveryRowOnce) {
  // Both ends ramp: 1, 2, 4 up to the row tile 8 and back down; the 6 rows between make one block.
  EXPECT_EQ(rowBlocks(20, 8, 1, 1, true),
            (std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {1, 2}, {3, 4}, {7, 6}, {13, 4}, {17, 2}, {19, 1}}));
  // The ramp stops below the row tile (3, then 6 < 8) and where the rows run out.
  EXPECT_EQ(rowBlocks(32, 8, 3, 0, true), (std::vector<std::pair<int64_t, int64_t>>{{0, 3}, {3, 6}, {9, 8}, {17, 8}, {25, 7}}));
  EXPECT_EQ(rowBlocks(5, 8, 2, 0, true), (std::vector<std::pair<int64_t, int64_t>>{{0, 2}, {2, 3}}));
  for (int64_t rows = 1; rows <= 24; ++rows)
    for (int64_t tile = 1; tile <= rows; ++tile)
      for (int64_t first = 0; first < tile; ++first)
        for (int64_t last = 0; last < tile && first + last < rows; ++last) {
          const auto blocks = rowBlocks(rows, tile, first, last, true);
          expectWalkCoversRows(blocks, rows, tile, first, last, walkName(rows, tile, first, last) + " ramp");
        }
  // Candidates: a ramp only where it adds a block (2 x first or 2 x last below the row tile).
  for (const RowBlocks& r : raggedRowBlockCandidates(16, 8))
    if (r.ramp) {
      EXPECT_TRUE((r.first > 0 && 2 * r.first < 8) || (r.last > 0 && 2 * r.last < 8)) << r.first << " " << r.last;
    }
}

TEST(RaggedRows, CandidatesStayBelowTheRowTile) {
  const auto c = raggedRowBlockCandidates(8, 8);
  EXPECT_FALSE(c.empty());
  for (const RowBlocks& r : c) {
    EXPECT_FALSE(r.uniform());
    EXPECT_LT(r.first, 8);
    EXPECT_LT(r.last, 8);
    EXPECT_LT(r.first + r.last, 8);
  }
  EXPECT_TRUE(raggedRowBlockCandidates(5, 1).empty());  // 1-row blocks cannot shrink
  EXPECT_TRUE(raggedRowBlockCandidates(1, 1).empty());
}

/// Per output element, how many tiles of `sched` write it (a float NCHW layer of `s`).
std::vector<int> outputCoverage(const LayerShape& s, const TileSchedule& sched) {
  std::vector<int> covered(static_cast<size_t>(s.channels * s.rows * s.rowPixels * s.outElemBytes), 0);
  for (const TileDesc& t : sched.tiles)
    for (size_t r = 0; r < t.y.rows; ++r)
      for (size_t b = 0; b < t.y.rowBytes; ++b) ++covered.at(t.y.offset + r * t.y.stride + b);
  return covered;
}

TEST(RaggedRows, ScheduleCoversEveryOutputOnceInEitherOrder) {
  const LayerShape s = testing::smallConvLayer();  // 5 output rows x 4 channels
  // Channels outer, blocks of 2 rows x 2 channels: channel block 0 (the first walk) starts with a 1-row block,
  // channel block 1 (the last walk) ends with one.
  const TileSchedule channels = scheduleTiles(s, 2, 2, 1, OperandBuffers::uniform(true), TileOrder::ChannelsOuter, RowBlocks{1, 1});
  std::vector<int64_t> rows;
  for (const TileDesc& t : channels.tiles) rows.push_back(t.outRows);
  EXPECT_EQ(rows, (std::vector<int64_t>{1, 2, 2, 2, 2, 1}));
  for (int c : outputCoverage(s, channels)) EXPECT_EQ(c, 1);
  // The first tile reads input rows 0..1 (one row of padding above).
  EXPECT_EQ(channels.tiles[0].firstRow, 0);
  EXPECT_EQ(channels.tiles[0].x.bytes(), size_t{2 * 2 * 5 * 4});
  // Weights: the first tile of each channel block loads them.
  for (size_t i = 0; i < channels.tiles.size(); ++i) EXPECT_EQ(channels.tiles[i].loadW, i == 0 || i == 3) << i;

  // Rows outer: every channel block walks 1 + 2 + 1 + 1 rows... the same blocks, so each input row block is loaded
  // once (its channel blocks follow each other).
  const TileSchedule rowsOuter = scheduleTiles(s, 3, 2, 1, OperandBuffers::uniform(true), TileOrder::RowsOuter, RowBlocks{1, 1});
  rows.clear();
  for (const TileDesc& t : rowsOuter.tiles) rows.push_back(t.outRows);
  EXPECT_EQ(rows, (std::vector<int64_t>{1, 1, 3, 3, 1, 1}));
  for (int c : outputCoverage(s, rowsOuter)) EXPECT_EQ(c, 1);
  for (size_t i = 0; i < rowsOuter.tiles.size(); ++i) {
    EXPECT_EQ(rowsOuter.tiles[i].loadX, i % 2 == 0) << i;
    EXPECT_EQ(rowsOuter.tiles[i].channelOffset, static_cast<int64_t>(i % 2) * 2) << i;
  }
  // Two cores: uniform walks (one 5-row block per channel), each core's chunk cut at both ends: its first tile's
  // first row and its last tile's last 2 rows get tiles of their own, so every core's fill and drain are short.
  const TileSchedule cores = scheduleTiles(s, 5, 1, 2, OperandBuffers::uniform(true), TileOrder::ChannelsOuter, RowBlocks{1, 2});
  rows.clear();
  for (const TileDesc& t : cores.tiles) rows.push_back(t.outRows);
  EXPECT_EQ(rows, (std::vector<int64_t>{1, 4, 3, 2, 1, 4, 3, 2}));
  EXPECT_EQ(cores.chunkStart, (std::vector<size_t>{0, 4, 8}));
  for (int c : outputCoverage(s, cores)) EXPECT_EQ(c, 1);
  for (size_t i = 0; i < cores.tiles.size(); ++i) {
    EXPECT_EQ(cores.tiles[i].channelOffset, static_cast<int64_t>(i / 2)) << i;
    EXPECT_EQ(cores.tiles[i].loadW, i % 2 == 0) << "a channel's second piece reuses its weights: tile " << i;
  }
  // Two cores with a ramp: each chunk's first block is cut into 1 and 2 rows and the rest, its last block into the
  // rest, 2 and 1 rows.
  const TileSchedule ramp = scheduleTiles(s, 5, 1, 2, OperandBuffers::uniform(true), TileOrder::ChannelsOuter, RowBlocks{1, 1, true});
  rows.clear();
  for (const TileDesc& t : ramp.tiles) rows.push_back(t.outRows);
  EXPECT_EQ(rows, (std::vector<int64_t>{1, 2, 2, 2, 2, 1, 1, 2, 2, 2, 2, 1}));
  EXPECT_EQ(ramp.chunkStart, (std::vector<size_t>{0, 6, 12}));
  for (int c : outputCoverage(s, ramp)) EXPECT_EQ(c, 1);
  // No ragged blocks: the uniform walk.
  EXPECT_EQ(scheduleTiles(s, 2, 2, 1, OperandBuffers::uniform(true), TileOrder::ChannelsOuter).tiles.size(), 6u);  // 2 + 2 + 1 twice
}

TEST(RaggedRows, ChooserTakesRaggedBlocksOnlyWhenCheaperThanTheUniformTiling) {
  const Board board = testing::exampleBoard("gemmini-like");
  const Graph g = testing::foldedZooGraph("resnet8");
  TileOptions options;
  options.prefetchWeights = false;  // the chooser's own estimates
  options.handInputs = false;
  const TiledProgram t = tileProgram(g, board, options);
  int ragged = 0;
  for (const OffloadedLayer& l : t.offloaded) {
    const Node& n = g.nodes[static_cast<size_t>(l.step)];
    const LayerShape s = *layerShapeOf(g, n).shape;
    const Target& target = board.targets[static_cast<size_t>(l.target)];
    // The recorded estimate is the estimate of the tiles the emitter rebuilds.
    const TileSchedule sched = offloadedSchedule(s, l);
    EXPECT_EQ(static_cast<int>(sched.tiles.size()), l.tiles) << n.name;
    EXPECT_EQ(estimateLayer(target, s, sched, operandBuffersOf(l)).total, l.totalCycles) << n.name;
    if (l.firstRows == 0 && l.lastRows == 0) continue;
    ++ragged;
    EXPECT_LT(l.firstRows, l.rowTile) << n.name;
    EXPECT_LT(l.lastRows, l.rowTile) << n.name;
    OffloadedLayer uniform = l;
    uniform.firstRows = uniform.lastRows = 0;
    uniform.rampRows = false;
    EXPECT_LT(l.totalCycles, estimateLayer(target, s, offloadedSchedule(s, uniform), operandBuffersOf(l)).total) << n.name;
  }
  // Fill and drain are a large part of ResNet-8's convolutions on the engine: several take ragged blocks.
  EXPECT_GE(ragged, 3);
}

TEST(RaggedRows, RaggedLayersRunBitExactWithTheEstimatedCycles) {
  const Graph g = testing::foldedZooGraph("resnet8");
  const CompileOptions o = testing::quickPlannerOptions();
  auto onEngine = compileGraphOnBoard(g, testing::exampleBoard("gemmini-like"), o);
  ASSERT_TRUE(onEngine.ok()) << onEngine.error().render();
  int ragged = 0;
  int ramps = 0;
  for (const OffloadedLayer& l : onEngine->plan.offloaded) {
    ragged += (l.firstRows > 0 || l.lastRows > 0) ? 1 : 0;
    ramps += l.rampRows ? 1 : 0;
  }
  ASSERT_GE(ragged, 3) << "ResNet-8's convolutions take ragged row blocks";
  // The stem (store-bound, 32 rows) starts with a ramp: 3 rows, then 6, then blocks of the row tile.
  ASSERT_GE(ramps, 1) << "a layer ramps its first blocks up";
  // The reports show them: report.json fields and the summary's tiling text.
  const auto report = buildReportJson(onEngine->graph, onEngine->plan, ReportContext{});
  int reported = 0, reportedRamps = 0;
  for (const auto& layer : report["layers"])
    if (layer.contains("offload")) {
      reported += (layer["offload"]["first_rows"].get<int64_t>() > 0 || layer["offload"]["last_rows"].get<int64_t>() > 0) ? 1 : 0;
      reportedRamps += layer["offload"]["ramp_rows"].get<bool>() ? 1 : 0;
    }
  EXPECT_EQ(reported, ragged);
  EXPECT_EQ(reportedRamps, ramps);
  EXPECT_NE(onEngine->code.source.text.find(" doubling"), std::string::npos) << "the layer comment shows the ramp";
  EXPECT_NE(offloadSummary(onEngine->graph, onEngine->plan).find(", first rows "), std::string::npos);
  EXPECT_NE(onEngine->code.source.text.find(", first rows "), std::string::npos) << "the layer comment shows the blocks";
  const auto inputs = testing::patternInputs(g);
  testing::expectLayersRunAsEstimated(*onEngine, inputs);
  auto onCpu = compileGraph(g, o);
  ASSERT_TRUE(onCpu.ok()) << onCpu.error().render();
  testing::expectSameHostOutputs(*onEngine, *onCpu, inputs);
}

}  // namespace
}  // namespace stowage
