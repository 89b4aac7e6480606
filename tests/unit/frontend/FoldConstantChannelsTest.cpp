// Constant output channels (pass/FoldConstantChannels.h): random int8 convolutions, depthwise convolutions and fully
// connected layers with dead filters of several kinds, run through the runtime's kernels before and after the pass on
// random inputs and on the inputs that drive each channel to its extremes: the bytes must not change.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "stowage/driver/Compiler.h"
#include "stowage/driver/HostRunner.h"
#include "stowage/ir/Graph.h"
#include "stowage/pass/FoldConstantChannels.h"
#include "stowage/pass/PruneConstantChannels.h"
#include "stowage_kernels.h"

namespace stowage {
namespace {

enum class Kind { Conv3x3, Pointwise, Depthwise, FullyConnected };

constexpr int64_t kH = 5, kW = 6;

struct Layer {
  Kind kind;
  int64_t c = 0, m = 0;
  Graph g;
  Node* node() { return &g.nodes[0]; }
};

template <typename T>
Tensor constant(const std::string& name, Shape shape, DType dtype, const std::vector<T>& values) {
  Tensor t;
  t.name = name;
  t.shape = std::move(shape);
  t.dtype = dtype;
  t.kind = TensorKind::Constant;
  t.data.resize(values.size() * sizeof(T));
  std::memcpy(t.data.data(), values.data(), t.data.size());
  return t;
}

/// One layer with `m` channels; channel c's kind of filter: 0 live, 1 a dead filter as TFLite writes them (scale near
/// zero: shift -31, bias about 2^30), 2 a bias that the ReLU clamps away for every input, 3 a bias that saturates at
/// 127, 4 zero weights, 5 one step between its accumulator's extremes, taken only near its largest value (must stay).
Layer randomLayer(Kind kind, uint32_t seed, int64_t inputChannels = 0) {
  std::mt19937 rng(seed);
  auto uni = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  Layer l;
  l.kind = kind;
  l.c = kind == Kind::FullyConnected ? uni(8, 40) : uni(3, 9);
  if (inputChannels > 0) l.c = inputChannels;
  l.m = kind == Kind::Depthwise ? l.c : uni(12, 24);
  const int64_t taps = kind == Kind::Conv3x3 ? 9 * l.c : kind == Kind::Depthwise ? 9 : l.c;
  std::vector<int8_t> w(static_cast<size_t>(l.m * taps));
  std::vector<int32_t> bias(static_cast<size_t>(l.m)), mult(static_cast<size_t>(l.m)), shift(static_cast<size_t>(l.m));
  auto wAt = [&](int64_t ch, int64_t t) -> int8_t& {
    return w[static_cast<size_t>(kind == Kind::Depthwise ? t * l.m + ch : ch * taps + t)];
  };
  const int64_t inZero = uni(-128, 127), outZero = uni(-20, 20);
  for (int64_t ch = 0; ch < l.m; ++ch) {
    const int filter = static_cast<int>(ch % 6);
    for (int64_t t = 0; t < taps; ++t) wAt(ch, t) = static_cast<int8_t>(filter == 4 ? 0 : uni(-127, 127));
    mult[static_cast<size_t>(ch)] = static_cast<int32_t>(uni(int64_t{1} << 30, (int64_t{1} << 31) - 1));
    shift[static_cast<size_t>(ch)] = static_cast<int32_t>(uni(-10, -7));
    bias[static_cast<size_t>(ch)] = static_cast<int32_t>(uni(-2000, 2000));
    if (filter == 1) {
      shift[static_cast<size_t>(ch)] = -31;
      bias[static_cast<size_t>(ch)] = static_cast<int32_t>(uni(-(int64_t{1} << 30), int64_t{1} << 30));
    } else if (filter == 2) {
      bias[static_cast<size_t>(ch)] = -(1 << 28);
    } else if (filter == 3) {
      bias[static_cast<size_t>(ch)] = 1 << 28;
    } else if (filter == 5) {
      // x 0.5 then a right shift r with 2^(r+1) >= the accumulator's span, the rounding's step placed at 90% of the span:
      // one more output step only for the inputs that bring the accumulator within 10% of its largest value.
      int64_t lo = 0, hi = 0;
      for (int64_t t = 0; t < taps; ++t) {
        const int64_t a = wAt(ch, t) * (-128 - inZero), b = wAt(ch, t) * (127 - inZero);
        lo += std::min<int64_t>({0, a, b});
        hi += std::max<int64_t>({0, a, b});
      }
      int r = 0;
      while ((int64_t{1} << (r + 1)) < hi - lo) ++r;
      mult[static_cast<size_t>(ch)] = 1 << 30;
      shift[static_cast<size_t>(ch)] = -r;
      bias[static_cast<size_t>(ch)] = static_cast<int32_t>((int64_t{1} << r) - lo - (hi - lo) * 9 / 10);
    }
  }
  Tensor x;
  x.name = "x";
  x.kind = TensorKind::Input;
  x.dtype = DType::Int8;
  x.shape = kind == Kind::FullyConnected ? Shape{2, l.c} : Shape{1, kH, kW, l.c};
  x.quant = QuantParams{{0.05f}, {inZero}};
  Tensor y;
  y.name = "y";
  y.dtype = DType::Int8;
  const int64_t oh = kind == Kind::Conv3x3 ? kH - 2 : kH;
  y.shape = kind == Kind::FullyConnected ? Shape{2, l.m} : Shape{1, oh, kind == Kind::Conv3x3 ? kW - 2 : kW, l.m};
  y.quant = QuantParams{{0.1f}, {outZero}};
  Shape ws = kind == Kind::FullyConnected ? Shape{l.m, l.c}
             : kind == Kind::Depthwise    ? Shape{1, 3, 3, l.m}
             : kind == Kind::Conv3x3      ? Shape{l.m, 3, 3, l.c}
                                          : Shape{l.m, 1, 1, l.c};
  Node n;
  n.name = "layer";
  n.op = kind == Kind::FullyConnected ? OpKind::QFullyConnected : kind == Kind::Depthwise ? OpKind::QDepthwiseConv2d : OpKind::QConv2d;
  n.inputs = {l.g.addTensor(std::move(x)), l.g.addTensor(constant("w", ws, DType::Int8, w)),
              l.g.addTensor(constant("mult", {l.m}, DType::Int32, mult)), l.g.addTensor(constant("shift", {l.m}, DType::Int32, shift)),
              l.g.addTensor(constant("bias", {l.m}, DType::Int32, bias))};
  n.outputs = {l.g.addTensor(std::move(y))};
  if (kind == Kind::Depthwise) n.attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  n.attrs.set("act_min", int64_t{outZero});  // a fused ReLU
  n.attrs.set("act_max", int64_t{127});
  l.g.inputs = {n.inputs[0]};
  l.g.outputs = {n.outputs[0]};
  l.g.addNode(std::move(n));
  return l;
}

/// The layer's output for input `x` through the runtime's kernels.
std::vector<int8_t> run(Layer& l, const std::vector<int8_t>& x) {
  const Node& n = *l.node();
  const Tensor& yt = l.g.tensor(n.outputs[0]);
  std::vector<int8_t> y(static_cast<size_t>(yt.numElements()));
  const int8_t* w = l.g.tensor(n.inputs[1]).dataAs<int8_t>();
  const int32_t* mult = l.g.tensor(n.inputs[2]).dataAs<int32_t>();
  const int32_t* shift = l.g.tensor(n.inputs[3]).dataAs<int32_t>();
  const int32_t* bias = l.g.tensor(n.inputs[4]).dataAs<int32_t>();
  const int32_t inOffset = static_cast<int32_t>(-l.g.tensor(n.inputs[0]).quant->zeroPoints[0]);
  const int32_t outZero = static_cast<int32_t>(yt.quant->zeroPoints[0]);
  if (l.kind == Kind::FullyConnected) {
    stowage_qfc_params p;
    std::memset(&p, 0, sizeof p);
    p.batches = 2;
    p.k = static_cast<int32_t>(l.c);
    p.m = static_cast<int32_t>(l.m);
    p.per_channel = 1;
    p.input_offset = inOffset;
    p.output_offset = outZero;
    p.act_min = outZero;
    p.act_max = 127;
    stowage_qfully_connected_s8(x.data(), w, bias, mult, shift, y.data(), &p);
    return y;
  }
  stowage_qconv_params p;
  std::memset(&p, 0, sizeof p);
  const bool depthwise = l.kind == Kind::Depthwise;
  const int32_t k = l.kind == Kind::Pointwise ? 1 : 3;
  p.n = 1;
  p.h = kH;
  p.w = kW;
  p.c = static_cast<int32_t>(l.c);
  p.oh = static_cast<int32_t>(yt.shape[1]);
  p.ow = static_cast<int32_t>(yt.shape[2]);
  p.m = static_cast<int32_t>(l.m);
  p.kh = p.kw = k;
  p.kc = depthwise ? 1 : p.c;
  p.stride_h = p.stride_w = p.dil_h = p.dil_w = 1;
  p.pad_top = p.pad_left = depthwise ? 1 : 0;
  p.depth_multiplier = 1;
  p.per_channel = 1;
  p.input_offset = inOffset;
  p.output_offset = outZero;
  p.act_min = outZero;
  p.act_max = 127;
  if (depthwise)
    stowage_qdepthwise_conv2d_s8(x.data(), w, bias, mult, shift, y.data(), &p);
  else
    stowage_qconv2d_s8(x.data(), w, bias, mult, shift, y.data(), &p);
  return y;
}

/// Random inputs, the two constant ones, and per channel the input that maximises and the one that minimises its
/// accumulator (each tap's weight sign; a conv's window reads every pixel's channels, so the pattern is per channel of
/// the input for the first tap row's weights: still each channel's extremes for a pointwise or fully connected layer).
std::vector<std::vector<int8_t>> inputsFor(Layer& l, uint32_t seed) {
  const Tensor& xt = l.g.tensor(l.node()->inputs[0]);
  const size_t size = static_cast<size_t>(xt.numElements());
  std::mt19937 rng(seed);
  std::vector<std::vector<int8_t>> inputs;
  for (int i = 0; i < 4; ++i) {
    std::vector<int8_t> x(size);
    for (int8_t& v : x) v = static_cast<int8_t>(std::uniform_int_distribution<int>(-128, 127)(rng));
    inputs.push_back(std::move(x));
  }
  inputs.push_back(std::vector<int8_t>(size, -128));
  inputs.push_back(std::vector<int8_t>(size, 127));
  if (l.kind == Kind::FullyConnected || l.kind == Kind::Pointwise) {
    const int8_t* w = l.g.tensor(l.node()->inputs[1]).dataAs<int8_t>();
    for (int64_t ch = 0; ch < l.m; ++ch)
      for (int sign : {1, -1}) {
        std::vector<int8_t> x(size);
        for (size_t i = 0; i < size; ++i) x[i] = w[ch * l.c + static_cast<int64_t>(i) % l.c] * sign >= 0 ? 127 : -128;
        inputs.push_back(std::move(x));
      }
  }
  return inputs;
}

TEST(FoldConstantChannels, RuntimeRequantizeFollowsTflitesRounding) {
  EXPECT_EQ(stowage_requantize_s32(100, 1 << 30, 0), 50);    // x 0.5
  EXPECT_EQ(stowage_requantize_s32(-3, 1 << 30, 0), -1);     // -1.5: the doubling high multiply rounds up
  EXPECT_EQ(stowage_requantize_s32(6, 1 << 30, -2), 1);      // 3 / 4 = 0.75 -> 1
  EXPECT_EQ(stowage_requantize_s32(-6, 1 << 30, -2), -1);    // ties away from zero: -0.75 -> -1
  EXPECT_EQ(stowage_requantize_s32(4, 1 << 30, -2), 1);      // 2 / 4 = 0.5 -> 1 (away from zero)
  EXPECT_EQ(stowage_requantize_s32(-4, 1 << 30, -2), -1);
  EXPECT_EQ(stowage_requantize_s32(3, 1 << 30, 1), 3);       // left shift 1, x 0.5
  EXPECT_EQ(stowage_requantize_s32(1 << 30, (1 << 30) + 12345, -31), 0);
}

TEST(FoldConstantChannels, DeadFiltersGiveTheSameBytesThroughTheKernels) {
  int rewritten = 0;
  for (Kind kind : {Kind::Conv3x3, Kind::Pointwise, Kind::Depthwise, Kind::FullyConnected})
    for (uint32_t seed = 1; seed <= 6; ++seed) {
      SCOPED_TRACE(::testing::Message() << "kind " << static_cast<int>(kind) << " seed " << seed);
      Layer before = randomLayer(kind, seed);
      Layer after = randomLayer(kind, seed);
      auto remarks = foldConstantChannels(after.g);
      ASSERT_TRUE(remarks.ok()) << remarks.error().render();
      ASSERT_EQ(remarks->size(), 1u) << "dead filters were built in: one remark";
      const int8_t* w = after.g.tensor(after.node()->inputs[1]).dataAs<int8_t>();
      const int32_t* shift = after.g.tensor(after.node()->inputs[3]).dataAs<int32_t>();
      const int64_t taps = after.g.tensor(after.node()->inputs[1]).numElements() / after.m;
      for (int64_t ch = 0; ch < after.m; ++ch) {
        const int filter = static_cast<int>(ch % 6);
        if (filter == 1 || filter == 2 || filter == 3) {
          EXPECT_EQ(shift[ch], -1) << "channel " << ch << " (filter kind " << filter << ") is constant and rewritten";
          for (int64_t t = 0; t < taps; ++t)
            ASSERT_EQ(w[kind == Kind::Depthwise ? t * after.m + ch : ch * taps + t], 0) << "channel " << ch;
        }
        if (filter == 0 || filter == 5) {
          EXPECT_NE(shift[ch], -1) << "channel " << ch << " depends on its input";
        }
        rewritten += shift[ch] == -1 ? 1 : 0;
      }
      for (const std::vector<int8_t>& x : inputsFor(before, seed)) ASSERT_EQ(run(after, x), run(before, x));
      auto again = foldConstantChannels(after.g);
      ASSERT_TRUE(again.ok());
      EXPECT_TRUE(again->empty()) << "a rewritten channel is left alone the second time";
    }
  EXPECT_GT(rewritten, 100);
}

TEST(FoldConstantChannels, SharedWeightsAreCopiedAndOnnxRuntimesRequantizationIsLeftAlone) {
  Layer l = randomLayer(Kind::Pointwise, 3);
  // A second reader of the weights (with ONNX Runtime's requantization, which the pass leaves alone): the rewrite of
  // the first must not reach it.
  Node reader = *l.node();
  reader.name = "other";
  reader.attrs.set("requant_f32", int64_t{1});
  Tensor y2 = l.g.tensor(reader.outputs[0]);
  y2.name = "y2";
  reader.outputs = {l.g.addTensor(std::move(y2))};
  const TensorId weights = reader.inputs[1];
  const std::vector<uint8_t> original = l.g.tensor(weights).data;
  l.g.outputs.push_back(reader.outputs[0]);
  l.g.addNode(reader);
  ASSERT_TRUE(foldConstantChannels(l.g).ok());
  EXPECT_NE(l.g.nodes[0].inputs[1], weights) << "the first layer got its own copy";
  EXPECT_EQ(l.g.tensor(weights).data, original);

  Layer f = randomLayer(Kind::Pointwise, 4);
  f.node()->attrs.set("requant_f32", int64_t{1});
  auto remarks = foldConstantChannels(f.g);
  ASSERT_TRUE(remarks.ok());
  EXPECT_TRUE(remarks->empty()) << "float32 multipliers are not TFLite's";
}

/// Appends `src`'s layer to `chain`, reading `input` (its channels must match): the chain's output becomes the layer's.
TensorId appendLayer(Graph& chain, const Layer& src, TensorId input, const std::string& prefix) {
  Node n = src.g.nodes[0];
  n.name = prefix;
  n.inputs[0] = input;
  for (size_t i = 1; i < n.inputs.size(); ++i) {
    Tensor t = src.g.tensor(src.g.nodes[0].inputs[i]);
    t.name = prefix + "/" + t.name;
    n.inputs[i] = chain.addTensor(std::move(t));
  }
  Tensor y = src.g.tensor(src.g.nodes[0].outputs[0]);
  y.name = prefix + "/y";
  y.shape[0] = chain.tensor(input).shape[0];
  n.outputs = {chain.addTensor(std::move(y))};
  chain.addNode(n);
  return n.outputs[0];
}

// A pointwise convolution with constant channels, a depthwise layer and a pointwise one reading it: the first computes
// only its live channels, the constant ones come in by a Concat, the two readers take the new order; the bytes of the
// chain's output are the same as without the passes, on random inputs.
TEST(PruneConstantChannels, ChainComputesOnlyLiveChannelsWithTheSameBytes) {
  for (uint32_t seed = 1; seed <= 2; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    Layer first = randomLayer(Kind::Pointwise, seed);
    Graph chain;
    const TensorId x = chain.addTensor(first.g.tensor(first.node()->inputs[0]));
    chain.inputs = {x};
    TensorId t = appendLayer(chain, first, x, "pw1");
    // The depthwise and second pointwise layers, drawn for the first one's channel count.
    Layer dw = randomLayer(Kind::Depthwise, 100 + seed, first.m), pw = randomLayer(Kind::Pointwise, 200 + seed, first.m);
    // Each layer reads the previous one's quantization.
    chain.tensor(t).quant = dw.g.tensor(dw.node()->inputs[0]).quant;
    t = appendLayer(chain, dw, t, "dw");
    chain.tensor(t).quant = pw.g.tensor(pw.node()->inputs[0]).quant;
    t = appendLayer(chain, pw, t, "pw2");
    chain.outputs = {t};

    auto compile = [&](bool fold) {
      CompileOptions o;
      o.foldConstantChannels = fold;
      o.planner.timeLimitSeconds = 5;
      return compileGraph(chain, o);
    };
    auto folded = compile(true), kept = compile(false);
    ASSERT_TRUE(folded.ok()) << folded.error().render();
    ASSERT_TRUE(kept.ok()) << kept.error().render();
    bool concat = false;
    for (const Node& n : folded->graph.nodes) concat = concat || n.op == OpKind::Concat;
    EXPECT_TRUE(concat) << "the constant channels come in by a Concat";
    std::string remarks;
    for (const std::string& r : folded->plan.remarks) remarks += r + "\n";
    EXPECT_NE(remarks.find("constant channels left out: 1 convolution"), std::string::npos) << remarks;
    std::mt19937 rng(seed);
    for (int i = 0; i < 2; ++i) {
      Tensor in = chain.tensor(x);
      in.data.resize(static_cast<size_t>(in.numElements()));
      for (uint8_t& v : in.data) v = static_cast<uint8_t>(rng());
      auto a = runOnHost(*folded, {in}), b = runOnHost(*kept, {in});
      ASSERT_TRUE(a.ok()) << a.error().render();
      ASSERT_TRUE(b.ok()) << b.error().render();
      EXPECT_EQ((*a)[0].data, (*b)[0].data);
    }
  }
}

}  // namespace
}  // namespace stowage
