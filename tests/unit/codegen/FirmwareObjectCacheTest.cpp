// The object cache of emulated firmware builds: what its key depends on and what it does not, and a stored object
// coming back byte for byte.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <unistd.h>

#include "stowage/driver/FirmwareObjectCache.h"

namespace stowage {
namespace {

namespace fs = std::filesystem;

FirmwareProject twoFileProject() {
  FirmwareProject p;
  p.files = {{"model/net.c", "int f(void) { return 1; }\n"}, {"runtime/include/stowage_hal.h", "#define X 1\n"},
             {"model/net_weights.c", "const int w = 3;\n"}};
  return p;
}

std::vector<std::string> command(const std::string& dir) {
  return {"arm-none-eabi-gcc", "-O2", "-I", dir + "/runtime/include", "-c", dir + "/model/net.c", "-o", dir + "/obj/0.o"};
}

class FirmwareObjectCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // One folder per process and test: ctest runs these tests in parallel processes, and one's TearDown must not
    // remove the folder another is still using.
    dir_ = fs::temp_directory_path() / ("stowage_fw_cache_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    setenv("STOWAGE_FIRMWARE_CACHE", (dir_ / "cache").c_str(), 1);
  }
  void TearDown() override {
    unsetenv("STOWAGE_FIRMWARE_CACHE");
    fs::remove_all(dir_);
  }
  fs::path dir_;
};

TEST_F(FirmwareObjectCacheTest, KeyIgnoresTheProjectFolderButNotTheTextsOrTheCommand) {
  const FirmwareObjectCache cache = FirmwareObjectCache::fromEnvironment();
  ASSERT_TRUE(cache.enabled());
  const FirmwareProject p = twoFileProject();
  const std::string k = cache.key(p, "model/net.c", command("/tmp/a"), "/tmp/a");
  EXPECT_EQ(cache.key(p, "model/net.c", command("/tmp/bb"), "/tmp/bb"), k) << "the same build in another folder";
  FirmwareProject header = p;
  header.files[1].text = "#define X 2\n";
  EXPECT_NE(cache.key(header, "model/net.c", command("/tmp/a"), "/tmp/a"), k) << "a header changed";
  FirmwareProject source = p;
  source.files[0].text = "int f(void) { return 2; }\n";
  EXPECT_NE(cache.key(source, "model/net.c", command("/tmp/a"), "/tmp/a"), k) << "the source changed";
  FirmwareProject other = p;
  other.files[2].text = "const int w = 4;\n";
  EXPECT_EQ(cache.key(other, "model/net.c", command("/tmp/a"), "/tmp/a"), k) << "another source changed: not this object's";
  std::vector<std::string> flags = command("/tmp/a");
  flags[1] = "-O0";
  EXPECT_NE(cache.key(p, "model/net.c", flags, "/tmp/a"), k) << "the flags changed";
}

TEST_F(FirmwareObjectCacheTest, StoredObjectComesBackAndAMissingOneDoesNot) {
  const FirmwareObjectCache cache = FirmwareObjectCache::fromEnvironment();
  fs::create_directories(dir_);
  const fs::path obj = dir_ / "0.o", back = dir_ / "back.o";
  std::ofstream(obj, std::ios::binary) << std::string("\x7f" "ELF object bytes\0\x01", 20);
  EXPECT_FALSE(cache.restore("0123", back.string()));
  cache.store("0123", obj.string());
  ASSERT_TRUE(cache.restore("0123", back.string()));
  std::ifstream a(obj, std::ios::binary), b(back, std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(a), {}), std::string(std::istreambuf_iterator<char>(b), {}));
  unsetenv("STOWAGE_FIRMWARE_CACHE");
  EXPECT_FALSE(FirmwareObjectCache::fromEnvironment().enabled());
  EXPECT_FALSE(FirmwareObjectCache::fromEnvironment().restore("0123", back.string())) << "no cache without the variable";
}

}  // namespace
}  // namespace stowage
