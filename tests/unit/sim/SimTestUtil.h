// Shared setup for the host simulator tests: a fixture that resets the simulator before each test, and
// distinct device base addresses so that tests never map the same fixed-address range twice.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>

#include "stowage_accel.h"
#include "stowage_sim.h"

namespace stowage::simtest {

class SimTest : public ::testing::Test {
 protected:
  void SetUp() override {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    stowage_sim_reset();
  }
  void TearDown() override { stowage_sim_reset(); }
};

/// A device base address no other test uses: 256 MiB apart, above 4 GiB.
inline uintptr_t uniqueBase() {
  static uintptr_t next = uintptr_t{0x100000000};
  next += uintptr_t{0x10000000};
  return next;
}

}  // namespace stowage::simtest
