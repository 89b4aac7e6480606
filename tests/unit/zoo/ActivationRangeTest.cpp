// Seeded zoo weights must give a usable network: run each model on its sample input with a naive reference
// interpreter and check that no layer's activations vanish or explode and the classifier is not saturated.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "stowage/zoo/ZooReferenceEval.h"
#include "stowage/zoo/ZooModels.h"

namespace stowage::zoo {
namespace {

class ActivationRange : public ::testing::TestWithParam<const char*> {};

TEST_P(ActivationRange, EveryLayerStaysInASaneRange) {
  const ZooModelInfo* info = nullptr;
  for (const auto& m : zooModels())
    if (m.name == GetParam()) info = &m;
  ASSERT_NE(info, nullptr);
  for (uint64_t seed : {1u, 2u}) {
    auto z = buildZooModel(info->name, seed);
    ASSERT_TRUE(z.ok());
    Tensor x = sampleInput(*info, seed);
    refeval::FloatTensor in{x.shape, std::vector<float>(static_cast<size_t>(x.numElements()))};
    std::memcpy(in.v.data(), x.data.data(), x.data.size());
    auto env = refeval::evaluate(z->model, in);
    ASSERT_FALSE(env.empty()) << "reference interpreter lacks an op";
    for (const auto& node : z->model.graph().node()) {
      const auto& v = env.at(node.output(0)).v;
      double sq = 0;
      for (float f : v) {
        ASSERT_TRUE(std::isfinite(f)) << node.name();
        sq += static_cast<double>(f) * f;
      }
      const double rms = std::sqrt(sq / static_cast<double>(v.size()));
      // Unit-scale input; He scaling should keep every layer within two orders of magnitude of it.
      EXPECT_GT(rms, 0.01) << info->name << " seed " << seed << ": " << node.name() << " activations vanish";
      EXPECT_LT(rms, 100.0) << info->name << " seed " << seed << ": " << node.name() << " activations explode";
    }
    const auto& out = env.at("output").v;
    if (z->model.graph().node().rbegin()->op_type() == "Softmax") {
      const float top = *std::max_element(out.begin(), out.end());
      EXPECT_LT(top, 0.999f) << info->name << ": softmax saturated";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, ActivationRange, ::testing::Values("resnet8", "ds-cnn", "mobilenet-v1-0.25", "autoencoder"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

}  // namespace
}  // namespace stowage::zoo
