// Byte counts as written in board files and flags: accepted spellings, rejected ones, round trips.
#include <gtest/gtest.h>

#include "stowage/target/ByteSize.h"

namespace stowage {
namespace {

size_t ok(std::string_view text) {
  auto r = parseByteSize(text);
  EXPECT_TRUE(r.ok()) << text << ": " << (r.ok() ? "" : r.error().render());
  return r.ok() ? *r : 0;
}

std::string fail(std::string_view text) {
  auto r = parseByteSize(text);
  EXPECT_FALSE(r.ok()) << text << " was accepted";
  return r.ok() ? "" : r.error().render();
}

TEST(ByteSize, Accepted) {
  EXPECT_EQ(ok("4096"), 4096u);
  EXPECT_EQ(ok("0"), 0u);  // parseByteSize accepts 0; a pool size of 0 is rejected by the pool check
  EXPECT_EQ(ok("0x1000"), 4096u);
  EXPECT_EQ(ok("0X10000"), 65536u);
  EXPECT_EQ(ok("64KiB"), 65536u);
  EXPECT_EQ(ok("64 KiB"), 65536u);
  EXPECT_EQ(ok("64kib"), 65536u);
  EXPECT_EQ(ok("1MiB"), 1048576u);
  EXPECT_EQ(ok("2GiB"), size_t{2} << 30);
  EXPECT_EQ(ok("100B"), 100u);
  EXPECT_EQ(ok("  128KiB  "), 131072u);
  EXPECT_EQ(ok("1_048_576"), 1048576u);
}

TEST(ByteSize, Rejected) {
  // SI-looking units are ambiguous (1000 or 1024?): rejected with a hint naming the binary units.
  EXPECT_NE(fail("2MB").find("KiB, MiB, GiB"), std::string::npos);
  EXPECT_NE(fail("64K").find("ambiguous"), std::string::npos);
  fail("");            // empty
  fail("-1");          // negative
  fail("12XB");        // unknown unit
  fail("KiB");         // no number
  fail("0x10KiB");     // hex with a unit
  fail("1.5MiB");      // fractions are not byte counts
  fail("99999999999999999999");  // does not fit in 64 bits
  fail("17179869184GiB");        // overflows after scaling
  fail("1__0");        // doubled separator
}

TEST(ByteSize, UnsignedAndFormat) {
  EXPECT_EQ(*parseUnsigned("0xD8000000"), 0xD8000000u);
  EXPECT_EQ(*parseUnsigned("42"), 42u);
  EXPECT_FALSE(parseUnsigned("42KiB").ok());
  EXPECT_FALSE(parseUnsigned("-3").ok());
  EXPECT_EQ(formatByteSize(65536), "64KiB");
  EXPECT_EQ(formatByteSize(3 << 20), "3MiB");
  EXPECT_EQ(formatByteSize(1000), "1000");
  EXPECT_EQ(formatByteSize(0), "0");
  for (uint64_t v : {uint64_t{1}, uint64_t{1024}, uint64_t{1536}, uint64_t{1} << 30, uint64_t{123456789}})
    EXPECT_EQ(*parseByteSize(formatByteSize(v)), v);
}

}  // namespace
}  // namespace stowage
