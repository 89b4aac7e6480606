// Throughput probes for the hot kernels (disabled by default: timing is not a unit-test pass/fail signal).
// Run: stowage_unit_runtime --gtest_also_run_disabled_tests --gtest_filter='*Throughput*' (Release build).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "KernelTestUtil.h"
#include "stowage_kernels.h"

namespace {

using stowage::kerneltest::randomVec;

TEST(KernelThroughput, DISABLED_Conv3x3_64to64_56x56) {
  stowage_conv2d_params p{};
  p.n = 1;
  p.c = 64;
  p.h = p.w = 56;
  p.m = 64;
  p.kh = p.kw = 3;
  p.oh = p.ow = 56;
  p.stride_h = p.stride_w = 1;
  p.pad_top = p.pad_left = 1;
  p.dil_h = p.dil_w = 1;
  p.group = 1;
  const auto x = randomVec(size_t(64) * 56 * 56, 1);
  const auto w = randomVec(size_t(64) * 64 * 9, 2);
  const auto b = randomVec(64, 3);
  std::vector<float> y(size_t(64) * 56 * 56);
  int reps = 0;
  const auto t0 = std::chrono::steady_clock::now();
  double secs = 0;
  do {
    stowage_conv2d_f32(x.data(), w.data(), b.data(), y.data(), &p);
    ++reps;
    secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  } while (secs < 1.0);
  const double gflops = 2.0 * 64 * 64 * 9 * 56 * 56 * reps / secs / 1e9;
  std::printf("conv2d 3x3 64->64 56x56: %.2f GFLOP/s\n", gflops);
  EXPECT_GT(gflops, 0.0);
}

}  // namespace
