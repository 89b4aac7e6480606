// Fused multi-layer bands on the CPU (see FusedBands.h).
#include "stowage/tile/FusedBands.h"

#include <fmt/format.h>

#include "stowage/ir/LoweringAttributes.h"

#include <algorithm>
#include <map>
#include <optional>

#include "stowage/plan/analysis/Liveness.h"
#include "stowage/target/Glob.h"
#include "stowage/tile/TileGeometry.h"

namespace stowage {

namespace {

bool fusableOp(OpKind op) {
  return op == OpKind::QConv2d || op == OpKind::QDepthwiseConv2d || op == OpKind::QMaxPool2d || op == OpKind::QAveragePool2d ||
         op == OpKind::QAdd || op == OpKind::Transpose;
}

/// One image row of an NHWC tensor [1, H, W, C]: its bytes.
int64_t rowBytes(const Tensor& t) { return t.shape[2] * t.shape[3] * static_cast<int64_t>(dtypeSize(t.dtype)); }

bool batchOneNhwcInt8(const Tensor& t) { return t.dtype == DType::Int8 && t.shape.size() == 4 && t.shape[0] == 1; }

/// What the chain search needs of a node: whether it can be in a chain, and its window geometry.
struct NodeInfo {
  bool fusable = false;
  std::optional<LayerShape> window;  ///< conv / pool; empty for the element-wise QAdd and Transpose (rows map one to one)
  int inputRowAxis = 1;              ///< the axis of input 0 that holds the output's rows (a Transpose's perm[1])
};

NodeInfo nodeInfo(const Graph& g, const Node& n) {
  NodeInfo info;
  if (!fusableOp(n.op) || n.outputs.size() != 1 || n.attrs.has(kBandOfAttr)) return info;
  const Tensor& y = g.tensor(n.outputs[0]);
  if (!batchOneNhwcInt8(y)) return info;
  // A layout Transpose into NHWC (a model's NCHW input): output rows [a, e) are input rows [a, e) of axis perm[1].
  if (n.op == OpKind::Transpose) {
    const std::vector<int64_t> perm = n.attrs.getInts("perm", {});
    if (n.inputs.size() != 1 || n.inputs[0] == kNoTensor || perm.size() != 4 || perm[0] != 0 || perm[1] < 1 || perm[1] > 3) return info;
    const Tensor& x = g.tensor(n.inputs[0]);
    if (x.isConstant() || x.dtype != DType::Int8 || x.shape.size() != 4 || x.shape[0] != 1) return info;
    info.inputRowAxis = static_cast<int>(perm[1]);
    info.fusable = true;
    return info;
  }
  if (n.op == OpKind::QAdd) {
    if (n.inputs.size() != 2) return info;
    for (TensorId t : n.inputs)
      if (t == kNoTensor || g.tensor(t).isConstant() || g.tensor(t).shape != y.shape || g.tensor(t).dtype != DType::Int8) return info;
    info.fusable = true;
    return info;
  }
  if (n.inputs.empty() || n.inputs[0] == kNoTensor || !batchOneNhwcInt8(g.tensor(n.inputs[0]))) return info;
  for (size_t i = 1; i < n.inputs.size(); ++i)
    if (n.inputs[i] != kNoTensor && !g.tensor(n.inputs[i]).isConstant()) return info;
  LayerShapeResult s = layerShapeOf(g, n, PointwiseRows::Image);  // bands are image rows
  if (!s.shape || !isWindowLayer(*s.shape)) return info;
  info.window = std::move(s.shape);
  info.fusable = true;
  return info;
}

/// Bytes of activations live at each step (plan/analysis/Liveness.h; graph inputs and outputs too with `io`), as the
/// planner will see them after fusion: band Slices are views (no bytes of their own) and band Concats' inputs are
/// written into the output, which is live from the first band on.
std::vector<int64_t> liveProfile(const Graph& g, bool io) {
  std::vector<int64_t> live(g.nodes.size(), 0);
  const std::vector<int> producers = g.producers();
  std::vector<bool> inPlace(g.tensors.size(), false), carry(g.tensors.size(), false);
  std::vector<int> firstPiece(g.tensors.size(), -1);
  for (const Node& n : g.nodes)
    if (n.attrs.has(kOwnBufferAttr)) carry[static_cast<size_t>(n.outputs[0])] = true;
  for (const Node& n : g.nodes) {
    if (!n.attrs.has(kBandOfAttr)) continue;
    if (n.op == OpKind::Slice && producers[static_cast<size_t>(n.inputs[0])] >= 0) inPlace[static_cast<size_t>(n.outputs[0])] = true;
    if (n.op == OpKind::Concat) {
      int first = static_cast<int>(g.nodes.size());
      for (TensorId t : n.inputs) {
        if (carry[static_cast<size_t>(t)]) continue;  // a cached halo's copy: a buffer of its own until here
        inPlace[static_cast<size_t>(t)] = true;
        first = std::min(first, producers[static_cast<size_t>(t)]);
      }
      firstPiece[static_cast<size_t>(n.outputs[0])] = first;
    }
  }
  for (Buffer b : computeLiveness(g)) {
    if (inPlace[static_cast<size_t>(b.tensor)]) continue;
    if (firstPiece[static_cast<size_t>(b.tensor)] >= 0) b.firstStep = std::min(b.firstStep, firstPiece[static_cast<size_t>(b.tensor)]);
    for (int t = std::max(0, b.firstStep); t < b.endStep && static_cast<size_t>(t) < live.size(); ++t)
      live[static_cast<size_t>(t)] += static_cast<int64_t>(b.sizeBytes);
  }
  if (io) {
    for (TensorId id : g.inputs) {
      int last = -1;
      for (size_t s = 0; s < g.nodes.size(); ++s)
        if (std::find(g.nodes[s].inputs.begin(), g.nodes[s].inputs.end(), id) != g.nodes[s].inputs.end()) last = static_cast<int>(s);
      for (int t = 0; t <= last; ++t) live[static_cast<size_t>(t)] += static_cast<int64_t>(g.tensor(id).byteSize());
    }
    for (TensorId id : g.outputs)
      for (size_t t = static_cast<size_t>(std::max(0, producers[static_cast<size_t>(id)])); t < live.size(); ++t)
        live[t] += static_cast<int64_t>(g.tensor(id).byteSize());
  }
  return live;
}

/// Why the board's rules and pins keep node `s` whole ("" when they do not): a rule placing its tensors (its band
/// copies would carry other names and sizes), or a pin naming its output (which fusion turns into bands).
std::string whyBoardKeeps(const Graph& g, const Board& board, const Node& n) {
  for (const PlacementRule& rule : board.rules)
    if ((rule.inputs || rule.outputs || rule.weights || rule.scratch) && rule.matches(opName(n.op), n.name))
      return fmt::format("the rule at {} places its tensors", rule.origin);
  for (const PoolPin& pin : board.pins)
    if (globMatch(pin.tensor, g.tensor(n.outputs[0]).name)) return fmt::format("pin {} names its output", pin.origin);
  return {};
}

/// A candidate chain: nodes [first, last] of the schedule.
struct Chain {
  int first = 0, last = 0;
};

/// Per band of a chain, by node position in the chain: the rows each node's band tensor holds, the rows it computes
/// in this band (all it holds when halos are recomputed; only rows no earlier band computed when they are cached) and
/// the rows it carries over from the previous band's tensor (cached halos); for each node input the rows it reads.
struct BandRows {
  std::vector<std::pair<int64_t, int64_t>> out, fresh, carry;
  std::map<std::pair<int, size_t>, RowSpan> inputs;  ///< (node, input index) -> rows read and pads
};

int64_t span(const std::pair<int64_t, int64_t>& r) { return std::max<int64_t>(0, r.second - r.first); }

/// How a chain's halos are handled: rows an earlier band computed are computed again (recompute), or kept from the
/// previous band's tensor and copied into the next one (cache: no extra MACs, a few rows of copies per band).
enum class Halo { Recompute, Cache };

class ChainModel {
 public:
  ChainModel(const Graph& g, const std::vector<NodeInfo>& info, Chain c) : g_(g), info_(info), c_(c) {}

  /// Whether the chain is legal: every node fusable, every tensor made inside read only inside (by later chain
  /// nodes) except the last node's output, which nothing inside reads and which is no graph output.
  std::string whyNot(const std::vector<int>& uses) const {
    for (int s = c_.first; s <= c_.last; ++s) {
      if (!info_[static_cast<size_t>(s)].fusable) return "a layer that cannot run in bands";
      // A Transpose's band is a slice of its input on another axis than a band tensor's rows: it must read a tensor
      // held whole, so only the first layer may be one.
      if (node(s).op == OpKind::Transpose && s != c_.first) return "a Transpose after the chain's first layer";
      const TensorId y = node(s).outputs[0];
      if (s == c_.last) {
        if (lastReaderInChain(y) >= 0) return "the last output is read inside";
        // Its bands are written in place into it (a Concat's slices), which an application's buffer cannot be.
        if (std::find(g_.outputs.begin(), g_.outputs.end(), y) != g_.outputs.end()) return "the last output is a graph output";
        continue;
      }
      if (lastReaderInChain(y) < 0 || readsInChain(y) != uses[static_cast<size_t>(y)]) return "an inner tensor is read outside the chain";
      if (std::find(g_.outputs.begin(), g_.outputs.end(), y) != g_.outputs.end()) return "an inner tensor is a graph output";
    }
    return {};
  }

  /// Every band of `rows` output rows of the last layer, first to last, the rows propagated backwards: an inner
  /// tensor's band holds the union of the rows its readers need for what they compute. With cached halos a node
  /// computes only the rows past those earlier bands computed and carries the rest. Empty when the cache cannot
  /// work (a band would need rows an earlier band already dropped).
  std::vector<BandRows> bands(int64_t rows, Halo halo) const {
    const int n = c_.last - c_.first + 1;
    const int64_t oh = outRows();
    std::vector<BandRows> all;
    std::vector<int64_t> done(static_cast<size_t>(n), INT64_MIN);  // rows [.., done) computed by earlier bands
    std::vector<int64_t> heldFirst(static_cast<size_t>(n), INT64_MIN);
    for (int64_t o0 = 0; o0 < oh; o0 += rows) {
      const int64_t o1 = std::min(oh, o0 + rows);
      BandRows b;
      b.out.assign(static_cast<size_t>(n), {INT64_MAX, INT64_MIN});
      b.fresh.assign(static_cast<size_t>(n), {0, 0});
      b.carry.assign(static_cast<size_t>(n), {0, 0});
      b.out[static_cast<size_t>(n - 1)] = {o0, o1};
      for (int i = n - 1; i >= 0; --i) {
        const size_t u = static_cast<size_t>(i);
        auto& held = b.out[u];
        if (held.first > held.second) {
          // No reader computes anything from it in this band: with cached halos it keeps what it holds for later bands.
          if (halo == Halo::Cache && done[u] != INT64_MIN) held = {heldFirst[u], done[u]};
          else return {};
        }
        if (halo == Halo::Cache && i < n - 1 && done[u] != INT64_MIN) {
          if (held.first < heldFirst[u]) return {};
          held.second = std::max(held.second, done[u]);
          b.fresh[u] = {std::max(held.first, done[u]), held.second};
          if (held.first < done[u]) b.carry[u] = {held.first, std::min(done[u], held.second)};
        } else {
          b.fresh[u] = held;
        }
        heldFirst[u] = held.first;
        if (span(b.fresh[u]) > 0) done[u] = std::max(done[u], b.fresh[u].second);
        const Node& nd = node(c_.first + i);
        if (span(b.fresh[u]) == 0) continue;
        const auto [a, e] = b.fresh[u];
        for (size_t k = 0; k < nd.inputs.size(); ++k) {
          const TensorId t = nd.inputs[k];
          if (t == kNoTensor || g_.tensor(t).isConstant()) continue;
          RowSpan rs;
          if (const auto& w = info_[static_cast<size_t>(c_.first + i)].window; w) rs = windowInputRows(*w, a, e);
          else rs = RowSpan{a, e, 0, 0};
          b.inputs[{i, k}] = rs;
          const int p = producerInChain(t);
          if (p < 0) continue;
          auto& need = b.out[static_cast<size_t>(p - c_.first)];
          need = {std::min(need.first, rs.first), std::max(need.second, rs.end)};
        }
      }
      all.push_back(std::move(b));
    }
    return all;
  }

  /// The rows chain tensor `t` holds in band `b`: its band's rows, or the whole tensor for a chain input (whose rows
  /// are on `rowAxis`).
  std::pair<int64_t, int64_t> heldRows(const BandRows& b, TensorId t, int rowAxis) const {
    const int p = producerInChain(t);
    if (p < 0) return {0, g_.tensor(t).shape[static_cast<size_t>(rowAxis)]};
    return b.out[static_cast<size_t>(p - c_.first)];
  }

  /// Estimated live bytes while the chain runs in `bands`: every tensor live over the chain's steps that the chain
  /// does not make (its full inputs among them), the full last output (written band by band), and the most band bytes
  /// live at once (input slices are views, so they add nothing).
  int64_t peak(const std::vector<int64_t>& profile, const std::vector<BandRows>& bands, Halo halo) const {
    int64_t outside = 0;
    for (int s = c_.first; s <= c_.last; ++s) outside = std::max(outside, profile[static_cast<size_t>(s)] - innerLiveAt(s));
    const Tensor& y = g_.tensor(node(c_.last).outputs[0]);
    return outside + static_cast<int64_t>(y.byteSize()) + (halo == Halo::Cache ? cachedBandBytes(bands) : bandBytes(bands));
  }

  /// MACs of the chain run in `bands` minus those of the chain run whole: the halos recomputed (ir/OpCost's count,
  /// which gives pools and adds none).
  int64_t extraMacs(const std::vector<BandRows>& bands) const {
    int64_t computed = 0, whole = 0;
    for (int s = c_.first; s <= c_.last; ++s) whole += macCount(g_, node(s));
    for (const BandRows& b : bands)
      for (int s = c_.first; s <= c_.last; ++s)
        computed += span(b.fresh[static_cast<size_t>(s - c_.first)]) * (macCount(g_, node(s)) / g_.tensor(node(s).outputs[0]).shape[1]);
    return computed - whole;
  }

  /// The input rows chain node `i` (position) reads for its output rows [a, e), or nothing for an element-wise node.
  std::optional<RowSpan> windowRows(int i, int64_t a, int64_t e) const {
    const auto& w = info_[static_cast<size_t>(c_.first + i)].window;
    if (!w) return std::nullopt;
    return windowInputRows(*w, a, e);
  }

  /// The axis of chain node `i`'s (position) input `k` that holds its rows.
  int inputRowAxis(int i, size_t k) const { return k == 0 ? info_[static_cast<size_t>(c_.first + i)].inputRowAxis : 1; }

  /// Position in the chain of the last node that reads node `i`'s output (-1: none).
  int lastReader(int i) const {
    const int r = lastReaderInChain(node(c_.first + i).outputs[0]);
    return r < 0 ? -1 : r - c_.first;
  }
  /// Bytes of one row of node `i`'s output.
  int64_t outRowBytes(int i) const { return rowBytes(g_.tensor(node(c_.first + i).outputs[0])); }

  const Node& node(int s) const { return g_.nodes[static_cast<size_t>(s)]; }
  Chain chain() const { return c_; }
  int size() const { return c_.last - c_.first + 1; }
  int64_t outRows() const { return g_.tensor(node(c_.last).outputs[0]).shape[1]; }

 private:
  /// Most bytes of band tensors live at once, halos recomputed: inner band i lives from node i to its last reader.
  int64_t bandBytes(const std::vector<BandRows>& bands) const {
    const int n = size();
    int64_t most = 0;
    for (const BandRows& b : bands)
      for (int at = 0; at < n; ++at) {
        int64_t live = 0;
        for (int i = 0; i + 1 < n; ++i)
          if (i <= at && at <= lastReader(i)) live += span(b.out[static_cast<size_t>(i)]) * outRowBytes(i);
        most = std::max(most, live);
      }
    return most;
  }

  /// Most bytes of band tensors live at once, halos cached, in the order rewrite emits the nodes: node i's band
  /// tensor (its carry copied in, its new rows written in place) lives from node i to its last reader, after which
  /// the rows the next band carries are copied out of it; a carry lives until its node's next band tensor.
  int64_t cachedBandBytes(const std::vector<BandRows>& bands) const {
    const int n = size();
    int64_t live = 0, most = 0;
    for (size_t j = 0; j < bands.size(); ++j) {
      const BandRows& b = bands[j];
      for (int i = 0; i + 1 < n; ++i) {
        const size_t u = static_cast<size_t>(i);
        if (span(b.fresh[u]) > 0) {
          live += span(b.out[u]) * outRowBytes(i);
          most = std::max(most, live);
          live -= span(b.carry[u]) * outRowBytes(i);  // the carry, copied in
        }
        // else: the band tensor is the carry itself
        for (int p = 0; p < i; ++p)
          if (lastReader(p) == i) {
            const size_t q = static_cast<size_t>(p);
            if (j + 1 < bands.size()) live += span(bands[j + 1].carry[q]) * outRowBytes(p);
            most = std::max(most, live);
            live -= span(b.out[q]) * outRowBytes(p);
          }
      }
      // The last node reads its producers' bands too.
      for (int p = 0; p + 1 < n; ++p)
        if (lastReader(p) == n - 1) {
          const size_t q = static_cast<size_t>(p);
          if (j + 1 < bands.size()) live += span(bands[j + 1].carry[q]) * outRowBytes(p);
          most = std::max(most, live);
          live -= span(b.out[q]) * outRowBytes(p);
        }
    }
    return most;
  }

  int producerInChain(TensorId t) const {
    for (int s = c_.first; s <= c_.last; ++s)
      if (node(s).outputs[0] == t) return s;
    return -1;
  }
  int lastReaderInChain(TensorId t) const {
    for (int s = c_.last; s >= c_.first; --s)
      if (std::find(node(s).inputs.begin(), node(s).inputs.end(), t) != node(s).inputs.end()) return s;
    return -1;
  }
  int readsInChain(TensorId t) const {
    int reads = 0;
    for (int s = c_.first; s <= c_.last; ++s) reads += static_cast<int>(std::count(node(s).inputs.begin(), node(s).inputs.end(), t));
    return reads;
  }
  /// Bytes of the chain's inner tensors and last output that the layer-by-layer profile counts live at step `s`.
  int64_t innerLiveAt(int s) const {
    int64_t bytes = 0;
    for (int p = c_.first; p <= c_.last && p <= s; ++p) {
      const TensorId y = node(p).outputs[0];
      const int reader = p == c_.last ? s : lastReaderInChain(y);
      if (s <= reader) bytes += static_cast<int64_t>(g_.tensor(y).byteSize());
    }
    return bytes;
  }

  const Graph& g_;
  const std::vector<NodeInfo>& info_;
  Chain c_;
};

/// A band height and halo handling for a chain, with the chain's estimated peak and the MACs its halos add.
struct BandChoice {
  int64_t rows = 0, peak = INT64_MAX, extraMacs = 0;
  Halo halo = Halo::Recompute;
};

/// The best band height of `m` for `goal` bytes among those whose halos add at most `macBudget` MACs, halos cached
/// or recomputed: the one at or below `goal` with the fewest extra MACs (then the most rows), else the one with the
/// lowest peak (the most rows among equals). rows 0: none.
BandChoice chooseBand(const ChainModel& m, const std::vector<int64_t>& profile, int64_t goal, int64_t macBudget) {
  const int64_t oh = m.outRows();
  BandChoice best;
  auto rank = [goal](const BandChoice& c) { return std::make_pair(std::max(c.peak, goal), c.extraMacs); };
  for (Halo halo : {Halo::Cache, Halo::Recompute}) {
    int64_t lastBands = -1;
    for (int64_t rows = oh - 1; rows >= 1; --rows) {
      const int64_t count = (oh + rows - 1) / rows;
      if (count == lastBands) continue;  // the same number of bands, the last one shorter: no fewer bytes
      lastBands = count;
      const std::vector<BandRows> bands = m.bands(rows, halo);
      if (bands.empty()) break;
      const int64_t extra = m.extraMacs(bands);
      if (extra > macBudget) break;  // fewer rows recompute more
      const BandChoice c{rows, m.peak(profile, bands, halo), extra, halo};
      if (best.rows == 0 || rank(c) < rank(best)) best = c;
      if (c.peak <= goal) break;  // fewer rows: no fewer MACs
    }
  }
  return best;
}

std::string tensorName(const Graph& g, const std::string& base) {
  std::string name = base;
  for (int k = 2; g.findTensor(name); ++k) name = base + "_" + std::to_string(k);
  return name;
}

/// Replaces chain `m` of `g` by its `bands`.
void rewrite(Graph& g, const ChainModel& m, const std::vector<BandRows>& bands, int chainId) {
  const Chain c = m.chain();
  const int n = m.size();
  std::vector<Node> nodes(g.nodes.begin(), g.nodes.begin() + c.first);
  const TensorId finalOut = m.node(c.last).outputs[0];
  std::vector<TensorId> pieces;
  std::vector<Node> chainNodes(g.nodes.begin() + c.first, g.nodes.begin() + c.last + 1);
  const std::string tag = fmt::format("fused chain {}", chainId);
  // A Slice of rows [first, end) on `axis` of `from` (which holds rows from `heldFirst` on).
  auto sliceRows = [&](TensorId from, int axis, int64_t heldFirst, int64_t first, int64_t end, const std::string& base, const std::string& name) {
    const Tensor src = g.tensor(from);
    Tensor slice = src;
    slice.kind = TensorKind::Activation;
    slice.data.clear();
    slice.shape[static_cast<size_t>(axis)] = end - first;
    slice.name = tensorName(g, fmt::format("{}#rows{}_{}", base, first, end));
    const TensorId sid = g.addTensor(slice);
    Node sl;
    sl.name = name;
    sl.op = OpKind::Slice;
    sl.inputs = {from};
    sl.outputs = {sid};
    std::vector<int64_t> starts(src.shape.size(), 0), ends(src.shape.begin(), src.shape.end());
    starts[static_cast<size_t>(axis)] = first - heldFirst;
    ends[static_cast<size_t>(axis)] = end - heldFirst;
    sl.attrs.set("starts", starts);
    sl.attrs.set("ends", ends);
    sl.attrs.set("steps", std::vector<int64_t>(src.shape.size(), 1));
    sl.attrs.set(kBandOfAttr, tag);
    nodes.push_back(std::move(sl));
    return sid;
  };
  std::map<TensorId, TensorId> carried;  // chain tensor -> the copy of the rows the next band carries
  for (size_t j = 0; j < bands.size(); ++j) {
    const BandRows& b = bands[j];
    std::map<TensorId, TensorId> bandOf;  // chain tensor -> its band tensor
    for (int i = 0; i < n; ++i) {
      const size_t u = static_cast<size_t>(i);
      const Node& orig = chainNodes[u];
      const Tensor y = g.tensor(orig.outputs[0]);
      if (span(b.fresh[u]) > 0) {
        Node nd = orig;
        for (size_t k = 0; k < nd.inputs.size(); ++k) {
          const TensorId t = orig.inputs[k];
          if (t == kNoTensor || g.tensor(t).isConstant()) continue;
          // The tensor the band holds `t` in (its band, or the whole chain input), and the rows this layer reads of
          // it: the same rows, or a Slice of them (a view: analysis/Aliasing.h).
          const TensorId from = bandOf.count(t) ? bandOf.at(t) : t;
          const int axis = m.inputRowAxis(i, k);
          const auto held = m.heldRows(b, t, axis);
          const RowSpan rs = b.inputs.at({i, k});
          nd.inputs[k] = from;
          if (rs.first == held.first && rs.end == held.second) continue;
          nd.inputs[k] = sliceRows(from, axis, held.first, rs.first, rs.end, g.tensor(t).name, fmt::format("{}#in{}_band{}", orig.name, k, j));
        }
        // The layer's pads say where its band touches the image: padding rows above and below the rows it reads.
        if (const std::optional<RowSpan> rs = m.windowRows(i, b.fresh[u].first, b.fresh[u].second)) {
          std::vector<int64_t> pads = orig.attrs.getInts("pads", {0, 0, 0, 0});
          pads[0] = rs->padTop;
          pads[2] = rs->padBottom;
          nd.attrs.set("pads", pads);
        }
        Tensor fresh = y;
        fresh.shape[1] = span(b.fresh[u]);
        fresh.name = tensorName(g, fmt::format("{}#band{}", y.name, j));
        const TensorId fid = g.addTensor(fresh);
        nd.outputs = {fid};
        nd.name = fmt::format("{}#band{}", orig.name, j);
        nd.attrs.set(kBandOfAttr, tag);
        nodes.push_back(std::move(nd));
        if (i == n - 1) pieces.push_back(fid);
        if (span(b.carry[u]) == 0) {
          bandOf[orig.outputs[0]] = fid;
        } else {
          // The rows carried from the previous band above the new ones: one tensor for the readers.
          Tensor held = y;
          held.shape[1] = span(b.out[u]);
          held.name = tensorName(g, fmt::format("{}#held{}", y.name, j));
          const TensorId hid = g.addTensor(held);
          Node cat;
          cat.name = fmt::format("{}#held{}", orig.name, j);
          cat.op = OpKind::Concat;
          cat.inputs = {carried.at(orig.outputs[0]), fid};
          cat.outputs = {hid};
          cat.attrs.set("axis", int64_t{1});
          cat.attrs.set(kBandOfAttr, tag);
          nodes.push_back(std::move(cat));
          bandOf[orig.outputs[0]] = hid;
        }
      } else if (i < n - 1) {
        bandOf[orig.outputs[0]] = carried.at(orig.outputs[0]);  // nothing new: the carried rows are all it holds
      }
      // After the last reader of a chain tensor in this band: the rows the next band carries, copied out of its band
      // (an identity Transpose: a copy, so that the band's buffer can go).
      for (int p = 0; p < i; ++p) {
        if (m.lastReader(p) != i || j + 1 >= bands.size() || span(bands[j + 1].carry[static_cast<size_t>(p)]) == 0) continue;
        const TensorId t = chainNodes[static_cast<size_t>(p)].outputs[0];
        const auto held = b.out[static_cast<size_t>(p)];
        const auto next = bands[j + 1].carry[static_cast<size_t>(p)];
        TensorId src = bandOf.at(t);
        if (next.first != held.first || next.second != held.second)
          src = sliceRows(src, 1, held.first, next.first, next.second, g.tensor(t).name,
                          fmt::format("{}#carry_band{}", chainNodes[static_cast<size_t>(p)].name, j));
        Tensor copy = g.tensor(src);
        copy.name = tensorName(g, fmt::format("{}#carry{}", g.tensor(t).name, j + 1));
        const TensorId cid = g.addTensor(copy);
        Node cp;
        cp.name = fmt::format("{}#carry{}", chainNodes[static_cast<size_t>(p)].name, j + 1);
        cp.op = OpKind::Transpose;
        cp.inputs = {src};
        cp.outputs = {cid};
        cp.attrs.set("perm", std::vector<int64_t>{0, 1, 2, 3});
        cp.attrs.set(kBandOfAttr, tag);
        cp.attrs.set(kOwnBufferAttr, int64_t{1});
        nodes.push_back(std::move(cp));
        carried[t] = cid;
      }
    }
  }
  Node cat;
  cat.name = fmt::format("{}#bands", m.node(c.last).name);
  cat.op = OpKind::Concat;
  cat.inputs = pieces;
  cat.outputs = {finalOut};
  cat.attrs.set("axis", int64_t{1});
  cat.attrs.set(kBandOfAttr, tag);
  nodes.push_back(std::move(cat));
  nodes.insert(nodes.end(), g.nodes.begin() + c.last + 1, g.nodes.end());
  g.nodes = std::move(nodes);
  g.compactTensors();
}

}  // namespace

int64_t fusedBandsPoolGoal(const Board& board) {
  int64_t goal = 0;
  for (const MemoryPool& p : board.pools)
    if (p.kind == PoolKind::Workspace && p.sizeBytes && (goal == 0 || static_cast<int64_t>(*p.sizeBytes) < goal))
      goal = static_cast<int64_t>(*p.sizeBytes);
  return goal;
}

namespace {

int64_t peakOf(const Graph& g, bool io) {
  const std::vector<int64_t> p = liveProfile(g, io);
  return p.empty() ? 0 : *std::max_element(p.begin(), p.end());
}

/// One greedy run towards `goal` bytes: while the peak step is above it, the chain through the peak step whose bands
/// reach the goal with the fewest extra MACs (else the chain with the lowest peak) is fused; stops when no chain
/// through the peak step lowers it or the MAC budget is spent. Chains are added to `r`.
void fuseTowards(Graph& g, const Board& board, const FuseBandsOptions& options, int64_t goal, int64_t macBudget, FuseBandsResult& r) {
  for (int round = 0; round < 64; ++round) {
    const std::vector<int64_t> profile = liveProfile(g, options.ioInPools);
    if (profile.empty()) break;
    const auto peakIt = std::max_element(profile.begin(), profile.end());
    const int peakStep = static_cast<int>(peakIt - profile.begin());
    const int64_t peak = *peakIt;
    if (peak <= goal) break;
    std::vector<NodeInfo> info;
    info.reserve(g.nodes.size());
    const std::vector<int> uses = g.useCounts();
    // Only the nodes near the peak need their geometry.
    for (size_t s = 0; s < g.nodes.size(); ++s)
      info.push_back(std::abs(static_cast<int>(s) - peakStep) < options.maxChainLayers && whyBoardKeeps(g, board, g.nodes[s]).empty()
                         ? nodeInfo(g, g.nodes[s])
                         : NodeInfo{});
    if (!info[static_cast<size_t>(peakStep)].fusable) break;
    // Every chain of 2 .. maxChainLayers nodes through the peak step. Bands at or below the goal count as equal; among
    // them the fewest extra MACs win.
    std::optional<Chain> bestChain;
    int64_t bestKey = peak, bestPeak = peak, bestRows = 0, bestExtra = 0;
    Halo bestHalo = Halo::Recompute;
    for (int first = std::max(0, peakStep - options.maxChainLayers + 1); first <= peakStep; ++first)
      for (int last = std::max(first + 1, peakStep); last < static_cast<int>(g.nodes.size()) && last - first < options.maxChainLayers; ++last) {
        ChainModel m(g, info, Chain{first, last});
        if (!m.whyNot(uses).empty()) continue;
        const BandChoice band = chooseBand(m, profile, goal, macBudget - r.extraMacs);
        if (band.rows <= 0 || band.peak >= peak) continue;
        const int64_t key = std::max(band.peak, goal);
        if (key < bestKey || (bestChain && key == bestKey && band.extraMacs < bestExtra)) {
          bestChain = m.chain();
          bestKey = key;
          bestPeak = band.peak;
          bestRows = band.rows;
          bestExtra = band.extraMacs;
          bestHalo = band.halo;
        }
      }
    if (!bestChain) break;
    const ChainModel best(g, info, *bestChain);
    const std::vector<BandRows> bands = best.bands(bestRows, bestHalo);
    FusedChain fc;
    for (int s = best.chain().first; s <= best.chain().last; ++s) fc.layers.push_back(best.node(s).name);
    fc.bandRows = bestRows;
    fc.bands = (best.outRows() + bestRows - 1) / bestRows;
    fc.extraMacs = bestExtra;
    fc.peakBefore = static_cast<size_t>(peak);
    fc.peakAfter = static_cast<size_t>(bestPeak);
    fc.haloCached = bestHalo == Halo::Cache;
    rewrite(g, best, bands, static_cast<int>(r.chains.size()));
    r.extraMacs += bestExtra;
    r.chains.push_back(std::move(fc));
  }
}

}  // namespace

FuseBandsResult fuseLayerBands(Graph& g, const Board& board, const FuseBandsOptions& options) {
  FuseBandsResult r;
  for (const Target& t : board.targets) {
    if (t.kind != TargetKind::Cpu) {
      r.remarks.push_back("fused bands: none (the board has an accelerator; its layers are tiled instead)");
      return r;
    }
    // A CPU with a DMA streams the layers that do not fit its fast pool through it (tile/CpuStreaming.h); the two are
    // not combined yet.
    if (t.dmaBytesPerCycle > 0) {
      r.remarks.push_back(fmt::format("fused bands: none (CPU '{}' streams layers through its fast pool by DMA instead)", t.name));
      return r;
    }
  }
  // Bands cost speed (halo MACs, one call per band and layer) and code: unasked, only to fit a pool that has a size.
  const int64_t poolGoal = fusedBandsPoolGoal(board);
  if (poolGoal == 0 && !options.force) return r;
  const int64_t peakBefore = peakOf(g, options.ioInPools);
  r.peakBefore = r.peakAfter = static_cast<size_t>(peakBefore);
  int64_t graphMacs = 0;
  for (const Node& n : g.nodes) graphMacs += macCount(g, n);
  const int64_t macBudget = static_cast<int64_t>(static_cast<double>(graphMacs) * options.maxExtraMacsPercent / 100.0);

  // A run towards `goal` on a copy of the graph: its graph, chains and resulting peak.
  struct Run {
    Graph graph;
    FuseBandsResult result;
    int64_t peak = INT64_MAX;
  };
  auto runTowards = [&](int64_t goal) {
    Run run{g, {}, 0};
    fuseTowards(run.graph, board, options, goal, macBudget, run.result);
    run.peak = peakOf(run.graph, options.ioInPools);
    return run;
  };
  auto better = [](const Run& a, const Run& b) {
    return a.peak < b.peak || (a.peak == b.peak && a.result.extraMacs < b.result.extraMacs);
  };
  std::optional<Run> best;
  // A pool with a size: fuse as little as fits it. Otherwise (forced), or when that does not fit: the lowest peak the
  // MAC budget allows, found by bisecting the goal (a lower goal asks every chain for thinner bands, which spends the
  // budget sooner).
  if (poolGoal > 0 && !options.force) {
    // The estimate of one chain's bands is not the peak the graph has once it is fused (other chains follow): when a
    // run towards the pool ends above it, runs towards a little less may fit it; the fewest extra MACs wins.
    for (int percent : {100, 95, 90, 85, 80, 70}) {
      Run fit = runTowards(poolGoal * percent / 100);
      if (fit.peak > poolGoal) continue;
      if (!best || fit.result.extraMacs < best->result.extraMacs) best = std::move(fit);
      if (best->result.extraMacs == 0) break;
    }
  }
  if (!best) {
    int64_t lo = 0, hi = peakBefore;
    while (hi - lo > std::max<int64_t>(1, hi / 256)) {
      const int64_t mid = lo + (hi - lo) / 2;
      Run run = runTowards(mid);
      const bool reached = run.peak <= mid;
      if (!best || better(run, *best)) best = std::move(run);
      (reached ? hi : lo) = mid;
    }
  }
  if (best && static_cast<size_t>(best->peak) < r.peakBefore) {
    g = std::move(best->graph);
    r.chains = std::move(best->result.chains);
    r.extraMacs = best->result.extraMacs;
  }
  r.peakAfter = static_cast<size_t>(peakOf(g, options.ioInPools));
  for (const FusedChain& c : r.chains)
    r.remarks.push_back(fmt::format("fused bands: {} layers ({} .. {}) run in {} bands of {} output rows, halos {}: +{} MACs; "
                                    "estimated peak {} -> {} bytes",
                                    c.layers.size(), c.layers.front(), c.layers.back(), c.bands, c.bandRows,
                                    c.haloCached ? "cached (carried into the next band)" : "recomputed", c.extraMacs, c.peakBefore,
                                    c.peakAfter));
  return r;
}

}  // namespace stowage
