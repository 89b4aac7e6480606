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
         op == OpKind::QAdd;
}

/// One image row of an NHWC tensor [1, H, W, C]: its bytes.
int64_t rowBytes(const Tensor& t) { return t.shape[2] * t.shape[3] * static_cast<int64_t>(dtypeSize(t.dtype)); }

bool batchOneNhwcInt8(const Tensor& t) { return t.dtype == DType::Int8 && t.shape.size() == 4 && t.shape[0] == 1; }

/// What the chain search needs of a node: whether it can be in a chain, and its window geometry.
struct NodeInfo {
  bool fusable = false;
  std::optional<LayerShape> window;  ///< conv / pool; empty for the element-wise QAdd (rows map one to one)
};

NodeInfo nodeInfo(const Graph& g, const Node& n) {
  NodeInfo info;
  if (!fusableOp(n.op) || n.outputs.size() != 1 || n.attrs.has(kBandOfAttr)) return info;
  const Tensor& y = g.tensor(n.outputs[0]);
  if (!batchOneNhwcInt8(y)) return info;
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
  LayerShapeResult s = layerShapeOf(g, n);
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
  std::vector<bool> inPlace(g.tensors.size(), false);
  std::vector<int> firstPiece(g.tensors.size(), -1);
  for (const Node& n : g.nodes) {
    if (!n.attrs.has(kBandOfAttr)) continue;
    if (n.op == OpKind::Slice && producers[static_cast<size_t>(n.inputs[0])] >= 0) inPlace[static_cast<size_t>(n.outputs[0])] = true;
    if (n.op == OpKind::Concat) {
      int first = static_cast<int>(g.nodes.size());
      for (TensorId t : n.inputs) {
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

/// Per band of a chain: the output rows [begin, end) each chain node computes (by position in the chain), and for each
/// node input outside the chain (by node position and input index) the rows it reads.
struct BandRows {
  std::vector<std::pair<int64_t, int64_t>> out;
  std::map<std::pair<int, size_t>, RowSpan> inputs;  ///< (node, input index) -> rows read and pads
};

class ChainModel {
 public:
  ChainModel(const Graph& g, const std::vector<NodeInfo>& info, Chain c) : g_(g), info_(info), c_(c) {}

  /// Whether the chain is legal: every node fusable, every tensor made inside read only inside (by later chain
  /// nodes) except the last node's output, which nothing inside reads and which is no graph output.
  std::string whyNot(const std::vector<int>& uses) const {
    for (int s = c_.first; s <= c_.last; ++s) {
      if (!info_[static_cast<size_t>(s)].fusable) return "a layer that cannot run in bands";
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

  /// The rows of band [o0, o1) of the last output, propagated backwards: an inner tensor's band holds the union of
  /// the rows its readers need.
  BandRows band(int64_t o0, int64_t o1) const {
    BandRows b;
    const int n = c_.last - c_.first + 1;
    b.out.assign(static_cast<size_t>(n), {INT64_MAX, INT64_MIN});
    b.out[static_cast<size_t>(n - 1)] = {o0, o1};
    for (int i = n - 1; i >= 0; --i) {
      const Node& nd = node(c_.first + i);
      const auto [a, e] = b.out[static_cast<size_t>(i)];
      for (size_t k = 0; k < nd.inputs.size(); ++k) {
        const TensorId t = nd.inputs[k];
        if (t == kNoTensor || g_.tensor(t).isConstant()) continue;
        RowSpan rs;
        if (const auto& w = info_[static_cast<size_t>(c_.first + i)].window; w) rs = windowInputRows(*w, a, e);
        else rs = RowSpan{a, e, 0, 0};
        b.inputs[{i, k}] = rs;
        const int p = producerInChain(t);
        if (p < 0) continue;
        auto& held = b.out[static_cast<size_t>(p - c_.first)];
        held = {std::min(held.first, rs.first), std::max(held.second, rs.end)};
      }
    }
    return b;
  }

  /// The rows chain tensor `t` holds in band `b`: its band's rows, or the whole tensor for a chain input.
  std::pair<int64_t, int64_t> heldRows(const BandRows& b, TensorId t) const {
    const int p = producerInChain(t);
    if (p < 0) return {0, g_.tensor(t).shape[1]};
    return b.out[static_cast<size_t>(p - c_.first)];
  }

  /// Estimated live bytes while the chain runs in bands of `rows`: every tensor live over the chain's steps that the
  /// chain does not make (its full inputs among them), the full last output (written band by band), and the most
  /// band bytes live at once (input slices are views, so they add nothing).
  int64_t peak(const std::vector<int64_t>& profile, int64_t rows) const {
    int64_t outside = 0;
    for (int s = c_.first; s <= c_.last; ++s) outside = std::max(outside, profile[static_cast<size_t>(s)] - innerLiveAt(s));
    const Tensor& y = g_.tensor(node(c_.last).outputs[0]);
    return outside + static_cast<int64_t>(y.byteSize()) + bandBytes(rows);
  }

  /// Most bytes of band tensors live at once over every band of `rows` rows.
  int64_t bandBytes(int64_t rows) const {
    const int64_t oh = g_.tensor(node(c_.last).outputs[0]).shape[1];
    int64_t most = 0;
    for (int64_t o0 = 0; o0 < oh; o0 += rows) {
      const BandRows b = band(o0, std::min(oh, o0 + rows));
      const int n = c_.last - c_.first + 1;
      // Inner band i (0 .. n-2) lives from node i to its reader.
      for (int at = 0; at < n; ++at) {
        int64_t live = 0;
        for (int i = 0; i + 1 < n; ++i) {
          const int reader = lastReaderInChain(node(c_.first + i).outputs[0]) - c_.first;
          if (i <= at && at <= reader) live += (b.out[static_cast<size_t>(i)].second - b.out[static_cast<size_t>(i)].first) *
                                               rowBytes(g_.tensor(node(c_.first + i).outputs[0]));
        }
        most = std::max(most, live);
      }
    }
    return most;
  }

  /// MACs of the chain run in bands of `rows` minus those of the chain run whole: the halos recomputed (ir/OpCost's
  /// count, which gives pools and adds none).
  int64_t extraMacs(int64_t rows) const {
    const int64_t oh = outRows();
    int64_t computed = 0, whole = 0;
    for (int s = c_.first; s <= c_.last; ++s) whole += macCount(g_, node(s));
    for (int64_t o0 = 0; o0 < oh; o0 += rows) {
      const BandRows b = band(o0, std::min(oh, o0 + rows));
      for (int s = c_.first; s <= c_.last; ++s) {
        const int64_t perRow = macCount(g_, node(s)) / g_.tensor(node(s).outputs[0]).shape[1];
        const auto& r = b.out[static_cast<size_t>(s - c_.first)];
        computed += (r.second - r.first) * perRow;
      }
    }
    return computed - whole;
  }

  /// The input rows chain node `i` (position) reads for its output rows [a, e), or nothing for an element-wise node.
  std::optional<RowSpan> windowRows(int i, int64_t a, int64_t e) const {
    const auto& w = info_[static_cast<size_t>(c_.first + i)].window;
    if (!w) return std::nullopt;
    return windowInputRows(*w, a, e);
  }

  const Node& node(int s) const { return g_.nodes[static_cast<size_t>(s)]; }
  Chain chain() const { return c_; }
  int64_t outRows() const { return g_.tensor(node(c_.last).outputs[0]).shape[1]; }

 private:
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

/// A band height for a chain, with the chain's estimated peak and the MACs its halos add.
struct BandChoice {
  int64_t rows = 0, peak = INT64_MAX, extraMacs = 0;
};

/// The best band height of `m` for `goal` bytes among those whose halos add at most `macBudget` MACs: the largest
/// whose peak is at most `goal`, else the one with the lowest peak (the most rows among equals). rows 0: none.
BandChoice chooseBand(const ChainModel& m, const std::vector<int64_t>& profile, int64_t goal, int64_t macBudget) {
  const int64_t oh = m.outRows();
  BandChoice lowest;
  int64_t lastBands = -1;
  for (int64_t rows = oh - 1; rows >= 1; --rows) {
    const int64_t bands = (oh + rows - 1) / rows;
    if (bands == lastBands) continue;  // the same number of bands, the last one shorter: no fewer bytes
    lastBands = bands;
    const int64_t extra = m.extraMacs(rows);
    if (extra > macBudget) break;  // fewer rows recompute more
    const int64_t p = m.peak(profile, rows);
    if (p <= goal) return {rows, p, extra};
    if (p < lowest.peak) lowest = {rows, p, extra};
  }
  return lowest;
}

std::string tensorName(const Graph& g, const std::string& base) {
  std::string name = base;
  for (int k = 2; g.findTensor(name); ++k) name = base + "_" + std::to_string(k);
  return name;
}

/// Replaces chain `m` of `g` by its bands of `rows` rows.
void rewrite(Graph& g, const ChainModel& m, int64_t rows, int chainId) {
  const Chain c = m.chain();
  const int n = c.last - c.first + 1;
  const int64_t oh = m.outRows();
  std::vector<Node> nodes(g.nodes.begin(), g.nodes.begin() + c.first);
  const TensorId finalOut = m.node(c.last).outputs[0];
  std::vector<TensorId> pieces;
  std::vector<Node> chainNodes(g.nodes.begin() + c.first, g.nodes.begin() + c.last + 1);
  const std::string tag = fmt::format("fused chain {}", chainId);
  int64_t j = 0;
  for (int64_t o0 = 0; o0 < oh; o0 += rows, ++j) {
    const BandRows b = m.band(o0, std::min(oh, o0 + rows));
    std::map<TensorId, TensorId> bandOf;  // chain tensor -> its band tensor
    for (int i = 0; i < n; ++i) {
      Node nd = chainNodes[static_cast<size_t>(i)];
      const Node& orig = chainNodes[static_cast<size_t>(i)];
      for (size_t k = 0; k < nd.inputs.size(); ++k) {
        const TensorId t = orig.inputs[k];
        if (t == kNoTensor || g.tensor(t).isConstant()) continue;
        // The tensor the band holds `t` in (its band, or the whole chain input), and the rows this layer reads of it:
        // the same rows, or a Slice of them (a view: analysis/Aliasing.h).
        const TensorId from = bandOf.count(t) ? bandOf.at(t) : t;
        const auto held = m.heldRows(b, t);
        const RowSpan rs = b.inputs.at({i, k});
        nd.inputs[k] = from;
        if (rs.first == held.first && rs.end == held.second) continue;
        const Tensor src = g.tensor(from);
        Tensor slice = src;
        slice.kind = TensorKind::Activation;
        slice.data.clear();
        slice.shape[1] = rs.end - rs.first;
        slice.name = tensorName(g, fmt::format("{}#rows{}_{}", g.tensor(t).name, rs.first, rs.end));
        const TensorId sid = g.addTensor(slice);
        Node sl;
        sl.name = fmt::format("{}#in{}_band{}", orig.name, k, j);
        sl.op = OpKind::Slice;
        sl.inputs = {from};
        sl.outputs = {sid};
        sl.attrs.set("starts", std::vector<int64_t>{0, rs.first - held.first, 0, 0});
        sl.attrs.set("ends", std::vector<int64_t>{1, rs.end - held.first, src.shape[2], src.shape[3]});
        sl.attrs.set("steps", std::vector<int64_t>{1, 1, 1, 1});
        sl.attrs.set(kBandOfAttr, tag);
        nodes.push_back(std::move(sl));
        nd.inputs[k] = sid;
      }
      // The layer's pads say where its band touches the image: padding rows above and below the rows it reads.
      if (const std::optional<RowSpan> rs = m.windowRows(i, b.out[static_cast<size_t>(i)].first, b.out[static_cast<size_t>(i)].second)) {
        std::vector<int64_t> pads = orig.attrs.getInts("pads", {0, 0, 0, 0});
        pads[0] = rs->padTop;
        pads[2] = rs->padBottom;
        nd.attrs.set("pads", pads);
      }
      const Tensor& y = g.tensor(orig.outputs[0]);
      Tensor band = y;
      band.shape[1] = b.out[static_cast<size_t>(i)].second - b.out[static_cast<size_t>(i)].first;
      band.name = tensorName(g, fmt::format("{}#band{}", y.name, j));
      const TensorId bid = g.addTensor(band);
      bandOf[orig.outputs[0]] = bid;
      nd.outputs = {bid};
      nd.name = fmt::format("{}#band{}", orig.name, j);
      nd.attrs.set(kBandOfAttr, tag);
      nodes.push_back(std::move(nd));
      if (i == n - 1) pieces.push_back(bid);
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
  {
    const std::vector<int64_t> p0 = liveProfile(g, options.ioInPools);
    r.peakBefore = r.peakAfter = p0.empty() ? 0 : static_cast<size_t>(*std::max_element(p0.begin(), p0.end()));
  }
  int64_t graphMacs = 0;
  for (const Node& n : g.nodes) graphMacs += macCount(g, n);
  const int64_t macBudget = static_cast<int64_t>(static_cast<double>(graphMacs) * options.maxExtraMacsPercent / 100.0);
  for (int round = 0; round < 64; ++round) {
    const std::vector<int64_t> profile = liveProfile(g, options.ioInPools);
    if (profile.empty()) break;
    const auto peakIt = std::max_element(profile.begin(), profile.end());
    const int peakStep = static_cast<int>(peakIt - profile.begin());
    const int64_t peak = *peakIt;
    if (poolGoal > 0 && peak <= poolGoal && !options.force) break;
    std::vector<NodeInfo> info;
    info.reserve(g.nodes.size());
    const std::vector<int> uses = g.useCounts();
    // Only the nodes near the peak need their geometry.
    for (size_t s = 0; s < g.nodes.size(); ++s)
      info.push_back(std::abs(static_cast<int>(s) - peakStep) < options.maxChainLayers && whyBoardKeeps(g, board, g.nodes[s]).empty()
                         ? nodeInfo(g, g.nodes[s])
                         : NodeInfo{});
    if (!info[static_cast<size_t>(peakStep)].fusable) break;
    // Every chain of 2 .. maxChainLayers nodes around the peak step; the one whose fused peak is lowest wins (the
    // fewest extra MACs among equals).
    std::optional<Chain> bestChain;
    int64_t bestPeak = peak, bestRows = 0, bestExtra = 0;
    for (int first = std::max(0, peakStep - options.maxChainLayers + 1); first <= peakStep; ++first)
      for (int last = std::max(first + 1, peakStep); last < static_cast<int>(g.nodes.size()) && last - first < options.maxChainLayers; ++last) {
        ChainModel m(g, info, Chain{first, last});
        if (!m.whyNot(uses).empty()) continue;
        // Goal: the bytes of the steps outside the chain (no use going lower), or the pool.
        int64_t rest = 0;
        for (size_t s = 0; s < profile.size(); ++s)
          if (static_cast<int>(s) < first || static_cast<int>(s) > last) rest = std::max(rest, profile[s]);
        const int64_t goal = std::max(rest, poolGoal);
        const BandChoice band = chooseBand(m, profile, goal, macBudget - r.extraMacs);
        if (band.rows <= 0) continue;
        const int64_t rows = band.rows, extra = band.extraMacs;
        const int64_t newPeak = std::max(rest, band.peak);
        if (newPeak < bestPeak || (bestChain && newPeak == bestPeak && extra < bestExtra)) {
          bestChain = m.chain();
          bestPeak = newPeak;
          bestRows = rows;
          bestExtra = extra;
        }
      }
    if (!bestChain) break;
    const ChainModel bestModel(g, info, *bestChain);
    const ChainModel* best = &bestModel;
    FusedChain fc;
    for (int s = best->chain().first; s <= best->chain().last; ++s) fc.layers.push_back(best->node(s).name);
    fc.bandRows = bestRows;
    fc.bands = (best->outRows() + bestRows - 1) / bestRows;
    fc.extraMacs = bestExtra;
    fc.peakBefore = static_cast<size_t>(peak);
    fc.peakAfter = static_cast<size_t>(bestPeak);
    rewrite(g, *best, bestRows, static_cast<int>(r.chains.size()));
    r.extraMacs += bestExtra;
    r.chains.push_back(std::move(fc));
  }
  const std::vector<int64_t> p1 = liveProfile(g, options.ioInPools);
  r.peakAfter = p1.empty() ? 0 : static_cast<size_t>(*std::max_element(p1.begin(), p1.end()));
  for (const FusedChain& c : r.chains)
    r.remarks.push_back(fmt::format("fused bands: {} layers ({} .. {}) run in {} bands of {} output rows, halos recomputed: +{} MACs; "
                                    "estimated peak {} -> {} bytes",
                                    c.layers.size(), c.layers.front(), c.layers.back(), c.bands, c.bandRows, c.extraMacs,
                                    c.peakBefore, c.peakAfter));
  return r;
}

}  // namespace stowage
