// Concat on the channel axis of NHWC tensors with H*W > 1 (TFLite CONCATENATION axis 3, a fire module): each
// input made by a convolution is a strided slice of the output (plan/analysis/Aliasing.h), written in place with
// the kernel's output pixel stride. The peak drops, outputs are byte-identical with aliasing off and in guard
// mode, the report gives alias_run / alias_stride, and the validator rejects a wrong offset, stride or run.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include <unistd.h>

#include "../frontend/TfliteGraphBuilder.h"
#include "PoolTestUtil.h"
#include "stowage/driver/Compiler.h"
#include "stowage/driver/HostRunner.h"
#include "stowage/frontend/TfliteImporter.h"
#include "stowage/plan/ValidateProgram.h"
#include "stowage/report/ReportJson.h"

namespace stowage {
namespace {

using namespace stowage::testing;

using tflitetest::bytesOf;
using tflitetest::OpSpec;
using tflitetest::TensorSpec;

constexpr int32_t kConcatenation = 2, kConv2d = 3, kDepthwiseConv2d = 4;
constexpr float kInScale = 0.05f, kWScale = 0.02f;

/// x[1,8,8,4] -> conv 1x1 -> a[1,8,8,6]; x -> conv 3x3 -> b[1,8,8,10]; x -> depthwise 3x3 -> d[1,8,8,4];
/// cat = CONCATENATION(a, b, d) axis 3 [1,8,8,20] -> conv 1x1 -> y[1,8,8,4]. int8 (a, b, d and cat share one
/// quantization) or float32.
std::vector<uint8_t> fireModel(bool int8) {
  auto act = [&](const std::string& name, std::vector<int32_t> shape, float scale, int zp) {
    return int8 ? TensorSpec{name, std::move(shape), 9, {scale}, {zp}, {}} : TensorSpec{name, std::move(shape), 0, {}, {}, {}};
  };
  auto weights = [&](const std::string& name, std::vector<int32_t> shape, int period) {
    size_t n = 1;
    for (int32_t d : shape) n *= static_cast<size_t>(d);
    if (int8) return TensorSpec{name, std::move(shape), 9, {kWScale}, {0}, bytesOf(periodicValues<int8_t>(n, period, period / 2))};
    std::vector<float> f = periodicValues<float>(n, period, period / 2);
    for (float& v : f) v *= kWScale;
    return TensorSpec{name, std::move(shape), 0, {}, {}, bytesOf(f)};
  };
  auto bias = [&](const std::string& name, int32_t m) {
    if (int8)
      return TensorSpec{name, {m}, 2, {kInScale * kWScale}, {0}, bytesOf(periodicValues<int32_t>(static_cast<size_t>(m), 50, 20))};
    std::vector<float> f = periodicValues<float>(static_cast<size_t>(m), 50, 20);
    for (float& v : f) v *= kInScale * kWScale;
    return TensorSpec{name, {m}, 0, {}, {}, bytesOf(f)};
  };
  std::vector<TensorSpec> t = {
      act("x", {1, 8, 8, 4}, kInScale, -3),                                             // 0
      weights("wa", {6, 1, 1, 4}, 9),  bias("ba", 6),                                   // 1, 2
      weights("wb", {10, 3, 3, 4}, 11), bias("bb", 10),                                 // 3, 4
      weights("wd", {1, 3, 3, 4}, 7),  bias("bd", 4),                                   // 5, 6
      act("a", {1, 8, 8, 6}, 0.005f, 2), act("b", {1, 8, 8, 10}, 0.005f, 2),              // 7, 8
      act("d", {1, 8, 8, 4}, 0.005f, 2), act("cat", {1, 8, 8, 20}, 0.005f, 2),            // 9, 10
      weights("wc", {4, 1, 1, 20}, 13), bias("bc", 4), act("y", {1, 8, 8, 4}, 0.001f, -1)  // 11, 12, 13
  };
  auto conv = [](int32_t code, std::vector<int32_t> ins, int32_t out) {
    OpSpec o;
    o.code = code;
    o.inputs = std::move(ins);
    o.outputs = {out};
    o.optionsTag = code == kConv2d ? 1 : 2;  // Conv2DOptions / DepthwiseConv2DOptions
    o.byteFields = {{0, 0}};                 // padding SAME
    o.intFields = {{1, 1}, {2, 1}};          // strides 1
    if (code == kDepthwiseConv2d) o.intFields.push_back({3, 1});  // depth_multiplier
    return o;
  };
  OpSpec cat;
  cat.code = kConcatenation;
  cat.inputs = {7, 8, 9};
  cat.outputs = {10};
  cat.optionsTag = 10;
  cat.intFields = {{0, 3}};
  std::vector<OpSpec> ops = {conv(kConv2d, {0, 1, 2}, 7), conv(kConv2d, {0, 3, 4}, 8), conv(kDepthwiseConv2d, {0, 5, 6}, 9), cat,
                             conv(kConv2d, {10, 11, 12}, 13)};
  return tflitetest::buildTfliteModel(t, ops, {0}, {13});
}

Result<CompileResult> compileFire(bool int8, bool slices, bool guard = false) {
  STOWAGE_ASSIGN_OR_RETURN(Graph g, importTfliteBytes(fireModel(int8), int8 ? "fire_int8.tflite" : "fire_f32.tflite"));
  CompileOptions o;
  o.guard = guard;
  o.planner.concatSlices = slices;
  o.planner.timeLimitSeconds = 5;
  return compileGraph(std::move(g), o);
}

std::vector<uint8_t> runFire(const CompileResult& r, bool int8) {
  Tensor x;
  x.name = "x";
  x.kind = TensorKind::Input;
  x.shape = {1, 8, 8, 4};
  x.dtype = int8 ? DType::Int8 : DType::Float32;
  if (int8) {
    x.data = bytesOf(periodicValues<int8_t>(256, 61, 30));
  } else {
    std::vector<float> f = periodicValues<float>(256, 61, 30);
    for (float& v : f) v *= kInScale;
    x.data = bytesOf(f);
  }
  auto out = runOnHost(r, {x});
  if (!out.ok()) throw std::runtime_error(out.error().render());
  return (*out)[0].data;
}

void expectStridedSlices(const CompileResult& on, size_t elem) {
  const PlacedBuffer& cat = bufferNamed(on, "cat");
  EXPECT_EQ(cat.aliasOf, kNoTensor);
  const std::vector<std::pair<std::string, size_t>> parts = {{"a", 6}, {"b", 10}, {"d", 4}};
  size_t channel = 0;
  for (const auto& [name, channels] : parts) {
    const PlacedBuffer& m = bufferNamed(on, name);
    EXPECT_EQ(m.aliasOf, cat.tensor) << name;
    EXPECT_EQ(m.aliasOffset, channel * elem) << name;
    EXPECT_EQ(m.aliasRunBytes, channels * elem) << name;
    EXPECT_EQ(m.aliasStrideBytes, 20 * elem) << name;
    EXPECT_EQ(m.offset, cat.offset + m.aliasOffset) << name;
    channel += channels;
  }
  EXPECT_EQ(cat.firstStep, 0) << "the output is reserved from its first slice's producer on";
}

TEST(StridedConcatAliasing, Int8ChannelSlicesAreWrittenInPlace) {
  auto on = compileFire(true, true), off = compileFire(true, false);
  ASSERT_TRUE(on.ok()) << on.error().render();
  ASSERT_TRUE(off.ok()) << off.error().render();
  expectStridedSlices(*on, 1);
  const std::string& c = on->code.source.text;
  EXPECT_EQ(countOccurrences(c, "stowage_concat_part("), 0u);
  EXPECT_EQ(countOccurrences(c, "was written straight into its slice"), 3u);
  EXPECT_EQ(countOccurrences(c, ".out_pixel_stride = 20"), 3u) << "conv a, conv b and the depthwise d";
  EXPECT_EQ(countOccurrences(off->code.source.text, "stowage_concat_part("), 3u);
  EXPECT_EQ(countOccurrences(off->code.source.text, "out_pixel_stride"), 0u) << "packed outputs print no stride";
  // Apart, the concat step holds a, b, d and cat (384 + 640 + 256 + 1280 bytes); in place only cat.
  EXPECT_EQ(off->plan.pools[0].peakLiveBytes, 2560u);
  EXPECT_EQ(on->plan.pools[0].peakLiveBytes, 1280u);
  const std::vector<uint8_t> want = runFire(*off, true);
  EXPECT_GT(std::set<uint8_t>(want.begin(), want.end()).size(), 20u) << "the output must not be saturated";
  EXPECT_EQ(runFire(*on, true), want);

  const auto json = buildReportJson(on->graph, on->plan, {});
  int strided = 0;
  for (const auto& b : json["buffers"])
    if (b.contains("alias_stride")) {
      ++strided;
      EXPECT_EQ(b["alias_of"], "cat") << b.dump();
      EXPECT_EQ(b["alias_stride"].get<size_t>(), 20u) << b.dump();
      EXPECT_EQ(b["offset"].get<size_t>(), bufferNamed(*on, "cat").offset + b["alias_offset"].get<size_t>()) << b.dump();
      EXPECT_EQ(b["size"].get<size_t>() % b["alias_run"].get<size_t>(), 0u) << b.dump();
    }
  EXPECT_EQ(strided, 3);
  bool remark = false;
  for (const auto& m : on->plan.remarks) remark = remark || m.find("(3 as strided channel slices)") != std::string::npos;
  EXPECT_TRUE(remark);
}

TEST(StridedConcatAliasing, GuardModeRunsAndAgrees) {
  auto plain = compileFire(true, true), guarded = compileFire(true, true, true);
  ASSERT_TRUE(plain.ok()) << plain.error().render();
  ASSERT_TRUE(guarded.ok()) << guarded.error().render();
  expectStridedSlices(*guarded, 1);
  EXPECT_NE(guarded->code.source.text.find("_guard_arm("), std::string::npos);
  EXPECT_EQ(runFire(*guarded, true), runFire(*plain, true));
}

TEST(StridedConcatAliasing, FloatNhwcConvsWriteWithAStrideToo) {
  auto on = compileFire(false, true), off = compileFire(false, false);
  ASSERT_TRUE(on.ok()) << on.error().render();
  ASSERT_TRUE(off.ok()) << off.error().render();
  expectStridedSlices(*on, 4);
  EXPECT_EQ(countOccurrences(on->code.source.text, ".out_pixel_stride = 20"), 3u);
  EXPECT_EQ(on->plan.pools[0].peakLiveBytes, 5120u);
  EXPECT_EQ(off->plan.pools[0].peakLiveBytes, 10240u);
  EXPECT_EQ(runFire(*on, false), runFire(*off, false));
}

TEST(StridedConcatAliasing, ValidatorRejectsBadStridedSlices) {
  auto r = compileFire(true, true);
  ASSERT_TRUE(r.ok()) << r.error().render();
  ASSERT_TRUE(validateProgramPlan(r->plan).ok());
  const size_t b = static_cast<size_t>(r->plan.bufferOf(bufferNamed(*r, "b").tensor));
  // b's runs moved one channel down: channel 5 of every pixel is both a's and b's.
  ProgramPlan overlap = r->plan;
  overlap.buffers[b].aliasOffset -= 1;
  overlap.buffers[b].offset -= 1;
  ProgramPlanCheck c = checkProgramPlan(overlap);
  EXPECT_EQ(c.failure, ProgramPlanFailure::Overlap) << c.diagnostic.render();
  EXPECT_NE(c.diagnostic.message.find("strided slices"), std::string::npos) << c.diagnostic.render();
  // A stride too wide: the last run ends past the root's 1280 bytes.
  ProgramPlan wide = r->plan;
  wide.buffers[b].aliasStrideBytes = 21;
  EXPECT_EQ(checkProgramPlan(wide).failure, ProgramPlanFailure::AliasOutsideRoot);
  // A stride narrower than the run describes no slice at all.
  ProgramPlan narrow = r->plan;
  narrow.buffers[b].aliasStrideBytes = 8;
  EXPECT_EQ(checkProgramPlan(narrow).failure, ProgramPlanFailure::BadAlias);
  // A stride of 10 with the right offset: runs of b hit d's channels 16..19 in later pixels.
  ProgramPlan interleaved = r->plan;
  interleaved.buffers[b].aliasStrideBytes = 10;
  EXPECT_EQ(checkProgramPlan(interleaved).failure, ProgramPlanFailure::Overlap);
}

TEST(StridedConcatAliasing, AnInputTheApplicationReadsIsCopied) {
  // A conv whose output is also a graph output is read by the application: it keeps its own buffer.
  auto g = importTfliteBytes(fireModel(true), "fire_int8.tflite");
  ASSERT_TRUE(g.ok()) << g.error().render();
  Graph two = *g;
  two.outputs.push_back(*two.findTensor("a"));
  CompileOptions o;
  o.planner.timeLimitSeconds = 5;
  auto r = compileGraph(std::move(two), o);
  ASSERT_TRUE(r.ok()) << r.error().render();
  EXPECT_EQ(bufferNamed(*r, "b").aliasRunBytes, 10u);
  EXPECT_EQ(countOccurrences(r->code.source.text, "stowage_concat_part("), 1u) << "a is copied";
}

TEST(StridedConcatAliasing, ConvsOffloadedToAnAcceleratorKeepTheirBuffers) {
  // The Gemmini-like board runs QConv2d / QDepthwiseConv2d on its engine, whose tiles write packed outputs: no
  // strided slice, the Concat copies, and the program still computes what the CPU-only one does.
  auto g = importTfliteBytes(fireModel(true), "fire_int8.tflite");
  ASSERT_TRUE(g.ok()) << g.error().render();
  CompileOptions o;
  o.planner.timeLimitSeconds = 5;
  o.board.boardPath = std::string(STOWAGE_SOURCE_DIR) + "/examples/boards/gemmini-like.toml";
  auto r = compileGraph(std::move(*g), o);
  ASSERT_TRUE(r.ok()) << r.error().render();
  ASSERT_FALSE(r->plan.offloaded.empty()) << "the board should offload the convolutions";
  for (const OffloadedLayer& l : r->plan.offloaded) {
    const TensorId out = r->graph.nodes[static_cast<size_t>(l.step)].outputs[0];
    const int b = r->plan.bufferOf(out);
    if (b >= 0) {
      EXPECT_EQ(r->plan.buffers[static_cast<size_t>(b)].aliasRunBytes, 0u) << r->graph.tensor(out).name;
    }
  }
  EXPECT_EQ(r->code.source.text.find("out_pixel_stride"), std::string::npos);
  auto cpu = compileFire(true, true);
  ASSERT_TRUE(cpu.ok()) << cpu.error().render();
  EXPECT_EQ(runFire(*r, true), runFire(*cpu, true));
}

TEST(StridedConcatAliasing, ConvsStreamedThroughACpuFastPoolKeepTheirBuffers) {
  // A CPU with a DMA and a 1 KiB fast pool streams the convolutions through it (tile/CpuStreaming.h): their tiles
  // are stored packed by DMA, so their outputs are no strided slices, and the program computes what the plain
  // CPU-only one does.
  const std::filesystem::path board =
      std::filesystem::temp_directory_path() / ("stowage_strided_stream_" + std::to_string(::getpid()) + ".toml");
  {
    std::ofstream f(board);
    f << "[[targets]]\nname = \"cpu\"\nkind = \"cpu\"\ndma_channels = 2\ndma_bytes_per_cycle = 4\ndma_setup_cycles = 20\n"
         "[[pools]]\nname = \"dtcm\"\nsize = \"1KiB\"\nalignment = 8\nread_bytes_per_cycle = 8\nwrite_bytes_per_cycle = 8\n"
         "latency_cycles = 1\n"
         "[[pools]]\nname = \"sram\"\nsize = \"1MiB\"\nalignment = 8\nread_bytes_per_cycle = 2\nwrite_bytes_per_cycle = 2\n"
         "latency_cycles = 20\n";
  }
  auto g = importTfliteBytes(fireModel(true), "fire_int8.tflite");
  ASSERT_TRUE(g.ok()) << g.error().render();
  CompileOptions o;
  o.planner.timeLimitSeconds = 5;
  o.board.boardPath = board.string();
  auto r = compileGraph(std::move(*g), o);
  std::filesystem::remove(board);
  ASSERT_TRUE(r.ok()) << r.error().render();
  ASSERT_FALSE(r->plan.offloaded.empty()) << "the board should stream the convolutions";
  for (const OffloadedLayer& l : r->plan.offloaded) {
    const TensorId out = r->graph.nodes[static_cast<size_t>(l.step)].outputs[0];
    const int b = r->plan.bufferOf(out);
    if (b >= 0) {
      EXPECT_EQ(r->plan.buffers[static_cast<size_t>(b)].aliasRunBytes, 0u) << r->graph.tensor(out).name;
    }
  }
  auto cpu = compileFire(true, true);
  ASSERT_TRUE(cpu.ok()) << cpu.error().render();
  EXPECT_EQ(runFire(*r, true), runFire(*cpu, true));
}

}  // namespace
}  // namespace stowage
