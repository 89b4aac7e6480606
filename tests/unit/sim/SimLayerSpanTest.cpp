// Layer spans of the host simulator: stowage_sim_layer_begin / _end measure the host clock across a layer (a
// cores run's join included), print one line per layer in the statistics, reset with the simulator, and abort
// on an end without its begin.
#include <cstring>
#include <string>
#include <vector>

#include "SimTestUtil.h"

namespace stowage {
namespace {

using simtest::SimTest;

class SimLayerSpan : public SimTest {
 protected:
  void SetUp() override {
    SimTest::SetUp();
    stowage_sim_target(0, "host", 1, 0);
    stowage_sim_target(1, "cluster", 4, 0);
  }
};

/// Each core computes 100 * (core + 1) cycles: the join ends at 400.
void unevenWork(void*) { stowage_sim_compute("work", 100u * static_cast<uint64_t>(stowage_core_id() + 1)); }

std::string statsText() {
  char* text = nullptr;
  size_t size = 0;
  FILE* f = open_memstream(&text, &size);
  stowage_sim_print_stats(f);
  std::fclose(f);
  std::string s(text, size);
  std::free(text);
  return s;
}

TEST_F(SimLayerSpan, MeasuresEachLayerIncludingTheJoin) {
  stowage_sim_compute("cpu layer", 50);
  stowage_sim_layer_begin("conv");
  stowage_run_on_cores(1, 4, unevenWork, nullptr);
  stowage_sim_layer_end("conv");
  stowage_sim_layer_begin("fc");
  stowage_sim_compute("fc on the host", 7);
  stowage_sim_layer_end("fc");
  ASSERT_EQ(stowage_sim_layer_count(), 2u);
  EXPECT_STREQ(stowage_sim_layer_name(0), "conv");
  EXPECT_EQ(stowage_sim_layer_start(0), 50u);
  EXPECT_EQ(stowage_sim_layer_cycles(0), 400u);
  EXPECT_STREQ(stowage_sim_layer_name(1), "fc");
  EXPECT_EQ(stowage_sim_layer_start(1), 450u);
  EXPECT_EQ(stowage_sim_layer_cycles(1), 7u);
  EXPECT_EQ(stowage_sim_layer_name(2), nullptr);
  const std::string stats = statsText();
  EXPECT_NE(stats.find("  layer 'conv': 400 cycles from 50\n"), std::string::npos) << stats;
  EXPECT_NE(stats.find("  layer 'fc': 7 cycles from 450\n"), std::string::npos) << stats;
  stowage_sim_reset();
  EXPECT_EQ(stowage_sim_layer_count(), 0u);
}

TEST_F(SimLayerSpan, EndWithoutBeginAborts) {
  EXPECT_DEATH(stowage_sim_layer_end("conv"), "stowage_sim_layer_end\\('conv'\\) without a matching stowage_sim_layer_begin");
  stowage_sim_layer_begin("a");
  EXPECT_DEATH(stowage_sim_layer_end("b"), "without a matching");
}

}  // namespace
}  // namespace stowage
