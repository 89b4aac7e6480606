// ir/ShapeParse: the NAME=1x3x32x32 form of --shape.
#include <gtest/gtest.h>

#include "stowage/ir/ShapeParse.h"

namespace stowage {
namespace {

TEST(ShapeParse, ParsesBindings) {
  auto b = parseShapeBinding("input_1=1x3x32x32");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->first, "input_1");
  EXPECT_EQ(b->second, (Shape{1, 3, 32, 32}));
  auto s = parseShapeBinding("x=scalar");
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->second.empty());
  auto colon = parseShapeBinding("gpu_0/data:0=1X3");
  ASSERT_TRUE(colon.ok());
  EXPECT_EQ(colon->first, "gpu_0/data:0");
}

TEST(ShapeParse, RejectsMalformedText) {
  // Negative cases: no '=', empty name, empty dim, non-digit, negative, too large.
  for (const char* bad : {"1x3x32", "=1x3", "x=1xx3", "x=1x3a", "x=-1x3", "x=99999999999", "x="})
    EXPECT_FALSE(parseShapeBinding(bad).ok()) << bad;
}

}  // namespace
}  // namespace stowage
