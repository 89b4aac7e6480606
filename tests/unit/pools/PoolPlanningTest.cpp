// Planning over a board's pools through the compile pipeline: defaults, spills from a small fast pool, placement
// rules, pins, banks, infeasible boards (the suggested size must then fit), the program validator catching a
// corrupted plan, and the generated C of user/static/fixed pools running on the host with unchanged outputs.
#include <gtest/gtest.h>

#include <algorithm>

#include "../codegen/TestGraphs.h"
#include "PoolTestUtil.h"
#include "stowage/driver/Compiler.h"
#include "stowage/driver/HostRunner.h"
#include "stowage/codegen/CEmitter.h"
#include "stowage/plan/ValidateProgram.h"
#include "stowage/report/ReportHtml.h"
#include "stowage/report/ReportJson.h"

namespace stowage {
namespace {

using namespace stowage::testing;

/// x[1,2,8,8] -> conv(4, 3x3 pad 1) -> relu -> conv(4, 3x3 pad 1) -> add(skip from relu) -> relu -> reshape
/// -> gemm -> y[1,5]. Intermediates of 1 KiB each, with one long-lived skip tensor.
Graph smallNet() {
  Graph g;
  g.name = "small";
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

Result<CompileResult> compileWith(const BoardFlags& board, const std::string& planner = "auto", bool guard = false) {
  CompileOptions o;
  o.board = board;
  o.guard = guard;
  o.planner.algorithm = planner;
  o.planner.timeLimitSeconds = 5;
  // These scenarios are sized for one buffer per tensor (spills, banks, infeasible pools); aliasing of the
  // reshape and the add is covered by AliasingTest.cpp.
  o.planner.aliasing = false;
  o.fuse = false;  // likewise one node per step: each Relu a layer of its own (fusion: FuseActivationTest.cpp)
  return compileGraph(smallNet(), o);
}

std::string poolOf(const CompileResult& r, const std::string& tensor) {
  return r.plan.board.pools[static_cast<size_t>(bufferNamed(r, tensor).slot.pool)].name;
}

TEST(PoolPlanning, DefaultBoardPutsActivationsInWorkspaceAndConstantsInWeights) {
  auto r = compileWith({});
  ASSERT_TRUE(r.ok()) << r.error().render();
  ASSERT_EQ(r->plan.board.pools.size(), 2u);
  for (const PlacedBuffer& b : r->plan.buffers)
    EXPECT_EQ(r->plan.board.pools[static_cast<size_t>(b.slot.pool)].name, b.role == BufferRole::Constant ? "weights" : "workspace");
  const PoolUse& ws = r->plan.pools[0];
  // conv1..flatten: at most two 1 KiB tensors plus the skip tensor are live at once.
  EXPECT_EQ(ws.lowerBoundBytes, 3072u);
  EXPECT_EQ(ws.usedBytes, 3072u) << "auto reaches the lower bound on a chain";
  EXPECT_NE(r->code.header.text.find("uint8_t* workspace;"), std::string::npos);
  EXPECT_NE(r->code.header.text.find("#define NET_POOL_WORKSPACE_SIZE 3072u"), std::string::npos);
}

TEST(PoolPlanning, SmallFastPoolSpillsToTheNextCandidateWithRemarks) {
  BoardFlags b;
  b.pools = {"name=dtcm;size=2KiB;placement=static;section=.dtcm", "name=sram;size=64KiB;placement=user",
             "name=flash;size=64KiB;kind=constant;placement=static;section=.rodata.flash"};
  auto r = compileWith(b);
  ASSERT_TRUE(r.ok()) << r.error().render();
  const PoolUse& dtcm = r->plan.pools[0];
  EXPECT_LE(dtcm.usedBytes, 2048u);
  EXPECT_GT(dtcm.buffers, 0);
  EXPECT_GT(r->plan.pools[1].buffers, 0) << "what does not fit in dtcm spills to sram";
  EXPECT_TRUE(std::any_of(r->plan.remarks.begin(), r->plan.remarks.end(), [](const std::string& s) { return s.find("spill") == 0; }));
  bool spilledReason = false;
  for (const PlacedBuffer& pb : r->plan.buffers) spilledReason |= pb.reason.find("spilled from 'dtcm'") == 0;
  EXPECT_TRUE(spilledReason);
  EXPECT_NE(r->code.source.text.find("static uint8_t net_pool_dtcm[NET_POOL_DTCM_SIZE] NET_POOL_DTCM_PLACE;"), std::string::npos);
  EXPECT_NE(r->code.header.text.find("section(\".dtcm\")"), std::string::npos);
  EXPECT_NE(r->code.weights.text.find("NET_POOL_FLASH_PLACE"), std::string::npos);
  // Same outputs as the one-pool default.
  auto ref = compileWith({});
  ASSERT_TRUE(ref.ok());
  EXPECT_EQ(runOnRamp(*r), runOnRamp(*ref));
}

TEST(PoolPlanning, RulesHoldForEveryTensorOfTheMatchedOps) {
  BoardFlags b;
  b.pools = {"name=l2_mem;size=64KiB;placement=user", "name=act_mem;size=64KiB;placement=user"};
  b.rules = {"op=Conv;inputs=l2_mem;outputs=act_mem"};
  auto r = compileWith(b);
  ASSERT_TRUE(r.ok()) << r.error().render();
  EXPECT_EQ(poolOf(*r, "c1"), "act_mem");  // conv1's output
  EXPECT_EQ(poolOf(*r, "c2"), "act_mem");
  EXPECT_EQ(poolOf(*r, "r1"), "l2_mem");   // conv2's input, produced by CPU code (relu1)
  auto ref = compileWith({});
  ASSERT_TRUE(ref.ok());
  EXPECT_EQ(runOnRamp(*r), runOnRamp(*ref));
}

TEST(PoolPlanning, ContradictoryRulesNameTheTensorAndWhyEachPoolIsExcluded) {
  BoardFlags b;
  b.pools = {"name=l2_mem;size=64KiB;placement=user", "name=act_mem;size=64KiB;placement=user"};
  b.rules = {"op=Conv;outputs=act_mem", "op=Relu;inputs=l2_mem"};  // c1 is conv1's output and relu1's input
  auto r = compileWith(b);
  ASSERT_FALSE(r.ok());
  const std::string text = r.error().render();
  EXPECT_NE(text.find("tensor 'c1'"), std::string::npos) << text;
  EXPECT_NE(text.find("pool 'l2_mem'"), std::string::npos) << text;
  EXPECT_NE(text.find("--rule #2"), std::string::npos) << text;
}

TEST(PoolPlanning, PinsAreHonouredAndBadPinsAreErrors) {
  BoardFlags b;
  b.pools = {"name=fast;size=64KiB;placement=user", "name=slow;size=64KiB;placement=user"};
  b.pins = {"sum=slow", "c?=slow"};
  auto r = compileWith(b);
  ASSERT_TRUE(r.ok()) << r.error().render();
  EXPECT_EQ(poolOf(*r, "sum"), "slow");
  EXPECT_EQ(poolOf(*r, "c1"), "slow");
  EXPECT_EQ(poolOf(*r, "r1"), "fast");
  EXPECT_NE(bufferNamed(*r, "sum").reason.find("pinned by --pin"), std::string::npos);

  b.pins = {"nothing_called_this=slow"};
  auto none = compileWith(b);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().render().find("matches no tensor"), std::string::npos);

  b.pins = {"c1=weights_pool"};
  b.pools.push_back("name=weights_pool;size=64KiB;kind=constant;placement=static");
  auto wrongKind = compileWith(b);
  ASSERT_FALSE(wrongKind.ok());
  EXPECT_NE(wrongKind.error().render().find("cannot hold activations"), std::string::npos) << wrongKind.error().render();
}

TEST(PoolPlanning, InfeasiblePoolErrorNamesStepBuffersAndASizeThatFits) {
  BoardFlags b;
  b.pools = {"name=sram;size=2KiB;placement=user"};
  auto r = compileWith(b);
  ASSERT_FALSE(r.ok());
  const Diagnostic& d = r.error();
  const std::string text = d.render();
  EXPECT_NE(text.find("pool 'sram'"), std::string::npos) << text;
  EXPECT_NE(text.find("step 3 (node 'add', Add)"), std::string::npos) << text;
  EXPECT_NE(text.find("'r1': 1024 bytes"), std::string::npos) << text;
  EXPECT_NE(d.hint.find("at least 3072 bytes"), std::string::npos) << text;
  // The size the error suggests must be enough.
  b.pools = {"name=sram;size=3072;placement=user"};
  auto fits = compileWith(b);
  EXPECT_TRUE(fits.ok()) << fits.error().render();
}

TEST(PoolPlanning, BankedPoolKeepsEveryBufferInsideOneBank) {
  BoardFlags b;
  b.pools = {"name=tcm;size=4KiB;banks=2;bank_size=2KiB;placement=static"};
  auto r = compileWith(b);
  ASSERT_TRUE(r.ok()) << r.error().render();
  for (const PlacedBuffer& pb : r->plan.buffers) {
    if (pb.role != BufferRole::Activation) continue;
    const size_t bankStart = static_cast<size_t>(pb.slot.bank) * 2048;
    EXPECT_GE(pb.offset, bankStart);
    EXPECT_LE(pb.offset + pb.sizeBytes, bankStart + 2048);
  }
  EXPECT_GT(r->plan.pools[0].bankUsedBytes[1], 0u) << "3 KiB live cannot fit one 2 KiB bank";
}

TEST(PoolPlanning, FixedPoolsWithNonContiguousBanksRunOnTheHostSimulator) {
  BoardFlags b;
  b.pools = {"name=vtcm;size=4KiB;banks=2;bank_size=2KiB;placement=fixed;base=0xD8000000;bank_bases=0xD8000000,0xD8100000"};
  auto r = compileWith(b);
  ASSERT_TRUE(r.ok()) << r.error().render();
  EXPECT_NE(r->code.header.text.find("#define NET_POOL_VTCM_BANK1_BASE ((uintptr_t)0xD8100000u)"), std::string::npos)
      << r->code.header.text;
  EXPECT_NE(r->code.source.text.find("STOWAGE_FIXED_ADDRESS(NET_POOL_VTCM_BANK1_BASE"), std::string::npos);
  EXPECT_EQ(r->code.source.text.find("malloc"), std::string::npos);
  auto ref = compileWith({});
  ASSERT_TRUE(ref.ok());
  EXPECT_EQ(runOnRamp(*r), runOnRamp(*ref));
}

TEST(PoolPlanning, EveryAlgorithmGivesAValidPlan) {
  for (const char* algo : {"greedy-size", "greedy-conflicts", "hill-climb", "exact", "auto"}) {
    BoardFlags b;
    b.pools = {"name=dtcm;size=2KiB;placement=static", "name=sram;placement=user"};
    auto r = compileWith(b, algo);
    ASSERT_TRUE(r.ok()) << algo << ": " << r.error().render();
    EXPECT_TRUE(validateProgramPlan(r->plan).ok()) << algo;
  }
}

TEST(PoolPlanning, ValidatorCatchesCorruptedPlans) {
  BoardFlags b;
  b.pools = {"name=a;size=64KiB;placement=user", "name=b;size=64KiB;placement=user"};
  b.rules = {"op=Conv;outputs=b"};
  auto r = compileWith(b);
  ASSERT_TRUE(r.ok()) << r.error().render();
  ProgramPlan overlap = r->plan;
  // Two buffers live at the same step (c1 and r1 at step 1) moved onto the same bytes.
  const int c1 = overlap.bufferOf(1 + 3), r1 = overlap.bufferOf(2 + 3);
  ASSERT_GE(c1, 0);
  ASSERT_GE(r1, 0);
  overlap.buffers[static_cast<size_t>(r1)].slot = overlap.buffers[static_cast<size_t>(c1)].slot;
  overlap.buffers[static_cast<size_t>(r1)].candidates.push_back(overlap.buffers[static_cast<size_t>(c1)].slot.pool);
  overlap.buffers[static_cast<size_t>(r1)].offset = overlap.buffers[static_cast<size_t>(c1)].offset;
  EXPECT_NE(validateProgramPlan(overlap).error().message.find("overlap"), std::string::npos);

  ProgramPlan wrongPool = r->plan;
  wrongPool.buffers[static_cast<size_t>(c1)].slot.pool = 0;  // the rule allows only b
  EXPECT_NE(validateProgramPlan(wrongPool).error().message.find("not one of its candidates"), std::string::npos);

  ProgramPlan misaligned = r->plan;
  misaligned.buffers[static_cast<size_t>(c1)].offset += 4;
  EXPECT_FALSE(validateProgramPlan(misaligned).ok());

  ProgramPlan outside = r->plan;
  outside.buffers[static_cast<size_t>(c1)].offset = 64 * 1024;
  EXPECT_FALSE(validateProgramPlan(outside).ok());
}

TEST(Reports, TensorNamesThatAreNotUtf8DoNotBreakTheReports) {
  // Found by the mutation fuzz test: a model may name a tensor with any bytes.
  Graph g = smallNet();
  g.tensor(5).name = std::string("r1\xff\xfe<&>");
  CompileOptions o;
  auto r = compileGraph(std::move(g), o);
  ASSERT_TRUE(r.ok()) << r.error().render();
  const ReportContext context{"m.onnx", "net", r->layerKernels};
  std::string text;
  ASSERT_NO_THROW(text = reportJsonText(r->graph, r->plan, context));
  EXPECT_NE(text.find("r1\xef\xbf\xbd"), std::string::npos);  // U+FFFD
  const std::string html = buildReportHtml(r->graph, r->plan, context);
  EXPECT_NE(html.find("&lt;&amp;&gt;"), std::string::npos);
}

TEST(GuardMode, SameOutputsWithCanariesReservedInEveryPool) {
  BoardFlags b;
  b.pools = {"name=dtcm;size=2KiB;placement=static", "name=sram;placement=user",
             "name=spad;size=8KiB;placement=fixed;base=0x40000000"};
  auto plain = compileWith(b);
  auto guarded = compileWith(b, "auto", true);
  ASSERT_TRUE(plain.ok()) << plain.error().render();
  ASSERT_TRUE(guarded.ok()) << guarded.error().render();
  EXPECT_EQ(guarded->plan.guardBytes, kGuardCanaryBytes);
  // Every activation has its canaries inside its pool and clear of every other live buffer.
  for (const PlacedBuffer& x : guarded->plan.buffers) {
    if (x.role != BufferRole::Activation) continue;
    EXPECT_GE(x.offset, kGuardCanaryBytes);
    for (const PlacedBuffer& y : guarded->plan.buffers) {
      if (&x == &y || y.role != BufferRole::Activation || x.slot.pool != y.slot.pool) continue;
      if (x.firstStep >= y.endStep || y.firstStep >= x.endStep) continue;
      const bool apart = x.offset + x.sizeBytes + kGuardCanaryBytes <= y.offset - kGuardCanaryBytes ||
                         y.offset + y.sizeBytes + kGuardCanaryBytes <= x.offset - kGuardCanaryBytes;
      EXPECT_TRUE(apart) << guarded->graph.tensor(x.tensor).name << " / " << guarded->graph.tensor(y.tensor).name;
    }
  }
  EXPECT_NE(guarded->code.source.text.find("net_guard_check(guard, NET_GUARD_COUNT, 6);"), std::string::npos);
  EXPECT_EQ(runOnRamp(*guarded), runOnRamp(*plain));
}

TEST(GuardMode, CatchesACorruptedPlanAndNamesTheTensor) {
  auto r = compileWith({}, "auto", true);
  ASSERT_TRUE(r.ok()) << r.error().render();
  // r1 (live steps 1..3) moved onto c2's bytes, which the plan shares with c1 (live 0..1): arming r1 before
  // relu1 writes it poisons c1 just before relu1 reads c1.
  ProgramPlan bad = r->plan;
  const int r1 = bad.bufferOf(5), c2 = bad.bufferOf(6);
  ASSERT_EQ(r->graph.tensor(5).name, "r1");
  ASSERT_EQ(r->graph.tensor(6).name, "c2");
  bad.buffers[static_cast<size_t>(r1)].offset = bad.buffers[static_cast<size_t>(c2)].offset;
  ASSERT_FALSE(validateProgramPlan(bad).ok()) << "the validator rejects it; guard mode must catch it at run time too";
  auto code = emitC(r->graph, bad, "net");
  ASSERT_TRUE(code.ok()) << code.error().render();
  CompileResult corrupted = *r;
  corrupted.plan = bad;
  corrupted.code = *code;
  std::vector<float> xv(128, 0.5f);
  auto out = runOnHost(corrupted, {floatTensor("x", {1, 2, 8, 8}, xv)});
  ASSERT_FALSE(out.ok()) << "a corrupted plan ran to the end in guard mode";
  const std::string text = out.error().render();
  EXPECT_NE(text.find("stowage guard: tensor 'c1': overwritten while live, before this read (step 1)"), std::string::npos) << text;
}

}  // namespace
}  // namespace stowage
