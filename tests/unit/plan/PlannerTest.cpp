// Memory planning: liveness intervals, the greedy-by-size placement and the independent validator.
#include <gtest/gtest.h>

#include "stowage/ir/Graph.h"
#include "stowage/plan/Validate.h"
#include "stowage/plan/algo/GreedyBySize.h"
#include "stowage/plan/analysis/Liveness.h"

namespace stowage {
namespace {

TensorId add(Graph& g, const std::string& name, Shape shape, TensorKind kind = TensorKind::Activation) {
  Tensor t;
  t.name = name;
  t.shape = std::move(shape);
  t.kind = kind;
  if (kind == TensorKind::Constant) t.data.resize(t.byteSize());
  return g.addTensor(std::move(t));
}

void node(Graph& g, const std::string& name, OpKind op, std::vector<TensorId> in, TensorId out) {
  Node n;
  n.name = name;
  n.op = op;
  n.inputs = std::move(in);
  n.outputs = {out};
  g.addNode(std::move(n));
}

Buffer tensorBuf(TensorId t, size_t size, int first, int end) { return Buffer{t, size, kWorkspaceAlignment, first, end}; }

/// x -> a -> b -> c(output), plus a skip: a also feeds the last node.
Graph chain() {
  Graph g;
  TensorId x = add(g, "x", {1, 16}, TensorKind::Input);
  g.inputs = {x};
  TensorId a = add(g, "a", {1, 16});
  TensorId b = add(g, "b", {1, 8});
  TensorId w = add(g, "w", {1, 16}, TensorKind::Constant);
  TensorId c = add(g, "c", {1, 16});
  TensorId y = add(g, "y", {1, 16});
  node(g, "n0", OpKind::Relu, {x}, a);
  node(g, "n1", OpKind::Slice, {a}, b);
  node(g, "n2", OpKind::Add, {a, w}, c);
  node(g, "n3", OpKind::Relu, {c}, y);
  g.outputs = {y};
  return g;
}

TEST(Liveness, IntervalsRunFromProducerToLastReaderInclusive) {
  Graph g = chain();
  std::vector<Buffer> b = computeLiveness(g);
  // Inputs, constants and graph outputs are not in the workspace.
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(g.tensor(b[0].tensor).name, "a");
  EXPECT_EQ(b[0].firstStep, 0);
  EXPECT_EQ(b[0].endStep, 3);  // read by n2 (step 2): [0, 3)
  EXPECT_EQ(b[0].sizeBytes, 64u);
  // b is never read: it lives for its producer's step only.
  EXPECT_EQ(g.tensor(b[1].tensor).name, "b");
  EXPECT_EQ(b[1].firstStep, 1);
  EXPECT_EQ(b[1].endStep, 2);
  EXPECT_EQ(b[2].firstStep, 2);
  EXPECT_EQ(b[2].endStep, 4);
  // Steps 1 and 2 have a+b and a+c live: 96 and 128 bytes.
  EXPECT_EQ(liveBytesLowerBound(b), 128u);
}

TEST(GreedyBySize, ReusesMemoryOfDeadBuffers) {
  // Three 100-byte buffers in a row: 0 and 2 do not overlap in time, so they share offset 0.
  std::vector<Buffer> bufs = {tensorBuf(0, 100, 0, 2), tensorBuf(1, 100, 1, 3), tensorBuf(2, 100, 2, 4)};
  MemoryPlan p = planGreedyBySize(bufs);
  EXPECT_EQ(p.offsets[0], 0u);
  EXPECT_EQ(p.offsets[1], 112u);  // 100 rounded up to 16-byte alignment
  EXPECT_EQ(p.offsets[2], 0u);
  EXPECT_EQ(p.workspaceBytes, 212u);
  EXPECT_EQ(p.lowerBoundBytes, 200u);
  EXPECT_EQ(p.algorithm, "greedy-by-size");
  EXPECT_TRUE(validatePlan(p).ok());
}

TEST(GreedyBySize, PlacesLargestFirstAndFillsGaps) {
  // The large buffer goes first at 0; the two small ones overlap it in time and each other, so they stack
  // above it; the last one outlives neither and reuses the large one's space.
  std::vector<Buffer> bufs = {tensorBuf(0, 32, 0, 3), tensorBuf(1, 1000, 1, 2), tensorBuf(2, 16, 0, 3), tensorBuf(3, 500, 3, 4)};
  MemoryPlan p = planGreedyBySize(bufs);
  EXPECT_EQ(p.offsets[1], 0u);
  EXPECT_EQ(p.offsets[0], 1008u);
  EXPECT_EQ(p.offsets[2], 1040u);
  EXPECT_EQ(p.offsets[3], 0u);
  EXPECT_TRUE(validatePlan(p).ok());
}

TEST(GreedyBySize, IsDeterministicAndValidOnManyBuffers) {
  std::vector<Buffer> bufs;
  uint32_t seed = 12345;
  auto next = [&] { return seed = seed * 1103515245u + 12345u, (seed >> 8) & 0xffff; };
  for (int i = 0; i < 300; ++i) {
    int first = static_cast<int>(next() % 100);
    bufs.push_back(tensorBuf(i, 1 + next() % 5000, first, first + 1 + static_cast<int>(next() % 10)));
  }
  MemoryPlan a = planGreedyBySize(bufs), b = planGreedyBySize(bufs);
  EXPECT_EQ(a.offsets, b.offsets);
  EXPECT_TRUE(validatePlan(a).ok()) << validatePlan(a).error().render();
  EXPECT_GE(a.workspaceBytes, a.lowerBoundBytes);
}

TEST(Validate, CatchesOverlappingBuffersAndNamesBoth) {
  // Negative case: two buffers live at the same step placed at overlapping addresses.
  MemoryPlan p;
  p.buffers = {tensorBuf(0, 64, 0, 2), tensorBuf(1, 64, 1, 3)};
  p.offsets = {0, 32};
  p.workspaceBytes = 96;
  Status s = validatePlan(p, [](TensorId id) { return id == 0 ? std::string("conv_out") : std::string("relu_out"); });
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("conv_out"), std::string::npos) << s.error().render();
  EXPECT_NE(s.error().message.find("relu_out"), std::string::npos) << s.error().render();
}

TEST(Validate, AllowsSharedAddressesForDisjointLifetimes) {
  MemoryPlan p;
  p.buffers = {tensorBuf(0, 64, 0, 2), tensorBuf(1, 64, 2, 3)};  // half-open: [0,2) and [2,3) do not meet
  p.offsets = {0, 0};
  p.workspaceBytes = 64;
  EXPECT_TRUE(validatePlan(p).ok());
}

TEST(Validate, CatchesMisalignmentAndOverflow) {
  // Negative case: offset 8 breaks the 16-byte alignment.
  MemoryPlan p;
  p.buffers = {tensorBuf(0, 16, 0, 1)};
  p.offsets = {8};
  p.workspaceBytes = 32;
  EXPECT_FALSE(validatePlan(p).ok());
  // Negative case: the buffer ends past the workspace.
  p.offsets = {16};
  p.workspaceBytes = 24;
  Status s = validatePlan(p);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("workspace"), std::string::npos);
}

}  // namespace
}  // namespace stowage
