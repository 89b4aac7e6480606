// .npy codec in memory: the exact bytes NumPy writes, header variants NumPy and older writers produce, and
// malformed or unsupported headers that must come back as diagnostics.
#include <gtest/gtest.h>

#include <cstring>

#include "stowage/io/NpyFormat.h"

namespace stowage {
namespace {

Tensor floats(Shape shape, std::vector<float> v) {
  Tensor t;
  t.shape = std::move(shape);
  t.kind = TensorKind::Input;
  t.data.resize(v.size() * 4);
  std::memcpy(t.data.data(), v.data(), t.data.size());
  return t;
}

/// An .npy v1.0 image with the given header text (padded to 64 like NumPy) and data bytes.
std::string npyV1(const std::string& dict, const std::string& data, bool pad = true) {
  std::string header = dict;
  if (pad) {
    while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  }
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\0';
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>(header.size() >> 8);
  return out + header + data;
}

TEST(NpyFormat, EncodesExactlyAsNumpySave) {
  // numpy.save("x.npy", numpy.zeros((2, 3), numpy.float32)): header length 118 ('v'), data at offset 128.
  auto bytes = encodeNpy(floats({2, 3}, {0, 0, 0, 0, 0, 0}), "x.npy");
  ASSERT_TRUE(bytes.ok());
  std::string want = "\x93NUMPY\x01";
  want += '\0';
  want += "v";
  want += '\0';
  want += "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  want += std::string(118 - 59 - 1, ' ') + "\n";
  want += std::string(24, '\0');
  EXPECT_EQ(*bytes, want);
}

TEST(NpyFormat, HeaderAlignedTo64ForEveryRankAndDtype) {
  for (Shape s : {Shape{}, Shape{7}, Shape{1, 2, 3, 4, 5, 6, 7, 8}, Shape{123456789012, 0}}) {
    for (DType d : {DType::Float32, DType::Int8, DType::UInt8, DType::Int32, DType::Int64, DType::Bool}) {
      Tensor t;
      t.dtype = d;
      t.shape = s;
      t.data.resize(t.byteSize());
      auto bytes = encodeNpy(t, "x.npy");
      ASSERT_TRUE(bytes.ok()) << shapeToString(s);
      const size_t dataOffset = bytes->size() - t.data.size();
      EXPECT_EQ(dataOffset % 64, 0u) << shapeToString(s);
      EXPECT_EQ((*bytes)[dataOffset - 1], '\n');
      auto back = decodeNpy(*bytes, "x.npy");
      ASSERT_TRUE(back.ok()) << back.error().render();
      EXPECT_EQ(back->shape, s);
      EXPECT_EQ(back->dtype, d);
    }
  }
}

TEST(NpyFormat, ScalarAndOneDimensionalShapeSyntax) {
  auto scalar = encodeNpy(floats({}, {1.5f}), "s.npy");
  ASSERT_TRUE(scalar.ok());
  EXPECT_NE(scalar->find("'shape': (), }"), std::string::npos);
  auto vec = encodeNpy(floats({2}, {1, 2}), "v.npy");
  ASSERT_TRUE(vec.ok());
  EXPECT_NE(vec->find("'shape': (2,), }"), std::string::npos);
}

TEST(NpyFormat, DescriptorsNumpyUses) {
  EXPECT_EQ(npyDescr(DType::Float32), "<f4");
  EXPECT_EQ(npyDescr(DType::Int8), "|i1");
  EXPECT_EQ(npyDescr(DType::UInt8), "|u1");
  EXPECT_EQ(npyDescr(DType::Int32), "<i4");
  EXPECT_EQ(npyDescr(DType::Int64), "<i8");
  EXPECT_EQ(npyDescr(DType::Bool), "|b1");
}

TEST(NpyFormat, AcceptsHeaderVariants) {
  const std::string four(4, '\x01');
  // Keys in another order, double quotes, no trailing comma, no padding (older writers).
  auto a = decodeNpy(npyV1("{\"shape\": (2, 2), \"fortran_order\": False, \"descr\": \"|u1\"}", four, false), "a");
  ASSERT_TRUE(a.ok()) << a.error().render();
  EXPECT_EQ(a->dtype, DType::UInt8);
  EXPECT_EQ(a->shape, (Shape{2, 2}));
  // Python 2 long suffixes, '<' on a one-byte type, '>' on a one-byte type (byte order irrelevant).
  for (const char* d : {"<i1", ">i1", "|i1"}) {
    auto b = decodeNpy(npyV1(std::string("{'descr': '") + d + "', 'fortran_order': False, 'shape': (4L,), }", four),
                       "b");
    ASSERT_TRUE(b.ok()) << d << ": " << b.error().render();
    EXPECT_EQ(b->dtype, DType::Int8);
  }
  // '|' on a multi-byte type and '=' (native, little-endian here).
  for (const char* d : {"|i4", "=i4"}) {
    auto c = decodeNpy(npyV1(std::string("{'descr': '") + d + "', 'fortran_order': False, 'shape': (1,), }", four),
                       "c");
    ASSERT_TRUE(c.ok()) << d;
    EXPECT_EQ(c->dtype, DType::Int32);
  }
}

TEST(NpyFormat, ReadsVersions2And3) {
  for (char major : {'\x02', '\x03'}) {
    std::string header = "{'descr': '<i8', 'fortran_order': False, 'shape': (1,), }";
    while ((12 + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    std::string bytes = "\x93NUMPY";
    bytes += major;
    bytes += '\0';
    for (int i = 0; i < 4; ++i) bytes += static_cast<char>((header.size() >> (8 * i)) & 0xFF);
    bytes += header;
    bytes += std::string("\x2a\0\0\0\0\0\0\0", 8);
    auto t = decodeNpy(bytes, "v.npy");
    ASSERT_TRUE(t.ok()) << t.error().render();
    EXPECT_EQ(t->dtype, DType::Int64);
    EXPECT_EQ(*t->dataAs<int64_t>(), 42);
  }
}

// Each case below is a file NumPy could not have written or Stowage cannot use; all must be diagnostics
// naming the file, never a crash.
TEST(NpyFormat, RejectsBadFilesWithDiagnostics) {
  const std::string f4 = std::string(4, '\0');
  struct Case {
    const char* why;
    std::string bytes;
    std::string expect;  // substring of the message
    bool unsupported;
  };
  const Case cases[] = {
      {"empty file", "", "magic", false},
      {"wrong magic", "PK\x03\x04 zip file", "magic", false},
      {"ends after magic", "\x93NUMPY", "magic", false},
      {"unknown version", std::string("\x93NUMPY\x04\x00\x10\x00", 10), "version 4.0", true},
      {"ends inside header length", std::string("\x93NUMPY\x02\x00\x10", 9), "header length", false},
      {"header longer than file", std::string("\x93NUMPY\x01\x00\xff\x00{'de", 14), "truncated", false},
      {"not a dict", npyV1("['descr']", ""), "does not start with '{'", false},
      {"missing shape", npyV1("{'descr': '<f4', 'fortran_order': False, }", f4), "missing key 'shape'", false},
      {"unknown key", npyV1("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': True}", f4),
       "unexpected key 'x'", false},
      {"duplicate key", npyV1("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", f4),
       "twice", false},
      {"unterminated string", npyV1("{'descr: '<f4'}", f4), "", false},
      {"shape not a tuple", npyV1("{'descr': '<f4', 'fortran_order': False, 'shape': 'x', }", f4), "tuple", false},
      {"negative dim", npyV1("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", f4), "negative", false},
      {"element count overflow",
       npyV1("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4), }", f4),
       "too many elements", false},
      {"fortran order", npyV1("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }", f4), "Fortran", true},
      {"big-endian", npyV1("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", f4), "big-endian", true},
      {"float64", npyV1("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", f4), "'<f8' is not supported",
       true},
      {"structured dtype", npyV1("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", f4),
       "structured", false},
      {"truncated data", npyV1("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", f4),
       "needs 8 data bytes, the file holds 4", false},
      {"trailing data", npyV1("{'descr': '<f4', 'fortran_order': False, 'shape': (0,), }", f4),
       "needs 0 data bytes, the file holds 4", false},
      {"bool not 0/1", npyV1("{'descr': '|b1', 'fortran_order': False, 'shape': (1,), }", "\x07"), "must be 0 or 1",
       false},
  };
  for (const Case& c : cases) {
    auto t = decodeNpy(c.bytes, "in.npy");
    ASSERT_FALSE(t.ok()) << c.why;
    EXPECT_EQ(t.error().location, "in.npy") << c.why;
    EXPECT_NE(t.error().message.find(c.expect), std::string::npos) << c.why << ": " << t.error().message;
    EXPECT_EQ(t.error().unsupported, c.unsupported) << c.why;
  }
}

// A tensor whose data does not match its shape must not be written.
TEST(NpyFormat, EncodeRejectsInconsistentTensor) {
  Tensor t = floats({2, 2}, {1, 2, 3});
  auto bytes = encodeNpy(t, "out.npy");
  ASSERT_FALSE(bytes.ok());
  EXPECT_NE(bytes.error().message.find("holds 12 data bytes, expected 16"), std::string::npos);
}

}  // namespace
}  // namespace stowage
