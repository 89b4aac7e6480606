// Overlapping layers (plan/analysis/RowOverlap.h): an int8 conv / depthwise conv run on the CPU writes its output over
// the input rows it no longer reads. The closed forms agree with the band walk, the peak drops, outputs stay
// byte-identical, report.json names the overlap, and the validator refuses an overlap the kernel's order forbids.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <random>

#include <nlohmann/json.hpp>

#include "../frontend/TfliteGraphBuilder.h"
#include "PoolTestUtil.h"
#include "stowage/driver/Compiler.h"
#include "stowage/driver/HostRunner.h"
#include "stowage/lower/LowerProgram.h"
#include "stowage/codegen/CEmitter.h"
#include "stowage/frontend/TfliteImporter.h"
#include "stowage/plan/SeparateOverlaps.h"
#include "stowage/plan/ValidateProgram.h"
#include "stowage/plan/analysis/RowOverlap.h"
#include "stowage/report/ReportJson.h"

namespace stowage {
namespace {

using namespace stowage::testing;

using tflitetest::bytesOf;
using tflitetest::OpSpec;
using tflitetest::TensorSpec;

constexpr int32_t kConv2dCode = 3, kDepthwiseCode = 4;

/// The pattern of the weights and inputs below (every fifth value of a period).
template <class T>
std::vector<T> ramp(size_t n, int period, int bias) {
  return periodicValues<T>(n, period, bias, 5);
}

/// x[1,12,6,4] -> conv 3x3 -> a[1,12,6,8] -> depthwise 3x3 -> b[1,12,6,8] -> conv 1x1 -> c[1,12,6,8]
/// -> conv 3x3 stride 2 -> y[1,6,3,8]; int8, SAME padding.
std::vector<uint8_t> chainModel() {
  auto act = [](const std::string& name, std::vector<int32_t> shape, float scale, int zp) {
    return TensorSpec{name, std::move(shape), 9, {scale}, {zp}, {}};
  };
  auto weights = [](const std::string& name, std::vector<int32_t> shape, int period) {
    size_t n = 1;
    for (int32_t d : shape) n *= static_cast<size_t>(d);
    return TensorSpec{name, std::move(shape), 9, {0.02f}, {0}, bytesOf(ramp<int8_t>(n, period, period / 2))};
  };
  auto bias = [](const std::string& name, int32_t m, float scale) {
    return TensorSpec{name, {m}, 2, {scale * 0.02f}, {0}, bytesOf(ramp<int32_t>(static_cast<size_t>(m), 40, 20))};
  };
  std::vector<TensorSpec> t = {
      act("x", {1, 12, 6, 4}, 0.05f, -3),                                          // 0
      weights("w1", {8, 3, 3, 4}, 11), bias("b1", 8, 0.05f),                        // 1, 2
      act("a", {1, 12, 6, 8}, 0.04f, 1),                                            // 3
      weights("w2", {1, 3, 3, 8}, 7), bias("b2", 8, 0.04f),                         // 4, 5
      act("b", {1, 12, 6, 8}, 0.03f, -2),                                           // 6
      weights("w3", {8, 1, 1, 8}, 13), bias("b3", 8, 0.03f),                        // 7, 8
      act("c", {1, 12, 6, 8}, 0.03f, 0),                                            // 9
      weights("w4", {8, 3, 3, 8}, 9), bias("b4", 8, 0.03f),                         // 10, 11
      act("y", {1, 6, 3, 8}, 0.05f, 4),                                             // 12
  };
  auto conv = [](int32_t code, std::vector<int32_t> ins, int32_t out, int32_t stride) {
    OpSpec o;
    o.code = code;
    o.inputs = std::move(ins);
    o.outputs = {out};
    o.optionsTag = code == kConv2dCode ? 1 : 2;
    o.byteFields = {{0, 0}};  // padding SAME
    o.intFields = {{1, stride}, {2, stride}};
    if (code == kDepthwiseCode) o.intFields.push_back({3, 1});
    return o;
  };
  std::vector<OpSpec> ops = {conv(kConv2dCode, {0, 1, 2}, 3, 1), conv(kDepthwiseCode, {3, 4, 5}, 6, 1),
                             conv(kConv2dCode, {6, 7, 8}, 9, 1), conv(kConv2dCode, {9, 10, 11}, 12, 2)};
  return tflitetest::buildTfliteModel(t, ops, {0}, {12});
}

Result<CompileResult> compileChain(bool overlap, bool guard = false) {
  STOWAGE_ASSIGN_OR_RETURN(Graph g, importTfliteBytes(chainModel(), "chain.tflite"));
  CompileOptions o;
  o.planner.overlapLayers = overlap;
  o.planner.timeLimitSeconds = 5;
  o.guard = guard;
  return compileGraph(std::move(g), o);
}

std::vector<uint8_t> runChain(const CompileResult& r) {
  Tensor x;
  x.name = "x";
  x.kind = TensorKind::Input;
  x.shape = {1, 12, 6, 4};
  x.dtype = DType::Int8;
  x.data = bytesOf(ramp<int8_t>(288, 97, 48));
  auto out = runOnHost(r, {x});
  if (!out.ok()) throw std::runtime_error(out.error().render());
  return (*out)[0].data;
}

size_t workspaceUsed(const CompileResult& r) {
  size_t used = 0;
  for (const PoolUse& u : r.plan.pools)
    if (r.plan.board.pools[static_cast<size_t>(u.pool)].kind != PoolKind::Constant) used += u.usedBytes;
  return used;
}

TEST(RowOverlap, ClosedFormsAgreeWithTheBandWalk) {
  std::mt19937 rng(7);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int trial = 0; trial < 2000; ++trial) {
    RowOrder o;
    o.taps = pick(1, 5);
    o.dilation = pick(1, 2);
    o.stride = pick(1, 3);
    o.pad = pick(0, (o.taps - 1) * o.dilation);
    o.inRows = pick(static_cast<int>((o.taps - 1) * o.dilation + 1), 20);
    o.outRows = (o.inRows + 2 * o.pad - ((o.taps - 1) * o.dilation + 1)) / o.stride + 1;
    if (o.outRows < 1) continue;
    o.inRowBytes = pick(1, 40);
    o.outRowBytes = pick(1, 40);
    o.band = pick(1, static_cast<int>(o.outRows));
    o.takesBand = true;
    const std::string at = ::testing::PrintToString(std::vector<int64_t>{o.inRows, o.outRows, o.inRowBytes, o.outRowBytes,
                                                                       o.stride, o.pad, o.taps, o.dilation, o.band});
    const int64_t below = overlapBelowShift(o);
    EXPECT_EQ(checkRowOverlap(o, below), "") << at;
    // Without dilation the bounds are tight: one byte further overlaps a row still to be read, unless the output is
    // then past the input entirely. (With dilation a window skips rows, which the closed forms do not count on.)
    if (o.dilation == 1 && below + 1 < o.inRows * o.inRowBytes) {
      EXPECT_NE(checkRowOverlap(o, below + 1), "") << at;
    }
    o.descending = true;
    const int64_t above = overlapAboveShift(o);
    EXPECT_EQ(checkRowOverlap(o, above), "") << at;
    if (o.dilation == 1 && above - 1 > -o.outRows * o.outRowBytes) {
      EXPECT_NE(checkRowOverlap(o, above - 1), "") << at;
    }
  }
}

TEST(RowOverlap, LowersThePeakWithByteIdenticalOutputs) {
  auto on = compileChain(true), off = compileChain(false);
  ASSERT_TRUE(on.ok()) << on.error().render();
  ASSERT_TRUE(off.ok()) << off.error().render();
  // Apart, the peak is two 576-byte activations; overlapping, one plus a few rows.
  EXPECT_EQ(workspaceUsed(*off), 1152u);
  EXPECT_LT(workspaceUsed(*on), 800u);
  EXPECT_EQ(runChain(*on), runChain(*off));
  int overlapping = 0;
  for (const PlacedBuffer& b : on->plan.buffers) overlapping += b.rowBand != 0 ? 1 : 0;
  EXPECT_GE(overlapping, 2);
  EXPECT_NE(on->code.source.text.find(".row_band = "), std::string::npos);
  EXPECT_EQ(off->code.source.text.find(".row_band"), std::string::npos);
  const nlohmann::ordered_json report = buildReportJson(on->graph, on->plan, ReportContext{"chain.tflite", "net", on->layerKernels});
  int named = 0;
  for (const auto& b : report["buffers"])
    if (b.contains("overlaps")) {
      ++named;
      EXPECT_TRUE(b.contains("row_band")) << b.dump();
    }
  EXPECT_EQ(named, overlapping);
}

TEST(RowOverlap, GuardBuildsKeepTheOverlapsAndPass) {
  // The guard code arms an overlapping output after its layer (its canaries would land on input rows still to be
  // read) and stops checking the input there; everything else is checked as usual, and the run passes.
  auto guarded = compileChain(true, true), plain = compileChain(false);
  ASSERT_TRUE(guarded.ok()) << guarded.error().render();
  ASSERT_TRUE(plain.ok()) << plain.error().render();
  int sharing = 0;
  for (const PlacedBuffer& b : guarded->plan.buffers) sharing += sharesBytesWithInput(guarded->plan, b) ? 1 : 0;
  EXPECT_GE(sharing, 2);
  EXPECT_NE(guarded->code.source.text.find("written over its input: armed after"), std::string::npos);
  EXPECT_EQ(runChain(*guarded), runChain(*plain));
}

TEST(RowOverlap, ValidatorRefusesAnOverlapTheRowOrderForbids) {
  auto r = compileChain(true);
  ASSERT_TRUE(r.ok()) << r.error().render();
  ASSERT_TRUE(validateProgramPlan(r->plan, {}, &r->graph).ok());
  int tried = 0;
  for (size_t i = 0; i < r->plan.buffers.size(); ++i) {
    const PlacedBuffer& y = r->plan.buffers[i];
    if (y.rowBand == 0) continue;
    // One alignment step (16 bytes) past the shift the row order allows, towards the input's rows still to be read.
    const PlacedBuffer& x = r->plan.buffers[static_cast<size_t>(r->plan.bufferOf(y.overlapsInput))];
    auto floorTo16 = [](int64_t v) { return (v >= 0 ? v : v - 15) / 16 * 16; };
    const int64_t shift = y.rowBand > 0 ? floorTo16(y.overlapBelow) + 16 : floorTo16(y.overlapAbove - 1);
    ASSERT_TRUE(y.rowBand > 0 ? shift > y.overlapBelow : shift < y.overlapAbove) << shift;
    if (static_cast<int64_t>(x.offset) + shift < 0) continue;
    ProgramPlan wrong = r->plan;
    wrong.buffers[i].offset = static_cast<size_t>(static_cast<int64_t>(x.offset) + shift);
    ProgramPlanCheck c = checkProgramPlan(wrong, {}, &r->graph);
    EXPECT_EQ(c.failure, ProgramPlanFailure::Overlap) << c.diagnostic.render();
    EXPECT_NE(c.diagnostic.message.find("would read overwritten bytes"), std::string::npos) << c.diagnostic.render();
    // The band order reversed: the same placement is wrong for the other direction.
    ProgramPlan reversed = r->plan;
    reversed.buffers[i].rowBand = -y.rowBand;
    EXPECT_EQ(checkProgramPlan(reversed, {}, &r->graph).failure, ProgramPlanFailure::Overlap);
    // Without the graph an overlap cannot be checked, so it is refused.
    EXPECT_EQ(checkProgramPlan(r->plan).failure, ProgramPlanFailure::Overlap);
    ++tried;
  }
  EXPECT_GE(tried, 2);
}

TEST(RowOverlap, ValidatorRefusesAnOverlapOverAGraphOutput) {
  // With --io-in-pools a graph output lives in a pool and the application reads it after the run: a layer writing over
  // it, even at its last step inside the program, leaves wrong bytes (the campaign's seed 802317). The chain's own
  // overlaps are valid; taken as graph outputs, their inputs make each of them a plan the validator refuses.
  auto r = compileChain(true);
  ASSERT_TRUE(r.ok()) << r.error().render();
  int tried = 0;
  for (const PlacedBuffer& y : r->plan.buffers) {
    if (!sharesBytesWithInput(r->plan, y)) continue;
    Graph g = r->graph;
    g.outputs.push_back(y.overlapsInput);
    const ProgramPlanCheck c = checkProgramPlan(r->plan, {}, &g);
    EXPECT_EQ(c.failure, ProgramPlanFailure::Overlap) << c.diagnostic.render();
    EXPECT_NE(c.diagnostic.message.find(fmt::format("its bytes hold graph output '{}'", g.tensor(y.overlapsInput).name)),
              std::string::npos)
        << c.diagnostic.render();
    ++tried;
  }
  EXPECT_GE(tried, 1);
}

TEST(RowOverlap, GuardModeCatchesAWrongOverlapAtRunTime) {
  // The validator refuses such a plan (test above); here it is emitted anyway, in guard mode, and run: the layer
  // computed again from a copy of its input gives other bytes, and the run stops naming the output.
  auto r = compileChain(true, true);
  ASSERT_TRUE(r.ok()) << r.error().render();
  EXPECT_NO_THROW(runChain(*r));
  int caught = 0;
  for (size_t i = 0; i < r->plan.buffers.size(); ++i) {
    const PlacedBuffer& y = r->plan.buffers[i];
    if (!sharesBytesWithInput(r->plan, y) || y.rowBand <= 0) continue;
    // The output a quarter of the input above the input's start: over rows the kernel has still to read. (Just past
    // the shift the validator allows is not enough here: its rule counts whole rows, and the kernel reads a pixel's
    // channels before writing that pixel's output, so one row less than the rule asks does no harm yet.)
    const PlacedBuffer& x = r->plan.buffers[static_cast<size_t>(r->plan.bufferOf(y.overlapsInput))];
    const int64_t shift = static_cast<int64_t>(x.sizeBytes / 4 / 16 * 16);
    ASSERT_GT(shift, y.overlapBelow);
    CompileResult wrong = *r;
    wrong.plan.buffers[i].offset = static_cast<size_t>(static_cast<int64_t>(x.offset) + shift);
    ASSERT_NE(checkProgramPlan(wrong.plan, {}, &wrong.graph).failure, ProgramPlanFailure::None);
    auto lowered = lowerProgram(wrong.graph, wrong.plan, wrong.kernelIsa);
    ASSERT_TRUE(lowered.ok()) << lowered.error().render();
    auto code = emitC(wrong.graph, wrong.plan, *lowered, wrong.name, wrong.code.options);
    ASSERT_TRUE(code.ok()) << code.error().render();
    EXPECT_NE(code->source.text.find("written over input bytes its layer still had to read"), std::string::npos);
    wrong.code = *code;
    try {
      runChain(wrong);
      ADD_FAILURE() << "the wrong overlap of '" << r->graph.tensor(y.tensor).name << "' ran to the end";
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find("written over input bytes"), std::string::npos) << e.what();
      ++caught;
    }
  }
  EXPECT_GE(caught, 1);
}


/// One pool; buffers of 96 bytes: x (steps 0-1) read by the layer at step 1 that writes y (steps 1-2) over it, and
/// `other` (steps 0-2) above them both.
struct SeparationCase {
  Board board;
  ProgramPlan plan;
  SeparationCase(size_t yOffset, size_t otherOffset) {
    MemoryPool pool;
    pool.name = "ram";
    pool.alignment = 16;
    board.pools.push_back(pool);
    auto buffer = [](TensorId t, size_t offset, int first, int end) {
      PlacedBuffer b;
      b.tensor = t;
      b.sizeBytes = 96;
      b.alignment = 16;
      b.firstStep = first;
      b.endStep = end;
      b.slot = PoolSlot{0, 0};
      b.offset = offset;
      return b;
    };
    plan.buffers.push_back(buffer(0, 0, 0, 2));
    plan.buffers.push_back(buffer(1, yOffset, 1, 3));
    plan.buffers.push_back(buffer(2, otherOffset, 0, 3));
    plan.buffers[1].overlapsInput = 0;
    plan.buffers[1].overlapBelow = 48;
    plan.buffers[1].overlapAbove = INT64_MAX;
  }
};

ReservedAround nothingAround() {
  return [](const PlacedBuffer&) { return std::pair<size_t, size_t>{0, 0}; };
}

TEST(SeparateOverlaps, MovesAnOutputApartWhereAGapBelowThePeakFitsIt) {
  // x [0, 96), y over it at 32, `other` at [224, 320): the gap [96, 224) holds y without raising the top (320).
  SeparationCase c(32, 224);
  EXPECT_EQ(separateNeedlessOverlaps(c.plan, c.board, nothingAround()), 1);
  EXPECT_EQ(c.plan.buffers[1].offset, 96u);
  EXPECT_FALSE(sharesBytesWithInput(c.plan, c.plan.buffers[1]));
  EXPECT_EQ(orientRowBands(c.plan), 0);
}

TEST(SeparateOverlaps, KeepsAnOverlapThatTheTopNeeds) {
  // `other` right after y: no gap below the top (224) fits 96 bytes apart from x and `other`.
  SeparationCase c(32, 128);
  EXPECT_EQ(separateNeedlessOverlaps(c.plan, c.board, nothingAround()), 0);
  EXPECT_EQ(c.plan.buffers[1].offset, 32u);
  EXPECT_TRUE(sharesBytesWithInput(c.plan, c.plan.buffers[1]));
}

TEST(SeparateOverlaps, CountsGuardCanariesAsTaken) {
  // With 16 canary bytes before and after each buffer (guard mode), each takes 128 bytes: x [0, 128) around
  // offset 16, `other` [224, 352) around 240; the gap [128, 224) is 96 bytes, too small for y's 128.
  SeparationCase c(48, 240);
  c.plan.buffers[0].offset = 16;
  const ReservedAround canaries = [](const PlacedBuffer&) { return std::pair<size_t, size_t>{16, 16}; };
  EXPECT_EQ(separateNeedlessOverlaps(c.plan, c.board, canaries), 0);
  // Two granules more room ([128, 256) free) and it moves: its canary at 128, y at 144.
  c.plan.buffers[2].offset = 272;
  EXPECT_EQ(separateNeedlessOverlaps(c.plan, c.board, canaries), 1);
  EXPECT_EQ(c.plan.buffers[1].offset, 144u);
}

}  // namespace
}  // namespace stowage
