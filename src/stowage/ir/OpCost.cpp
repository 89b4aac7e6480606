// Per-op multiply-accumulate counts (the CostRule column of Ops.def), for `stowage info` and reports.
#include "stowage/ir/Graph.h"
#include "stowage/ir/Op.h"

namespace stowage {

namespace {

const Shape* shapeOf(const Graph& g, TensorId id) {
  if (id == kNoTensor || id < 0 || id >= static_cast<TensorId>(g.tensors.size())) return nullptr;
  return &g.tensor(id).shape;
}

int64_t kernelElements(const Shape& w) {
  int64_t k = 1;
  for (size_t i = 2; i < w.size(); ++i) k *= w[i];
  return k;
}

int64_t macsConv(const Graph& g, const Node& n) {
  const Shape* x = shapeOf(g, n.input(0));
  const Shape* w = shapeOf(g, n.input(1));
  const Shape* y = n.outputs.empty() ? nullptr : shapeOf(g, n.outputs[0]);
  if (!x || !w || !y || w->size() < 2 || y->size() < 2) return 0;
  // Every output element accumulates (C/group) x kernel products: N*M*outSpatial*(C/group)*kernel.
  return shapeElements(*y) * (*w)[1] * kernelElements(*w);
}

int64_t macsConvTranspose(const Graph& g, const Node& n) {
  const Shape* x = shapeOf(g, n.input(0));
  const Shape* w = shapeOf(g, n.input(1));
  if (!x || !w || w->size() < 2) return 0;
  // Every input element scatters into (M/group) x kernel outputs: N*C*inSpatial*(M/group)*kernel.
  return shapeElements(*x) * (*w)[1] * kernelElements(*w);
}

int64_t macsGemm(const Graph& g, const Node& n) {
  const Shape* a = shapeOf(g, n.input(0));
  const Shape* y = n.outputs.empty() ? nullptr : shapeOf(g, n.outputs[0]);
  if (!a || !y || a->size() != 2) return 0;
  const int64_t k = n.attrs.getInt("transA", 0) ? (*a)[0] : (*a)[1];
  return shapeElements(*y) * k;
}

int64_t macsMatMul(const Graph& g, const Node& n) {
  const Shape* a = shapeOf(g, n.input(0));
  const Shape* y = n.outputs.empty() ? nullptr : shapeOf(g, n.outputs[0]);
  if (!a || !y || a->empty()) return 0;
  return shapeElements(*y) * a->back();  // batch*M*N outputs, K each
}

int64_t macsPerOutput(const Graph& g, const Node& n) {
  const Shape* y = n.outputs.empty() ? nullptr : shapeOf(g, n.outputs[0]);
  return y ? shapeElements(*y) : 0;
}

int64_t macsLRN(const Graph& g, const Node& n) { return macsPerOutput(g, n) * n.attrs.getInt("size", 1); }

int64_t macsQConv2d(const Graph& g, const Node& n) {
  const Shape* w = shapeOf(g, n.input(1));
  const Shape* y = n.outputs.empty() ? nullptr : shapeOf(g, n.outputs[0]);
  if (!w || !y || w->size() != 4) return 0;
  // NHWC: every output element accumulates kh x kw taps over its group's input channels (1 for depthwise).
  const int64_t perTap = n.op == OpKind::QDepthwiseConv2d ? 1 : (*w)[3];
  return shapeElements(*y) * (*w)[1] * (*w)[2] * perTap;
}

int64_t macsQFullyConnected(const Graph& g, const Node& n) {
  const Shape* w = shapeOf(g, n.input(1));
  const Shape* y = n.outputs.empty() ? nullptr : shapeOf(g, n.outputs[0]);
  if (!w || !y || w->size() != 2) return 0;
  return shapeElements(*y) * (*w)[1];
}

int64_t macsNone(const Graph&, const Node&) { return 0; }

}  // namespace

int64_t macCount(const Graph& g, const Node& node) {
  switch (node.op) {
#define STOWAGE_OP(Kind, MinIn, MaxIn, NumOut, ShapeRule, CostRule) \
  case OpKind::Kind: return macs##CostRule(g, node);
#include "stowage/ir/Ops.def"
#undef STOWAGE_OP
  }
  return 0;
}

}  // namespace stowage
