// Memory-aware operator order (see ReorderForMemory.h).
//
// The live bytes after a set S of scheduled nodes depend on S alone, not on the order inside it, so the lowest
// peak to reach S is a dynamic program over the sets (the "downsets" of the graph): one state per set, expanded
// step by step by every node whose producers are all in it. Chains have one state per step, residual blocks two
// or three, an inception block the product of its branch lengths; when a step has more than maxStatesPerStep the
// best ones are kept (beam search). States whose peak already reaches the original order's are dropped.
#include "stowage/pass/ReorderForMemory.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <tuple>
#include <unordered_map>

namespace stowage {

namespace {

using NodeSet = std::vector<uint64_t>;  ///< one bit per node index of the original order

bool reorderHas(const NodeSet& s, int v) { return ((s[static_cast<size_t>(v) >> 6] >> (static_cast<unsigned>(v) & 63U)) & 1U) != 0; }
void reorderAdd(NodeSet& s, int v) { s[static_cast<size_t>(v) >> 6] |= uint64_t{1} << (static_cast<unsigned>(v) & 63U); }

struct NodeSetHash {
  size_t operator()(const NodeSet& s) const {
    uint64_t h = 1469598103934665603ULL;
    for (uint64_t w : s) h = (h ^ w) * 1099511628211ULL;
    return static_cast<size_t>(h ^ (h >> 29));
  }
};

/// The kernels that write with an output pixel stride, whose outputs the planner may alias into an NHWC channel
/// Concat. The same list as plan/analysis/Aliasing.h writesStridedOutput (a pass may not include plan/ headers).
bool reorderWritesStrided(OpKind op) {
  return op == OpKind::QConv2d || op == OpKind::QDepthwiseConv2d || op == OpKind::ConvNhwc || op == OpKind::DepthwiseConvNhwc;
}

/// The graph seen as the planner sees its buffers: groups of tensors sharing bytes, who makes and reads them.
struct ReorderModel {
  int nodes = 0;
  std::vector<size_t> size;                       ///< per group: bytes (its largest member)
  std::vector<std::vector<int>> makers, readers;  ///< per group: nodes producing / reading a member (ascending)
  std::vector<char> fromStart, toEnd;             ///< per group: holds a graph input / output (with ioInPools)
  std::vector<std::vector<int>> touched;          ///< per node: groups it makes or reads (unique)
  std::vector<std::vector<int>> preds, succs;     ///< per node: nodes it reads from / that read it (unique)
  /// Per node: for an Add / QAdd, the group of its output and of its two operands, and whether each operand has
  /// the output's shape and dtype (it may be written over in place); out = -1 for other nodes.
  struct InPlaceAdd {
    int out = -1;
    int in[2] = {-1, -1};
    bool fits[2] = {false, false};
  };
  std::vector<InPlaceAdd> adds;
  size_t initialResident = 0;  ///< bytes live before the first step (graph inputs with ioInPools)
};

struct ReorderUnionFind {
  std::vector<int> parent;
  explicit ReorderUnionFind(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  int find(int x) {
    while (parent[static_cast<size_t>(x)] != x) x = parent[static_cast<size_t>(x)] = parent[static_cast<size_t>(parent[static_cast<size_t>(x)])];
    return x;
  }
  void unite(int a, int b) {
    a = find(a), b = find(b);
    if (a != b) parent[static_cast<size_t>(std::max(a, b))] = std::min(a, b);
  }
};

ReorderModel buildReorderModel(const Graph& g, bool ioInPools, bool concatSlices) {
  const size_t tensorCount = g.tensors.size();
  const std::vector<int> producer = g.producers();
  const std::vector<int> uses = g.useCounts();
  std::vector<char> isInput(tensorCount, 0), isOutput(tensorCount, 0);
  for (TensorId id : g.inputs) isInput[static_cast<size_t>(id)] = 1;
  for (TensorId id : g.outputs) isOutput[static_cast<size_t>(id)] = 1;
  std::vector<char> hasBuffer(tensorCount, 0);
  for (size_t i = 0; i < tensorCount; ++i) {
    const Tensor& t = g.tensors[i];
    if (t.byteSize() == 0 || t.isConstant()) continue;
    const bool activation = t.kind == TensorKind::Activation && producer[i] >= 0 && (!isOutput[i] || ioInPools);
    hasBuffer[i] = activation || (ioInPools && (isInput[i] || isOutput[i]));
  }
  auto buffered = [&](TensorId id) { return id != kNoTensor && hasBuffer[static_cast<size_t>(id)]; };
  auto io = [&](TensorId id) { return isInput[static_cast<size_t>(id)] || isOutput[static_cast<size_t>(id)]; };

  // Bytes shared by design (plan/analysis/Aliasing.h): views, and with concatSlices the Concat inputs the planner
  // may write into their slice of the output.
  ReorderUnionFind uf(tensorCount);
  for (const Node& n : g.nodes) {
    if (n.outputs.size() != 1 || n.inputs.empty()) continue;
    const TensorId out = n.outputs[0];
    if (n.op == OpKind::Reshape) {
      const TensorId in = n.inputs[0];
      if (buffered(in) && buffered(out) && g.tensor(in).byteSize() == g.tensor(out).byteSize()) uf.unite(in, out);
      continue;
    }
    if (n.op != OpKind::Concat || !concatSlices || !buffered(out)) continue;
    const Tensor& to = g.tensor(out);
    const int64_t axis = n.attrs.getInt("axis", 0);
    const int64_t rank = static_cast<int64_t>(to.shape.size());
    if (axis < 0 || axis >= rank) continue;
    bool contiguous = true;
    for (int64_t d = 0; d < axis; ++d) contiguous = contiguous && to.shape[static_cast<size_t>(d)] == 1;
    if (!contiguous && axis + 1 != rank) continue;
    const size_t stride = static_cast<size_t>(to.shape.back()) * dtypeSize(to.dtype);
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const TensorId in = n.inputs[k];
      if (!buffered(in) || io(in) || g.tensor(in).dtype != to.dtype) continue;
      if (std::find(n.inputs.begin(), n.inputs.begin() + static_cast<std::ptrdiff_t>(k), in) != n.inputs.begin() + static_cast<std::ptrdiff_t>(k))
        continue;
      if (!contiguous) {
        const Tensor& ti = g.tensor(in);
        const size_t run = ti.shape.empty() ? 0 : static_cast<size_t>(ti.shape.back()) * dtypeSize(ti.dtype);
        const int p = producer[static_cast<size_t>(in)];
        if (run == 0 || run >= stride || ti.quant != to.quant || uses[static_cast<size_t>(in)] != 1 || p < 0) continue;
        const Node& maker = g.nodes[static_cast<size_t>(p)];
        if (maker.outputs.size() != 1 || !reorderWritesStrided(maker.op)) continue;
      }
      uf.unite(in, out);
    }
  }

  ReorderModel m;
  m.nodes = static_cast<int>(g.nodes.size());
  std::vector<int> groupOf(tensorCount, -1), groupOfRoot(tensorCount, -1);
  for (size_t i = 0; i < tensorCount; ++i) {
    if (!hasBuffer[i]) continue;
    const size_t root = static_cast<size_t>(uf.find(static_cast<int>(i)));
    if (groupOfRoot[root] < 0) {
      groupOfRoot[root] = static_cast<int>(m.size.size());
      m.size.push_back(0);
      m.fromStart.push_back(0);
      m.toEnd.push_back(0);
    }
    const int grp = groupOfRoot[root];
    groupOf[i] = grp;
    m.size[static_cast<size_t>(grp)] = std::max(m.size[static_cast<size_t>(grp)], g.tensors[i].byteSize());
    if (isInput[i]) m.fromStart[static_cast<size_t>(grp)] = 1;
    if (isOutput[i]) m.toEnd[static_cast<size_t>(grp)] = 1;
  }
  const size_t groups = m.size.size();
  m.makers.resize(groups);
  m.readers.resize(groups);
  m.touched.resize(g.nodes.size());
  m.preds.resize(g.nodes.size());
  m.succs.resize(g.nodes.size());
  m.adds.resize(g.nodes.size());
  auto addUnique = [](std::vector<int>& v, int x) {
    if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
  };
  for (size_t step = 0; step < g.nodes.size(); ++step) {
    const Node& n = g.nodes[step];
    const int s = static_cast<int>(step);
    for (TensorId id : n.outputs) {
      if (id == kNoTensor || groupOf[static_cast<size_t>(id)] < 0) continue;
      const int grp = groupOf[static_cast<size_t>(id)];
      addUnique(m.makers[static_cast<size_t>(grp)], s);
      addUnique(m.touched[step], grp);
    }
    for (TensorId id : n.inputs) {
      if (id == kNoTensor) continue;
      const int p = producer[static_cast<size_t>(id)];
      if (p >= 0 && p != s) {
        addUnique(m.preds[step], p);
        addUnique(m.succs[static_cast<size_t>(p)], s);
      }
      const int grp = groupOf[static_cast<size_t>(id)];
      if (grp < 0) continue;
      addUnique(m.readers[static_cast<size_t>(grp)], s);
      addUnique(m.touched[step], grp);
    }
    if ((n.op == OpKind::Add || n.op == OpKind::QAdd) && n.inputs.size() >= 2 && n.outputs.size() == 1 && buffered(n.outputs[0])) {
      ReorderModel::InPlaceAdd& a = m.adds[step];
      const Tensor& to = g.tensor(n.outputs[0]);
      a.out = groupOf[static_cast<size_t>(n.outputs[0])];
      for (size_t k = 0; k < 2; ++k) {
        const TensorId in = n.inputs[k];
        if (!buffered(in)) continue;
        a.in[k] = groupOf[static_cast<size_t>(in)];
        a.fits[k] = g.tensor(in).shape == to.shape && g.tensor(in).dtype == to.dtype;
      }
    }
  }
  for (std::vector<int>& s : m.succs) std::sort(s.begin(), s.end());
  for (size_t grp = 0; grp < groups; ++grp)
    if (m.fromStart[grp] && (!m.readers[grp].empty() || m.toEnd[grp])) m.initialResident += m.size[grp];
  return m;
}

/// Live bytes during one step and after it.
struct ReorderStepBytes {
  size_t during = 0;
  size_t after = 0;
};

bool groupStarted(const ReorderModel& m, int grp, const NodeSet& done) {
  if (m.fromStart[static_cast<size_t>(grp)]) return true;
  for (int p : m.makers[static_cast<size_t>(grp)])
    if (reorderHas(done, p)) return true;
  return false;
}

/// True when every maker and reader of `grp` is in `done` or is `v` (its bytes die at step v).
bool groupEndsAt(const ReorderModel& m, int grp, const NodeSet& done, int v) {
  if (m.toEnd[static_cast<size_t>(grp)]) return false;
  for (const std::vector<int>* list : {&m.makers[static_cast<size_t>(grp)], &m.readers[static_cast<size_t>(grp)]})
    for (int p : *list)
      if (p != v && !reorderHas(done, p)) return false;
  return true;
}

/// The bytes of running node `v` after the nodes `done`, with `resident` bytes live before it.
ReorderStepBytes stepBytes(const ReorderModel& m, const NodeSet& done, size_t resident, int v) {
  ReorderStepBytes b{resident, resident};
  for (int grp : m.touched[static_cast<size_t>(v)]) {
    const size_t bytes = m.size[static_cast<size_t>(grp)];
    if (!groupStarted(m, grp, done)) {
      b.during += bytes;
      b.after += bytes;
    }
    if (groupEndsAt(m, grp, done, v)) b.after -= bytes;
  }
  // An Add writing over an operand that dies here needs no bytes of its own during this step.
  const ReorderModel::InPlaceAdd& a = m.adds[static_cast<size_t>(v)];
  if (a.out >= 0 && !groupStarted(m, a.out, done)) {
    for (size_t k = 0; k < 2; ++k) {
      const int in = a.in[k];
      if (in < 0 || !a.fits[k] || in == a.out || in == a.in[1 - k] || m.toEnd[static_cast<size_t>(in)] ||
          m.size[static_cast<size_t>(in)] != m.size[static_cast<size_t>(a.out)] || !groupEndsAt(m, in, done, v))
        continue;
      b.during -= m.size[static_cast<size_t>(a.out)];
      break;
    }
  }
  return b;
}

size_t orderPeak(const ReorderModel& m, const std::vector<int>& order) {
  NodeSet done((static_cast<size_t>(m.nodes) + 63) / 64, 0);
  size_t resident = m.initialResident, peak = resident;
  for (int v : order) {
    const ReorderStepBytes b = stepBytes(m, done, resident, v);
    peak = std::max(peak, b.during);
    resident = b.after;
    reorderAdd(done, v);
  }
  return peak;
}

struct ReorderSearch {
  std::vector<int> order;  ///< empty when no order below the bound was found
  size_t peak = 0;
  bool exact = true;
  size_t states = 0;
};

/// The order with the lowest peak below `bound` (exclusive), by dynamic programming over sets of scheduled nodes.
ReorderSearch searchOrder(const ReorderModel& m, size_t bound, size_t maxStates) {
  struct State {
    NodeSet done;
    std::vector<int> ready;  ///< nodes not done whose producers are all done, ascending
    size_t resident = 0, peak = 0;
    uint64_t area = 0;  ///< sum of live bytes over the steps so far (tie-break: free bytes early)
  };
  struct Link {
    int parent;
    int node;
  };
  ReorderSearch result;
  const size_t words = (static_cast<size_t>(m.nodes) + 63) / 64;
  std::vector<State> level(1);
  level[0].done.assign(words, 0);
  level[0].resident = level[0].peak = m.initialResident;
  if (m.initialResident >= bound) return result;
  for (int v = 0; v < m.nodes; ++v)
    if (m.preds[static_cast<size_t>(v)].empty()) level[0].ready.push_back(v);
  std::vector<std::vector<Link>> links;
  for (int step = 0; step < m.nodes; ++step) {
    std::vector<State> next;
    std::vector<Link> nextLinks;
    std::unordered_map<NodeSet, size_t, NodeSetHash> index;
    for (size_t si = 0; si < level.size(); ++si) {
      const State& s = level[si];
      for (int v : s.ready) {
        const ReorderStepBytes b = stepBytes(m, s.done, s.resident, v);
        const size_t peak = std::max(s.peak, b.during);
        if (peak >= bound) continue;
        const uint64_t area = s.area + b.during;
        NodeSet done = s.done;
        reorderAdd(done, v);
        auto [it, fresh] = index.try_emplace(done, next.size());
        if (!fresh) {
          State& old = next[it->second];
          if (std::pair(peak, area) < std::pair(old.peak, old.area)) {
            old.peak = peak;
            old.area = area;
            nextLinks[it->second] = Link{static_cast<int>(si), v};
          }
          continue;
        }
        State t;
        t.done = std::move(done);
        t.resident = b.after;
        t.peak = peak;
        t.area = area;
        for (int r : s.ready)
          if (r != v) t.ready.push_back(r);
        for (int w : m.succs[static_cast<size_t>(v)]) {
          const std::vector<int>& pw = m.preds[static_cast<size_t>(w)];
          if (std::all_of(pw.begin(), pw.end(), [&](int p) { return reorderHas(t.done, p); })) t.ready.push_back(w);
        }
        std::sort(t.ready.begin(), t.ready.end());
        t.ready.erase(std::unique(t.ready.begin(), t.ready.end()), t.ready.end());
        next.push_back(std::move(t));
        nextLinks.push_back(Link{static_cast<int>(si), v});
      }
    }
    if (next.empty()) return result;  // every schedule reaches the bound
    if (next.size() > maxStates) {
      result.exact = false;
      std::vector<size_t> keep(next.size());
      std::iota(keep.begin(), keep.end(), 0);
      std::stable_sort(keep.begin(), keep.end(), [&](size_t a, size_t b) {
        return std::tuple(next[a].peak, next[a].resident, next[a].area) < std::tuple(next[b].peak, next[b].resident, next[b].area);
      });
      keep.resize(maxStates);
      std::sort(keep.begin(), keep.end());  // back to discovery order: ties keep preferring the original order
      std::vector<State> kept;
      std::vector<Link> keptLinks;
      for (size_t k : keep) {
        kept.push_back(std::move(next[k]));
        keptLinks.push_back(nextLinks[k]);
      }
      next = std::move(kept);
      nextLinks = std::move(keptLinks);
    }
    result.states += next.size();
    links.push_back(std::move(nextLinks));
    level = std::move(next);
  }
  // One state is left: every node done.
  result.peak = level[0].peak;
  result.order.assign(static_cast<size_t>(m.nodes), -1);
  int at = 0;
  for (size_t step = links.size(); step-- > 0;) {
    const Link& l = links[step][static_cast<size_t>(at)];
    result.order[step] = l.node;
    at = l.parent;
  }
  return result;
}

}  // namespace

size_t scheduleLiveBytesPeak(const Graph& g, const std::vector<int>& order, const ReorderOptions& options) {
  const ReorderModel sliced = buildReorderModel(g, options.ioInPools, true);
  const ReorderModel apart = buildReorderModel(g, options.ioInPools, false);
  return std::min(orderPeak(sliced, order), orderPeak(apart, order));
}

ReorderResult reorderForMemory(Graph& g, const ReorderOptions& options) {
  ReorderResult r;
  std::vector<int> original(g.nodes.size());
  std::iota(original.begin(), original.end(), 0);
  const ReorderModel models[2] = {buildReorderModel(g, options.ioInPools, true), buildReorderModel(g, options.ioInPools, false)};
  auto score = [&](const std::vector<int>& order) { return std::min(orderPeak(models[0], order), orderPeak(models[1], order)); };
  r.peakBefore = r.peakAfter = score(original);
  if (g.nodes.size() < 3) return r;
  std::vector<int> best;
  for (const ReorderModel& m : models) {
    const ReorderSearch s = searchOrder(m, r.peakAfter, std::max<size_t>(1, options.maxStatesPerStep));
    r.exact = r.exact && s.exact;
    r.statesVisited += s.states;
    if (s.order.empty()) continue;
    const size_t peak = score(s.order);
    if (peak < r.peakAfter) {
      r.peakAfter = peak;
      best = s.order;
    }
  }
  if (best.empty() || best == original) return r;
  std::vector<Node> nodes;
  nodes.reserve(g.nodes.size());
  int moved = 0;
  for (size_t i = 0; i < best.size(); ++i) {
    nodes.push_back(std::move(g.nodes[static_cast<size_t>(best[i])]));
    if (best[i] != static_cast<int>(i)) ++moved;
  }
  g.nodes = std::move(nodes);
  r.changed = true;
  r.remark = fmt::format("reorder: {} of {} nodes run in another order, lowering the peak of live activation bytes from {} to {} "
                         "(-{} bytes by the pass's measure; {} search over {} partial schedules); --no-reorder keeps the "
                         "model's order",
                         moved, g.nodes.size(), r.peakBefore, r.peakAfter, r.peakBefore - r.peakAfter,
                         r.exact ? "exact" : "beam", r.statesVisited);
  return r;
}

}  // namespace stowage
