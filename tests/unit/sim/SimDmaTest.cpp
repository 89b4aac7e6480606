// Core-driven DMA in the host simulator: 2-D strided copies are exact, transfers are timed per channel
// (setup + bytes / bandwidth), waits stall the core, and a ping-pong schedule overlaps DMA with compute.
#include <cstring>
#include <numeric>
#include <vector>

#include "SimTestUtil.h"

namespace stowage {
namespace {

using simtest::SimTest;

class SimDma : public SimTest {};

TEST_F(SimDma, CopiesRowsWithDifferentStrides) {
  stowage_sim_target(0, "host", 1, 0);
  stowage_sim_dma(0, 1, 4.0, 10.0);
  std::vector<uint8_t> src(8 * 32), dst(8 * 20, 0xAB);
  std::iota(src.begin(), src.end(), uint8_t{0});
  stowage_dma_ticket t = stowage_dma_start(0, dst.data(), src.data(), 16, 8, 20, 32);
  for (int r = 0; r < 8; ++r) {
    for (int b = 0; b < 16; ++b) EXPECT_EQ(dst[r * 20 + b], src[r * 32 + b]) << "row " << r << " byte " << b;
    for (int b = 16; b < 20; ++b) EXPECT_EQ(dst[r * 20 + b], 0xAB) << "gap of row " << r << " was written";
  }
  EXPECT_EQ(stowage_sim_now(), 0u);  // asynchronous: the core has not waited yet
  stowage_dma_wait(t);
  EXPECT_EQ(stowage_sim_now(), 10u + 128u / 4u);  // setup + 128 bytes at 4 bytes per cycle
  EXPECT_EQ(stowage_sim_core_stall_cycles(0, 0), 42u);
  stowage_sim_totals totals;
  stowage_sim_get_totals(&totals);
  EXPECT_EQ(totals.dma_bytes, 128u);
  EXPECT_EQ(totals.dma_transfers, 1u);
  EXPECT_EQ(totals.total_cycles, 42u);
}

TEST_F(SimDma, OneChannelSerializesTwoChannelsOverlap) {
  stowage_sim_target(0, "host", 1, 0);
  stowage_sim_dma(0, 2, 1.0, 0.0);
  std::vector<uint8_t> a(100, 1), b(100, 2), c(100), d(100);
  stowage_dma_ticket t1 = stowage_dma_start(0, c.data(), a.data(), 100, 1, 100, 100);
  stowage_dma_ticket t2 = stowage_dma_start(0, d.data(), b.data(), 100, 1, 100, 100);
  stowage_dma_wait(t1);
  EXPECT_EQ(stowage_sim_now(), 100u);
  stowage_dma_wait(t2);
  EXPECT_EQ(stowage_sim_now(), 200u);  // same channel: back to back
  stowage_dma_ticket t3 = stowage_dma_start(0, c.data(), a.data(), 100, 1, 100, 100);
  stowage_dma_ticket t4 = stowage_dma_start(1, d.data(), b.data(), 100, 1, 100, 100);
  stowage_dma_wait(t4);
  stowage_dma_wait(t3);
  EXPECT_EQ(stowage_sim_now(), 300u);  // two channels: side by side
  EXPECT_EQ(c, a);
  EXPECT_EQ(d, b);
}

TEST_F(SimDma, FractionalBandwidthRoundsUp) {
  stowage_sim_target(0, "host", 1, 0);
  stowage_sim_dma(0, 1, 3.0, 1.5);
  uint8_t s[10] = {0}, t[10];
  stowage_dma_wait(stowage_dma_start(0, t, s, 10, 1, 10, 10));
  EXPECT_EQ(stowage_sim_now(), 6u);  // ceil(1.5) + ceil(10 / 3), as the compiler's cost model
  stowage_dma_wait(stowage_dma_start(0, t, s, 0, 1, 10, 10));
  EXPECT_EQ(stowage_sim_now(), 6u);  // an empty transfer takes no time
}

/// Streams `tiles` tiles of `tileBytes` through a fast buffer and computes `computeCycles` on each; with
/// `pingPong` tile i+1 is fetched into the other half while tile i computes.
uint64_t streamTiles(int tiles, size_t tileBytes, uint64_t computeCycles, bool pingPong, std::vector<uint8_t>& out) {
  std::vector<uint8_t> src(tiles * tileBytes);
  std::iota(src.begin(), src.end(), uint8_t{7});
  std::vector<uint8_t> local(2 * tileBytes);
  out.assign(src.size(), 0);
  auto half = [&](int i) { return local.data() + (pingPong ? (i % 2) * tileBytes : 0); };
  auto fetch = [&](int i) { return stowage_dma_start(0, half(i), src.data() + i * tileBytes, tileBytes, 1, 0, 0); };
  const uint64_t start = stowage_sim_now();
  stowage_dma_ticket next = fetch(0);
  for (int i = 0; i < tiles; ++i) {
    const stowage_dma_ticket current = next;
    if (pingPong && i + 1 < tiles) next = fetch(i + 1);
    stowage_dma_wait(current);
    std::memcpy(out.data() + i * tileBytes, half(i), tileBytes);  // the "kernel"
    STOWAGE_SIM_COMPUTE("tile", computeCycles);
    if (!pingPong && i + 1 < tiles) next = fetch(i + 1);
  }
  EXPECT_EQ(out, src);
  return stowage_sim_now() - start;
}

TEST_F(SimDma, PingPongOverlapsComputeBound) {
  stowage_sim_target(0, "host", 1, 0);
  stowage_sim_dma(0, 1, 4.0, 0.0);
  std::vector<uint8_t> out;
  const uint64_t dma = 256 / 4, compute = 100;  // per tile
  EXPECT_EQ(streamTiles(8, 256, compute, true, out), dma + 8 * compute);  // one fill + all compute
  stowage_sim_reset();
  stowage_sim_target(0, "host", 1, 0);
  stowage_sim_dma(0, 1, 4.0, 0.0);
  EXPECT_EQ(streamTiles(8, 256, compute, false, out), 8 * (dma + compute));  // serialized
}

TEST_F(SimDma, PingPongOverlapsDmaBound) {
  stowage_sim_target(0, "host", 1, 0);
  stowage_sim_dma(0, 1, 2.0, 8.0);
  std::vector<uint8_t> out;
  const uint64_t dma = 8 + 256 / 2, compute = 50;
  EXPECT_EQ(streamTiles(8, 256, compute, true, out), 8 * dma + compute);  // all DMA + one compute
  stowage_sim_totals t;
  stowage_sim_get_totals(&t);
  EXPECT_EQ(t.dma_busy_cycles, 8 * dma);
  EXPECT_EQ(t.compute_busy_cycles, 8 * compute);
  EXPECT_EQ(t.overlap_cycles, 7 * compute);  // every compute but the last runs under a transfer
}

TEST_F(SimDma, OverlapFractionOfAHandMadeSchedule) {
  stowage_sim_target(0, "host", 1, 0);
  stowage_sim_dma(0, 1, 1.0, 0.0);
  std::vector<uint8_t> a(100), b(100);
  stowage_dma_ticket t = stowage_dma_start(0, b.data(), a.data(), 100, 1, 0, 0);  // DMA [0, 100)
  STOWAGE_SIM_COMPUTE("k", 50);                                                    // compute [0, 50)
  stowage_dma_wait(t);                                                             // clock 100
  t = stowage_dma_start(0, b.data(), a.data(), 100, 1, 0, 0);                      // DMA [100, 200)
  stowage_dma_wait(t);
  STOWAGE_SIM_COMPUTE("k", 60);  // compute [200, 260)
  EXPECT_DOUBLE_EQ(stowage_sim_overlap_fraction(), 0.25);  // 50 of 200 DMA cycles overlap compute
  stowage_sim_totals totals;
  stowage_sim_get_totals(&totals);
  EXPECT_EQ(totals.total_cycles, 260u);
  EXPECT_EQ(totals.dma_busy_cycles, 200u);
  EXPECT_EQ(totals.compute_busy_cycles, 110u);
  EXPECT_EQ(totals.overlap_cycles, 50u);
  EXPECT_EQ(totals.stall_cycles, 150u);  // 50 waiting for the first transfer, 100 for the second
}

TEST_F(SimDma, NoDmaMeansZeroOverlap) {
  STOWAGE_SIM_COMPUTE("k", 10);
  EXPECT_EQ(stowage_sim_overlap_fraction(), 0.0);
  EXPECT_EQ(stowage_sim_total_cycles(), 10u);
}

TEST_F(SimDma, WaitOnAnUnknownTicketAborts) {
  stowage_sim_target(0, "host", 1, 0);
  stowage_sim_dma(0, 1, 1.0, 0.0);
  EXPECT_DEATH(stowage_dma_wait(5), "ticket 5 was not issued by this core");
}

TEST_F(SimDma, UndescribedDmaAborts) {
  uint8_t a[4] = {0}, b[4];
  EXPECT_DEATH(stowage_dma_start(0, b, a, 4, 1, 4, 4), "whose DMA was not described");
}

TEST_F(SimDma, MissingChannelAborts) {
  stowage_sim_target(0, "host", 1, 0);
  stowage_sim_dma(0, 2, 1.0, 0.0);
  uint8_t a[4] = {0}, b[4];
  EXPECT_DEATH(stowage_dma_start(2, b, a, 4, 1, 4, 4), "channel 2 does not exist \\('host' has 2 DMA channel");
}

}  // namespace
}  // namespace stowage
