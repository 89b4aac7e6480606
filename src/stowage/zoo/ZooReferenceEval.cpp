// Naive float32 evaluation of the zoo models' ops (see ZooReferenceEval.h); clarity over speed.
#include "stowage/zoo/ZooReferenceEval.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace stowage::zoo::refeval {
namespace {

std::vector<int64_t> intsAttr(const onnx::NodeProto& n, const std::string& name, std::vector<int64_t> dflt) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return {a.ints().begin(), a.ints().end()};
  return dflt;
}

int64_t intAttr(const onnx::NodeProto& n, const std::string& name, int64_t dflt) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return a.i();
  return dflt;
}

float floatAttr(const onnx::NodeProto& n, const std::string& name, float dflt) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return a.f();
  return dflt;
}

FloatTensor fromInitializer(const onnx::TensorProto& t) {
  FloatTensor f;
  for (int64_t d : t.dims()) f.shape.push_back(d);
  f.v.resize(t.raw_data().size() / 4);
  std::memcpy(f.v.data(), t.raw_data().data(), f.v.size() * 4);
  return f;
}

FloatTensor conv(const onnx::NodeProto& n, const FloatTensor& x, const FloatTensor& w, const FloatTensor* b) {
  const auto k = intsAttr(n, "kernel_shape", {w.shape[2], w.shape[3]});
  const auto s = intsAttr(n, "strides", {1, 1});
  const auto p = intsAttr(n, "pads", {0, 0, 0, 0});
  const int64_t g = intAttr(n, "group", 1);
  const int64_t C = x.shape[1], H = x.shape[2], W = x.shape[3], M = w.shape[0], Cg = C / g, Mg = M / g;
  const int64_t OH = (H + p[0] + p[2] - k[0]) / s[0] + 1, OW = (W + p[1] + p[3] - k[1]) / s[1] + 1;
  FloatTensor y{{1, M, OH, OW}, std::vector<float>(static_cast<size_t>(M * OH * OW))};
  for (int64_t m = 0; m < M; ++m) {
    const int64_t grp = m / Mg;
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        double acc = b ? b->v[static_cast<size_t>(m)] : 0.0;
        for (int64_t c = 0; c < Cg; ++c)
          for (int64_t kh = 0; kh < k[0]; ++kh)
            for (int64_t kw = 0; kw < k[1]; ++kw) {
              const int64_t ih = oh * s[0] - p[0] + kh, iw = ow * s[1] - p[1] + kw;
              if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
              acc += static_cast<double>(x.v[static_cast<size_t>(((grp * Cg + c) * H + ih) * W + iw)]) *
                     w.v[static_cast<size_t>(((m * Cg + c) * k[0] + kh) * k[1] + kw)];
            }
        y.v[static_cast<size_t>((m * OH + oh) * OW + ow)] = static_cast<float>(acc);
      }
  }
  return y;
}

}  // namespace

std::map<std::string, FloatTensor> evaluate(const onnx::ModelProto& model, const FloatTensor& input) {
  std::map<std::string, FloatTensor> env;
  const auto& g = model.graph();
  for (const auto& init : g.initializer()) env[init.name()] = fromInitializer(init);
  env[g.input(0).name()] = input;
  for (const auto& n : g.node()) {
    const std::string& op = n.op_type();
    const FloatTensor& x = env.at(n.input(0));
    FloatTensor y{x.shape, x.v};
    const int64_t spatial = x.shape.size() > 2 ? shapeElements(Shape(x.shape.begin() + 2, x.shape.end())) : 1;
    if (op == "Conv") {
      y = conv(n, x, env.at(n.input(1)), n.input_size() > 2 ? &env.at(n.input(2)) : nullptr);
    } else if (op == "BatchNormalization") {
      const auto &sc = env.at(n.input(1)).v, &bi = env.at(n.input(2)).v, &mu = env.at(n.input(3)).v,
                 &va = env.at(n.input(4)).v;
      const float eps = floatAttr(n, "epsilon", 1e-5f);
      for (size_t i = 0; i < y.v.size(); ++i) {
        const size_t c = (i / static_cast<size_t>(spatial)) % static_cast<size_t>(x.shape[1]);
        y.v[i] = (x.v[i] - mu[c]) / std::sqrt(va[c] + eps) * sc[c] + bi[c];
      }
    } else if (op == "Relu") {
      for (float& v : y.v) v = std::max(v, 0.0f);
    } else if (op == "Clip") {
      const float lo = env.at(n.input(1)).v[0], hi = env.at(n.input(2)).v[0];
      for (float& v : y.v) v = std::clamp(v, lo, hi);
    } else if (op == "Add") {
      const FloatTensor& b = env.at(n.input(1));
      for (size_t i = 0; i < y.v.size(); ++i) y.v[i] += b.v[i];
    } else if (op == "AveragePool" || op == "GlobalAveragePool") {
      const auto k = op == "GlobalAveragePool" ? std::vector<int64_t>{x.shape[2], x.shape[3]}
                                               : intsAttr(n, "kernel_shape", {});
      const int64_t C = x.shape[1], H = x.shape[2], W = x.shape[3], OH = H / k[0], OW = W / k[1];
      y = FloatTensor{{1, C, OH, OW}, std::vector<float>(static_cast<size_t>(C * OH * OW))};
      for (int64_t c = 0; c < C; ++c)
        for (int64_t oh = 0; oh < OH; ++oh)
          for (int64_t ow = 0; ow < OW; ++ow) {
            double acc = 0;
            for (int64_t i = 0; i < k[0]; ++i)
              for (int64_t j = 0; j < k[1]; ++j)
                acc += x.v[static_cast<size_t>((c * H + oh * k[0] + i) * W + ow * k[1] + j)];
            y.v[static_cast<size_t>((c * OH + oh) * OW + ow)] = static_cast<float>(acc / static_cast<double>(k[0] * k[1]));
          }
    } else if (op == "Flatten") {
      y.shape = {x.shape[0], shapeElements(x.shape) / x.shape[0]};
    } else if (op == "Gemm") {
      const FloatTensor &w = env.at(n.input(1)), &b = env.at(n.input(2));
      const int64_t N = w.shape[0], K = w.shape[1];
      y = FloatTensor{{1, N}, std::vector<float>(static_cast<size_t>(N))};
      for (int64_t o = 0; o < N; ++o) {
        double acc = b.v[static_cast<size_t>(o)];
        for (int64_t i = 0; i < K; ++i) acc += static_cast<double>(x.v[static_cast<size_t>(i)]) * w.v[static_cast<size_t>(o * K + i)];
        y.v[static_cast<size_t>(o)] = static_cast<float>(acc);
      }
    } else if (op == "Softmax") {
      const float mx = *std::max_element(y.v.begin(), y.v.end());
      double sum = 0;
      for (float& v : y.v) sum += (v = std::exp(v - mx));
      for (float& v : y.v) v = static_cast<float>(v / sum);
    } else {
      return {};
    }
    env[n.output(0)] = std::move(y);
  }
  return env;
}

}  // namespace stowage::zoo::refeval
