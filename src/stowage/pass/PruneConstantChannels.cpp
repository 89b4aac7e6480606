// Constant output channels left out of the convolution and copied in by a Concat (see PruneConstantChannels.h).
#include "stowage/pass/PruneConstantChannels.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "stowage/ir/LoweringAttributes.h"
#include "stowage/pass/FoldConstantChannels.h"

namespace stowage {
namespace {

/// What a reader of a tensor carrying the permuted channels does with them.
enum class Carry { PassOnPermutingChannels, PassOn, TakeInWeights };

struct Edit {
  size_t node;
  Carry carry;
};

/// How node `r` reading a tensor of `c` channels as its input `slot` can take them in another order; false when it
/// cannot.
bool readerCarries(const Graph& g, const Node& r, size_t slot, int64_t c, Carry* carry) {
  if (slot != 0) return false;
  const Shape& x = g.tensor(r.inputs[0]).shape;
  if (x.empty() || x.back() != c) return false;
  switch (r.op) {
    case OpKind::QDepthwiseConv2d: {
      const Shape& w = g.tensor(r.inputs[1]).shape;
      const int64_t q = g.tensor(r.inputs[2]).numElements();
      const TensorId b = r.input(4);
      if (w.size() != 4 || w[3] != c || (q != 1 && q != c) || g.tensor(r.inputs[3]).numElements() != q) return false;
      if (b != kNoTensor && g.tensor(b).numElements() != c) return false;
      for (size_t i = 1; i < r.inputs.size(); ++i)
        if (r.inputs[i] != kNoTensor && !g.tensor(r.inputs[i]).isConstant()) return false;
      *carry = Carry::PassOnPermutingChannels;
      return true;
    }
    case OpKind::QAveragePool2d:
    case OpKind::QMaxPool2d: *carry = Carry::PassOn; return true;
    case OpKind::Reshape: {
      const Shape& y = g.tensor(r.outputs[0]).shape;
      if (shapeElements(x) != c || y.empty() || y.back() != c) return false;  // one pixel: its channels stay last
      *carry = Carry::PassOn;
      return true;
    }
    case OpKind::QConv2d: {
      const Shape& w = g.tensor(r.inputs[1]).shape;
      if (w.size() != 4 || w[3] != c || !g.tensor(r.inputs[1]).isConstant()) return false;  // groups 1
      *carry = Carry::TakeInWeights;
      return true;
    }
    case OpKind::QFullyConnected: {
      const Shape& w = g.tensor(r.inputs[1]).shape;
      if (w.size() != 2 || w[1] != c || !g.tensor(r.inputs[1]).isConstant()) return false;
      *carry = Carry::TakeInWeights;
      return true;
    }
    default: return false;
  }
}

/// The readers of `y`'s channels up to the layers that take them in their weights, or nothing when one cannot.
std::optional<std::vector<Edit>> carryChannels(const Graph& g, TensorId y, int64_t c) {
  std::vector<Edit> edits;
  std::vector<TensorId> carried{y};
  for (size_t k = 0; k < carried.size(); ++k) {
    const TensorId t = carried[k];
    if (std::find(g.outputs.begin(), g.outputs.end(), t) != g.outputs.end()) return std::nullopt;
    for (size_t ni = 0; ni < g.nodes.size(); ++ni) {
      const Node& r = g.nodes[ni];
      for (size_t slot = 0; slot < r.inputs.size(); ++slot) {
        if (r.inputs[slot] != t) continue;
        Carry carry;
        if (!readerCarries(g, r, slot, c, &carry)) return std::nullopt;
        edits.push_back({ni, carry});
        if (carry != Carry::TakeInWeights) carried.push_back(r.outputs[0]);
      }
    }
  }
  return edits;
}

/// A new constant tensor: `source`'s elements (each `elementBytes` wide) gathered as rows of `inner` elements whose
/// positions along an axis of `axisSize` (outer blocks of axisSize x inner) are taken in the order `pick`.
TensorId gathered(Graph& g, TensorId source, const std::string& name, int64_t axisSize, int64_t inner,
                  const std::vector<int64_t>& pick, Shape shape) {
  const Tensor& s = g.tensor(source);
  const size_t eb = dtypeSize(s.dtype);
  const int64_t outer = s.numElements() / (axisSize * inner);
  Tensor t;
  t.name = name;
  t.dtype = s.dtype;
  t.kind = TensorKind::Constant;
  t.quant = s.quant;
  t.shape = std::move(shape);
  t.data.resize(static_cast<size_t>(outer * static_cast<int64_t>(pick.size()) * inner) * eb);
  for (int64_t o = 0; o < outer; ++o)
    for (size_t i = 0; i < pick.size(); ++i)
      std::memcpy(t.data.data() + static_cast<size_t>((o * static_cast<int64_t>(pick.size()) + static_cast<int64_t>(i)) * inner) * eb,
                  s.data.data() + static_cast<size_t>((o * axisSize + pick[i]) * inner) * eb, static_cast<size_t>(inner) * eb);
  return g.addTensor(std::move(t));
}

}  // namespace

Result<std::vector<std::string>> pruneConstantChannels(Graph& g) {
  std::vector<std::string> layers;
  int64_t savedMacs = 0;
  for (size_t ni = 0; ni < g.nodes.size(); ++ni) {
    if (g.nodes[ni].op != OpKind::QConv2d || g.nodes[ni].attrs.getInt(kQdqRequantF32Attr, 0) != 0) continue;
    const std::vector<int> constant = constantChannels(g, g.nodes[ni]);
    const int64_t m = static_cast<int64_t>(constant.size());
    std::vector<int64_t> live, dead;
    for (int64_t c = 0; c < m; ++c) (constant[static_cast<size_t>(c)] == kNotConstant ? live : dead).push_back(c);
    // A layer with few constant channels keeps them: its Concat's call would cost more code than it saves time.
    if (live.empty() || 4 * static_cast<int64_t>(dead.size()) < m) continue;
    const TensorId y = g.nodes[ni].outputs[0];
    const Shape ys = g.tensor(y).shape;
    if (ys.size() != 4 || ys[3] != m) continue;
    std::optional<std::vector<Edit>> edits = carryChannels(g, y, m);
    if (!edits) continue;

    std::vector<int64_t> order = live;  // new channel i is old channel order[i]
    order.insert(order.end(), dead.begin(), dead.end());
    const int64_t l = static_cast<int64_t>(live.size()), d = static_cast<int64_t>(dead.size());
    // The readers first (their indices are before the Concat goes in).
    for (const Edit& e : *edits) {
      Node& r = g.nodes[e.node];
      if (e.carry == Carry::PassOn) continue;
      // The channels are the weights' last axis for every reader that takes or permutes them.
      const Shape ws = g.tensor(r.inputs[1]).shape;
      r.inputs[1] = gathered(g, r.inputs[1], r.name + "/weights_reordered", m, 1, order, ws);
      if (e.carry == Carry::TakeInWeights) continue;
      if (g.tensor(r.inputs[2]).numElements() == m) {
        r.inputs[2] = gathered(g, r.inputs[2], r.name + "/multiplier_reordered", m, 1, order, {m});
        r.inputs[3] = gathered(g, r.inputs[3], r.name + "/shift_reordered", m, 1, order, {m});
      }
      if (r.input(4) != kNoTensor) r.inputs[4] = gathered(g, r.inputs[4], r.name + "/bias_reordered", m, 1, order, {m});
    }
    Node& conv = g.nodes[ni];
    const Shape ws = g.tensor(conv.inputs[1]).shape;
    const int64_t perChannel = ws[1] * ws[2] * ws[3];
    conv.inputs[1] = gathered(g, conv.inputs[1], conv.name + "/weights_live", m, perChannel, live, {l, ws[1], ws[2], ws[3]});
    if (g.tensor(conv.inputs[2]).numElements() == m) {
      conv.inputs[2] = gathered(g, conv.inputs[2], conv.name + "/multiplier_live", m, 1, live, {l});
      conv.inputs[3] = gathered(g, conv.inputs[3], conv.name + "/shift_live", m, 1, live, {l});
    }
    if (conv.input(4) != kNoTensor) conv.inputs[4] = gathered(g, conv.inputs[4], conv.name + "/bias_live", m, 1, live, {l});
    Tensor liveOut = g.tensor(y);
    liveOut.name = g.tensor(y).name + "/live_channels";
    liveOut.shape = {ys[0], ys[1], ys[2], l};
    const TensorId liveId = g.addTensor(std::move(liveOut));
    Tensor fill;
    fill.name = conv.name + "/constant_channels";
    fill.dtype = DType::Int8;
    fill.kind = TensorKind::Constant;
    fill.quant = g.tensor(y).quant;
    fill.shape = {ys[0], ys[1], ys[2], d};
    fill.data.resize(static_cast<size_t>(ys[0] * ys[1] * ys[2] * d));
    for (size_t p = 0; p < fill.data.size(); ++p)
      fill.data[p] = static_cast<uint8_t>(static_cast<int8_t>(constant[static_cast<size_t>(dead[p % static_cast<size_t>(d)])]));
    const TensorId fillId = g.addTensor(std::move(fill));
    savedMacs += ys[0] * ys[1] * ys[2] * d * perChannel;
    layers.push_back(fmt::format("{} ({} of {})", conv.name, d, m));
    conv.outputs[0] = liveId;
    Node concat;
    concat.name = conv.name + "/with_constant_channels";
    concat.op = OpKind::Concat;
    concat.inputs = {liveId, fillId};
    concat.outputs = {y};
    concat.attrs.set("axis", int64_t{3});
    g.nodes.insert(g.nodes.begin() + static_cast<std::ptrdiff_t>(ni + 1), std::move(concat));
    ++ni;
  }
  if (layers.empty()) return std::vector<std::string>{};
  g.compactTensors();  // the whole layers' weights and constants no node reads any more
  return std::vector<std::string>{fmt::format(
      "constant channels left out: {} convolution(s) compute only the channels that depend on the input ({} MACs fewer); "
      "a Concat copies the constant ones in after them and the readers take the channels in that order: {}",
      layers.size(), savedMacs, fmt::join(layers, ", "))};
}

}  // namespace stowage
