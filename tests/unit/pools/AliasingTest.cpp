// Declared aliases in the memory plan (plan/analysis/Aliasing.h): a Reshape view shares its input's buffer and
// costs no copy, an Add writes in place over an input that dies there, the report names the alias, pools that
// cannot hold both keep them apart with a remark, guard mode still runs, and the validator rejects any overlap
// that is not a declared alias.
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

/// x[1,2,8,8] -> conv -> c1 -> relu -> r1 -> conv -> c2; sum = c2 + r1 (both die there) -> relu -> r2 ->
/// reshape -> flat[1,256] -> gemm -> y[1,5]. Every intermediate is 1 KiB.
Graph aliasNet() {
  Graph g;
  g.name = "alias";
  TensorId x = addInput(g, "x", {1, 2, 8, 8});
  std::vector<float> w1(4 * 2 * 9), w2(4 * 4 * 9), fw(5 * 256);
  for (size_t i = 0; i < w1.size(); ++i) w1[i] = 0.05f * static_cast<float>(static_cast<int>(i % 9) - 4);
  for (size_t i = 0; i < w2.size(); ++i) w2[i] = 0.03f * static_cast<float>(static_cast<int>(i % 7) - 3);
  for (size_t i = 0; i < fw.size(); ++i) fw[i] = 0.01f * static_cast<float>(static_cast<int>(i % 13) - 6);
  TensorId cw1 = addConstant(g, "conv1.w", {4, 2, 3, 3}, w1);
  TensorId cw2 = addConstant(g, "conv2.w", {4, 4, 3, 3}, w2);
  TensorId gw = addConstant(g, "fc.w", {5, 256}, fw);
  TensorId c1 = addTensor(g, "c1", {1, 4, 8, 8});
  TensorId r1 = addTensor(g, "r1", {1, 4, 8, 8});
  TensorId c2 = addTensor(g, "c2", {1, 4, 8, 8});
  TensorId s = addTensor(g, "sum", {1, 4, 8, 8});
  TensorId r2 = addTensor(g, "r2", {1, 4, 8, 8});
  TensorId f = addTensor(g, "flat", {1, 256});
  TensorId y = addTensor(g, "y", {1, 5});
  Attributes ca;
  ca.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  addNode(g, "conv1", OpKind::Conv, {x, cw1}, c1, ca);
  addNode(g, "relu1", OpKind::Relu, {c1}, r1);
  addNode(g, "conv2", OpKind::Conv, {r1, cw2}, c2, ca);
  addNode(g, "add", OpKind::Add, {c2, r1}, s);
  addNode(g, "relu2", OpKind::Relu, {s}, r2);
  Attributes ra;
  ra.set("shape", std::vector<int64_t>{1, 256});
  addNode(g, "flatten", OpKind::Reshape, {r2}, f, ra);
  Attributes ga;
  ga.set("transB", int64_t{1});
  addNode(g, "fc", OpKind::Gemm, {f, gw}, y, ga);
  g.outputs = {y};
  return g;
}

Result<CompileResult> compileIt(const BoardFlags& board, bool aliasing = true, bool guard = false) {
  CompileOptions o;
  o.board = board;
  o.guard = guard;
  o.planner.aliasing = aliasing;
  o.planner.timeLimitSeconds = 5;
  o.fuse = false;  // the Relus are the readers these scenarios are about (fusion: FuseActivationTest.cpp)
  return compileGraph(aliasNet(), o);
}

TEST(Aliasing, ViewAndInPlaceAddShareTheirInputsBuffer) {
  auto r = compileIt({});
  auto apart = compileIt({}, /*aliasing=*/false);
  ASSERT_TRUE(r.ok()) << r.error().render();
  ASSERT_TRUE(apart.ok()) << apart.error().render();
  const PlacedBuffer &flat = bufferNamed(*r, "flat"), &r2 = bufferNamed(*r, "r2");
  EXPECT_EQ(r->graph.tensor(flat.aliasOf).name, "r2");
  EXPECT_EQ(flat.slot, r2.slot);
  EXPECT_EQ(flat.offset, r2.offset);
  EXPECT_EQ(r2.endStep, flat.endStep) << "the root's lifetime covers its view's";
  const PlacedBuffer &sum = bufferNamed(*r, "sum"), &c2 = bufferNamed(*r, "c2");
  EXPECT_EQ(r->graph.tensor(sum.aliasOf).name, "c2") << "the first operand dies at the add";
  EXPECT_EQ(sum.offset, c2.offset);
  EXPECT_EQ(c2.endStep, 5) << "c2's buffer lives until relu2 reads sum";
  // Two 1 KiB tensors live at most (c1+r1, r1+c2/sum), against three without aliasing.
  EXPECT_EQ(r->plan.pools[0].usedBytes, 2048u);
  EXPECT_EQ(apart->plan.pools[0].usedBytes, 3072u);
  EXPECT_EQ(r->code.source.text.find("memcpy("), std::string::npos) << "the reshape copies nothing";
  EXPECT_NE(apart->code.source.text.find("memcpy("), std::string::npos);
  EXPECT_EQ(runOnRamp(*r), runOnRamp(*apart));
  const auto json = buildReportJson(r->graph, r->plan, {});
  int aliases = 0;
  for (const auto& b : json["buffers"])
    if (b.contains("alias_of")) {
      ++aliases;
      EXPECT_TRUE(b["name"] == "flat" || b["name"] == "sum") << b.dump();
    }
  EXPECT_EQ(aliases, 2);
  EXPECT_EQ(json["pools"][0]["peak_live"], 2048);
}

TEST(Aliasing, GuardModeRunsWithOneRecordPerGroup) {
  auto plain = compileIt({});
  auto guarded = compileIt({}, true, true);
  ASSERT_TRUE(guarded.ok()) << guarded.error().render();
  EXPECT_NE(guarded->code.source.text.find("#define NET_GUARD_COUNT 4"), std::string::npos) << "c1, r1, c2(+sum), r2(+flat)";
  EXPECT_EQ(runOnRamp(*guarded), runOnRamp(*plain));
}

TEST(Aliasing, NoCommonPoolKeepsBuffersApartWithARemark) {
  BoardFlags b;
  b.pools = {"name=a;size=64KiB;placement=user", "name=b;size=64KiB;placement=user"};
  b.pins = {"r2=a", "flat=b"};
  auto r = compileIt(b);
  ASSERT_TRUE(r.ok()) << r.error().render();
  EXPECT_EQ(bufferNamed(*r, "flat").aliasOf, kNoTensor);
  bool remark = false;
  for (const auto& m : r->plan.remarks) remark = remark || m.find("'flat' keeps a buffer of its own") != std::string::npos;
  EXPECT_TRUE(remark);
  EXPECT_NE(r->code.source.text.find("memcpy("), std::string::npos);
  auto apart = compileIt({}, false);
  EXPECT_EQ(runOnRamp(*r), runOnRamp(*apart));
}

TEST(Aliasing, ValidatorRejectsEveryOverlapThatIsNotADeclaredAlias) {
  auto r = compileIt({});
  ASSERT_TRUE(r.ok()) << r.error().render();
  ASSERT_TRUE(validateProgramPlan(r->plan).ok());
  const int flat = r->plan.bufferOf(bufferNamed(*r, "flat").tensor);
  const int r1 = r->plan.bufferOf(bufferNamed(*r, "r1").tensor), c1 = r->plan.bufferOf(bufferNamed(*r, "c1").tensor);
  // Undeclared: r1 onto c1's bytes (both live at step 1).
  ProgramPlan overlap = r->plan;
  overlap.buffers[static_cast<size_t>(r1)].offset = overlap.buffers[static_cast<size_t>(c1)].offset;
  auto s = validateProgramPlan(overlap);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("overlap"), std::string::npos) << s.error().render();
  // The same overlap with the alias declaration dropped: flat now overlaps r2 undeclared.
  ProgramPlan undeclared = r->plan;
  undeclared.buffers[static_cast<size_t>(flat)].aliasOf = kNoTensor;
  EXPECT_FALSE(validateProgramPlan(undeclared).ok());
  // A declared alias that does not sit on its root's bytes.
  ProgramPlan moved = r->plan;
  moved.buffers[static_cast<size_t>(flat)].offset += 1024;
  s = validateProgramPlan(moved);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("declared an alias"), std::string::npos) << s.error().render();
  // A declared alias outliving its root.
  ProgramPlan outlives = r->plan;
  outlives.buffers[static_cast<size_t>(flat)].endStep += 1;
  EXPECT_FALSE(validateProgramPlan(outlives).ok());
}

}  // namespace
}  // namespace stowage
