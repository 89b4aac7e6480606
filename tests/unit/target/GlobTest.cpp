// Glob matching (`*`, `?`) and rule/target matching built on it.
#include <gtest/gtest.h>

#include "stowage/target/Board.h"

namespace stowage {
namespace {

TEST(Glob, LiteralsAndWildcards) {
  EXPECT_TRUE(globMatch("Conv", "Conv"));
  EXPECT_FALSE(globMatch("Conv", "ConvTranspose"));  // whole-string match
  EXPECT_FALSE(globMatch("conv", "Conv"));           // case-sensitive
  EXPECT_TRUE(globMatch("Conv*", "ConvTranspose"));
  EXPECT_TRUE(globMatch("*Pool", "MaxPool"));
  EXPECT_TRUE(globMatch("*Pool", "GlobalAveragePool"));
  EXPECT_FALSE(globMatch("*Pool", "MaxPool2"));
  EXPECT_TRUE(globMatch("*", ""));
  EXPECT_TRUE(globMatch("", ""));
  EXPECT_FALSE(globMatch("", "a"));
  EXPECT_TRUE(globMatch("conv?_out", "conv1_out"));
  EXPECT_FALSE(globMatch("conv?_out", "conv12_out"));
  EXPECT_TRUE(globMatch("a*b*c", "aXXbYYbc"));  // needs backtracking over the first `*`
  EXPECT_TRUE(globMatch("**a", "a"));
  EXPECT_FALSE(globMatch("a*b", "a"));
  EXPECT_TRUE(globMatch("/model/*/Conv_?", "/model/layer1/Conv_3"));
  EXPECT_TRUE(isGlob("*Pool"));
  EXPECT_FALSE(isGlob("Conv"));
}

TEST(PlacementRule, MatchesOpAndNode) {
  PlacementRule any;
  EXPECT_TRUE(any.matches("Conv", "n1"));  // empty op and node match every node
  PlacementRule byOp;
  byOp.op = "*Pool";
  EXPECT_TRUE(byOp.matches("MaxPool", "pool1"));
  EXPECT_FALSE(byOp.matches("Conv", "pool1"));
  PlacementRule both;
  both.op = "Conv";
  both.node = "backbone/*";
  EXPECT_TRUE(both.matches("Conv", "backbone/conv1"));
  EXPECT_FALSE(both.matches("Conv", "head/conv1"));
  EXPECT_FALSE(both.matches("Gemm", "backbone/fc"));
  both.scratch = std::vector<std::string>{"spad"};
  EXPECT_FALSE(both.allowed(TensorRole::Input).has_value());
  ASSERT_TRUE(both.allowed(TensorRole::Scratch).has_value());
  EXPECT_EQ(both.allowed(TensorRole::Scratch)->front(), "spad");
  EXPECT_EQ(tensorRoleKey(TensorRole::Weight), "weights");
}

TEST(Target, RunsOps) {
  Target npu;
  npu.name = "npu";
  npu.kind = TargetKind::Accelerator;
  npu.ops = {"Conv", "*Pool"};
  EXPECT_TRUE(npu.runs("Conv"));
  EXPECT_TRUE(npu.runs("AveragePool"));
  EXPECT_FALSE(npu.runs("Softmax"));
  Target none;
  EXPECT_FALSE(none.runs("Conv"));  // no ops listed: runs nothing
  EXPECT_EQ(targetKindFromName("accelerator"), TargetKind::Accelerator);
  EXPECT_FALSE(targetKindFromName("gpu").has_value());
}

TEST(MemoryPool, AccessAndAddresses) {
  MemoryPool p;
  p.access = {"cpu", "npu"};
  EXPECT_TRUE(p.canAccess("npu"));
  EXPECT_FALSE(p.canAccess("dsp"));
  EXPECT_FALSE(p.addressOf(0).has_value());  // user pools have no device address
  p.placement = PoolPlacement::Fixed;
  p.base = 0x1000;
  EXPECT_EQ(p.addressOf(0x10), 0x1010u);
  p.banks = 2;
  p.bankSizeBytes = 0x100;
  p.sizeBytes = 0x200;
  p.bankBases = {0x1000, 0x8000};
  EXPECT_EQ(p.addressOf(0xFF), 0x10FFu);
  EXPECT_EQ(p.addressOf(0x100), 0x8000u);  // second bank starts at its own base
  EXPECT_EQ(p.addressOf(0x1FF), 0x80FFu);
  EXPECT_FALSE(p.addressOf(0x200).has_value());
  EXPECT_EQ(poolPlacementFromName("fixed"), PoolPlacement::Fixed);
  EXPECT_EQ(poolKindName(PoolKind::Constant), "constant");
}

}  // namespace
}  // namespace stowage
