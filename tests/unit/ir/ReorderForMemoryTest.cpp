// The memory-aware operator order (pass/ReorderForMemory.h) on hand-built graphs: the schedule stays valid, reaches
// the lowest peak of every topological order (brute force on small graphs), keeps an order that is already optimal,
// runs as a beam search on a graph too wide for the exact search, and lowers the real planner's workspace.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <numeric>

#include "stowage/driver/Compiler.h"
#include "stowage/ir/Graph.h"
#include "stowage/ir/Verifier.h"
#include "stowage/pass/ReorderForMemory.h"

namespace stowage {
namespace {

/// Builds float32 NCHW graphs for these tests (names apart from the other ir tests: unity build).
struct ReorderGraph {
  Graph g;
  TensorId input(Shape s) {
    Tensor t;
    t.name = "x";
    t.shape = std::move(s);
    t.kind = TensorKind::Input;
    const TensorId id = g.addTensor(t);
    g.inputs.push_back(id);
    return id;
  }
  TensorId node(const std::string& name, OpKind op, std::vector<TensorId> ins, Shape out, Attributes attrs = {}) {
    Tensor t;
    t.name = name + "_out";
    t.shape = std::move(out);
    const TensorId id = g.addTensor(t);
    Node n;
    n.name = name;
    n.op = op;
    n.inputs = std::move(ins);
    n.outputs = {id};
    n.attrs = std::move(attrs);
    g.addNode(std::move(n));
    return id;
  }
  TensorId relu(const std::string& name, TensorId in) { return node(name, OpKind::Relu, {in}, g.tensor(in).shape); }
  /// 2x2 max pool, stride 2 (a quarter of the bytes).
  TensorId pool(const std::string& name, TensorId in) {
    Shape s = g.tensor(in).shape;
    s[2] /= 2;
    s[3] /= 2;
    Attributes a;
    a.set("kernel_shape", std::vector<int64_t>{2, 2});
    a.set("strides", std::vector<int64_t>{2, 2});
    a.set("pads", std::vector<int64_t>{0, 0, 0, 0});
    return node(name, OpKind::MaxPool, {in}, s, a);
  }
  /// 1x1 convolution to `channels` channels (zero weights).
  TensorId conv1x1(const std::string& name, TensorId in, int64_t channels) {
    Tensor w;
    w.name = name + "_w";
    w.shape = {channels, g.tensor(in).shape[1], 1, 1};
    w.kind = TensorKind::Constant;
    w.data.assign(w.byteSize(), 0);
    const TensorId wid = g.addTensor(w);
    Shape s = g.tensor(in).shape;
    s[1] = channels;
    Attributes a;
    a.set("strides", std::vector<int64_t>{1, 1});
    a.set("pads", std::vector<int64_t>{0, 0, 0, 0});
    a.set("dilations", std::vector<int64_t>{1, 1});
    a.set("group", int64_t{1});
    return node(name, OpKind::Conv, {in, wid}, s, a);
  }
  TensorId concat(const std::string& name, std::vector<TensorId> ins) {
    Shape s = g.tensor(ins[0]).shape;
    s[1] = 0;
    for (TensorId id : ins) s[1] += g.tensor(id).shape[1];
    Attributes a;
    a.set("axis", int64_t{1});
    return node(name, OpKind::Concat, std::move(ins), s, a);
  }
  void output(TensorId id) { g.outputs.push_back(id); }
};

std::vector<std::string> nodeNames(const Graph& g) {
  std::vector<std::string> v;
  for (const Node& n : g.nodes) v.push_back(n.name);
  return v;
}

/// True when every node input is a graph input, a constant or made by an earlier node.
bool topological(const Graph& g) {
  std::vector<bool> ready(g.tensors.size(), false);
  for (size_t i = 0; i < g.tensors.size(); ++i) ready[i] = g.tensors[i].kind != TensorKind::Activation;
  for (const Node& n : g.nodes) {
    for (TensorId id : n.inputs)
      if (id != kNoTensor && !ready[static_cast<size_t>(id)]) return false;
    for (TensorId id : n.outputs) ready[static_cast<size_t>(id)] = true;
  }
  return true;
}

void expectVerified(const Graph& g) {
  const Status st = verifyGraph(g);
  EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().message);
}

std::vector<int> identityOrder(const Graph& g) {
  std::vector<int> v(g.nodes.size());
  std::iota(v.begin(), v.end(), 0);
  return v;
}

/// The lowest scheduleLiveBytesPeak over every topological order of `g` (small graphs only).
size_t bruteForcePeak(const Graph& g) {
  const std::vector<int> producer = g.producers();
  std::vector<std::vector<int>> preds(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (TensorId id : g.nodes[i].inputs)
      if (id != kNoTensor && producer[static_cast<size_t>(id)] >= 0) preds[i].push_back(producer[static_cast<size_t>(id)]);
  size_t best = SIZE_MAX;
  std::vector<int> order;
  std::vector<bool> done(g.nodes.size(), false);
  std::function<void()> walk = [&] {
    if (order.size() == g.nodes.size()) {
      best = std::min(best, scheduleLiveBytesPeak(g, order));
      return;
    }
    for (size_t v = 0; v < g.nodes.size(); ++v) {
      if (done[v] || !std::all_of(preds[v].begin(), preds[v].end(), [&](int p) { return done[static_cast<size_t>(p)]; })) continue;
      done[v] = true;
      order.push_back(static_cast<int>(v));
      walk();
      order.pop_back();
      done[v] = false;
    }
  };
  walk();
  return best;
}

/// The workspace bytes the real planner uses for `g` on the default board, with or without the reorder.
size_t plannedWorkspace(const Graph& g, bool reorder) {
  CompileOptions o;
  o.reorder = reorder;
  auto r = compileGraph(g, o);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  if (!r.ok()) return 0;
  size_t used = 0;
  for (const PoolUse& u : r->plan.pools)
    if (r->plan.board.pools[static_cast<size_t>(u.pool)].kind == PoolKind::Workspace) used += u.usedBytes;
  return used;
}

// A residual block whose model order runs the downsampling skip branch last, keeping the big block input t0 alive
// through the whole main branch; running the skip first frees t0 one layer earlier.
ReorderGraph residualBlock() {
  ReorderGraph b;
  const TensorId x = b.input({1, 10, 10, 10});               // 4,000 bytes
  const TensorId t0 = b.relu("t0", x);                       // 4,000
  const TensorId m2 = b.relu("m2", b.relu("m1", t0));        // 4,000 each
  const TensorId m3 = b.pool("m3", m2);                      // 1,000
  const TensorId skip = b.pool("skip", t0);                  // 1,000
  b.output(b.node("add", OpKind::Add, {m3, skip}, {1, 10, 5, 5}));
  return b;
}

TEST(ReorderForMemory, ResidualBlockRunsTheSkipBranchFirst) {
  ReorderGraph b = residualBlock();
  const size_t planned = plannedWorkspace(b.g, false);
  // Model order: at m2, t0 + m1 + m2 are live.
  EXPECT_EQ(scheduleLiveBytesPeak(b.g, identityOrder(b.g)), 12000u);
  const ReorderResult r = reorderForMemory(b.g);
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(r.exact);
  EXPECT_EQ(r.peakBefore, 12000u);
  EXPECT_EQ(r.peakAfter, 9000u);  // skip first: at m1, t0 + skip + m1
  EXPECT_EQ(nodeNames(b.g), (std::vector<std::string>{"t0", "skip", "m1", "m2", "m3", "add"}));
  EXPECT_TRUE(topological(b.g));
  expectVerified(b.g);
  EXPECT_NE(r.remark.find("from 12000 to 9000"), std::string::npos) << r.remark;
  // The real planner agrees (the compile runs the pass itself; the default is on).
  EXPECT_EQ(planned, 12000u);
  EXPECT_EQ(plannedWorkspace(residualBlock().g, true), 9000u);
}

// Two branches of different sizes into one Concat (contiguous slices: batch 1, axis 1). The model order runs first
// the branch that grows to 4,096 bytes, keeping the block input alive through it; the small branch first frees it
// earlier. The exact search matches a brute force over every order.
TEST(ReorderForMemory, ConcatOfBranchesOfDifferentSizesIsOptimal) {
  ReorderGraph b;
  const TensorId x = b.input({1, 4, 8, 8});
  const TensorId t0 = b.relu("t0", x);                                     // 1,024 bytes
  const TensorId a = b.pool("a3", b.pool("a2", b.conv1x1("a1", t0, 16)));  // 4,096, 1,024, 256
  const TensorId c = b.pool("c3", b.pool("c2", b.relu("c1", t0)));         // 1,024, 256, 64
  b.output(b.concat("cat", {a, c}));
  const size_t before = scheduleLiveBytesPeak(b.g, identityOrder(b.g));
  const size_t optimum = bruteForcePeak(b.g);
  ASSERT_LT(optimum, before);
  const ReorderResult r = reorderForMemory(b.g);
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(r.exact);
  EXPECT_EQ(r.peakBefore, before);
  EXPECT_EQ(r.peakAfter, optimum);
  EXPECT_EQ(scheduleLiveBytesPeak(b.g, identityOrder(b.g)), optimum);
  EXPECT_TRUE(topological(b.g));
  expectVerified(b.g);
}

// Already the best order (the skip branch first): kept as is, though other orders reach the same peak.
TEST(ReorderForMemory, KeepsAnOptimalOrder) {
  ReorderGraph b = residualBlock();
  ASSERT_TRUE(reorderForMemory(b.g).changed);
  // Swap m1 and skip back and forth: "t0, skip, m1, ..." is optimal; so is the order the pass returns; neither moves.
  const std::vector<std::string> optimal = nodeNames(b.g);
  const ReorderResult again = reorderForMemory(b.g);
  EXPECT_FALSE(again.changed);
  EXPECT_TRUE(again.remark.empty());
  EXPECT_EQ(again.peakBefore, again.peakAfter);
  EXPECT_EQ(nodeNames(b.g), optimal);
  // A plain chain has a single order.
  ReorderGraph chain;
  TensorId t = chain.input({1, 2, 4, 4});
  for (int i = 0; i < 8; ++i) t = chain.relu("r" + std::to_string(i), t);
  chain.output(t);
  const std::vector<std::string> names = nodeNames(chain.g);
  EXPECT_FALSE(reorderForMemory(chain.g).changed);
  EXPECT_EQ(nodeNames(chain.g), names);
}

// Too wide for the exact search (20 independent branches: 3^20 sets of scheduled nodes) behind a long chain: the
// beam search runs, returns a valid order no worse than the model's, fast, and the same order twice.
TEST(ReorderForMemory, BeamSearchOnAWideGraphBehindALongChain) {
  auto build = [] {
    ReorderGraph b;
    TensorId t = b.input({1, 4, 8, 8});
    for (int i = 0; i < 300; ++i) t = b.relu("chain" + std::to_string(i), t);
    std::vector<TensorId> ends;
    // Model order: every branch's big first layer, then every branch's pool, so all big ones are live together.
    std::vector<TensorId> big;
    for (int k = 0; k < 20; ++k) big.push_back(b.relu("big" + std::to_string(k), t));
    for (int k = 0; k < 20; ++k) ends.push_back(b.pool("small" + std::to_string(k), big[static_cast<size_t>(k)]));
    b.output(b.concat("cat", ends));
    return b;
  };
  ReorderGraph b = build();
  ReorderOptions o;
  o.maxStatesPerStep = 64;
  const ReorderResult r = reorderForMemory(b.g, o);
  EXPECT_FALSE(r.exact);
  EXPECT_TRUE(r.changed);
  EXPECT_LT(r.peakAfter, r.peakBefore);
  // Branch by branch: the chain end, the concat's slices, one big layer.
  EXPECT_LE(r.peakAfter, 1024u + 20u * 256u + 1024u);
  EXPECT_TRUE(topological(b.g));
  expectVerified(b.g);
  ReorderGraph again = build();
  reorderForMemory(again.g, o);
  EXPECT_EQ(nodeNames(again.g), nodeNames(b.g));
}

}  // namespace
}  // namespace stowage
