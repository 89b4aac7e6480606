// End-to-end scenarios of placing memory on a board, through the CLI as a user would: a Cortex-M7-like board
// (board file and equivalent tvmc-style flags give the same C; outputs match the one-pool default), an
// accelerator board whose rule forces a CPU op's input into l2_mem and its output into act_mem for the
// accelerator, an infeasible board (a clear error, no output folder), and the reports (report.json fields,
// plan CSVs, report.html rendered by headless Chromium with one rectangle per buffer and no console errors).
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <regex>

#include "E2eSupport.h"

namespace stowage::e2e {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string boards() { return std::string(STOWAGE_SOURCE_DIR) + "/examples/boards/"; }

/// Writes the ResNet-8 zoo model and a sample input into `work`.
void writeResnet8(const fs::path& work) {
  auto w = runCommand(zoo() + " write resnet8 -o " + shellQuote((work / "r8.onnx").string()) + " --seed 3 --sample-input " +
                      shellQuote((work / "in.npy").string()));
  ASSERT_EQ(w.exitCode, 0) << w.err;
}

CommandResult compile(const fs::path& work, const std::string& dir, const std::string& flags) {
  return runCommand(cli() + " compile " + shellQuote((work / "r8.onnx").string()) + " -o " + shellQuote((work / dir).string()) + " " +
                    flags);
}

CommandResult run(const fs::path& work, const std::string& dir, const std::string& flags) {
  return runCommand(cli() + " run " + shellQuote((work / "r8.onnx").string()) + " --input " + shellQuote((work / "in.npy").string()) +
                    " --format bin --output-dir " + shellQuote((work / dir).string()) + " " + flags);
}

json readJson(const fs::path& p) { return json::parse(readFileBytes(p)); }

const json& bufferNamed(const json& report, const std::string& name) {
  for (const json& b : report["buffers"])
    if (b["name"] == name) return b;
  throw std::runtime_error("no buffer " + name);
}

TEST(BoardScenarios, CortexM7BoardFileAndEquivalentFlagsGiveTheSameCAndTheSameOutputs) {
  fs::path work = scratchDir("board_m7");
  writeResnet8(work);
  auto byFile = compile(work, "file", "--board " + shellQuote(boards() + "cortex-m7.toml"));
  ASSERT_EQ(byFile.exitCode, 0) << byFile.err;
  // The summary shows every pool with capacity, used, what only it may hold, utilisation and the peak layer.
  for (const char* s : {"dtcm", "sram", "itcm", "flash", "only here", "util", "peak at"})
    EXPECT_NE(byFile.out.find(s), std::string::npos) << s << "\n" << byFile.out;
  const std::string flags =
      "--pool 'name=dtcm;size=128KiB;alignment=8;placement=static;section=.dtcm;read_bytes_per_cycle=8;write_bytes_per_cycle=8;"
      "latency_cycles=1' --pool 'name=sram;size=512KiB;alignment=32;placement=user;read_bytes_per_cycle=4;write_bytes_per_cycle=4;"
      "latency_cycles=6' --pool 'name=itcm;size=64KiB;alignment=8;kind=constant;placement=static;section=.itcm;latency_cycles=1' "
      "--pool 'name=flash;size=2MiB;alignment=16;kind=constant;placement=static;section=.rodata.flash;latency_cycles=7'";
  auto byFlags = compile(work, "flags", flags);
  ASSERT_EQ(byFlags.exitCode, 0) << byFlags.err;
  for (const char* f : {"net.h", "net.c", "net_weights.c"}) {
    std::string a = readFileBytes(work / "file" / f), b = readFileBytes(work / "flags" / f);
    // Only the board's name differs (a file names it; flags make the "default" board).
    a = std::regex_replace(a, std::regex("board '[^']*'"), "board");
    b = std::regex_replace(b, std::regex("board '[^']*'"), "board");
    EXPECT_EQ(a, b) << f;
  }
  // Static pools land in their sections; the user pool is a field of net_workspaces.
  const std::string h = readFileBytes(work / "file" / "net.h");
  EXPECT_NE(h.find("section(\".dtcm\")"), std::string::npos);
  EXPECT_NE(h.find("uint8_t* sram;"), std::string::npos);
  EXPECT_NE(readFileBytes(work / "file" / "net_weights.c").find("NET_POOL_FLASH_PLACE"), std::string::npos);

  auto ref = run(work, "out_default", "");
  ASSERT_EQ(ref.exitCode, 0) << ref.err;
  auto onBoard = run(work, "out_m7", "--board " + shellQuote(boards() + "cortex-m7.toml"));
  ASSERT_EQ(onBoard.exitCode, 0) << onBoard.err;
  EXPECT_EQ(readFileBytes(work / "out_default" / "output_0.bin"), readFileBytes(work / "out_m7" / "output_0.bin"));
  fs::remove_all(work);
}

TEST(BoardScenarios, RuleHoldsForTensorsCrossingFromCpuCodeToTheAccelerator) {
  fs::path work = scratchDir("board_accel");
  writeResnet8(work);
  auto r = compile(work, "c", "--board " + shellQuote(boards() + "accel-l2-act.toml"));
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const json report = readJson(work / "c" / "report.json");
  std::map<std::string, std::string> poolOf;
  for (const json& b : report["buffers"]) poolOf[b["name"]] = b["pool"];
  int ruled = 0, npuLayers = 0;
  for (const json& layer : report["layers"]) {
    const std::string op = layer["op"];
    if (op.size() >= 11 && op.compare(op.size() - 11, 11, "AveragePool") == 0) {
      ++ruled;
      for (const json& in : layer["inputs"])
        if (poolOf.count(in)) {
          EXPECT_EQ(poolOf[in], "l2_mem") << in;
        }
      for (const json& out : layer["outputs"])
        if (poolOf.count(out)) {
          EXPECT_EQ(poolOf[out], "act_mem") << out;
        }
    }
    if (layer["target"] == "npu") {
      ++npuLayers;
      for (const char* role : {"inputs", "outputs"})
        for (const json& t : layer[role])
          if (poolOf.count(t)) {
            EXPECT_EQ(poolOf[t], "act_mem") << t << " is touched by the accelerator";
          }
      for (const json& t : layer["weights"]) EXPECT_EQ(poolOf[t], "wei_mem") << t;
    }
  }
  EXPECT_EQ(ruled, 1);
  EXPECT_EQ(npuLayers, 1);  // the classifier's Gemm
  // The generated offsets agree with the report: act_mem is the static array, l2_mem the user pointer.
  const std::string c = readFileBytes(work / "c" / "net.c");
  EXPECT_NE(c.find("p_act_mem = net_pool_act_mem"), std::string::npos);
  EXPECT_NE(c.find("p_l2_mem = ws->l2_mem"), std::string::npos);
  auto ref = run(work, "out_default", "");
  auto onBoard = run(work, "out_accel", "--board " + shellQuote(boards() + "accel-l2-act.toml"));
  ASSERT_EQ(onBoard.exitCode, 0) << onBoard.err;
  EXPECT_EQ(readFileBytes(work / "out_default" / "output_0.bin"), readFileBytes(work / "out_accel" / "output_0.bin"));
  fs::remove_all(work);
}

TEST(BoardScenarios, InfeasibleBankSaysItsSizeFitsTheBuffersAsPlaced) {
  // A banked pool too small for ResNet-8: the size the error suggests is enough, and the hint says it is enough for
  // the buffers as they were spread over the banks (smaller banks may do when they spread otherwise: a randomized
  // board sweep found 4 banks of half the suggested size that fit) and how small a bank could be at least.
  fs::path work = scratchDir("board_infeasible_banks");
  writeResnet8(work);
  {
    std::ofstream f(work / "banked.toml");
    f << "[[pools]]\nname = \"ram\"\nsize = \"16KiB\"\nbanks = 4\nkind = \"workspace\"\nplacement = \"static\"\n\n"
         "[[pools]]\nname = \"flash\"\nsize = \"1MiB\"\nkind = \"constant\"\nplacement = \"static\"\n";
  }
  auto r = compile(work, "c", "--board " + shellQuote((work / "banked.toml").string()));
  EXPECT_EQ(r.exitCode, 2);
  for (const char* s : {"pool 'ram' bank ", "hold the buffers placed in this bank", "would fit them", "to fit them as placed",
                        "the largest of them"})
    EXPECT_NE(r.err.find(s), std::string::npos) << s << "\n" << r.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.err, m, std::regex("banks of at least (\\d+) bytes \\(size (\\d+)\\)"))) << r.err;
  auto fits = compile(work, "c2", "--board " + shellQuote((work / "banked.toml").string()) + " --pool 'name=ram;size=" + m[2].str() +
                                      ";banks=4;kind=workspace;placement=static'");
  EXPECT_EQ(fits.exitCode, 0) << fits.err;
  fs::remove_all(work);
}

TEST(BoardScenarios, InfeasibleBoardNamesPoolLayerTensorsAndASizeThatFits) {
  fs::path work = scratchDir("board_infeasible");
  writeResnet8(work);
  auto r = compile(work, "c", "--board " + shellQuote(boards() + "tiny-infeasible.toml"));
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_FALSE(fs::exists(work / "c")) << "no output folder on error";
  for (const char* s : {"tiny-infeasible.toml", "pool '", "is too small", "(node '", "live at step", "bytes, live steps",
                        "would fit them", "hint: set the size of pool"})
    EXPECT_NE(r.err.find(s), std::string::npos) << s << "\n" << r.err;
  // The size the error suggests is enough.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.err, m, std::regex("set the size of pool '(\\w+)' to at least (\\d+) bytes"))) << r.err;
  auto fits = compile(work, "c2", "--board " + shellQuote(boards() + "tiny-infeasible.toml") + " --pool 'name=" + m[1].str() +
                                      ";size=" + m[2].str() + "'");
  EXPECT_EQ(fits.exitCode, 0) << fits.err;
  fs::remove_all(work);
}

TEST(BoardScenarios, ReportsDescribeEveryPoolBufferAndLayer) {
  fs::path work = scratchDir("board_reports");
  writeResnet8(work);
  auto r = compile(work, "c", "--board " + shellQuote(boards() + "cortex-m7.toml"));
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const json report = readJson(work / "c" / "report.json");
  EXPECT_EQ(report["schema"], 1);
  EXPECT_EQ(report["board"]["name"], "cortex-m7");
  ASSERT_EQ(report["pools"].size(), 4u);
  for (const json& p : report["pools"])
    for (const char* k : {"name", "kind", "placement", "capacity", "used", "lower_bound", "peak_step", "algorithm"})
      EXPECT_TRUE(p.contains(k)) << k;
  for (const json& b : report["buffers"]) {
    for (const char* k : {"name", "pool", "offset", "size", "first", "last", "reason"}) EXPECT_TRUE(b.contains(k)) << k;
    EXPECT_LE(b["first"].get<int>(), b["last"].get<int>());
  }
  EXPECT_FALSE(report["remarks"].empty()) << "the 128 KiB DTCM cannot hold everything: spills are remarks";
  for (const json& l : report["layers"])
    for (const char* k : {"name", "op", "target", "inputs", "weights", "outputs", "macs", "live_bytes"}) EXPECT_TRUE(l.contains(k)) << k;
  // One plan CSV per pool holding buffers, in the benchmark format, consistent with report.json.
  const std::string csv = readFileBytes(work / "c" / "plan_dtcm.csv");
  EXPECT_EQ(csv.rfind("id,lower,upper,size,offset\n", 0), 0u);
  int rows = 0;
  for (const json& b : report["buffers"]) {
    if (b["pool"] != "dtcm") continue;
    ++rows;
    const std::string line = b["name"].get<std::string>() + "," + std::to_string(b["first"].get<int>()) + "," +
                             std::to_string(b["last"].get<int>() + 1) + "," + std::to_string(b["size"].get<size_t>()) + "," +
                             std::to_string(b["offset"].get<size_t>()) + "\n";
    EXPECT_NE(csv.find(line), std::string::npos) << line;
  }
  EXPECT_GT(rows, 0);
  // stem.conv writes stem.relu itself: its Relu is fused (the folded batch norm's stem.bn is gone).
  EXPECT_EQ(bufferNamed(report, "stem.relu")["role"], "activation");
  fs::remove_all(work);
}

std::string chromium() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"})
    if (fs::exists(p)) return p;
  return "";
}

TEST(BoardScenarios, HtmlReportRendersInHeadlessChromium) {
  const std::string browser = chromium();
  if (browser.empty()) GTEST_SKIP() << "no Chromium found (Debian package chromium; `make deps` installs it)";
  fs::path work = scratchDir("board_html");
  writeResnet8(work);
  auto r = compile(work, "c", "--board " + shellQuote(boards() + "cortex-m7.toml"));
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const size_t buffers = readJson(work / "c" / "report.json")["buffers"].size();
  const std::string page = "file://" + fs::absolute(work / "c" / "report.html").string();
  const std::string common = shellQuote(browser) + " --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions "
                             "--user-data-dir=" + shellQuote((work / "profile").string()) + " --enable-logging=stderr --v=0 ";
  auto dom = runCommand(common + "--dump-dom " + shellQuote(page));
  ASSERT_EQ(dom.exitCode, 0) << dom.err;
  size_t rects = 0;
  for (size_t at = dom.out.find("<rect class=\"buf\""); at != std::string::npos; at = dom.out.find("<rect class=\"buf\"", at + 1)) ++rects;
  EXPECT_EQ(rects, buffers);
  // The page's script ran: it wrote the rectangle count it found into #count.
  EXPECT_NE(dom.out.find("<span id=\"count\">" + std::to_string(buffers) + "</span>"), std::string::npos);
  EXPECT_EQ(dom.err.find("Uncaught"), std::string::npos) << dom.err;
  EXPECT_EQ(dom.err.find("CONSOLE"), std::string::npos) << "console output from the page:\n" << dom.err;
  // A screenshot for people to look at, kept under the build folder.
  const fs::path shot = fs::path(STOWAGE_BINARY_DIR) / "report-screenshot.png";
  auto ss = runCommand(common + "--window-size=1280,1600 --screenshot=" + shellQuote(shot.string()) + " " + shellQuote(page));
  EXPECT_EQ(ss.exitCode, 0) << ss.err;
  EXPECT_TRUE(fs::exists(shot) && fs::file_size(shot) > 1000);
  fs::remove_all(work);
}

}  // namespace
}  // namespace stowage::e2e
