// Checks the strided gather (transpose, negative-step slice, expand, rank 0, element sizes), pad (constant,
// reflect, edge, negative pads) and reduce C kernels against naive references.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "KernelTestUtil.h"
#include "stowage_kernels.h"

namespace {

using stowage::kerneltest::allClose;
using stowage::kerneltest::randomVec;

size_t count(const std::vector<int>& s) {
  size_t n = 1;
  for (int d : s) n *= size_t(d);
  return n;
}

// ---------------------------------------------------------------- gather_strided

// Reference: decompose each output flat index and copy elem_size bytes.
std::vector<unsigned char> gatherRef(const std::vector<unsigned char>& x, size_t es, const stowage_strided_params& p) {
  size_t total = 1;
  for (int d = 0; d < p.rank; ++d) total *= size_t(p.out_shape[d]);
  std::vector<unsigned char> y(total * es);
  for (size_t i = 0; i < total; ++i) {
    size_t rem = i;
    int64_t off = p.in_offset;
    for (int d = p.rank - 1; d >= 0; --d) {
      off += int64_t(rem % size_t(p.out_shape[d])) * p.in_stride[d];
      rem /= size_t(p.out_shape[d]);
    }
    std::memcpy(&y[i * es], &x[size_t(off) * es], es);
  }
  return y;
}

void checkGather(const stowage_strided_params& p, size_t in_elems, size_t es, const char* what) {
  std::vector<unsigned char> x(in_elems * es);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<unsigned char>(i * 37 + 11);
  const auto want = gatherRef(x, es, p);
  std::vector<unsigned char> y(want.size() + 1, 0xAB);  // one guard byte
  stowage_gather_strided(x.data(), y.data(), es, &p);
  EXPECT_EQ(y.back(), 0xAB) << what << ": wrote past the output";
  y.pop_back();
  EXPECT_TRUE(y == want) << what << " elem_size " << es;
}

TEST(GatherStridedKernel, TransposeSliceExpandRank0) {
  for (size_t es : {size_t(1), size_t(2), size_t(3), size_t(4), size_t(8)}) {
    {  // Transpose [2][3][4] with perm (2, 0, 1): out [4][2][3]
      stowage_strided_params p{};
      p.rank = 3;
      p.out_shape[0] = 4; p.out_shape[1] = 2; p.out_shape[2] = 3;
      p.in_stride[0] = 1; p.in_stride[1] = 12; p.in_stride[2] = 4;
      checkGather(p, 24, es, "transpose");
    }
    {  // Slice of [5][6]: rows 4..0 step -2, cols 5..1 step -1 -> out [3][5]
      stowage_strided_params p{};
      p.rank = 2;
      p.out_shape[0] = 3; p.out_shape[1] = 5;
      p.in_stride[0] = -12; p.in_stride[1] = -1;
      p.in_offset = 4 * 6 + 5;
      checkGather(p, 30, es, "negative slice");
    }
    {  // Full reversal of [3][4] (merges into one negative run)
      stowage_strided_params p{};
      p.rank = 2;
      p.out_shape[0] = 3; p.out_shape[1] = 4;
      p.in_stride[0] = -4; p.in_stride[1] = -1;
      p.in_offset = 11;
      checkGather(p, 12, es, "reverse");
    }
    {  // Expand [3][1] -> [2][3][4] (0 strides)
      stowage_strided_params p{};
      p.rank = 3;
      p.out_shape[0] = 2; p.out_shape[1] = 3; p.out_shape[2] = 4;
      p.in_stride[0] = 0; p.in_stride[1] = 1; p.in_stride[2] = 0;
      checkGather(p, 3, es, "expand");
    }
    {  // Slice with positive step 3 and an offset, unit dim in the middle
      stowage_strided_params p{};
      p.rank = 3;
      p.out_shape[0] = 2; p.out_shape[1] = 1; p.out_shape[2] = 3;
      p.in_stride[0] = 10; p.in_stride[1] = 999; p.in_stride[2] = 3;
      p.in_offset = 1;
      checkGather(p, 20, es, "step slice");
    }
    {  // Contiguous copy (memcpy path) with offset
      stowage_strided_params p{};
      p.rank = 2;
      p.out_shape[0] = 2; p.out_shape[1] = 5;
      p.in_stride[0] = 5; p.in_stride[1] = 1;
      p.in_offset = 3;
      checkGather(p, 13, es, "contiguous");
    }
    {  // Rank 0: one element
      stowage_strided_params p{};
      p.rank = 0;
      p.in_offset = 6;
      checkGather(p, 7, es, "rank 0");
    }
  }
}

TEST(GatherStridedKernel, EmptyOutputWritesNothing) {
  stowage_strided_params p{};
  p.rank = 2;
  p.out_shape[0] = 3;
  p.out_shape[1] = 0;
  p.in_stride[0] = 1;
  p.in_stride[1] = 1;
  float x = 1.0f, y = 7.0f;
  stowage_gather_strided(&x, &y, sizeof(float), &p);
  EXPECT_EQ(y, 7.0f);
}

// ---------------------------------------------------------------- pad

// Reference: numpy pad semantics per dim (reflect bounces repeatedly; negative pads crop).
int padSource(int o, int begin, int in, stowage_pad_mode mode) {
  int i = o - begin;
  if (i >= 0 && i < in) return i;
  if (mode == STOWAGE_PAD_CONSTANT) return -1;
  if (mode == STOWAGE_PAD_EDGE) return std::clamp(i, 0, in - 1);
  if (in == 1) return 0;
  while (i < 0 || i >= in) i = i < 0 ? -i : 2 * (in - 1) - i;
  return i;
}

TEST(PadKernel, ModesAndShapes) {
  struct Case {
    std::vector<int> in, begin, end;
  };
  const Case cases[] = {
      {{2, 3, 4}, {0, 1, 2}, {1, 0, 3}},   // mixed pads
      {{3, 5}, {2, 4}, {2, 4}},            // reflect pads up to in - 1
      {{4, 3}, {1, 7}, {0, 6}},            // pads wider than the input (reflect folds again)
      {{3, 6}, {-1, 2}, {1, -3}},          // negative pads crop
      {{5}, {3}, {2}},                     // 1-D
      {{1, 1, 4}, {1, 1, 0}, {0, 2, 1}},   // unit dims
  };
  const stowage_pad_mode modes[] = {STOWAGE_PAD_CONSTANT, STOWAGE_PAD_REFLECT, STOWAGE_PAD_EDGE};
  for (const auto& c : cases)
    for (stowage_pad_mode mode : modes) {
      const int r = int(c.in.size());
      stowage_pad_params p{};
      p.rank = r;
      p.mode = mode;
      p.value = 2.5f;
      std::vector<int> out(static_cast<size_t>(r), 0);
      for (int d = 0; d < r; ++d) {
        p.in_shape[d] = c.in[size_t(d)];
        p.pad_begin[d] = c.begin[size_t(d)];
        out[size_t(d)] = p.out_shape[d] = c.in[size_t(d)] + c.begin[size_t(d)] + c.end[size_t(d)];
      }
      const auto x = randomVec(count(c.in), 131);
      std::vector<float> y(count(out), -999.0f);
      stowage_pad_f32(x.data(), y.data(), &p);
      std::vector<double> want(y.size());
      for (size_t i = 0; i < want.size(); ++i) {
        size_t rem = i, off = 0, stride = 1;
        bool constant = false;
        for (int d = r - 1; d >= 0; --d) {
          const int o = int(rem % size_t(out[size_t(d)]));
          rem /= size_t(out[size_t(d)]);
          const int s = padSource(o, c.begin[size_t(d)], c.in[size_t(d)], mode);
          if (s < 0) constant = true;
          else off += size_t(s) * stride;
          stride *= size_t(c.in[size_t(d)]);
        }
        want[i] = constant ? 2.5 : double(x[off]);
      }
      EXPECT_TRUE(allClose(y, want, 0, 0)) << "mode " << int(mode) << " rank " << r;
    }
}

TEST(PadKernel, HandComputedReflect) {
  // numpy.pad([1, 2, 3], (2, 3), 'reflect') == [3, 2, 1, 2, 3, 2, 1, 2]
  const std::vector<float> x{1, 2, 3};
  stowage_pad_params p{};
  p.rank = 1;
  p.in_shape[0] = 3;
  p.out_shape[0] = 8;
  p.pad_begin[0] = 2;
  p.mode = STOWAGE_PAD_REFLECT;
  std::vector<float> y(8);
  stowage_pad_f32(x.data(), y.data(), &p);
  EXPECT_TRUE(allClose(y, {3, 2, 1, 2, 3, 2, 1, 2}, 0, 0));
}

// ---------------------------------------------------------------- reduce

double reduceInit(stowage_reduce_op op) {
  if (op == STOWAGE_REDUCE_MAX) return -INFINITY;
  if (op == STOWAGE_REDUCE_MIN) return INFINITY;
  if (op == STOWAGE_REDUCE_PROD) return 1.0;
  return 0.0;
}

TEST(ReduceKernel, SubsetsOfAxesAllOps) {
  const stowage_reduce_op ops[] = {STOWAGE_REDUCE_MEAN, STOWAGE_REDUCE_SUM,        STOWAGE_REDUCE_MAX,
                                   STOWAGE_REDUCE_MIN,  STOWAGE_REDUCE_PROD,       STOWAGE_REDUCE_SUM_SQUARE,
                                   STOWAGE_REDUCE_L1,   STOWAGE_REDUCE_L2};
  const std::vector<std::vector<int>> shapes{{2, 3, 4, 5}, {3, 1, 4}, {7}, {}};
  for (const auto& shape : shapes) {
    const int r = int(shape.size());
    // Values near +-1 keep Prod well conditioned.
    auto x = randomVec(count(shape), 141, 0.6f, 1.4f);
    for (size_t i = 0; i < x.size(); i += 3) x[i] = -x[i];
    for (int mask = 0; mask < (1 << r) || (r == 0 && mask == 0); ++mask)
      for (stowage_reduce_op op : ops) {
        stowage_reduce_params p{};
        p.rank = r;
        std::vector<int> out_shape;
        for (int d = 0; d < r; ++d) {
          p.in_shape[d] = shape[size_t(d)];
          p.reduce[d] = (mask >> d) & 1;
          if (!p.reduce[d]) out_shape.push_back(shape[size_t(d)]);
        }
        const size_t out_n = count(out_shape);
        std::vector<double> acc(out_n, reduceInit(op));
        std::vector<size_t> n_red(out_n, 0);
        for (size_t i = 0; i < x.size(); ++i) {
          size_t rem = i, o = 0, o_stride = 1;
          for (int d = r - 1; d >= 0; --d) {
            const size_t idx = rem % size_t(shape[size_t(d)]);
            rem /= size_t(shape[size_t(d)]);
            if (!p.reduce[d]) {
              o += idx * o_stride;
              o_stride *= size_t(shape[size_t(d)]);
            }
          }
          const double v = x[i];
          ++n_red[o];
          switch (op) {
            case STOWAGE_REDUCE_MAX: acc[o] = std::max(acc[o], v); break;
            case STOWAGE_REDUCE_MIN: acc[o] = std::min(acc[o], v); break;
            case STOWAGE_REDUCE_PROD: acc[o] *= v; break;
            case STOWAGE_REDUCE_SUM_SQUARE:
            case STOWAGE_REDUCE_L2: acc[o] += v * v; break;
            case STOWAGE_REDUCE_L1: acc[o] += std::fabs(v); break;
            default: acc[o] += v; break;
          }
        }
        for (size_t o = 0; o < out_n; ++o) {
          if (op == STOWAGE_REDUCE_MEAN) acc[o] /= double(n_red[o]);
          if (op == STOWAGE_REDUCE_L2) acc[o] = std::sqrt(acc[o]);
        }
        std::vector<float> y(out_n, -999.0f);
        stowage_reduce_f32(op, x.data(), y.data(), &p);
        EXPECT_TRUE(allClose(y, acc, 1e-5, 1e-6)) << "op " << int(op) << " rank " << r << " mask " << mask;
      }
  }
}

TEST(ReduceKernel, LongSumStaysAccurate) {
  // 1e6 copies of 0.1f: a float accumulator drifts by ~1%; the kernel must stay within 1e-6.
  std::vector<float> x(1000000, 0.1f);
  stowage_reduce_params p{};
  p.rank = 1;
  p.in_shape[0] = 1000000;
  p.reduce[0] = 1;
  std::vector<float> y(1);
  stowage_reduce_f32(STOWAGE_REDUCE_SUM, x.data(), y.data(), &p);
  EXPECT_TRUE(allClose(y, {1000000.0 * double(0.1f)}, 1e-6, 0));
}

}  // namespace
