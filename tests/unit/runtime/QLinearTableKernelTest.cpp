// The table-driven QLinear kernels (runtime/kernels/qlinear_table.c): the byte lookup the QDQ pass makes of Sigmoid and
// ONNX Runtime's QLinearSoftmax arithmetic, on small hand-checked cases (the e2e test QdqTables sweeps them against ONNX
// Runtime itself).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "stowage_kernels.h"

namespace stowage {
namespace {

TEST(QLinearTableKernel, LookupIndexesTheTableByTheInputsByte) {
  std::vector<uint8_t> table(256);
  for (int b = 0; b < 256; ++b) table[static_cast<size_t>(b)] = static_cast<uint8_t>(b ^ 0x5A);
  const int8_t x[5] = {-128, -1, 0, 1, 127};
  int8_t y[5];
  stowage_qlinear_lookup_params p{5};
  stowage_qlinear_lookup(x, table.data(), y, &p);
  // -128 is byte 0x80, -1 byte 0xFF.
  EXPECT_EQ(static_cast<uint8_t>(y[0]), 0x80 ^ 0x5A);
  EXPECT_EQ(static_cast<uint8_t>(y[1]), 0xFF ^ 0x5A);
  EXPECT_EQ(static_cast<uint8_t>(y[2]), 0x00 ^ 0x5A);
  EXPECT_EQ(static_cast<uint8_t>(y[3]), 0x01 ^ 0x5A);
  EXPECT_EQ(static_cast<uint8_t>(y[4]), 0x7F ^ 0x5A);
}

/// The exponential table of ONNX Runtime's form with a headroom shift of 0: table[d] = exp(-d * xs).
std::vector<float> qtableExp(double xs) {
  std::vector<float> t(256);
  for (int d = 0; d < 256; ++d) t[static_cast<size_t>(d)] = static_cast<float>(std::exp(-d * xs));
  return t;
}

TEST(QLinearTableKernel, SoftmaxAlongAMiddleAxisInFloat32Steps) {
  // x [1][3][2] (outer 1, len 3, inner 2): columns {10, 12, 11} and {200, 0, 199}.
  const uint8_t x[6] = {10, 200, 12, 0, 11, 199};
  const std::vector<float> t = qtableExp(0.5);
  stowage_qlinear_softmax_params p{1, 3, 2, STOWAGE_ELEM_U8, STOWAGE_ELEM_U8, 255.0f, 3};
  uint8_t y[6];
  stowage_qlinear_softmax(x, t.data(), y, &p);
  const int cols[2][3] = {{10, 12, 11}, {200, 0, 199}};
  for (int c = 0; c < 2; ++c) {
    const int m = std::max({cols[c][0], cols[c][1], cols[c][2]});
    float sum = 0.0f;
    for (int j = 0; j < 3; ++j) sum += t[static_cast<size_t>(m - cols[c][j])];
    for (int j = 0; j < 3; ++j) {
      const float ratio = (t[static_cast<size_t>(m - cols[c][j])] * 255.0f) / sum;
      EXPECT_EQ(y[j * 2 + c], static_cast<int>(std::nearbyint(ratio)) + 3) << "column " << c << " row " << j;
    }
  }
  // Column 1: 200 and 199 share almost everything: e^0 / (1 + e^-0.5) = 0.6225 -> 159 + 3; 0 gets nothing -> 3.
  EXPECT_EQ(y[1], 162);
  EXPECT_EQ(y[3], 3);
}

TEST(QLinearTableKernel, SoftmaxSaturatesInsteadOfWrapping) {
  // One dominant value: 256 * ~1 rounds to 256; with the int8 zero point -128 that is 128, stored as 127 (ONNX
  // Runtime 1.30 saturates), and uint8 256 as 255.
  const std::vector<float> t = qtableExp(0.5);
  const int8_t xs[3] = {100, -100, -90};
  int8_t ys[3];
  stowage_qlinear_softmax_params ps{1, 3, 1, STOWAGE_ELEM_S8, STOWAGE_ELEM_S8, 256.0f, -128};
  stowage_qlinear_softmax(xs, t.data(), ys, &ps);
  EXPECT_EQ(ys[0], 127);
  EXPECT_EQ(ys[1], -128);
  const uint8_t xu[3] = {250, 10, 20};
  uint8_t yu[3];
  stowage_qlinear_softmax_params pu{1, 3, 1, STOWAGE_ELEM_U8, STOWAGE_ELEM_U8, 256.0f, 0};
  stowage_qlinear_softmax(xu, t.data(), yu, &pu);
  EXPECT_EQ(yu[0], 255);
  EXPECT_EQ(yu[1], 0);
}

}  // namespace
}  // namespace stowage
