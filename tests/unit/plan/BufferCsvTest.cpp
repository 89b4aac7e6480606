// The buffer CSV reader and writer (MiniMalloc format) and the validator's failure kinds.
#include <gtest/gtest.h>

#include "PlanTestUtil.h"
#include "stowage/plan/Validate.h"
#include "stowage/plan/io/BufferCsv.h"

namespace stowage {
namespace {

using testing::buf;

/// The rendered error of parsing `text` as "in.csv"; fails the test when it parses.
std::string parseError(const std::string& text) {
  auto r = parseBufferCsv(text, "in.csv");
  EXPECT_FALSE(r.ok()) << text;
  return r.ok() ? std::string() : r.error().render();
}

TEST(BufferCsv, ParsesTheMiniMallocFormat) {
  auto r = parseBufferCsv("id,lower,upper,size\nb1,0,3,4\r\nb2, 3 ,9,4\n\n", "in.csv");
  ASSERT_TRUE(r.ok()) << r.error().render();
  ASSERT_EQ(r->buffers.size(), 2u);
  EXPECT_EQ(r->ids[1], "b2");
  EXPECT_EQ(r->buffers[1].firstStep, 3);
  EXPECT_EQ(r->buffers[1].endStep, 9);
  EXPECT_EQ(r->buffers[1].sizeBytes, 4u);
  EXPECT_EQ(r->buffers[0].alignment, 1u);
  EXPECT_FALSE(r->hasOffsetColumn);
}

TEST(BufferCsv, OptionalColumnsInAnyOrder) {
  auto r = parseBufferCsv("size,id,alignment,upper,lower,offset,hint\n16,x,8,5,1,32,-1\n8,y,1,2,0,-1,-1\n", "in.csv");
  ASSERT_TRUE(r.ok()) << r.error().render();
  EXPECT_EQ(r->buffers[0].alignment, 8u);
  EXPECT_EQ(r->buffers[0].firstStep, 1);
  ASSERT_TRUE(r->hasOffsetColumn);
  EXPECT_EQ(r->givenOffsets[0], std::optional<size_t>(32));
  EXPECT_EQ(r->givenOffsets[1], std::nullopt);
}

TEST(BufferCsv, ErrorsNameFileLineAndProblem) {
  // Negative cases, one per malformed input; each names in.csv and the line.
  std::string e = parseError("id,lower,size\n1,0,4\n");
  EXPECT_NE(e.find("in.csv:1"), std::string::npos) << e;
  EXPECT_NE(e.find("missing column 'upper'"), std::string::npos) << e;
  e = parseError("id,lower,upper,size\n1,0,3,4\n2,0,x3,4\n");
  EXPECT_NE(e.find("in.csv:3"), std::string::npos) << e;
  EXPECT_NE(e.find("not an integer"), std::string::npos) << e;
  e = parseError("id,lower,upper,size\n1,0,3,-4\n");
  EXPECT_NE(e.find("in.csv:2"), std::string::npos) << e;
  EXPECT_NE(e.find("negative size"), std::string::npos) << e;
  e = parseError("id,lower,upper,size\n1,3,3,4\n");
  EXPECT_NE(e.find("upper 3 <= lower 3"), std::string::npos) << e;
  e = parseError("id,lower,upper,size\na,0,3,4\nb,0,3,4\na,1,2,4\n");
  EXPECT_NE(e.find("in.csv:4"), std::string::npos) << e;
  EXPECT_NE(e.find("duplicate id 'a' (first on line 2)"), std::string::npos) << e;
  e = parseError("id,lower,upper,size\n1,0,3\n");
  EXPECT_NE(e.find("has 3 fields"), std::string::npos) << e;
  e = parseError("id,lower,upper,size,gaps\n1,0,3,4,\n");
  EXPECT_NE(e.find("unknown column 'gaps'"), std::string::npos) << e;
  e = parseError("id,lower,upper,size,alignment\n1,0,3,4,6\n");
  EXPECT_NE(e.find("power of two"), std::string::npos) << e;
  e = parseError("id,lower,upper,size\n1,0,99999999999,4\n");
  EXPECT_NE(e.find("outside the supported range"), std::string::npos) << e;
  e = parseError("");
  EXPECT_NE(e.find("empty file"), std::string::npos) << e;
  auto missing = readBufferCsv("/nonexistent/buffers.csv");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().render().find("/nonexistent/buffers.csv"), std::string::npos);
}

TEST(BufferCsv, WritesRowsWithOffsetsAndReadsThemBack) {
  auto r = parseBufferCsv("id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\n", "in.csv");
  ASSERT_TRUE(r.ok());
  std::string text = formatBufferCsv(*r, {0, 4});
  EXPECT_EQ(text, "id,lower,upper,size,offset\nb1,0,3,4,0\nb2,3,9,4,4\n");
  auto back = parseBufferCsv(text, "out.csv");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->givenOffsets[1], std::optional<size_t>(4));
}

TEST(CheckOffsets, ReportsKindAndOffendingBuffers) {
  std::vector<Buffer> b = {buf(8, 0, 2, 4), buf(8, 1, 3, 4), buf(8, 3, 4, 4)};
  EXPECT_TRUE(checkOffsets(b, {0, 8, 0}, 16).ok());
  // Negative case: buffers 0 and 1 are live at step 1 and share bytes [4, 8).
  PlanCheck c = checkOffsets(b, {0, 4, 0}, 16);
  EXPECT_EQ(c.failure, PlanFailure::Overlap);
  EXPECT_EQ(c.first, 0u);
  EXPECT_EQ(c.second, 1u);
  EXPECT_NE(c.message.find("overlap"), std::string::npos);
  // Negative case: offset 2 breaks the 4-byte alignment of buffer 1.
  c = checkOffsets(b, {0, 2, 0}, 16);
  EXPECT_EQ(c.failure, PlanFailure::Misaligned);
  EXPECT_EQ(c.first, 1u);
  // Negative case: buffer 1 ends at 16 + 8 past the 20-byte capacity.
  c = checkOffsets(b, {0, 16, 0}, 20);
  EXPECT_EQ(c.failure, PlanFailure::OutOfCapacity);
  EXPECT_EQ(c.first, 1u);
  // Negative case: two offsets for three buffers.
  c = checkOffsets(b, {0, 8}, 16);
  EXPECT_EQ(c.failure, PlanFailure::MissingOffset);
  EXPECT_EQ(c.first, 2u);
  // Negative case: an empty lifetime.
  b[2].endStep = 3;
  EXPECT_EQ(checkOffsets(b, {0, 8, 0}, 16).failure, PlanFailure::EmptyLifetime);
  // Negative case: alignment 3.
  b[2] = buf(8, 3, 4, 3);
  EXPECT_EQ(checkOffsets(b, {0, 8, 0}, 16).failure, PlanFailure::BadAlignment);
}

TEST(CheckOffsets, HalfOpenLifetimesAndZeroSizesNeverOverlap) {
  std::vector<Buffer> b = {buf(8, 0, 2), buf(8, 2, 4), buf(0, 0, 4), buf(8, 4, 5)};
  EXPECT_TRUE(checkOffsets(b, {0, 0, 4, 0}, 8).ok());
  // Negative case: a buffer overlapping one that is not its address neighbour at insertion time.
  std::vector<Buffer> c = {buf(100, 0, 10), buf(4, 1, 10), buf(4, 2, 3)};
  PlanCheck k = checkOffsets(c, {0, 200, 50}, 300);
  EXPECT_EQ(k.failure, PlanFailure::Overlap);
  EXPECT_EQ(k.first, 0u);
  EXPECT_EQ(k.second, 2u);
}

TEST(CheckOffsets, IsFastOnManyBuffersSharingAddresses) {
  // 100,000 short-lived buffers all at offset 0 one after another: a pairwise scan by address would be
  // quadratic here.
  std::vector<Buffer> b;
  for (int i = 0; i < 100000; ++i) b.push_back(buf(64, i, i + 1, 16));
  std::vector<size_t> offsets(b.size(), 0);
  EXPECT_TRUE(checkOffsets(b, offsets, 64).ok());
  offsets[50000] = 64;  // negative case: out of the 64-byte capacity
  EXPECT_EQ(checkOffsets(b, offsets, 64).failure, PlanFailure::OutOfCapacity);
}

}  // namespace
}  // namespace stowage
