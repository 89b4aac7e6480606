// examples/app/main.c, the example application, built and run as a user would: ResNet-8 compiled for the
// Cortex-M7 board (dtcm static in .dtcm, sram user, itcm/flash constants), the app compiled with the strict C99
// flags against the generated files and runtime/kernels/*.c, linked without a linker script. Checks: its
// error-code demonstration passes, its output on the zoo's sample input is byte-identical to `stowage run` on the
// default (one-pool) board, and the pools are in their linker sections in the objects and the linked binary.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <sstream>

#include "E2eSupport.h"

namespace stowage::e2e {
namespace {

namespace fs = std::filesystem;

std::string source(const std::string& rel) { return std::string(STOWAGE_SOURCE_DIR) + "/" + rel; }

std::string cc() { return "cc"; }  // the compiler `stowage run` uses by default

bool haveTool(const std::string& tool) { return runCommand("command -v " + tool).exitCode == 0; }

/// The float data of a little-endian float32 .npy file (versions 1 to 3), as raw bytes.
std::string npyData(const fs::path& p) {
  const std::string f = readFileBytes(p);
  if (f.size() < 10 || f.compare(0, 6, "\x93NUMPY") != 0) throw std::runtime_error("not a .npy file: " + p.string());
  const auto byte = [&](size_t i) { return static_cast<uint32_t>(static_cast<unsigned char>(f[i])); };
  const bool v1 = f[6] == 1;
  const size_t headerLen = v1 ? (byte(8) | byte(9) << 8) : (byte(8) | byte(9) << 8 | byte(10) << 16 | byte(11) << 24);
  const size_t start = (v1 ? 10 : 12) + headerLen;
  const std::string header = f.substr(v1 ? 10 : 12, headerLen);
  if (header.find("'<f4'") == std::string::npos || header.find("'fortran_order': False") == std::string::npos)
    throw std::runtime_error("expected C-order little-endian float32: " + header);
  return f.substr(start);
}

/// `#define NAME 123u` from a generated header.
size_t headerValue(const std::string& header, const std::string& name) {
  std::smatch m;
  if (!std::regex_search(header, m, std::regex("#define " + name + " (\\d+)u"))) throw std::runtime_error("no " + name);
  return std::stoull(m[1].str());
}

/// Section name -> size of an ELF file, from readelf (else objdump); empty when neither tool exists.
std::map<std::string, size_t> sectionSizes(const fs::path& elf) {
  std::map<std::string, size_t> sizes;
  std::string text;
  std::regex line;
  if (haveTool("readelf")) {
    text = runCommand("readelf -SW " + shellQuote(elf.string())).out;
    // [Nr] Name Type Address Off Size ...
    line = std::regex(R"(\]\s+(\S+)\s+\S+\s+[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+))");
  } else if (haveTool("objdump")) {
    text = runCommand("objdump -h " + shellQuote(elf.string())).out;
    // Idx Name Size VMA ...
    line = std::regex(R"(^\s*\d+\s+(\S+)\s+([0-9a-f]+)\s)");
  } else {
    return sizes;
  }
  std::istringstream lines(text);
  for (std::string l; std::getline(lines, l);) {
    std::smatch m;
    if (std::regex_search(l, m, line)) sizes[m[1].str()] = std::stoull(m[2].str(), nullptr, 16);
  }
  return sizes;
}

TEST(ExampleApp, BuildsForTheCortexM7BoardAndMatchesTheUnpartitionedRun) {
  const fs::path work = scratchDir("example_app");
  const std::string q = shellQuote(work.string());
  auto w = runCommand(zoo() + " write resnet8 -o " + q + "/r8.onnx --sample-input " + q + "/in.npy");
  ASSERT_EQ(w.exitCode, 0) << w.err;
  auto c = runCommand(cli() + " compile " + q + "/r8.onnx -o " + q + "/c --board " +
                      shellQuote(source("examples/boards/cortex-m7.toml")) + " --name net");
  ASSERT_EQ(c.exitCode, 0) << c.err;
  const std::string header = readFileBytes(work / "c" / "net.h");

  // The app, as its README says: strict C99, generated files + kernels, no linker script on the host. The weights
  // are compiled on their own so their object shows the constant pools' sections (on the host, the default
  // linker script folds .rodata.flash into .rodata).
  const std::string flags = " -std=c99 -O2 -Wall -Wextra -Werror -pedantic -I " + shellQuote(source("runtime/include")) + " -I " + q +
                            "/c ";
  auto weights = runCommand(cc() + flags + "-c " + q + "/c/net_weights.c -o " + q + "/net_weights.o");
  ASSERT_EQ(weights.exitCode, 0) << weights.err;
  auto build = runCommand(cc() + flags + shellQuote(source("examples/app/main.c")) + " " + q + "/c/net.c " + q + "/net_weights.o " +
                          shellQuote(source("runtime/kernels")) + "/*.c -lm -o " + q + "/app");
  ASSERT_EQ(build.exitCode, 0) << build.err << build.out;

  // Without arguments: the error-code demonstration (exit code 2 if any check fails), then the built-in input.
  auto builtin = runCommand(q + "/app");
  ASSERT_EQ(builtin.exitCode, 0) << builtin.out << builtin.err;
  for (const char* s : {"NET_ERR_NULL_ARGUMENT", "NET_ERR_POOL_SRAM_NULL", "NET_ERR_POOL_SRAM_MISALIGNED", "error codes: ok", "scores:",
                        "class: "})
    EXPECT_NE(builtin.out.find(s), std::string::npos) << s << "\n" << builtin.out;
  EXPECT_EQ(builtin.out.find("UNEXPECTED"), std::string::npos) << builtin.out;

  // With files: the sample input as raw bytes in, the raw output out; byte-identical to the default board.
  const std::string input = npyData(work / "in.npy");
  ASSERT_EQ(input.size(), headerValue(header, "NET_INPUT_INPUT_BYTES"));
  writeFileBytes(work / "in.bin", input);
  auto ran = runCommand(q + "/app " + q + "/in.bin " + q + "/out.bin");
  ASSERT_EQ(ran.exitCode, 0) << ran.out << ran.err;
  auto ref = runCommand(cli() + " run " + q + "/r8.onnx --input " + q + "/in.npy --format bin --output-dir " + q + "/ref");
  ASSERT_EQ(ref.exitCode, 0) << ref.err;
  const std::string out = readFileBytes(work / "out.bin");
  EXPECT_EQ(out.size(), headerValue(header, "NET_OUTPUT_OUTPUT_BYTES"));
  EXPECT_EQ(out, readFileBytes(work / "ref" / "output_0.bin")) << "the partitioned program must compute the same bytes";

  // A wrong-sized input file is refused (exit code 1) before running.
  writeFileBytes(work / "short.bin", input.substr(0, input.size() - 4));
  auto bad = runCommand(q + "/app " + q + "/short.bin " + q + "/out2.bin");
  EXPECT_EQ(bad.exitCode, 1) << bad.out << bad.err;
  EXPECT_NE(bad.err.find("exactly"), std::string::npos) << bad.err;

  // The pools are in their sections: the app's .sram_pool and net.c's .dtcm arrays in the linked binary (exactly the
  // planned sizes), the weights in .itcm and .rodata.flash.
  const auto app = sectionSizes(work / "app");
  if (app.empty()) {
    std::cout << "[ INFO ] neither readelf nor objdump found: section checks skipped\n";
  } else {
    ASSERT_TRUE(app.count(".sram_pool")) << runCommand("readelf -SW " + q + "/app").out;
    ASSERT_TRUE(app.count(".dtcm"));
    ASSERT_TRUE(app.count(".itcm"));
    EXPECT_EQ(app.at(".sram_pool"), headerValue(header, "NET_POOL_SRAM_SIZE"));
    EXPECT_EQ(app.at(".dtcm"), headerValue(header, "NET_POOL_DTCM_SIZE"));
    EXPECT_GE(app.at(".itcm"), headerValue(header, "NET_POOL_ITCM_SIZE"));
    const auto obj = sectionSizes(work / "net_weights.o");
    ASSERT_TRUE(obj.count(".rodata.flash"));
    EXPECT_GE(obj.at(".rodata.flash"), headerValue(header, "NET_POOL_FLASH_SIZE"));
    EXPECT_GE(obj.at(".itcm"), headerValue(header, "NET_POOL_ITCM_SIZE"));
  }
  fs::remove_all(work);
}

}  // namespace
}  // namespace stowage::e2e
