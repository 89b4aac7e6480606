// Test helpers of the tile tests: a zoo model's graph after constant and batch-norm folding (what the tiler sees
// in the compile pipeline before fusion), built with a fixed seed; float inputs and a host-run output comparison.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "stowage/driver/Compiler.h"
#include "stowage/driver/HostRunner.h"

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

/// Float inputs for every input of `g`: a fixed pattern in [-1, 1].
inline std::vector<Tensor> patternInputs(const Graph& g) {
  std::vector<Tensor> inputs;
  for (TensorId id : g.inputs) {
    Tensor t = g.tensor(id);
    t.kind = TensorKind::Activation;
    std::vector<float> v(static_cast<size_t>(t.numElements()));
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(static_cast<int>((i * 37) % 201) - 100) / 100.0f;
    t.data.resize(v.size() * sizeof(float));
    std::memcpy(t.data.data(), v.data(), t.data.size());
    inputs.push_back(std::move(t));
  }
  return inputs;
}

/// Runs both compiled programs on the host (the simulator for accelerator boards) and expects byte-equal outputs.
inline void expectSameHostOutputs(const CompileResult& a, const CompileResult& reference, const std::vector<Tensor>& inputs) {
  auto ra = runOnHost(a, inputs);
  ASSERT_TRUE(ra.ok()) << ra.error().render();
  auto rb = runOnHost(reference, inputs);
  ASSERT_TRUE(rb.ok()) << rb.error().render();
  ASSERT_EQ(ra->size(), rb->size());
  for (size_t i = 0; i < ra->size(); ++i) {
    EXPECT_FALSE((*rb)[i].data.empty());
    EXPECT_EQ((*ra)[i].data, (*rb)[i].data) << "output " << (*rb)[i].name;
  }
}

}  // namespace stowage::testing
