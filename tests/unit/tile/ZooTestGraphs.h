// Test helper of the tile tests: a zoo model's graph after constant and batch-norm folding (what the tiler sees
// in the compile pipeline before fusion), built with a fixed seed.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "stowage/pass/FoldBatchNorm.h"
#include "stowage/pass/FoldConstants.h"
#include "stowage/zoo/ZooGraph.h"

namespace stowage::testing {

inline Graph foldedZooGraph(const std::string& name) {
  auto g = zoo::zooGraph(name, 7);
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().render());
  if (!g.ok()) return Graph{};
  EXPECT_TRUE(foldConstants(*g).ok());
  EXPECT_TRUE(foldBatchNorm(*g).ok());
  return std::move(*g);
}

}  // namespace stowage::testing
