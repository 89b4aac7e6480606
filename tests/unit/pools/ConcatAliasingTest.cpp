// Concat inputs written straight into their slices of the output (plan/analysis/Aliasing.h): no copy, no buffer
// of their own, nested concats and repeated inputs handled, the report gives alias_of and alias_offset, guard
// mode still runs, the validator rejects a slice outside its root, and interleaved slices stay apart.
#include <gtest/gtest.h>

#include "../codegen/TestGraphs.h"
#include "stowage/codegen/CEmitter.h"
#include "PoolTestUtil.h"
#include "stowage/driver/Compiler.h"
#include "stowage/driver/HostRunner.h"
#include "stowage/plan/ValidateProgram.h"
#include "stowage/report/ReportJson.h"

namespace stowage {
namespace {

using namespace stowage::testing;

std::vector<float> ramp(size_t n, int period, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>(static_cast<int>(i % static_cast<size_t>(period)) - period / 2);
  return v;
}

/// x[1,2,8,8] -> conv -> a[1,4,8,8]; x -> conv -> b -> relu -> br; cat1 = concat(a, br, a) [1,12,8,8];
/// cat1 -> conv -> d[1,4,8,8]; cat2 = concat(cat1, d) [1,16,8,8] -> global average pool -> r[1,16,1,1] -> reshape [1,16] -> gemm -> y[1,3].
/// The second `a` of cat1 must be a real copy; cat1 is itself a slice of cat2 (nested).
Graph concatNet() {
  Graph g;
  g.name = "cat";
  TensorId x = addInput(g, "x", {1, 2, 8, 8});
  TensorId wa = addConstant(g, "wa", {4, 2, 3, 3}, ramp(72, 9, 0.05f));
  TensorId wb = addConstant(g, "wb", {4, 2, 3, 3}, ramp(72, 7, 0.04f));
  TensorId wd = addConstant(g, "wd", {4, 12, 3, 3}, ramp(432, 11, 0.02f));
  TensorId fw = addConstant(g, "fw", {3, 16}, ramp(48, 13, 0.1f));
  TensorId a = addTensor(g, "a", {1, 4, 8, 8});
  TensorId b = addTensor(g, "b", {1, 4, 8, 8});
  TensorId br = addTensor(g, "br", {1, 4, 8, 8});
  TensorId cat1 = addTensor(g, "cat1", {1, 12, 8, 8});
  TensorId d = addTensor(g, "d", {1, 4, 8, 8});
  TensorId cat2 = addTensor(g, "cat2", {1, 16, 8, 8});
  TensorId r = addTensor(g, "r", {1, 16, 1, 1});
  TensorId f = addTensor(g, "flat", {1, 16});
  TensorId y = addTensor(g, "y", {1, 3});
  Attributes ca;
  ca.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  Attributes axis1;
  axis1.set("axis", int64_t{1});
  addNode(g, "conv_a", OpKind::Conv, {x, wa}, a, ca);
  addNode(g, "conv_b", OpKind::Conv, {x, wb}, b, ca);
  addNode(g, "relu_b", OpKind::Relu, {b}, br);
  addNode(g, "cat1", OpKind::Concat, {a, br, a}, cat1, axis1);
  addNode(g, "conv_d", OpKind::Conv, {cat1, wd}, d, ca);
  addNode(g, "cat2", OpKind::Concat, {cat1, d}, cat2, axis1);
  addNode(g, "gap", OpKind::GlobalAveragePool, {cat2}, r);
  Attributes ra;
  ra.set("shape", std::vector<int64_t>{1, 16});
  addNode(g, "flatten", OpKind::Reshape, {r}, f, ra);
  Attributes ga;
  ga.set("transB", int64_t{1});
  addNode(g, "fc", OpKind::Gemm, {f, fw}, y, ga);
  g.outputs = {y};
  return g;
}

Result<CompileResult> compileIt(const Graph& g, bool slices, bool guard = false) {
  CompileOptions o;
  o.guard = guard;
  o.planner.concatSlices = slices;
  o.planner.timeLimitSeconds = 5;
  o.fuse = false;  // the Relus are Concat inputs of their own here (fusion: FuseActivationTest.cpp)
  // The schedules here are part of each case (AnInputThatWouldRaiseThePeakKeepsItsBuffer needs conv_a first; the
  // memory-aware order would run it last and alias both inputs): tests/unit/ir/ReorderForMemoryTest.cpp.
  o.reorder = false;
  return compileGraph(g, o);
}

TEST(ConcatAliasing, InputsAreWrittenStraightIntoTheirSlices) {
  const Graph g = concatNet();
  auto on = compileIt(g, true);
  auto off = compileIt(g, false);
  ASSERT_TRUE(on.ok()) << on.error().render();
  ASSERT_TRUE(off.ok()) << off.error().render();
  const PlacedBuffer &cat2 = bufferNamed(*on, "cat2"), &cat1 = bufferNamed(*on, "cat1"), &a = bufferNamed(*on, "a"),
                     &br = bufferNamed(*on, "br"), &d = bufferNamed(*on, "d");
  EXPECT_EQ(cat2.aliasOf, kNoTensor) << "the outermost concat output is the group's root";
  for (const PlacedBuffer* m : {&cat1, &a, &br, &d}) {
    EXPECT_EQ(m->aliasOf, cat2.tensor) << on->graph.tensor(m->tensor).name;
    EXPECT_EQ(m->offset, cat2.offset + m->aliasOffset);
    EXPECT_EQ(m->slot, cat2.slot);
  }
  EXPECT_EQ(cat1.aliasOffset, 0u);
  EXPECT_EQ(a.aliasOffset, 0u);
  EXPECT_EQ(br.aliasOffset, 1024u);
  EXPECT_EQ(d.aliasOffset, 3072u) << "after cat1's 12 channels";
  EXPECT_EQ(cat2.firstStep, 0) << "the root's lifetime starts at its first slice's producer";
  // One copy left: the repeated `a` of cat1; the views and in-place relu of `b` are not concat business.
  EXPECT_EQ(countOccurrences(on->code.source.text, "stowage_concat_part("), 1u);
  EXPECT_EQ(countOccurrences(off->code.source.text, "stowage_concat_part("), 5u);
  EXPECT_NE(on->code.source.text.find("'br' was written straight into its slice"), std::string::npos);
  // Apart, cat2's step holds cat1, d and cat2 (3 + 1 + 4 KiB); in place the busiest step is relu_b: the
  // whole 4 KiB group (reserved from conv_a on) and b's 1 KiB.
  EXPECT_EQ(off->plan.pools[0].peakLiveBytes, 8192u);
  EXPECT_EQ(on->plan.pools[0].peakLiveBytes, 5120u);
  EXPECT_EQ(on->plan.pools[0].usedBytes, 5120u);
  EXPECT_EQ(runOnRamp(*on), runOnRamp(*off));

  const auto json = buildReportJson(on->graph, on->plan, {});
  int slices = 0;
  for (const auto& b : json["buffers"])
    if (b.contains("alias_of") && b["alias_of"] == "cat2") {
      ++slices;
      ASSERT_TRUE(b.contains("alias_offset")) << b.dump();
      EXPECT_EQ(b["offset"].get<size_t>(), cat2.offset + b["alias_offset"].get<size_t>()) << b.dump();
    }
  EXPECT_EQ(slices, 4) << "a, br, cat1, d";
  bool remark = false;
  for (const auto& m : on->plan.remarks) remark = remark || m.find("4 concat input(s) are written straight") != std::string::npos;
  EXPECT_TRUE(remark);
}

TEST(ConcatAliasing, GuardModeRunsAndAgrees) {
  const Graph g = concatNet();
  auto plain = compileIt(g, true);
  auto guarded = compileIt(g, true, true);
  ASSERT_TRUE(plain.ok()) << plain.error().render();
  ASSERT_TRUE(guarded.ok()) << guarded.error().render();
  // One record per group root, plus one per distinct slice.
  const std::string& c = guarded->code.source.text;
  EXPECT_NE(c.find(".slice = 1;"), std::string::npos);
  EXPECT_EQ(runOnRamp(*guarded), runOnRamp(*plain));
}

TEST(ConcatAliasing, GuardModeCatchesAWriteIntoANeighbourSlice) {
  // Move d's slice onto br's bytes: conv_d then overwrites part of cat1 (live until cat2 is read); guard mode
  // must name it.
  const Graph g = concatNet();
  auto guarded = compileIt(g, true, true);
  ASSERT_TRUE(guarded.ok()) << guarded.error().render();
  CompileResult broken = *guarded;
  const int bd = broken.plan.bufferOf(bufferNamed(broken, "d").tensor);
  const int bbr = broken.plan.bufferOf(bufferNamed(broken, "br").tensor);
  broken.plan.buffers[static_cast<size_t>(bd)].offset = broken.plan.buffers[static_cast<size_t>(bbr)].offset;
  broken.plan.buffers[static_cast<size_t>(bd)].aliasOffset = broken.plan.buffers[static_cast<size_t>(bbr)].aliasOffset;
  auto code = emitC(broken.graph, broken.plan, broken.name);
  ASSERT_TRUE(code.ok()) << code.error().render();
  broken.code = *code;
  auto out = runOnHost(broken, {floatTensor("x", {1, 2, 8, 8}, ramp(128, 17, 0.1f))});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().render().find("tensor 'cat1': overwritten while live"), std::string::npos) << out.error().render();
}

TEST(ConcatAliasing, ValidatorRejectsASliceOutsideItsRoot) {
  auto r = compileIt(concatNet(), true);
  ASSERT_TRUE(r.ok()) << r.error().render();
  ASSERT_TRUE(validateProgramPlan(r->plan).ok());
  const int d = r->plan.bufferOf(bufferNamed(*r, "d").tensor);
  ProgramPlan past = r->plan;
  past.buffers[static_cast<size_t>(d)].aliasOffset += 1024;  // [4096, 5120) of a 4096-byte root
  past.buffers[static_cast<size_t>(d)].offset += 1024;
  auto s = validateProgramPlan(past);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("declared an alias"), std::string::npos) << s.error().render();
  ProgramPlan offsetMismatch = r->plan;
  offsetMismatch.buffers[static_cast<size_t>(d)].offset -= 1024;  // not where alias_offset says
  EXPECT_FALSE(validateProgramPlan(offsetMismatch).ok());
  ProgramPlan early = r->plan;
  early.buffers[static_cast<size_t>(d)].firstStep = -1;  // outside the root's lifetime
  EXPECT_FALSE(validateProgramPlan(early).ok());
}

TEST(ConcatAliasing, InterleavedSlicesKeepTheirOwnBuffers) {
  // Concat on axis 2 of [1,4,8,8]: each input is 4 interleaved runs of the output, not one contiguous slice.
  Graph g;
  g.name = "cat_h";
  TensorId x = addInput(g, "x", {1, 2, 8, 8});
  TensorId wa = addConstant(g, "wa", {4, 2, 3, 3}, ramp(72, 9, 0.05f));
  TensorId wb = addConstant(g, "wb", {4, 2, 3, 3}, ramp(72, 7, 0.04f));
  TensorId a = addTensor(g, "a", {1, 4, 8, 8});
  TensorId b = addTensor(g, "b", {1, 4, 8, 8});
  TensorId cat = addTensor(g, "cat", {1, 4, 16, 8});
  TensorId y = addTensor(g, "y", {1, 4, 16, 8});
  Attributes ca;
  ca.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  Attributes axis2;
  axis2.set("axis", int64_t{2});
  addNode(g, "conv_a", OpKind::Conv, {x, wa}, a, ca);
  addNode(g, "conv_b", OpKind::Conv, {x, wb}, b, ca);
  addNode(g, "cat", OpKind::Concat, {a, b}, cat, axis2);
  addNode(g, "relu", OpKind::Relu, {cat}, y);
  g.outputs = {y};
  auto r = compileIt(g, true);
  ASSERT_TRUE(r.ok()) << r.error().render();
  EXPECT_EQ(bufferNamed(*r, "a").aliasOf, kNoTensor);
  EXPECT_EQ(bufferNamed(*r, "b").aliasOf, kNoTensor);
  EXPECT_EQ(countOccurrences(r->code.source.text, "stowage_concat_part("), 2u);
}

TEST(ConcatAliasing, AnInputThatWouldRaiseThePeakKeepsItsBuffer) {
  // a (1 KiB) is made first; two 16 KiB tensors are live together before c; reserving cat's 2 KiB from conv_a on
  // would make that step 34 KiB instead of 33 KiB, so a keeps its own buffer while c is written in place.
  Graph g;
  g.name = "cat_peak";
  TensorId x = addInput(g, "x", {1, 2, 8, 8});
  TensorId wa = addConstant(g, "wa", {4, 2, 3, 3}, ramp(72, 9, 0.05f));
  TensorId we = addConstant(g, "we", {64, 2, 3, 3}, ramp(1152, 7, 0.04f));
  TensorId wc = addConstant(g, "wc", {4, 64, 3, 3}, ramp(2304, 11, 0.01f));
  TensorId a = addTensor(g, "a", {1, 4, 8, 8});
  TensorId e1 = addTensor(g, "e1", {1, 64, 8, 8});
  TensorId e2 = addTensor(g, "e2", {1, 64, 8, 8});
  TensorId c = addTensor(g, "c", {1, 4, 8, 8});
  TensorId cat = addTensor(g, "cat", {1, 8, 8, 8});
  TensorId y = addTensor(g, "y", {1, 8, 1, 1});
  Attributes ca;
  ca.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  Attributes axis1;
  axis1.set("axis", int64_t{1});
  addNode(g, "conv_a", OpKind::Conv, {x, wa}, a, ca);
  addNode(g, "conv_e", OpKind::Conv, {x, we}, e1, ca);
  addNode(g, "relu_e", OpKind::Relu, {e1}, e2);
  addNode(g, "conv_c", OpKind::Conv, {e2, wc}, c, ca);
  addNode(g, "cat", OpKind::Concat, {a, c}, cat, axis1);
  addNode(g, "gap", OpKind::GlobalAveragePool, {cat}, y);
  g.outputs = {y};
  auto on = compileIt(g, true), off = compileIt(g, false);
  ASSERT_TRUE(on.ok()) << on.error().render();
  ASSERT_TRUE(off.ok()) << off.error().render();
  EXPECT_EQ(bufferNamed(*on, "a").aliasOf, kNoTensor);
  EXPECT_EQ(on->graph.tensor(bufferNamed(*on, "c").aliasOf).name, "cat");
  EXPECT_EQ(bufferNamed(*on, "c").aliasOffset, 1024u);
  EXPECT_EQ(on->plan.pools[0].peakLiveBytes, off->plan.pools[0].peakLiveBytes);
  bool remark = false;
  for (const auto& m : on->plan.remarks) remark = remark || m.find("1 concat input(s) keep a buffer of their own") != std::string::npos;
  EXPECT_TRUE(remark);
  auto run = [](const CompileResult& r) {
    auto out = runOnHost(r, {floatTensor("x", {1, 2, 8, 8}, ramp(128, 17, 0.1f))});
    if (!out.ok()) throw std::runtime_error(out.error().render());
    return floats((*out)[0]);
  };
  EXPECT_EQ(run(*on), run(*off));
}

}  // namespace
}  // namespace stowage
