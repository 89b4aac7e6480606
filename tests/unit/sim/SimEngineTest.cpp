// The matrix engine of the host simulator: compute calls are bit-exact with the portable kernels, the cycle
// formula uses the configured dim, the three queues overlap under address hazards (a ping-pong schedule hides
// the loads, a single buffer serializes), and fence waits for the last completion.
#include <cstring>
#include <random>
#include <vector>

#include "SimTestUtil.h"
#include "stowage_hal.h"

namespace stowage {
namespace {

using simtest::SimTest;
using simtest::uniqueBase;

constexpr int kDim = 4;
constexpr int kTileRows = 16, kK = 16, kN = 4;  // FC tile: 16 rows x 16 inputs -> 4 outputs

class SimEngine : public SimTest {
 protected:
  void SetUp() override {
    SimTest::SetUp();
    stowage_sim_target(0, "host", 1, 0);
    stowage_sim_target(1, "gemmini", 1, kDim);
    stowage_sim_dma(1, 1, 4.0, 0.0);
  }
};

std::vector<int8_t> randomS8(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(-128, 127);
  std::vector<int8_t> v(n);
  for (auto& x : v) x = static_cast<int8_t>(d(rng));
  return v;
}

stowage_qfc_params fcParams(int batches) {
  stowage_qfc_params p{};
  p.batches = batches;
  p.k = kK;
  p.m = kN;
  p.per_channel = 0;
  p.input_offset = 3;
  p.output_offset = -2;
  p.act_min = -128;
  p.act_max = 127;
  return p;
}

TEST_F(SimEngine, CycleFormula) {
  EXPECT_EQ(stowage_sim_engine_cycles(16, 64, 32, 100), 2u * 7u * (64u + 16u));
  EXPECT_EQ(stowage_sim_engine_cycles(4, 16, 4, 16), 1u * 4u * 20u);
  EXPECT_EQ(stowage_sim_engine_cycles(4, 0, 4, 16), 0u);
}

/// Runs an FC layer of `tiles` row tiles through the engine: x tiles are moved into the scratchpad (two halves
/// when `pingPong`), computed into an accumulator tile and moved out. Returns the cycles until the fence.
uint64_t fcLayer(int tiles, bool pingPong, std::vector<int8_t>& y, std::vector<int8_t>& want) {
  const uintptr_t spadBase = uniqueBase(), accBase = uniqueBase();
  stowage_sim_pool("spad", spadBase, 2 * kTileRows * kK, 0, 1);
  stowage_sim_pool("acc", accBase, 2 * kTileRows * kN, 0, 1);
  auto* spad = static_cast<int8_t*>(STOWAGE_FIXED_ADDRESS(spadBase, 2 * kTileRows * kK));
  auto* acc = static_cast<int8_t*>(STOWAGE_FIXED_ADDRESS(accBase, 2 * kTileRows * kN));
  const std::vector<int8_t> x = randomS8(size_t(tiles) * kTileRows * kK, 1), w = randomS8(kN * kK, 2);
  const std::vector<int32_t> bias = {100, -200, 300, -400}, mult = {1 << 30}, shift = {-3};
  y.assign(size_t(tiles) * kTileRows * kN, 0);
  want.assign(y.size(), 0);
  stowage_qfc_params all = fcParams(tiles * kTileRows);
  stowage_qfully_connected_s8(x.data(), w.data(), bias.data(), mult.data(), shift.data(), want.data(), &all);

  const stowage_qfc_params p = fcParams(kTileRows);
  auto in = [&](int i) { return spad + (pingPong ? i % 2 : 0) * kTileRows * kK; };
  auto out = [&](int i) { return acc + (pingPong ? i % 2 : 0) * kTileRows * kN; };
  const uint64_t start = stowage_sim_now();
  stowage_accel_mvin(x.data(), in(0), kTileRows, kK, kK);
  for (int i = 0; i < tiles; ++i) {
    if (pingPong && i + 1 < tiles) stowage_accel_mvin(x.data() + (i + 1) * kTileRows * kK, in(i + 1), kTileRows, kK, kK);
    stowage_accel_qfully_connected_s8(in(i), w.data(), bias.data(), mult.data(), shift.data(), out(i), &p);
    stowage_accel_mvout(y.data() + i * kTileRows * kN, out(i), kTileRows, kN, kN);
    if (!pingPong && i + 1 < tiles) stowage_accel_mvin(x.data() + (i + 1) * kTileRows * kK, in(i + 1), kTileRows, kK, kK);
  }
  EXPECT_EQ(stowage_sim_now(), start) << "issuing engine operations takes no host time";
  stowage_accel_fence();
  return stowage_sim_now() - start;
}

constexpr uint64_t kLoad = kTileRows * kK / 4;                             // 64 cycles per x tile
constexpr uint64_t kStore = kTileRows * kN / 4;                            // 16 cycles per y tile
constexpr uint64_t kExec = (kN + kDim - 1) / kDim * (kK / kDim) * (kTileRows + kDim);  // 80 cycles per tile

TEST_F(SimEngine, PingPongHidesLoadsBehindCompute) {
  std::vector<int8_t> y, want;
  EXPECT_EQ(fcLayer(8, true, y, want), kLoad + 8 * kExec + kStore);  // fill + all compute + drain
  EXPECT_EQ(y, want);
  EXPECT_EQ(stowage_sim_engine_busy_cycles(STOWAGE_SIM_LOAD), 8 * kLoad);
  EXPECT_EQ(stowage_sim_engine_busy_cycles(STOWAGE_SIM_EXECUTE), 8 * kExec);
  EXPECT_EQ(stowage_sim_engine_busy_cycles(STOWAGE_SIM_STORE), 8 * kStore);
  EXPECT_EQ(stowage_sim_engine_operations(STOWAGE_SIM_EXECUTE), 8u);
  EXPECT_EQ(stowage_sim_engine_bytes(STOWAGE_SIM_LOAD), 8u * kTileRows * kK);
  EXPECT_EQ(stowage_sim_core_stall_cycles(0, 0), kLoad + 8 * kExec + kStore);  // the host waited in the fence
}

TEST_F(SimEngine, OneBufferSerializesLoadsAndCompute) {
  std::vector<int8_t> y, want;
  EXPECT_EQ(fcLayer(8, false, y, want), 8 * (kLoad + kExec) + kStore);
  EXPECT_EQ(y, want);
}

TEST_F(SimEngine, HazardsOrderQueues) {
  const uintptr_t base = uniqueBase();
  stowage_sim_pool("spad", base, 1024, 0, 1);
  auto* spad = static_cast<int8_t*>(STOWAGE_FIXED_ADDRESS(base, 1024));
  std::vector<int8_t> dram(512, 5), dramOut(512, 0);
  const std::vector<int32_t> mult = {1 << 30}, shift = {0};
  stowage_qfc_params p = fcParams(kTileRows);
  int8_t* a = spad;        // 256 bytes: x tile
  int8_t* b = spad + 256;  // 64 bytes: y tile
  int8_t* w = spad + 512;  // 64 bytes: weights
  // Independent operations of different queues start together.
  stowage_accel_mvin(dram.data(), w, 4, 16, 16);                   // load [0, 16)
  stowage_accel_mvout(dramOut.data(), spad + 768, 4, 16, 16);     // store [0, 16): nothing to wait for
  stowage_accel_fence();
  EXPECT_EQ(stowage_sim_now(), 16u);
  // Read after write: compute on a waits for the load of a.
  stowage_accel_mvin(dram.data(), a, kTileRows, kK, kK);  // load [16, 80)
  stowage_accel_qfully_connected_s8(a, w, nullptr, mult.data(), shift.data(), b, &p);  // exec [80, 160)
  // Write after read: a new load into a waits for the compute reading a; a load elsewhere does not.
  stowage_accel_mvin(dram.data(), spad + 384, 4, 16, 16);  // load [80, 96)
  stowage_accel_mvin(dram.data(), a, 4, 16, 16);           // load [160, 176)
  // Read after write on the store side, and write after write across queues.
  stowage_accel_mvout(dramOut.data(), b, 4, 16, 16);       // store [160, 176)
  stowage_accel_mvin(dram.data(), b, 4, 16, 16);           // load: after the compute writing b and the store reading it
  stowage_accel_fence();
  EXPECT_EQ(stowage_sim_now(), 192u);
  EXPECT_EQ(stowage_sim_engine_busy_cycles(STOWAGE_SIM_LOAD), 16u + 64u + 16u + 16u + 16u);
  EXPECT_EQ(stowage_sim_engine_busy_cycles(STOWAGE_SIM_EXECUTE), 80u);
  EXPECT_EQ(stowage_sim_engine_busy_cycles(STOWAGE_SIM_STORE), 32u);
}

TEST_F(SimEngine, MainMemoryHazardOrdersAStoreBeforeALoad) {
  const uintptr_t base = uniqueBase();
  stowage_sim_pool("spad", base, 256, 0, 1);
  auto* spad = static_cast<int8_t*>(STOWAGE_FIXED_ADDRESS(base, 256));
  std::vector<int8_t> dram(64, 9);
  std::memset(spad, 4, 64);
  stowage_accel_mvout(dram.data(), spad, 4, 16, 16);      // store [0, 16)
  stowage_accel_mvin(dram.data(), spad + 128, 4, 16, 16);  // reads what the store wrote: [16, 32)
  stowage_accel_fence();
  EXPECT_EQ(stowage_sim_now(), 32u);
  EXPECT_EQ(spad[128], 4);
}

TEST_F(SimEngine, FloatGemmMatchesTheKernel) {
  std::vector<float> a(8 * 12), b(12 * 5), y(8 * 5), want(8 * 5);
  for (size_t i = 0; i < a.size(); ++i) a[i] = 0.25f * float(i % 7) - 0.5f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = 0.125f * float(i % 5) - 0.25f;
  stowage_gemm_params p{};
  p.m = 8;
  p.n = 5;
  p.k = 12;
  p.alpha = 1.0f;
  p.beta = 0.0f;
  stowage_gemm_f32(a.data(), b.data(), nullptr, want.data(), &p);
  stowage_accel_gemm_f32(a.data(), b.data(), nullptr, y.data(), &p);
  stowage_accel_fence();
  EXPECT_EQ(y, want);
  EXPECT_EQ(stowage_sim_now(), stowage_sim_engine_cycles(kDim, 8, 5, 12));  // 2 * 3 * 12
  EXPECT_EQ(stowage_sim_now(), 72u);
}

TEST(SimEngineErrors, NoEngineTargetAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  stowage_sim_reset();
  std::vector<int8_t> a(16), b(16);
  EXPECT_DEATH(stowage_accel_mvin(a.data(), b.data(), 1, 16, 16), "no target with a matrix engine was described");
}

}  // namespace
}  // namespace stowage
