// Tensor files on disk: round trips of every dtype through .pb, .npy and raw, the real ONNX test data, and
// every failure (missing file, wrong size, garbage, unknown extension) reported as a diagnostic naming the file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "stowage/io/TensorFile.h"

namespace stowage {
namespace {

namespace fs = std::filesystem;

class TensorFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("stowage_unit_io_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  void writeBytes(const std::string& name, const std::string& bytes) const {
    std::ofstream(path(name), std::ios::binary) << bytes;
  }
  fs::path dir_;
};

/// A tensor of every supported dtype with distinctive element values.
std::vector<Tensor> sampleTensors() {
  std::vector<Tensor> out;
  for (DType d : {DType::Float32, DType::Int8, DType::UInt8, DType::Int32, DType::Int64, DType::Bool}) {
    Tensor t;
    t.name = std::string("t_") + std::string(dtypeName(d));
    t.dtype = d;
    t.shape = {2, 3, 1};
    t.kind = TensorKind::Input;
    t.data.resize(t.byteSize());
    for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = static_cast<uint8_t>(d == DType::Bool ? i % 2 : 37 * i + 201);
    if (d == DType::Float32) {
      const float v[6] = {1.5f, -0.0f, 3.25e-8f, -7.0f, 1e30f, 0.1f};
      std::memcpy(t.data.data(), v, sizeof v);
    }
    out.push_back(t);
  }
  return out;
}

TEST_F(TensorFileTest, NpyRoundTripEveryDtype) {
  for (const Tensor& t : sampleTensors()) {
    const std::string p = path(t.name + ".npy");
    ASSERT_TRUE(writeNpy(p, t).ok()) << t.name;
    auto back = readTensorFile(p);
    ASSERT_TRUE(back.ok()) << back.error().render();
    EXPECT_EQ(back->name, t.name);  // file stem
    EXPECT_EQ(back->dtype, t.dtype);
    EXPECT_EQ(back->shape, t.shape);
    EXPECT_EQ(back->kind, TensorKind::Input);
    EXPECT_EQ(back->data, t.data) << t.name;
  }
}

TEST_F(TensorFileTest, PbRoundTripEveryDtype) {
  for (Tensor t : sampleTensors()) {
    const std::string p = path("file_" + t.name + ".pb");
    ASSERT_TRUE(writeTensorPb(p, t).ok()) << t.name;
    auto back = readTensorFile(p);
    ASSERT_TRUE(back.ok()) << back.error().render();
    EXPECT_EQ(back->name, t.name);  // the TensorProto's name, not the file stem
    EXPECT_EQ(back->dtype, t.dtype);
    EXPECT_EQ(back->shape, t.shape);
    EXPECT_EQ(back->kind, TensorKind::Input);
    EXPECT_EQ(back->data, t.data) << t.name;
  }
}

TEST_F(TensorFileTest, RawRoundTripEveryDtype) {
  for (const Tensor& t : sampleTensors()) {
    const std::string p = path(t.name + ".bin");
    ASSERT_TRUE(writeRaw(p, t).ok());
    EXPECT_EQ(fs::file_size(p), t.byteSize());
    auto back = readRawTensor(p, t.dtype, t.shape);
    ASSERT_TRUE(back.ok()) << back.error().render();
    EXPECT_EQ(back->name, t.name);
    EXPECT_EQ(back->data, t.data);
    EXPECT_EQ(back->kind, TensorKind::Input);
  }
}

TEST_F(TensorFileTest, ScalarAndEmptyTensors) {
  for (Shape s : {Shape{}, Shape{0}, Shape{3, 0, 2}}) {
    Tensor t;
    t.name = "s";
    t.shape = s;
    t.data.resize(t.byteSize(), 0x40);
    for (const char* ext : {".npy", ".pb"}) {
      const std::string p = path(std::string("s") + ext);
      ASSERT_TRUE((std::string(ext) == ".npy" ? writeNpy(p, t) : writeTensorPb(p, t)).ok());
      auto back = readTensorFile(p);
      ASSERT_TRUE(back.ok()) << back.error().render();
      EXPECT_EQ(back->shape, s) << ext;
      EXPECT_EQ(back->data, t.data) << ext;
    }
  }
}

TEST_F(TensorFileTest, ExtensionIsCaseInsensitive) {
  Tensor t = sampleTensors()[0];
  ASSERT_TRUE(writeNpy(path("UPPER.NPY"), t).ok());
  auto back = readTensorFile(path("UPPER.NPY"));
  ASSERT_TRUE(back.ok()) << back.error().render();
  EXPECT_EQ(back->name, "UPPER");
}

TEST(TensorFileOnnxData, ReadsRealOnnxTestData) {
  const std::string p = "/usr/share/libonnx-testdata/data/node/test_relu/test_data_set_0/input_0.pb";
  if (!fs::exists(p)) GTEST_SKIP() << p << " missing (package libonnx-testdata)";
  auto t = readTensorFile(p);
  ASSERT_TRUE(t.ok()) << t.error().render();
  EXPECT_EQ(t->name, "x");
  EXPECT_EQ(t->dtype, DType::Float32);
  EXPECT_EQ(t->shape, (Shape{3, 4, 5}));
  EXPECT_EQ(t->kind, TensorKind::Input);
  ASSERT_EQ(t->data.size(), 60u * 4);
  EXPECT_NEAR(t->dataAs<float>()[0], 1.7640524f, 1e-6);  // numpy.random.seed(0); randn first value
}

// A missing file must name the file, not crash or say "parse error".
TEST_F(TensorFileTest, MissingFile) {
  for (const char* name : {"nope.npy", "nope.pb"}) {
    auto t = readTensorFile(path(name));
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.error().location, path(name));
    EXPECT_NE(t.error().message.find("not found"), std::string::npos);
  }
  auto raw = readRawTensor(path("nope.bin"), DType::Float32, {1});
  ASSERT_FALSE(raw.ok());
  EXPECT_EQ(raw.error().location, path("nope.bin"));
}

// A folder where a file is expected.
TEST_F(TensorFileTest, DirectoryIsNotAFile) {
  fs::create_directories(path("d.npy"));
  auto t = readTensorFile(path("d.npy"));
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("folder"), std::string::npos);
}

// Only .pb and .npy can be read without a dtype and shape.
TEST_F(TensorFileTest, UnknownExtension) {
  writeBytes("x.bin", "1234");
  writeBytes("noext", "1234");
  for (const char* name : {"x.bin", "noext"}) {
    auto t = readTensorFile(path(name));
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.error().location, path(name));
    EXPECT_NE(t.error().hint.find(".npy"), std::string::npos);
  }
}

// The raw size check states both sizes in bytes.
TEST_F(TensorFileTest, RawSizeMismatch) {
  writeBytes("r.bin", std::string(10, '\0'));
  auto t = readRawTensor(path("r.bin"), DType::Float32, {1, 3});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().location, path("r.bin"));
  EXPECT_NE(t.error().message.find("needs 12 bytes, the file holds 10 bytes"), std::string::npos) << t.error().message;
  // Negative dimensions are rejected before reading.
  auto neg = readRawTensor(path("r.bin"), DType::Int8, {-10});
  ASSERT_FALSE(neg.ok());
  EXPECT_NE(neg.error().message.find("negative"), std::string::npos);
}

// Garbage and truncated TensorProto files are diagnostics naming the file.
TEST_F(TensorFileTest, GarbagePb) {
  writeBytes("garbage.pb", std::string("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 11));
  auto g = readTensorFile(path("garbage.pb"));
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error().location.find(path("garbage.pb")), 0u) << g.error().render();

  Tensor t = sampleTensors()[0];
  ASSERT_TRUE(writeTensorPb(path("full.pb"), t).ok());
  std::ifstream in(path("full.pb"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  for (size_t cut : {bytes.size() - 1, bytes.size() / 2, size_t{3}}) {
    writeBytes("cut.pb", bytes.substr(0, cut));
    auto c = readTensorFile(path("cut.pb"));
    ASSERT_FALSE(c.ok()) << "cut at " << cut;
    EXPECT_EQ(c.error().location.find(path("cut.pb")), 0u) << c.error().render();
  }
}

// A truncated .npy (cut inside the data) reports both sizes.
TEST_F(TensorFileTest, TruncatedNpy) {
  Tensor t = sampleTensors()[0];
  ASSERT_TRUE(writeNpy(path("full.npy"), t).ok());
  std::ifstream in(path("full.npy"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  writeBytes("cut.npy", bytes.substr(0, bytes.size() - 5));
  auto c = readTensorFile(path("cut.npy"));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().location, path("cut.npy"));
  EXPECT_NE(c.error().message.find("needs 24 data bytes, the file holds 19"), std::string::npos) << c.error().message;
  writeBytes("empty.npy", "");
  EXPECT_FALSE(readTensorFile(path("empty.npy")).ok());
}

// Writing into a folder that does not exist, or a tensor whose bytes do not match its shape, fails cleanly.
TEST_F(TensorFileTest, WriteFailures) {
  Tensor t = sampleTensors()[0];
  const std::string bad = path("no/such/dir/t.npy");
  for (Status s : {writeNpy(bad, t), writeTensorPb(bad, t), writeRaw(bad, t)}) {
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().location, bad);
  }
  t.data.pop_back();
  for (Status s : {writeNpy(path("a.npy"), t), writeTensorPb(path("a.pb"), t), writeRaw(path("a.bin"), t)}) {
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.error().message.find("holds 23 data bytes, expected 24"), std::string::npos) << s.error().message;
  }
  EXPECT_FALSE(fs::exists(path("a.npy")));
}

}  // namespace
}  // namespace stowage
