// The ONNX integer ops (QuantizeLinear, DequantizeLinear, ConvInteger, QLinearConv, MatMulInteger,
// QLinearMatMul): IR node -> lowerNode -> the C kernels run on the host, compared with a plain C++ reference of
// ONNX's definition written here (padding materialized with the zero point, std::nearbyint for the rounding),
// over int8 / uint8 operands, per-tensor and per-channel scales, groups, pads, strides, dilations, batches.
// One test also runs the whole pipeline (plan, emit C, build, run) to cover the emitted parameter structs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "../codegen/TestGraphs.h"
#include "stowage/lower/KernelCall.h"
#include "stowage/driver/Compiler.h"
#include "stowage/driver/HostRunner.h"

namespace stowage {
namespace {

using namespace stowage::testing;

// ---- tensors of any dtype ----

Tensor makeTensor(const std::string& name, DType dt, Shape shape, const std::vector<double>& values,
                  TensorKind kind = TensorKind::Constant) {
  Tensor t;
  t.name = name;
  t.dtype = dt;
  t.shape = std::move(shape);
  t.kind = kind;
  t.data.resize(t.byteSize());
  for (size_t i = 0; i < values.size(); ++i) {
    switch (dt) {
      case DType::Float32: { const float v = static_cast<float>(values[i]); std::memcpy(&t.data[i * 4], &v, 4); break; }
      case DType::Int8: { const int8_t v = static_cast<int8_t>(values[i]); std::memcpy(&t.data[i], &v, 1); break; }
      case DType::UInt8: t.data[i] = static_cast<uint8_t>(values[i]); break;
      case DType::Int32: { const int32_t v = static_cast<int32_t>(values[i]); std::memcpy(&t.data[i * 4], &v, 4); break; }
      default: ADD_FAILURE() << "unexpected dtype";
    }
  }
  return t;
}

std::vector<double> valuesOf(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numElements()));
  for (size_t i = 0; i < v.size(); ++i) {
    switch (t.dtype) {
      case DType::Float32: { float f; std::memcpy(&f, &t.data[i * 4], 4); v[i] = f; break; }
      case DType::Int8: v[i] = static_cast<int8_t>(t.data[i]); break;
      case DType::UInt8: v[i] = t.data[i]; break;
      case DType::Int32: { int32_t x; std::memcpy(&x, &t.data[i * 4], 4); v[i] = x; break; }
      default: ADD_FAILURE() << "unexpected dtype";
    }
  }
  return v;
}

double qmin(DType t) { return t == DType::UInt8 ? 0 : -128; }
double qmax(DType t) { return t == DType::UInt8 ? 255 : 127; }

std::vector<double> randomInts(size_t n, DType t, std::mt19937& rng) {
  std::uniform_int_distribution<int> d(static_cast<int>(qmin(t)), static_cast<int>(qmax(t)));
  std::vector<double> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

/// ONNX requantization: nearbyint (ties to even) of acc * float32(float32(s_in * s_w) / s_out), plus zp, saturated.
double requant(int64_t acc, float sIn, float sW, float sOut, double zp, DType t) {
  const float mult = static_cast<float>(static_cast<float>(sIn * sW) / sOut);
  const double r = std::nearbyint(static_cast<double>(acc) * static_cast<double>(mult)) + zp;
  return std::min(qmax(t), std::max(qmin(t), r));
}

/// Adds `node` (output tensor `outName` of dtype `outType`, shape from the op's shape rule), lowers it, runs the
/// calls on the tensors' data and returns the output values.
std::vector<double> runNode(Graph& g, OpKind op, std::vector<TensorId> inputs, DType outType, Attributes attrs = {},
                            Shape* outShape = nullptr) {
  Node n;
  n.name = "node";
  n.op = op;
  n.inputs = std::move(inputs);
  n.attrs = std::move(attrs);
  auto shapes = inferOutputShapes(g, n);
  EXPECT_TRUE(shapes.ok()) << (shapes.ok() ? "" : shapes.error().render());
  if (!shapes.ok()) return {};
  TensorId out = addTensor(g, "y", shapes->at(0), TensorKind::Activation, outType);
  if (outShape) *outShape = shapes->at(0);
  n.outputs = {out};
  g.addNode(n);
  auto calls = lowerNode(g, g.nodes.back());
  EXPECT_TRUE(calls.ok()) << (calls.ok() ? "" : calls.error().render());
  if (!calls.ok()) return {};
  std::vector<uint8_t> data(g.tensor(out).byteSize());
  for (const KernelCall& c : *calls) {
    std::vector<const void*> ins;
    for (TensorId id : c.inputs) ins.push_back(id == kNoTensor ? nullptr : g.tensor(id).data.data());
    executeKernelCall(c, ins, data.data());
  }
  g.tensor(out).data = data;
  return valuesOf(g.tensor(out));
}

TensorId add(Graph& g, const Tensor& t) { return g.addTensor(t); }

// ---- rounding ----

TEST(QLinearKernels, RoundHalfEvenRoundsTiesToTheEvenNeighbour) {
  EXPECT_EQ(stowage_round_half_even(0.5), 0.0);
  EXPECT_EQ(stowage_round_half_even(1.5), 2.0);
  EXPECT_EQ(stowage_round_half_even(2.5), 2.0);
  EXPECT_EQ(stowage_round_half_even(-0.5), 0.0);
  EXPECT_EQ(stowage_round_half_even(-1.5), -2.0);
  EXPECT_EQ(stowage_round_half_even(-2.5), -2.0);
  EXPECT_EQ(stowage_round_half_even(2.4999999), 2.0);
  EXPECT_EQ(stowage_round_half_even(-2.5000001), -3.0);
  EXPECT_EQ(stowage_round_half_even(1e17 + 1.0), 1e17 + 1.0);
}

// ---- QuantizeLinear / DequantizeLinear ----

TEST(QLinearKernels, QuantizeLinearMatchesOnnxExampleAndSaturates) {
  Graph g;
  TensorId x = add(g, makeTensor("x", DType::Float32, {6}, {0, 2, 3, 1000, -254, -1000}));
  TensorId s = add(g, makeTensor("s", DType::Float32, {}, {2}));
  TensorId z = add(g, makeTensor("z", DType::UInt8, {}, {128}));
  EXPECT_EQ(runNode(g, OpKind::QuantizeLinear, {x, s, z}, DType::UInt8), (std::vector<double>{128, 129, 130, 255, 1, 0}));
}

TEST(QLinearKernels, QuantizeLinearTiesGoToEvenNotAwayFromZero) {
  // x / scale = 0.5, 1.5, 2.5, -0.5, -1.5, -2.5: TFLite's rounding would give 1, 2, 3, -1, -2, -3.
  Graph g;
  TensorId x = add(g, makeTensor("x", DType::Float32, {6}, {1, 3, 5, -1, -3, -5}));
  TensorId s = add(g, makeTensor("s", DType::Float32, {}, {2}));
  TensorId z = add(g, makeTensor("z", DType::Int8, {}, {0}));
  EXPECT_EQ(runNode(g, OpKind::QuantizeLinear, {x, s, z}, DType::Int8), (std::vector<double>{0, 2, 2, 0, -2, -2}));
}

TEST(QLinearKernels, QuantizeLinearWithoutZeroPointIsUint8WithZeroAndPerAxisUsesTheAxis) {
  Graph g;
  TensorId x = add(g, makeTensor("x", DType::Float32, {2, 3}, {1, 2, 3, -4, 5.5, 600}));
  TensorId s = add(g, makeTensor("s", DType::Float32, {}, {1}));
  EXPECT_EQ(runNode(g, OpKind::QuantizeLinear, {x, s}, DType::UInt8), (std::vector<double>{1, 2, 3, 0, 6, 255}));

  Graph h;
  TensorId hx = add(h, makeTensor("x", DType::Float32, {2, 3}, {1, 2, 3, -4, 5, 6}));
  TensorId hs = add(h, makeTensor("s", DType::Float32, {3}, {1, 2, 4}));
  TensorId hz = add(h, makeTensor("z", DType::Int8, {3}, {0, 10, -10}));
  Attributes a;
  a.set("axis", int64_t{1});
  EXPECT_EQ(runNode(h, OpKind::QuantizeLinear, {hx, hs, hz}, DType::Int8, a), (std::vector<double>{1, 11, -9, -4, 12, -8}));
}

TEST(QLinearKernels, DequantizeLinearPerAxisInt8AndInt32) {
  Graph g;
  TensorId x = add(g, makeTensor("x", DType::Int8, {1, 2, 2}, {-128, 127, 3, 4}));
  TensorId s = add(g, makeTensor("s", DType::Float32, {2}, {0.5, 2}));
  TensorId z = add(g, makeTensor("z", DType::Int8, {2}, {0, 4}));
  Attributes a;
  a.set("axis", int64_t{1});
  EXPECT_EQ(runNode(g, OpKind::DequantizeLinear, {x, s, z}, DType::Float32, a), (std::vector<double>{-64, 63.5, -2, 0}));

  Graph h;
  TensorId hx = add(h, makeTensor("x", DType::Int32, {3}, {-1000000, 0, 7}));
  TensorId hs = add(h, makeTensor("s", DType::Float32, {}, {0.25}));
  EXPECT_EQ(runNode(h, OpKind::DequantizeLinear, {hx, hs}, DType::Float32), (std::vector<double>{-250000, 0, 1.75}));
}

// ---- convolution ----

struct ConvCase {
  int64_t n, c, h, w, m, kh, kw, group;
  int64_t sh, sw, dh, dw, pt, pl, pb, pr;
  DType xt, wt, yt;
  bool perChannel, bias;
};

/// Builds QLinearConv (or ConvInteger) for `cc` with random data, runs it, and compares with the reference.
void checkConv(const ConvCase& cc, bool qlinear, uint32_t seed) {
  std::mt19937 rng(seed);
  const int64_t cpg = cc.c / cc.group, mpg = cc.m / cc.group;
  const std::vector<double> xv = randomInts(static_cast<size_t>(cc.n * cc.c * cc.h * cc.w), cc.xt, rng);
  const std::vector<double> wv = randomInts(static_cast<size_t>(cc.m * cpg * cc.kh * cc.kw), cc.wt, rng);
  const double xz = randomInts(1, cc.xt, rng)[0];
  const size_t nq = cc.perChannel ? static_cast<size_t>(cc.m) : 1;
  std::vector<double> wz = randomInts(nq, cc.wt, rng), ws(nq), bias(static_cast<size_t>(cc.m));
  std::uniform_real_distribution<double> scale(0.002, 0.05);
  std::uniform_int_distribution<int> bd(-20000, 20000);
  for (auto& s : ws) s = scale(rng);
  for (auto& b : bias) b = bd(rng);
  const float xs = static_cast<float>(scale(rng));
  const float ys = static_cast<float>(xs * ws[0] * 150.0);
  const double yz = std::floor(randomInts(1, cc.yt, rng)[0] / 4);

  Graph g;
  TensorId x = add(g, makeTensor("x", cc.xt, {cc.n, cc.c, cc.h, cc.w}, xv));
  TensorId w = add(g, makeTensor("w", cc.wt, {cc.m, cpg, cc.kh, cc.kw}, wv));
  const Shape qs = cc.perChannel ? Shape{cc.m} : Shape{};
  TensorId xzT = add(g, makeTensor("xz", cc.xt, {}, {xz}));
  TensorId wzT = add(g, makeTensor("wz", cc.wt, qs, wz));
  Attributes a;
  a.set("strides", std::vector<int64_t>{cc.sh, cc.sw});
  a.set("dilations", std::vector<int64_t>{cc.dh, cc.dw});
  a.set("pads", std::vector<int64_t>{cc.pt, cc.pl, cc.pb, cc.pr});
  a.set("group", cc.group);
  Shape yShape;
  std::vector<double> got;
  if (qlinear) {
    TensorId xsT = add(g, makeTensor("xs", DType::Float32, {}, {xs}));
    TensorId wsT = add(g, makeTensor("ws", DType::Float32, qs, ws));
    TensorId ysT = add(g, makeTensor("ys", DType::Float32, {}, {ys}));
    TensorId yzT = add(g, makeTensor("yz", cc.yt, {}, {yz}));
    std::vector<TensorId> ins = {x, w, xsT, xzT, wsT, wzT, ysT, yzT};
    if (cc.bias) ins.push_back(add(g, makeTensor("b", DType::Int32, {cc.m}, bias)));
    got = runNode(g, OpKind::QLinearConv, ins, cc.yt, a, &yShape);
  } else {
    got = runNode(g, OpKind::ConvInteger, {x, w, xzT, wzT}, DType::Int32, a, &yShape);
  }
  ASSERT_EQ(yShape.size(), 4u);
  const int64_t oh = yShape[2], ow = yShape[3];
  // Reference: the padded input holds the zero point everywhere outside x.
  const int64_t ph = cc.h + cc.pt + cc.pb, pw = cc.w + cc.pl + cc.pr;
  std::vector<double> padded(static_cast<size_t>(cc.n * cc.c * ph * pw), xz);
  for (int64_t b = 0; b < cc.n; ++b)
    for (int64_t ch = 0; ch < cc.c; ++ch)
      for (int64_t iy = 0; iy < cc.h; ++iy)
        for (int64_t ix = 0; ix < cc.w; ++ix)
          padded[static_cast<size_t>(((b * cc.c + ch) * ph + iy + cc.pt) * pw + ix + cc.pl)] =
              xv[static_cast<size_t>(((b * cc.c + ch) * cc.h + iy) * cc.w + ix)];
  ASSERT_EQ(got.size(), static_cast<size_t>(cc.n * cc.m * oh * ow));
  size_t mismatches = 0;
  for (int64_t b = 0; b < cc.n; ++b)
    for (int64_t oc = 0; oc < cc.m; ++oc) {
      const size_t q = cc.perChannel ? static_cast<size_t>(oc) : 0;
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          int64_t acc = 0;
          for (int64_t ic = 0; ic < cpg; ++ic)
            for (int64_t ky = 0; ky < cc.kh; ++ky)
              for (int64_t kx = 0; kx < cc.kw; ++kx) {
                const int64_t ch = (oc / mpg) * cpg + ic;
                const double xvv = padded[static_cast<size_t>(((b * cc.c + ch) * ph + oy * cc.sh + ky * cc.dh) * pw + ox * cc.sw + kx * cc.dw)];
                const double wvv = wv[static_cast<size_t>(((oc * cpg + ic) * cc.kh + ky) * cc.kw + kx)];
                acc += static_cast<int64_t>((xvv - xz) * (wvv - wz[q]));
              }
          double want;
          if (qlinear) {
            if (cc.bias) acc += static_cast<int64_t>(bias[static_cast<size_t>(oc)]);
            want = requant(acc, xs, static_cast<float>(ws[q]), ys, yz, cc.yt);
          } else {
            want = static_cast<double>(acc);
          }
          const double have = got[static_cast<size_t>(((b * cc.m + oc) * oh + oy) * ow + ox)];
          if (have != want && ++mismatches <= 5)
            ADD_FAILURE() << "output (" << b << "," << oc << "," << oy << "," << ox << "): got " << have << ", want " << want;
        }
    }
  EXPECT_EQ(mismatches, 0u);
}

const std::vector<ConvCase>& convCases() {
  static const std::vector<ConvCase> cases = {
      // n c h w m kh kw group | sh sw dh dw pt pl pb pr | x w y | perChannel bias
      {1, 3, 7, 6, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, DType::UInt8, DType::UInt8, DType::UInt8, false, true},
      {2, 4, 9, 8, 6, 3, 2, 2, 2, 1, 1, 2, 0, 2, 1, 0, DType::Int8, DType::Int8, DType::Int8, true, true},
      {1, 6, 8, 8, 6, 3, 3, 6, 2, 2, 1, 1, 1, 1, 1, 1, DType::UInt8, DType::Int8, DType::UInt8, true, false},  // depthwise
      {1, 4, 5, 7, 8, 2, 3, 4, 1, 2, 2, 1, 2, 0, 0, 3, DType::Int8, DType::UInt8, DType::Int8, false, true},   // multiplier 2
      {1, 2, 1, 12, 3, 1, 4, 1, 1, 3, 1, 2, 0, 2, 0, 1, DType::Int8, DType::Int8, DType::UInt8, true, false},  // 1-row
  };
  return cases;
}

TEST(QLinearKernels, QLinearConvMatchesReferenceOverTypesGroupsAndWindows) {
  for (size_t i = 0; i < convCases().size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    checkConv(convCases()[i], true, 100 + static_cast<uint32_t>(i));
  }
}

TEST(QLinearKernels, ConvIntegerMatchesReferenceOverTypesGroupsAndWindows) {
  for (size_t i = 0; i < convCases().size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    checkConv(convCases()[i], false, 200 + static_cast<uint32_t>(i));
  }
}

TEST(QLinearKernels, QLinearConvRoundsTiesToEven) {
  // 1x1 conv, w = 1, multiplier 0.5: acc 1, 3, 5, -1, -3 -> 0.5, 1.5, 2.5, -0.5, -1.5 -> 0, 2, 2, 0, -2.
  Graph g;
  TensorId x = add(g, makeTensor("x", DType::Int8, {1, 1, 1, 5}, {1, 3, 5, -1, -3}));
  TensorId w = add(g, makeTensor("w", DType::Int8, {1, 1, 1, 1}, {1}));
  TensorId one = add(g, makeTensor("one", DType::Float32, {}, {1}));
  TensorId half = add(g, makeTensor("half", DType::Float32, {}, {0.5}));
  TensorId z = add(g, makeTensor("z", DType::Int8, {}, {0}));
  EXPECT_EQ(runNode(g, OpKind::QLinearConv, {x, w, one, z, half, z, one, z}, DType::Int8), (std::vector<double>{0, 2, 2, 0, -2}));
}

TEST(QLinearKernels, QLinearConvRejectsMismatchedPerChannelCounts) {
  Graph g;
  TensorId x = add(g, makeTensor("x", DType::UInt8, {1, 2, 3, 3}, std::vector<double>(18, 1)));
  TensorId w = add(g, makeTensor("w", DType::UInt8, {4, 2, 1, 1}, std::vector<double>(8, 1)));
  TensorId s = add(g, makeTensor("s", DType::Float32, {}, {1}));
  TensorId s3 = add(g, makeTensor("s3", DType::Float32, {3}, {1, 1, 1}));
  TensorId z = add(g, makeTensor("z", DType::UInt8, {}, {0}));
  TensorId y = addTensor(g, "y", {1, 4, 3, 3}, TensorKind::Activation, DType::UInt8);
  addNode(g, "qconv", OpKind::QLinearConv, {x, w, s, z, s3, z, s, z}, y);
  auto calls = lowerNode(g, g.nodes.back());
  ASSERT_FALSE(calls.ok());
  EXPECT_NE(calls.error().render().find("qconv"), std::string::npos) << calls.error().render();
  EXPECT_NE(calls.error().render().find("w_scale"), std::string::npos) << calls.error().render();
}

// ---- matrix product ----

struct MatCase {
  Shape a, b;
  DType at, bt, yt;
  bool perRowA, perColB;
};

void checkMatMul(const MatCase& mc, bool qlinear, uint32_t seed) {
  std::mt19937 rng(seed);
  const std::vector<double> av = randomInts(static_cast<size_t>(shapeElements(mc.a)), mc.at, rng);
  const std::vector<double> bv = randomInts(static_cast<size_t>(shapeElements(mc.b)), mc.bt, rng);
  const int64_t m = mc.a.size() > 1 ? mc.a[mc.a.size() - 2] : 1, k = mc.a.back(), n = mc.b.size() > 1 ? mc.b.back() : 1;
  const size_t na = mc.perRowA ? static_cast<size_t>(m) : 1, nb = mc.perColB ? static_cast<size_t>(n) : 1;
  const std::vector<double> az = randomInts(na, mc.at, rng), bz = randomInts(nb, mc.bt, rng);
  std::uniform_real_distribution<double> scale(0.002, 0.05);
  std::vector<double> as(na), bs(nb);
  for (auto& s : as) s = scale(rng);
  for (auto& s : bs) s = scale(rng);
  const float ys = static_cast<float>(as[0] * bs[0] * 40.0);
  const double yz = std::floor(randomInts(1, mc.yt, rng)[0] / 2);

  Graph g;
  TensorId a = add(g, makeTensor("a", mc.at, mc.a, av));
  TensorId b = add(g, makeTensor("b", mc.bt, mc.b, bv));
  TensorId azT = add(g, makeTensor("az", mc.at, mc.perRowA ? Shape{m} : Shape{}, az));
  TensorId bzT = add(g, makeTensor("bz", mc.bt, mc.perColB ? Shape{n} : Shape{}, bz));
  Shape yShape;
  std::vector<double> got;
  if (qlinear) {
    TensorId asT = add(g, makeTensor("as", DType::Float32, mc.perRowA ? Shape{m} : Shape{}, as));
    TensorId bsT = add(g, makeTensor("bs", DType::Float32, mc.perColB ? Shape{n} : Shape{}, bs));
    TensorId ysT = add(g, makeTensor("ys", DType::Float32, {}, {ys}));
    TensorId yzT = add(g, makeTensor("yz", mc.yt, {}, {yz}));
    got = runNode(g, OpKind::QLinearMatMul, {a, b, asT, azT, bsT, bzT, ysT, yzT}, mc.yt, {}, &yShape);
  } else {
    got = runNode(g, OpKind::MatMulInteger, {a, b, azT, bzT}, DType::Int32, {}, &yShape);
  }
  // Reference with explicit numpy broadcasting of the batch dims.
  Shape pa = mc.a.size() == 1 ? Shape{1, mc.a[0]} : mc.a, pb = mc.b.size() == 1 ? Shape{mc.b[0], 1} : mc.b;
  const size_t rank = std::max(pa.size(), pb.size()) - 2;
  Shape batch(rank);
  auto dimOf = [&](const Shape& s, size_t d) { return d + s.size() - 2 >= rank ? s[d + s.size() - 2 - rank] : int64_t{1}; };
  for (size_t d = 0; d < rank; ++d) batch[d] = std::max(dimOf(pa, d), dimOf(pb, d));
  const int64_t batches = shapeElements(batch);
  ASSERT_EQ(got.size(), static_cast<size_t>(batches * m * n));
  size_t mismatches = 0;
  for (int64_t t = 0; t < batches; ++t) {
    int64_t rem = t, offA = 0, offB = 0, strideA = m * k, strideB = k * n;
    for (size_t d = rank; d-- > 0;) {
      const int64_t i = rem % batch[d];
      rem /= batch[d];
      const int64_t da = dimOf(pa, d), db = dimOf(pb, d);
      offA += (da == 1 ? 0 : i) * strideA;
      offB += (db == 1 ? 0 : i) * strideB;
      strideA *= da;
      strideB *= db;
    }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const size_t qa = mc.perRowA ? static_cast<size_t>(i) : 0, qb = mc.perColB ? static_cast<size_t>(j) : 0;
        int64_t acc = 0;
        for (int64_t r = 0; r < k; ++r)
          acc += static_cast<int64_t>((av[static_cast<size_t>(offA + i * k + r)] - az[qa]) * (bv[static_cast<size_t>(offB + r * n + j)] - bz[qb]));
        const double want = qlinear ? requant(acc, static_cast<float>(as[qa]), static_cast<float>(bs[qb]), ys, yz, mc.yt) : static_cast<double>(acc);
        const double have = got[static_cast<size_t>((t * m + i) * n + j)];
        if (have != want && ++mismatches <= 5) ADD_FAILURE() << "batch " << t << " (" << i << "," << j << "): got " << have << ", want " << want;
      }
  }
  EXPECT_EQ(mismatches, 0u);
}

const std::vector<MatCase>& matCases() {
  static const std::vector<MatCase> cases = {
      {{5, 7}, {7, 3}, DType::UInt8, DType::UInt8, DType::UInt8, false, false},
      {{2, 4, 6}, {2, 6, 5}, DType::Int8, DType::Int8, DType::Int8, true, true},
      {{3, 1, 4, 6}, {2, 6, 5}, DType::UInt8, DType::Int8, DType::Int8, false, true},  // batch broadcast both ways
      {{6}, {2, 6, 3}, DType::Int8, DType::UInt8, DType::UInt8, false, false},         // 1-D A
      {{2, 3, 6}, {6}, DType::Int8, DType::Int8, DType::UInt8, true, false},           // 1-D B
  };
  return cases;
}

TEST(QLinearKernels, QLinearMatMulMatchesReferenceIncludingBatchBroadcast) {
  for (size_t i = 0; i < matCases().size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    checkMatMul(matCases()[i], true, 300 + static_cast<uint32_t>(i));
  }
}

TEST(QLinearKernels, MatMulIntegerMatchesReferenceIncludingBatchBroadcast) {
  for (size_t i = 0; i < matCases().size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    checkMatMul(matCases()[i], false, 400 + static_cast<uint32_t>(i));
  }
}

// ---- whole pipeline ----

TEST(QLinearKernels, QuantizeConvMatMulDequantizeCompileBuildAndRunOnTheHost) {
  // x f32 [1,2,5,5] -> QuantizeLinear (u8) -> depthwise QLinearConv (per-channel i8 weights, bias, stride 2,
  // pads) -> DequantizeLinear -> y f32. The generated C must give what the same nodes give when lowered and run
  // here (the kernels themselves are checked against the reference above): this covers the emitted structs.
  const std::vector<double> xv = {-1.0, -0.5, 0.0, 0.25, 0.5, 1.0, 1.5, -1.5, 0.75, -0.75, 0.1, -0.1, 0.2, -0.2, 0.3,
                                  -0.3, 0.4, -0.4, 0.6, -0.6, 0.7, -0.7, 0.8, -0.8, 0.9};
  std::vector<double> x2(xv);
  for (double v : xv) x2.push_back(-v * 0.5);
  const std::vector<double> wv = {1, -2, 3, -4, 5, -6, 7, -8, 9, -9, 8, -7, 6, -5, 4, -3, 2, -1};
  auto build = [&](Graph& g, TensorId x) {
    TensorId xs = add(g, makeTensor("xs", DType::Float32, {}, {0.0125}));
    TensorId xz = add(g, makeTensor("xz", DType::UInt8, {}, {120}));
    TensorId q = addTensor(g, "q", {1, 2, 5, 5}, TensorKind::Activation, DType::UInt8);
    addNode(g, "quant", OpKind::QuantizeLinear, {x, xs, xz}, q);
    TensorId w = add(g, makeTensor("w", DType::Int8, {2, 1, 3, 3}, wv));
    TensorId ws = add(g, makeTensor("ws", DType::Float32, {2}, {0.02, 0.05}));
    TensorId wz = add(g, makeTensor("wz", DType::Int8, {2}, {0, 1}));
    TensorId ys = add(g, makeTensor("ys", DType::Float32, {}, {0.01}));
    TensorId yz = add(g, makeTensor("yz", DType::Int8, {}, {-3}));
    TensorId bias = add(g, makeTensor("bias", DType::Int32, {2}, {100, -250}));
    TensorId c = addTensor(g, "c", {1, 2, 3, 3}, TensorKind::Activation, DType::Int8);
    Attributes a;
    a.set("strides", std::vector<int64_t>{2, 2});
    a.set("pads", std::vector<int64_t>{1, 1, 1, 1});
    a.set("dilations", std::vector<int64_t>{1, 1});
    a.set("group", int64_t{2});
    addNode(g, "conv", OpKind::QLinearConv, {q, w, xs, xz, ws, wz, ys, yz, bias}, c, a);
    TensorId y = addTensor(g, "y", {1, 2, 3, 3});
    addNode(g, "dequant", OpKind::DequantizeLinear, {c, ys, yz}, y);
    g.outputs = {y};
  };
  // Reference: execute node by node on the host.
  Graph ref;
  TensorId rx = add(ref, makeTensor("x", DType::Float32, {1, 2, 5, 5}, x2));
  build(ref, rx);
  for (const Node& n : ref.nodes) {
    auto calls = lowerNode(ref, n);
    ASSERT_TRUE(calls.ok()) << calls.error().render();
    std::vector<uint8_t> data(ref.tensor(n.outputs[0]).byteSize());
    for (const KernelCall& c : *calls) {
      std::vector<const void*> ins;
      for (TensorId id : c.inputs) ins.push_back(id == kNoTensor ? nullptr : ref.tensor(id).data.data());
      executeKernelCall(c, ins, data.data());
    }
    ref.tensor(n.outputs[0]).data = data;
  }
  const std::vector<double> want = valuesOf(ref.tensor(ref.outputs[0]));

  Graph g;
  g.name = "qlinear_pipeline";
  TensorId x = addInput(g, "x", {1, 2, 5, 5});
  build(g, x);
  auto compiled = compileGraph(std::move(g), CompileOptions{});
  ASSERT_TRUE(compiled.ok()) << compiled.error().render();
  const std::string& src = compiled->code.source.text;
  EXPECT_NE(src.find("stowage_qlinear_conv("), std::string::npos);
  EXPECT_NE(src.find("stowage_quantize_linear_f32("), std::string::npos);
  EXPECT_NE(src.find(".w_quant_count = 2"), std::string::npos);
  auto out = runOnHost(*compiled, {makeTensor("x", DType::Float32, {1, 2, 5, 5}, x2, TensorKind::Input)});
  ASSERT_TRUE(out.ok()) << out.error().render();
  EXPECT_EQ(valuesOf(out->at(0)), want);
  // The result is not trivially constant: several distinct values come out.
  std::vector<double> distinct = want;
  std::sort(distinct.begin(), distinct.end());
  EXPECT_GT(std::unique(distinct.begin(), distinct.end()) - distinct.begin(), 5);
}

}  // namespace
}  // namespace stowage
