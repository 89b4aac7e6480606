// BatchNormalization -> Conv weight folding (see FoldBatchNorm.h).
#include "stowage/pass/FoldBatchNorm.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>

namespace stowage {

namespace {

bool isFloatConst(const Graph& g, TensorId id) {
  if (id == kNoTensor) return false;
  const Tensor& t = g.tensor(id);
  return t.isConstant() && t.dtype == DType::Float32 && t.data.size() == t.byteSize();
}

std::vector<float> floats(const Tensor& t) {
  std::vector<float> v(static_cast<size_t>(t.numElements()));
  if (!v.empty()) std::memcpy(v.data(), t.data.data(), v.size() * sizeof(float));
  return v;
}

std::string freshName(const Graph& g, const std::string& base) {
  if (!g.findTensor(base)) return base;
  for (int k = 1;; ++k) {
    std::string c = fmt::format("{}_{}", base, k);
    if (!g.findTensor(c)) return c;
  }
}

TensorId addFloatConst(Graph& g, const std::string& name, const Shape& shape, const std::vector<float>& v) {
  Tensor t;
  t.name = freshName(g, name);
  t.dtype = DType::Float32;
  t.shape = shape;
  t.kind = TensorKind::Constant;
  t.data.resize(v.size() * sizeof(float));
  if (!v.empty()) std::memcpy(t.data.data(), v.data(), t.data.size());
  return g.addTensor(std::move(t));
}

/// Folds nodes[bnIndex] into its producer when allowed; true when folded.
bool tryFold(Graph& g, size_t bnIndex, const std::vector<int>& producers, const std::vector<int>& uses) {
  const Node& bn = g.nodes[bnIndex];
  if (bn.inputs.size() != 5 || bn.outputs.size() != 1) return false;
  const TensorId x = bn.inputs[0];
  if (x == kNoTensor || producers[static_cast<size_t>(x)] < 0 || uses[static_cast<size_t>(x)] != 1) return false;
  Node& conv = g.nodes[static_cast<size_t>(producers[static_cast<size_t>(x)])];
  const bool transposed = conv.op == OpKind::ConvTranspose;
  if (conv.op != OpKind::Conv && !transposed) return false;
  const TensorId wId = conv.input(1), bId = conv.input(2);
  if (!isFloatConst(g, wId) || (bId != kNoTensor && !isFloatConst(g, bId))) return false;
  for (size_t i = 1; i < 5; ++i)
    if (!isFloatConst(g, bn.inputs[i])) return false;

  const Tensor& w = g.tensor(wId);
  if (w.shape.size() < 2) return false;
  const int64_t group = std::max<int64_t>(1, conv.attrs.getInt("group", 1));
  const int64_t m = transposed ? w.shape[1] * group : w.shape[0];
  auto scale = floats(g.tensor(bn.inputs[1])), beta = floats(g.tensor(bn.inputs[2]));
  auto mean = floats(g.tensor(bn.inputs[3])), var = floats(g.tensor(bn.inputs[4]));
  const auto mm = static_cast<size_t>(m);
  if (scale.size() != mm || beta.size() != mm || mean.size() != mm || var.size() != mm) return false;
  std::vector<float> bias = bId == kNoTensor ? std::vector<float>(mm, 0.0f) : floats(g.tensor(bId));
  if (bias.size() != mm) return false;

  const float eps = bn.attrs.getFloat("epsilon", 1e-5f);
  std::vector<float> s(mm);
  for (size_t c = 0; c < mm; ++c) s[c] = scale[c] / std::sqrt(var[c] + eps);

  std::vector<float> wv = floats(w);
  int64_t inner = 1;
  for (size_t d = 2; d < w.shape.size(); ++d) inner *= w.shape[d];
  if (!transposed) {
    const int64_t perOut = w.shape[1] * inner;
    for (int64_t o = 0; o < m; ++o)
      for (int64_t k = 0; k < perOut; ++k) wv[static_cast<size_t>(o * perOut + k)] *= s[static_cast<size_t>(o)];
  } else {
    // W [C, M/group, k...]: input channel c belongs to group c / (C/group); its j-th filter feeds output
    // channel group * (M/group) + j.
    const int64_t cin = w.shape[0], mPerGroup = w.shape[1], cPerGroup = cin / group;
    if (cPerGroup * group != cin) return false;
    for (int64_t c = 0; c < cin; ++c)
      for (int64_t j = 0; j < mPerGroup; ++j) {
        const float f = s[static_cast<size_t>((c / cPerGroup) * mPerGroup + j)];
        for (int64_t k = 0; k < inner; ++k) wv[static_cast<size_t>((c * mPerGroup + j) * inner + k)] *= f;
      }
  }
  for (size_t c = 0; c < mm; ++c) bias[c] = (bias[c] - mean[c]) * s[c] + beta[c];

  const Shape wShape = w.shape;
  const std::string wName = w.name;
  const TensorId newW = addFloatConst(g, wName + "_bnfold", wShape, wv);
  const TensorId newB = addFloatConst(g, conv.name + "_bias_bnfold", {m}, bias);
  // addTensor may reallocate: re-fetch the nodes by index.
  Node& c2 = g.nodes[static_cast<size_t>(producers[static_cast<size_t>(x)])];
  c2.inputs.resize(3, kNoTensor);
  c2.inputs[1] = newW;
  c2.inputs[2] = newB;
  c2.outputs[0] = g.nodes[bnIndex].outputs[0];
  return true;
}

}  // namespace

Status foldBatchNormIntoConv(Graph& g) {
  std::vector<size_t> folded;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].op != OpKind::BatchNormalization) continue;
    // Recomputed per candidate: an earlier fold changes producers and uses.
    const auto producers = g.producers();
    const auto uses = g.useCounts();
    if (tryFold(g, i, producers, uses)) folded.push_back(i);
  }
  if (folded.empty()) return Status::success();
  std::vector<Node> kept;
  size_t next = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (next < folded.size() && folded[next] == i) {
      ++next;
      continue;
    }
    kept.push_back(std::move(g.nodes[i]));
  }
  g.nodes = std::move(kept);
  g.compactTensors();
  return Status::success();
}

}  // namespace stowage
