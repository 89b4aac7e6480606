// PAD folded into the next int8 convolution (pass/FoldPad.h) and fused multi-layer bands (tile/FusedBands.h) on a small
// TFLite model: an asymmetric PAD before a stride-2 VALID convolution, a depthwise, a pointwise and a residual ADD.
// Outputs stay byte-identical with either move off and in guard mode; the fused chain is ordinary nodes.
#include <gtest/gtest.h>

#include <algorithm>

#include "../frontend/TfliteGraphBuilder.h"
#include "../pools/PoolTestUtil.h"
#include "stowage/driver/Compiler.h"
#include "stowage/driver/HostRunner.h"
#include "stowage/frontend/TfliteImporter.h"
#include "stowage/ir/LoweringAttributes.h"
#include "stowage/pass/FoldPad.h"

namespace stowage {
namespace {

using namespace stowage::testing;

using tflitetest::bytesOf;
using tflitetest::OpSpec;
using tflitetest::TensorSpec;

constexpr int32_t kFbAdd = 0, kFbConv = 3, kFbDepthwise = 4, kFbPad = 34;

template <class T>
std::vector<T> fbValues(size_t n, int period, int bias) {
  return periodicValues<T>(n, period, bias, 5);
}

/// x[1,16,10,4] -> PAD (rows 0/1, columns 1/1) -> p[1,17,12,4] -> conv 3x3 stride 2 VALID -> a[1,8,5,8] -> depthwise 3x3
/// SAME -> b -> conv 1x1 -> c -> ADD(a, c) -> d -> conv 1x1 -> y[1,8,5,4]; int8 (PAD pads with the zero point).
std::vector<uint8_t> padChainModel() {
  auto act = [](const std::string& name, std::vector<int32_t> shape, float scale, int zp) {
    return TensorSpec{name, std::move(shape), 9, {scale}, {zp}, {}};
  };
  auto weights = [](const std::string& name, std::vector<int32_t> shape, int period) {
    size_t n = 1;
    for (int32_t d : shape) n *= static_cast<size_t>(d);
    return TensorSpec{name, std::move(shape), 9, {0.02f}, {0}, bytesOf(fbValues<int8_t>(n, period, period / 2))};
  };
  auto bias = [](const std::string& name, int32_t m, float scale) {
    return TensorSpec{name, {m}, 2, {scale * 0.02f}, {0}, bytesOf(fbValues<int32_t>(static_cast<size_t>(m), 40, 20))};
  };
  std::vector<TensorSpec> t = {
      act("x", {1, 16, 10, 4}, 0.05f, -3),                                               // 0
      TensorSpec{"paddings", {4, 2}, 2, {}, {}, bytesOf(std::vector<int32_t>{0, 0, 0, 1, 1, 1, 0, 0})},  // 1
      act("p", {1, 17, 12, 4}, 0.05f, -3),                                               // 2
      weights("w1", {8, 3, 3, 4}, 11), bias("b1", 8, 0.05f), act("a", {1, 8, 5, 8}, 0.04f, 1),   // 3, 4, 5
      weights("w2", {1, 3, 3, 8}, 7), bias("b2", 8, 0.04f), act("b", {1, 8, 5, 8}, 0.03f, -2),   // 6, 7, 8
      weights("w3", {8, 1, 1, 8}, 13), bias("b3", 8, 0.03f), act("c", {1, 8, 5, 8}, 0.04f, 0),  // 9, 10, 11
      act("d", {1, 8, 5, 8}, 0.06f, 2),                                                  // 12
      weights("w4", {4, 1, 1, 8}, 9), bias("b4", 4, 0.06f), act("y", {1, 8, 5, 4}, 0.05f, 4),    // 13, 14, 15
  };
  auto conv = [](int32_t code, std::vector<int32_t> ins, int32_t out, int32_t stride, bool valid) {
    OpSpec o;
    o.code = code;
    o.inputs = std::move(ins);
    o.outputs = {out};
    o.optionsTag = code == kFbConv ? 1 : 2;
    o.byteFields = {{0, static_cast<int8_t>(valid ? 1 : 0)}};  // padding: 0 SAME, 1 VALID
    o.intFields = {{1, stride}, {2, stride}};
    if (code == kFbDepthwise) o.intFields.push_back({3, 1});
    return o;
  };
  OpSpec pad;
  pad.code = kFbPad;
  pad.inputs = {0, 1};
  pad.outputs = {2};
  pad.optionsTag = 22;  // PadOptions
  OpSpec add;
  add.code = kFbAdd;
  add.inputs = {5, 11};
  add.outputs = {12};
  add.optionsTag = 11;  // AddOptions
  std::vector<OpSpec> ops = {pad, conv(kFbConv, {2, 3, 4}, 5, 2, true), conv(kFbDepthwise, {5, 6, 7}, 8, 1, false),
                             conv(kFbConv, {8, 9, 10}, 11, 1, false), add, conv(kFbConv, {12, 13, 14}, 15, 1, false)};
  return tflitetest::buildTfliteModel(t, ops, {0}, {15});
}

Result<CompileResult> compilePadChain(bool foldPad, bool fuse, bool guard = false, double extraMacsPercent = 100) {
  STOWAGE_ASSIGN_OR_RETURN(Graph g, importTfliteBytes(padChainModel(), "pad_chain.tflite"));
  CompileOptions o;
  o.foldPad = foldPad;
  o.fuseLayers = false;
  o.forceFuseLayers = fuse;
  o.fuseExtraMacsPercent = extraMacsPercent;
  o.guard = guard;
  o.planner.timeLimitSeconds = 5;
  return compileGraph(std::move(g), o);
}

std::vector<uint8_t> runPadChain(const CompileResult& r) {
  Tensor x;
  x.name = "x";
  x.kind = TensorKind::Input;
  x.shape = {1, 16, 10, 4};
  x.dtype = DType::Int8;
  x.data = bytesOf(fbValues<int8_t>(640, 97, 48));
  auto out = runOnHost(r, {x});
  if (!out.ok()) throw std::runtime_error(out.error().render());
  return (*out)[0].data;
}

int countOps(const Graph& g, OpKind op) {
  int n = 0;
  for (const Node& node : g.nodes) n += node.op == op ? 1 : 0;
  return n;
}

/// The Concats that collect a fused chain's last output ("<layer>#bands"; cached halos add "#held" ones).
int chainOutputs(const Graph& g) {
  int n = 0;
  for (const Node& node : g.nodes) n += node.op == OpKind::Concat && node.name.ends_with("#bands") ? 1 : 0;
  return n;
}

// ~1.5 s: three host builds.
TEST(FoldPad, AsymmetricPadBecomesTheConvolutionsPaddingByteIdentically) {
  auto kept = compilePadChain(false, false), folded = compilePadChain(true, false);
  ASSERT_TRUE(kept.ok()) << kept.error().render();
  ASSERT_TRUE(folded.ok()) << folded.error().render();
  EXPECT_EQ(countOps(kept->graph, OpKind::Pad), 1);
  EXPECT_EQ(countOps(folded->graph, OpKind::Pad), 0);
  for (const Node& n : folded->graph.nodes)
    if (n.op == OpKind::QConv2d && n.attrs.getInts("strides") == std::vector<int64_t>{2, 2}) {
      EXPECT_EQ(n.attrs.getInts("pads"), (std::vector<int64_t>{0, 1, 1, 1}));  // top, left, bottom, right
    }
  const std::vector<uint8_t> want = runPadChain(*kept);
  EXPECT_EQ(runPadChain(*folded), want);
  EXPECT_LT(folded->plan.pools[0].usedBytes, kept->plan.pools[0].usedBytes);
}

// Only a PAD of the zero point over H and W folds: the pass leaves a PAD over channels alone.
TEST(FoldPad, KeepsAPadOverChannels) {
  auto g = importTfliteBytes(padChainModel(), "pad_chain.tflite");
  ASSERT_TRUE(g.ok());
  for (Node& n : g->nodes)
    if (n.op == OpKind::Pad) n.attrs.set("pads", std::vector<int64_t>{0, 0, 1, 0, 0, 1, 1, 1});
  auto remarks = foldPad(*g);
  ASSERT_TRUE(remarks.ok());
  EXPECT_EQ(countOps(*g, OpKind::Pad), 1);
  ASSERT_FALSE(remarks->empty());
  EXPECT_NE(remarks->front().find("pads the batch or channels"), std::string::npos) << remarks->front();
}

// A veto (the driver's: a placement rule or pin on the Pad's tensors) keeps the Pad, with its reason in a remark.
TEST(FoldPad, AVetoKeepsThePad) {
  auto g = importTfliteBytes(padChainModel(), "pad_chain.tflite");
  ASSERT_TRUE(g.ok());
  auto remarks = foldPad(*g, [](const Graph&, TensorId, TensorId) { return std::string("pin #1 names tensor 'p'"); });
  ASSERT_TRUE(remarks.ok());
  EXPECT_EQ(countOps(*g, OpKind::Pad), 1);
  ASSERT_EQ(remarks->size(), 1u);
  EXPECT_NE(remarks->front().find("pin #1"), std::string::npos) << remarks->front();
}

// ~2 s: three host builds. The chain conv (stride 2) .. ADD runs in bands: a, read by the depthwise and the ADD, is
// held as the union of their rows; outputs equal the layer-by-layer ones, also in guard mode.
TEST(FusedBands, ChainRunsInBandsByteIdentically) {
  auto whole = compilePadChain(true, false), fused = compilePadChain(true, true), guarded = compilePadChain(true, true, true);
  ASSERT_TRUE(whole.ok()) << whole.error().render();
  ASSERT_TRUE(fused.ok()) << fused.error().render();
  ASSERT_TRUE(guarded.ok()) << guarded.error().render();
  EXPECT_GE(fused->fusedChains, 1);
  EXPECT_GT(countOps(fused->graph, OpKind::QConv2d), countOps(whole->graph, OpKind::QConv2d));
  EXPECT_EQ(chainOutputs(fused->graph), fused->fusedChains);
  EXPECT_GT(countOps(fused->graph, OpKind::QAdd), 1) << "the residual ADD runs in bands too";
  EXPECT_GT(countOps(fused->graph, OpKind::Slice), 0) << "band inputs are row views";
  EXPECT_GE(fused->fusedBandExtraMacs, 0);
  EXPECT_EQ(fused->macs, whole->macs + fused->fusedBandExtraMacs);
  const std::vector<uint8_t> want = runPadChain(*whole);
  EXPECT_EQ(runPadChain(*fused), want);
  EXPECT_EQ(runPadChain(*guarded), want);
}

// ~2 s: three host builds. With no MACs to spare (--fuse-extra-macs 0) the same chain keeps its halo rows instead of
// recomputing them: each band computes only rows no earlier band computed, the rows the next band needs again are
// copied out of the band's tensor (a carry) and in front of the next band's new rows. Same bytes, also in guard mode
// (which checks every carry and band tensor between its write and its last read), and no extra MACs.
TEST(FusedBands, CachedHalosGiveTheSameBytesWithoutExtraMacs) {
  auto whole = compilePadChain(true, false), cached = compilePadChain(true, true, false, 0), guarded = compilePadChain(true, true, true, 0);
  ASSERT_TRUE(whole.ok()) << whole.error().render();
  ASSERT_TRUE(cached.ok()) << cached.error().render();
  ASSERT_TRUE(guarded.ok()) << guarded.error().render();
  ASSERT_GE(cached->fusedChains, 1);
  EXPECT_EQ(cached->fusedBandExtraMacs, 0);
  EXPECT_EQ(cached->macs, whole->macs);
  int carries = 0;
  for (const Node& n : cached->graph.nodes) carries += n.attrs.has(kOwnBufferAttr) ? 1 : 0;
  EXPECT_GT(carries, 0) << "halo rows carried into the next band";
  const bool remarked = std::any_of(cached->plan.remarks.begin(), cached->plan.remarks.end(),
                                    [](const std::string& r) { return r.find("halos cached") != std::string::npos; });
  EXPECT_TRUE(remarked);
  const std::vector<uint8_t> want = runPadChain(*whole);
  EXPECT_EQ(runPadChain(*cached), want);
  EXPECT_EQ(runPadChain(*guarded), want);
}

}  // namespace
}  // namespace stowage
