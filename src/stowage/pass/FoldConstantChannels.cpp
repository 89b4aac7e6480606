// Output channels that give one value for every input, rewritten to small exact constants (see FoldConstantChannels.h).
#include "stowage/pass/FoldConstantChannels.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "stowage/ir/LoweringAttributes.h"
#include "stowage_kernels.h"

namespace stowage {
namespace {

constexpr int32_t kCanonicalMultiplier = 1 << 30;  // 0.5 in Q31: with shift -1, acc 4d requantizes to d
constexpr int32_t kCanonicalShift = -1;

/// Index of tap t of output channel c among m channels of `taps` taps each: a depthwise filter [1, kh, kw, M] holds a
/// channel's taps M apart, a convolution's [M, kh, kw, C] and a fully connected layer's [M, K] one after another.
int64_t tapIndex(bool depthwise, int64_t m, int64_t taps, int64_t c, int64_t t) { return depthwise ? t * m + c : c * taps + t; }

bool fitsInt32(int64_t v) { return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max(); }

/// Copies tensor `id` as a new constant when another reader shares it, so that rewriting it touches only this node.
TensorId ownedCopy(Graph& g, Node& n, size_t input, const std::vector<int>& uses) {
  const TensorId id = n.inputs[input];
  if (uses[static_cast<size_t>(id)] <= 1) return id;
  Tensor copy = g.tensor(id);
  copy.name = fmt::format("{}/{}", n.name, copy.name);
  const TensorId fresh = g.addTensor(std::move(copy));
  n.inputs[input] = fresh;
  return fresh;
}

template <typename T>
T* mutableData(Tensor& t) {
  return reinterpret_cast<T*>(t.data.data());
}

}  // namespace

std::vector<int> constantChannels(const Graph& g, const Node& n) {
  if (n.op != OpKind::QConv2d && n.op != OpKind::QDepthwiseConv2d && n.op != OpKind::QFullyConnected) return {};
  if (n.inputs.size() < 4 || n.attrs.getInt(kQdqRequantF32Attr, 0) != 0) return {};
  const Tensor& x = g.tensor(n.inputs[0]);
  const Tensor& w = g.tensor(n.inputs[1]);
  const Tensor& mult = g.tensor(n.inputs[2]);
  const Tensor& shift = g.tensor(n.inputs[3]);
  const Tensor& y = g.tensor(n.outputs[0]);
  const TensorId biasId = n.input(4);
  if (!w.isConstant() || !mult.isConstant() || !shift.isConstant() || w.dtype != DType::Int8 || mult.dtype != DType::Int32 ||
      shift.dtype != DType::Int32)
    return {};
  if (!x.quant || x.quant->zeroPoints.size() != 1 || !y.quant || y.quant->zeroPoints.size() != 1) return {};
  const int64_t m = mult.numElements();
  if (m <= 1 || shift.numElements() != m) return {};
  if (biasId != kNoTensor) {
    const Tensor& b = g.tensor(biasId);
    if (!b.isConstant() || b.dtype != DType::Int32 || b.numElements() != m) return {};
  }
  int64_t taps = 0;
  const bool depthwise = n.op == OpKind::QDepthwiseConv2d;
  if (n.op == OpKind::QFullyConnected) {
    if (w.shape.size() != 2 || w.shape[0] != m) return {};
    taps = w.shape[1];
  } else {
    if (w.shape.size() != 4) return {};
    if (depthwise ? w.shape[3] != m : w.shape[0] != m) return {};
    taps = w.shape[1] * w.shape[2] * (depthwise ? 1 : w.shape[3]);
  }
  const int64_t inputOffset = -x.quant->zeroPoints[0], outputZero = y.quant->zeroPoints[0];
  const int64_t actMin = n.attrs.getInt("act_min", -128), actMax = n.attrs.getInt("act_max", 127);
  const int8_t* wd = w.dataAs<int8_t>();
  const int32_t* md = mult.dataAs<int32_t>();
  const int32_t* sd = shift.dataAs<int32_t>();
  const int32_t* bd = biasId != kNoTensor ? g.tensor(biasId).dataAs<int32_t>() : nullptr;
  std::vector<int> out(static_cast<size_t>(m), kNotConstant);
  for (int64_t c = 0; c < m; ++c) {
    if (md[c] < 0 || sd[c] > 30 || sd[c] < -31) continue;  // monotone requantizations only
    int64_t lo = bd != nullptr ? bd[c] : 0, hi = lo;
    for (int64_t t = 0; t < taps; ++t) {
      const int64_t wt = wd[tapIndex(depthwise, m, taps, c, t)];
      const int64_t a = wt * (-128 + inputOffset), b = wt * (127 + inputOffset);
      lo += std::min<int64_t>({0, a, b});
      hi += std::max<int64_t>({0, a, b});
    }
    const int64_t scale = int64_t{1} << std::max(sd[c], 0);
    if (!fitsInt32(lo * scale) || !fitsInt32(hi * scale)) continue;
    auto output = [&](int64_t acc) {
      return std::clamp<int64_t>(outputZero + stowage_requantize_s32(static_cast<int32_t>(acc), md[c], sd[c]), actMin, actMax);
    };
    const int64_t first = output(lo);
    if (first == output(hi)) out[static_cast<size_t>(c)] = static_cast<int>(first);
  }
  return out;
}


Result<std::vector<std::string>> foldConstantChannels(Graph& g) {
  std::vector<std::string> layers;
  int64_t total = 0;
  for (size_t ni = 0; ni < g.nodes.size(); ++ni) {
    const std::vector<int> constant = constantChannels(g, g.nodes[ni]);
    const int64_t m = static_cast<int64_t>(constant.size());
    if (m == 0) continue;
    // Channels to rewrite: constant ones not already in the canonical form.
    const Node& view = g.nodes[ni];
    const bool depthwise = view.op == OpKind::QDepthwiseConv2d;
    const Tensor& w0 = g.tensor(view.inputs[1]);
    const int64_t taps = w0.numElements() / m;
    const int32_t yz = static_cast<int32_t>(g.tensor(view.outputs[0]).quant->zeroPoints[0]);
    auto canonical = [&](int64_t c) {
      const int32_t* md = g.tensor(view.inputs[2]).dataAs<int32_t>();
      const int32_t* sd = g.tensor(view.inputs[3]).dataAs<int32_t>();
      const TensorId b = view.input(4);
      const int32_t bias = b != kNoTensor ? g.tensor(b).dataAs<int32_t>()[c] : 0;
      const int8_t* wd = w0.dataAs<int8_t>();
      for (int64_t t = 0; t < taps; ++t)
        if (wd[tapIndex(depthwise, m, taps, c, t)] != 0) return false;
      return md[c] == kCanonicalMultiplier && sd[c] == kCanonicalShift && bias == 4 * (constant[static_cast<size_t>(c)] - yz);
    };
    std::vector<int64_t> rewrite;
    for (int64_t c = 0; c < m; ++c)
      if (constant[static_cast<size_t>(c)] != kNotConstant && !canonical(c)) rewrite.push_back(c);
    if (rewrite.empty()) continue;

    Node& n = g.nodes[ni];
    if (n.input(4) == kNoTensor) {
      Tensor bias;
      bias.name = n.name + "/bias";
      bias.dtype = DType::Int32;
      bias.shape = {m};
      bias.kind = TensorKind::Constant;
      bias.data.assign(static_cast<size_t>(m) * sizeof(int32_t), 0);
      const TensorId id = g.addTensor(std::move(bias));
      n.inputs.resize(5, kNoTensor);
      n.inputs[4] = id;
    }
    const std::vector<int> uses = g.useCounts();
    const TensorId wId = ownedCopy(g, n, 1, uses), mId = ownedCopy(g, n, 2, uses), sId = ownedCopy(g, n, 3, uses),
                   bId = ownedCopy(g, n, 4, uses);
    int8_t* wd = mutableData<int8_t>(g.tensor(wId));
    int32_t* md = mutableData<int32_t>(g.tensor(mId));
    int32_t* sd = mutableData<int32_t>(g.tensor(sId));
    int32_t* bd = mutableData<int32_t>(g.tensor(bId));
    for (int64_t c : rewrite) {
      for (int64_t t = 0; t < taps; ++t) wd[tapIndex(depthwise, m, taps, c, t)] = 0;
      md[c] = kCanonicalMultiplier;
      sd[c] = kCanonicalShift;
      bd[c] = 4 * (constant[static_cast<size_t>(c)] - yz);
    }
    total += static_cast<int64_t>(rewrite.size());
    layers.push_back(fmt::format("{} ({} of {})", n.name, rewrite.size(), m));
  }
  if (layers.empty()) return std::vector<std::string>{};
  return std::vector<std::string>{fmt::format(
      "constant channels: {} output channel(s) give one value for every input (their scale rounds every reachable "
      "accumulator to it) and are written as that constant, exactly: {}",
      total, fmt::join(layers, ", "))};
}

}  // namespace stowage
