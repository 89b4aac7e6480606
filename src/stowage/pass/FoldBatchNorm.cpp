// BatchNormalization -> Conv / Gemm weight folding (see FoldBatchNorm.h).
#include "stowage/pass/FoldBatchNorm.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <optional>

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

/// A BatchNormalization as a per-channel affine map: y = (x - mean) * s + bias with s = scale / sqrt(var + eps).
struct BnScales {
  std::vector<float> s, mean, bias;
};

/// `bn`'s map over `channels` channels; nullopt unless its four parameters are float constants with one value
/// per channel.
std::optional<BnScales> bnScales(const Graph& g, const Node& bn, size_t channels) {
  for (size_t i = 1; i < 5; ++i)
    if (!isFloatConst(g, bn.inputs[i])) return std::nullopt;
  const auto scale = floats(g.tensor(bn.inputs[1])), var = floats(g.tensor(bn.inputs[4]));
  BnScales r{{}, floats(g.tensor(bn.inputs[3])), floats(g.tensor(bn.inputs[2]))};
  if (scale.size() != channels || r.bias.size() != channels || r.mean.size() != channels || var.size() != channels)
    return std::nullopt;
  const float eps = bn.attrs.getFloat("epsilon", 1e-5f);
  r.s.resize(channels);
  for (size_t c = 0; c < channels; ++c) r.s[c] = scale[c] / std::sqrt(var[c] + eps);
  return r;
}

/// Folds a BatchNormalization over the [M, N] output of `gemm` (channels = columns) into B and C:
///   B'[., n] = B[., n] * s[n],  C' = (beta * C - mean) * s + bias (shape [N], beta' = 1).
/// False (nothing changed) unless B is a float constant and C is absent or a float constant row ([], [1], [N]
/// or [1, N]).
bool tryFoldIntoGemm(Graph& g, size_t gemmIndex, size_t bnIndex, const BnScales& bn) {
  const std::vector<float>& s = bn.s;
  const Node& gemm = g.nodes[gemmIndex];
  const TensorId bId = gemm.input(1), cId = gemm.input(2);
  if (!isFloatConst(g, bId) || (cId != kNoTensor && !isFloatConst(g, cId))) return false;
  const Tensor& b = g.tensor(bId);
  if (b.shape.size() != 2) return false;
  const bool transB = gemm.attrs.getInt("transB", 0) != 0;
  const int64_t n = transB ? b.shape[0] : b.shape[1], k = transB ? b.shape[1] : b.shape[0];
  if (static_cast<size_t>(n) != s.size()) return false;
  std::vector<float> c(s.size(), 0.0f);
  if (cId != kNoTensor) {
    const Tensor& ct = g.tensor(cId);
    const bool row = ct.shape.empty() || (ct.shape.size() == 1 && (ct.shape[0] == 1 || ct.shape[0] == n)) ||
                     (ct.shape.size() == 2 && ct.shape[0] == 1 && (ct.shape[1] == 1 || ct.shape[1] == n));
    if (!row) return false;
    const std::vector<float> cv = floats(ct);
    for (size_t j = 0; j < c.size(); ++j) c[j] = cv.size() == 1 ? cv[0] : cv[j];
  }
  const float gemmBeta = gemm.attrs.getFloat("beta", 1.0f);
  std::vector<float> bv = floats(b);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < k; ++i) bv[static_cast<size_t>(transB ? j * k + i : i * n + j)] *= s[static_cast<size_t>(j)];
  for (size_t j = 0; j < c.size(); ++j) c[j] = (gemmBeta * c[j] - bn.mean[j]) * s[j] + bn.bias[j];
  const Shape bShape = b.shape;
  const std::string bName = b.name, gemmName = gemm.name;
  const TensorId newB = addFloatConst(g, bName + "_bnfold", bShape, bv);
  const TensorId newC = addFloatConst(g, gemmName + "_bias_bnfold", {n}, c);
  Node& g2 = g.nodes[gemmIndex];
  g2.inputs.resize(3, kNoTensor);
  g2.inputs[1] = newB;
  g2.inputs[2] = newC;
  g2.attrs.set("beta", 1.0f);
  g2.outputs[0] = g.nodes[bnIndex].outputs[0];
  return true;
}

/// Folds nodes[bnIndex] into its producer when allowed; true when folded.
bool tryFold(Graph& g, size_t bnIndex, const std::vector<int>& producers, const std::vector<int>& uses, const MergeVeto& veto) {
  const Node& bn = g.nodes[bnIndex];
  if (bn.inputs.size() != 5 || bn.outputs.size() != 1) return false;
  const TensorId x = bn.inputs[0];
  if (x == kNoTensor || producers[static_cast<size_t>(x)] < 0 || uses[static_cast<size_t>(x)] != 1) return false;
  Node& conv = g.nodes[static_cast<size_t>(producers[static_cast<size_t>(x)])];
  const size_t producerIndex = static_cast<size_t>(producers[static_cast<size_t>(x)]);
  if (conv.op == OpKind::Gemm) {
    // Gemm's [M, N] output: BatchNormalization's channels are the N columns. Not with int8 B (its 4th input
    // holds the scales): the fold rewrites B in float.
    if (g.tensor(x).shape.size() != 2 || conv.input(3) != kNoTensor) return false;
    const auto scales = bnScales(g, bn, static_cast<size_t>(g.tensor(x).shape[1]));
    if (!scales || (veto && !veto(g, x, bn.outputs[0]).empty())) return false;
    return tryFoldIntoGemm(g, producerIndex, bnIndex, *scales);
  }
  const bool transposed = conv.op == OpKind::ConvTranspose;
  if (conv.op != OpKind::Conv && !transposed) return false;
  const TensorId wId = conv.input(1), bId = conv.input(2);
  if (!isFloatConst(g, wId) || (bId != kNoTensor && !isFloatConst(g, bId))) return false;

  const Tensor& w = g.tensor(wId);
  if (w.shape.size() < 2) return false;
  const int64_t group = std::max<int64_t>(1, conv.attrs.getInt("group", 1));
  const int64_t m = transposed ? w.shape[1] * group : w.shape[0];
  const auto mm = static_cast<size_t>(m);
  const auto scales = bnScales(g, bn, mm);
  if (!scales) return false;
  std::vector<float> bias = bId == kNoTensor ? std::vector<float>(mm, 0.0f) : floats(g.tensor(bId));
  if (bias.size() != mm) return false;
  if (veto && !veto(g, x, bn.outputs[0]).empty()) return false;
  const std::vector<float>& s = scales->s;

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
  for (size_t c = 0; c < mm; ++c) bias[c] = (bias[c] - scales->mean[c]) * s[c] + scales->bias[c];

  const Shape wShape = w.shape;
  const std::string wName = w.name;
  const TensorId newW = addFloatConst(g, wName + "_bnfold", wShape, wv);
  const TensorId newB = addFloatConst(g, conv.name + "_bias_bnfold", {m}, bias);
  // addTensor may reallocate: re-fetch the nodes by index.
  Node& c2 = g.nodes[producerIndex];
  c2.inputs.resize(3, kNoTensor);
  c2.inputs[1] = newW;
  c2.inputs[2] = newB;
  c2.outputs[0] = g.nodes[bnIndex].outputs[0];
  return true;
}

}  // namespace

Status foldBatchNorm(Graph& g, const MergeVeto& veto) {
  std::vector<bool> folded(g.nodes.size(), false);
  bool any = false;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].op != OpKind::BatchNormalization) continue;
    // Recomputed per candidate: an earlier fold changes producers and uses.
    const auto producers = g.producers();
    const auto uses = g.useCounts();
    if (tryFold(g, i, producers, uses, veto)) folded[i] = any = true;
  }
  if (any) g.removeNodes(folded);
  return Status::success();
}

}  // namespace stowage
