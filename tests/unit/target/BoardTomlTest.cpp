// Board files: every shipped example loads, defaults and derived bank sizes, and each invalid board gives a
// diagnostic naming the file, line and key.
#include <gtest/gtest.h>

#include <string>

#include "BoardTestUtil.h"
#include "stowage/target/Board.h"

namespace stowage {
namespace {

using namespace stowage::testing;

Board load(const std::string& file) {
  auto r = loadBoardFile(kBoards + file);
  EXPECT_TRUE(r.ok()) << file << ": " << (r.ok() ? "" : r.error().render());
  return r.ok() ? *r : Board{};
}

// ---- the shipped examples ----

TEST(BoardExamples, CortexM7) {
  Board b = load("cortex-m7.toml");
  EXPECT_EQ(b.name, "cortex-m7");
  ASSERT_EQ(b.pools.size(), 4u);  // has constant pools, so no default `weights`
  const MemoryPool* dtcm = b.findPool("dtcm");
  ASSERT_NE(dtcm, nullptr);
  EXPECT_EQ(dtcm->sizeBytes, size_t{128} << 10);
  EXPECT_EQ(dtcm->placement, PoolPlacement::Static);
  EXPECT_EQ(dtcm->section, ".dtcm");
  EXPECT_EQ(dtcm->access, std::vector<std::string>{"cpu"});  // default: every cpu target
  EXPECT_EQ(dtcm->latencyCycles, 1.0);
  EXPECT_EQ(b.findPool("sram")->placement, PoolPlacement::User);
  EXPECT_EQ(b.findPool("sram")->sizeBytes, size_t{512} << 10);
  EXPECT_EQ(b.findPool("itcm")->kind, PoolKind::Constant);
  EXPECT_EQ(b.findPool("flash")->sizeBytes, size_t{2} << 20);
  EXPECT_NE(dtcm->origin.find("cortex-m7.toml:"), std::string::npos);
}

TEST(BoardExamples, AccelL2Act) {
  Board b = load("accel-l2-act.toml");
  ASSERT_EQ(b.targets.size(), 2u);
  const Target* npu = b.findTarget("npu");
  ASSERT_NE(npu, nullptr);
  EXPECT_EQ(npu->kind, TargetKind::Accelerator);
  EXPECT_TRUE(npu->runs("Gemm"));
  EXPECT_FALSE(npu->runs("Conv"));
  EXPECT_FALSE(npu->runs("Softmax"));
  EXPECT_TRUE(b.findTarget("cpu")->runs("Softmax"));  // cpu default: every op
  EXPECT_TRUE(b.findPool("act_mem")->canAccess("npu"));
  EXPECT_FALSE(b.findPool("l2_mem")->canAccess("npu"));
  ASSERT_EQ(b.rules.size(), 1u);
  EXPECT_TRUE(b.rules[0].matches("GlobalAveragePool", "any"));
  EXPECT_TRUE(b.rules[0].matches("AveragePool", "any"));
  EXPECT_EQ(*b.rules[0].inputs, std::vector<std::string>{"l2_mem"});
  EXPECT_EQ(*b.rules[0].outputs, std::vector<std::string>{"act_mem"});
  EXPECT_FALSE(b.rules[0].weights.has_value());
}

TEST(BoardExamples, TinyInfeasible) {
  Board b = load("tiny-infeasible.toml");
  ASSERT_EQ(b.targets.size(), 1u);  // no [[targets]]: one cpu target
  EXPECT_EQ(b.targets[0].name, "cpu");
  EXPECT_EQ(b.findPool("ram")->sizeBytes, 4096u);
}

TEST(BoardExamples, GemminiLike) {
  Board b = load("gemmini-like.toml");
  const MemoryPool* spad = b.findPool("spad");
  ASSERT_NE(spad, nullptr);
  EXPECT_EQ(spad->banks, 4);
  EXPECT_EQ(spad->bankSizeBytes, size_t{64} << 10);  // derived from size / banks
  EXPECT_EQ(spad->base, 0u);
  const MemoryPool* acc = b.findPool("acc");
  EXPECT_EQ(acc->banks, 2);
  EXPECT_EQ(acc->bankSizeBytes, size_t{32} << 10);
  EXPECT_EQ(acc->base, 0x80000000u);
  EXPECT_EQ(acc->alignment, 64u);
  EXPECT_FALSE(b.findPool("weights")->sizeBytes.has_value());  // static, unlimited
}

TEST(BoardExamples, HexagonVtcm) {
  Board b = load("hexagon-vtcm.toml");
  const MemoryPool* vtcm = b.findPool("vtcm");
  ASSERT_NE(vtcm, nullptr);
  EXPECT_EQ(vtcm->banks, 2);  // from the number of bank_bases
  EXPECT_EQ(vtcm->bankSizeBytes, size_t{4} << 20);
  EXPECT_EQ(vtcm->bankBases, (std::vector<uint64_t>{0xD8000000, 0xD8800000}));
  EXPECT_EQ(vtcm->base, 0xD8000000u);  // defaults to the first bank
  EXPECT_EQ(vtcm->addressOf(size_t{4} << 20), 0xD8800000u);
  EXPECT_EQ(b.findTarget("hvx")->cores, 4);
}

TEST(BoardExamples, Gap8Cluster) {
  Board b = load("gap8-cluster.toml");
  const Target* cluster = b.findTarget("cluster");
  ASSERT_NE(cluster, nullptr);
  EXPECT_EQ(cluster->cores, 8);
  EXPECT_TRUE(cluster->runs("Softmax"));
  EXPECT_EQ(b.findPool("l1")->base, 0x10000000u);
  EXPECT_EQ(b.findPool("l1")->access, std::vector<std::string>{"cluster"});
  EXPECT_EQ(b.findPool("l2")->access, (std::vector<std::string>{"fc", "cluster"}));
}

// ---- valid spellings and defaults ----

TEST(BoardToml, DefaultsAndDerivedValues) {
  Board b = parse(R"(
[[pools]]
name = "ram"
size = 65536
banks = 4
)");
  ASSERT_EQ(b.targets.size(), 1u);
  EXPECT_EQ(b.targets[0].ops, std::vector<std::string>{"*"});
  EXPECT_EQ(b.name, "good");  // file stem
  ASSERT_EQ(b.pools.size(), 2u);
  EXPECT_EQ(b.pools[0].bankSizeBytes, 16384u);
  EXPECT_EQ(b.pools[0].alignment, 16u);
  EXPECT_EQ(b.pools[0].kind, PoolKind::Workspace);
  EXPECT_EQ(b.pools[0].placement, PoolPlacement::User);
  // No constant pool declared: the default static `weights` pool is added.
  EXPECT_EQ(b.pools[1].name, "weights");
  EXPECT_EQ(b.pools[1].kind, PoolKind::Constant);
  EXPECT_EQ(b.pools[1].placement, PoolPlacement::Static);
  EXPECT_FALSE(b.pools[1].sizeBytes.has_value());
  EXPECT_FALSE(b.pools[0].sizeBytes == std::nullopt);
}

TEST(BoardToml, InlineTablesHexStringsAndSizeFromBanks) {
  Board b = parse(R"(
name = "custom"
description = "inline spellings"
targets = [{ name = "cpu", cores = 2 }]
pools = [
  { name = "tcm", bank_size = "32KiB", banks = 2, placement = "fixed", base = "0x20000000", alignment = "1KiB" },
  { name = "ro", kind = "constant", placement = "static", access = "cpu" },
]
rules = [{ op = "*Pool", node = "head/*", scratch = ["tcm"], weights = ["ro"] }]
pins = [{ tensor = "conv*_out", pool = "tcm" }]
)");
  EXPECT_EQ(b.name, "custom");
  EXPECT_EQ(b.targets[0].cores, 2);
  const MemoryPool* tcm = b.findPool("tcm");
  ASSERT_NE(tcm, nullptr);
  EXPECT_EQ(tcm->sizeBytes, size_t{64} << 10);  // banks * bank_size
  EXPECT_EQ(tcm->base, 0x20000000u);
  EXPECT_EQ(tcm->alignment, 1024u);
  EXPECT_EQ(b.findPool("ro")->access, std::vector<std::string>{"cpu"});  // a single string is a list of one
  ASSERT_EQ(b.rules.size(), 1u);
  EXPECT_TRUE(b.rules[0].matches("MaxPool", "head/p1"));
  ASSERT_EQ(b.pins.size(), 1u);
  EXPECT_EQ(b.pins[0].pool, "tcm");
  EXPECT_EQ(b.pools.size(), 2u);
}

TEST(BoardToml, MissingFile) {
  auto r = loadBoardFile("/nonexistent/board.toml");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().render().find("/nonexistent/board.toml"), std::string::npos);
}

// ---- errors: each names the file, line and key ----

TEST(BoardTomlErrors, UnknownKeySuggestsClosest) {
  expectError("[[pools]]\nname = \"ram\"\nsise = \"4KiB\"\n",
              {"bad.toml:3:", "pool 'ram': unknown key 'sise'", "did you mean 'size'?"});
  // A misspelled required key is reported as such, not as a missing name.
  expectError("[[pools]]\nnmae = \"ram\"\n", {"bad.toml:2:", "unknown key 'nmae'", "did you mean 'name'?"});
  expectError("[[targets]]\nname = \"cpu\"\ncore = 2\n", {"bad.toml:3:", "'core'", "'cores'"});
  // Accelerator-specific sections are not part of the format yet.
  expectError("[accelerator.npu]\ndim = 16\n", {"bad.toml:", "unknown top-level key 'accelerator'"});
  expectError("[[pool]]\nname = \"ram\"\n", {"bad.toml:1:", "'pool'", "did you mean 'pools'?"});
}

TEST(BoardTomlErrors, SizeZero) {
  expectError("[[pools]]\nname = \"ram\"\nsize = 0\n", {"bad.toml:3:", "pool 'ram'", "'size' is 0"});
}

TEST(BoardTomlErrors, BadSizeSpelling) {
  // "2MB" is ambiguous: the error is located at the key and suggests binary units.
  expectError("[[pools]]\nname = \"ram\"\nsize = \"2MB\"\n", {"bad.toml:3:", "'size'", "ambiguous", "MiB"});
  expectError("[[pools]]\nname = \"ram\"\nsize = -4\n", {"bad.toml:3:", "'size' is negative"});
  expectError("[[pools]]\nname = \"ram\"\nsize = true\n", {"bad.toml:3:", "'size' must be a byte count", "boolean"});
}

TEST(BoardTomlErrors, BaseNotAligned) {
  expectError("[[pools]]\nname = \"tcm\"\nsize = \"4KiB\"\nplacement = \"fixed\"\nbase = 0x1004\n",
              {"bad.toml:5:", "'base' 0x1004", "'alignment' 16"});
}

TEST(BoardTomlErrors, AlignmentNotPowerOfTwo) {
  expectError("[[pools]]\nname = \"ram\"\nalignment = 24\n", {"bad.toml:3:", "'alignment' 24 is not a power of two"});
  expectError("[[pools]]\nname = \"ram\"\nalignment = 0\n", {"bad.toml:3:", "'alignment' 0"});
}

TEST(BoardTomlErrors, RuleNamesUnknownPool) {
  expectError(R"([[pools]]
name = "sram"

[[rules]]
op = "Conv"
inputs = ["sramm"]
)",
              {"bad.toml:6:", "rule for op 'Conv'", "'inputs' names pool 'sramm'", "did you mean 'sram'?"});
}

TEST(BoardTomlErrors, RuleNamesUnknownOp) {
  expectError("[[pools]]\nname = \"sram\"\n[[rules]]\nop = \"Cnv\"\ninputs = [\"sram\"]\n",
              {"bad.toml:4:", "'op' names op 'Cnv'", "did you mean 'Conv'?"});
  expectError("[[pools]]\nname = \"sram\"\n[[rules]]\nop = \"*Poool\"\ninputs = [\"sram\"]\n",
              {"bad.toml:4:", "matches no IR op"});
}

TEST(BoardTomlErrors, RuleOutputsInConstantPool) {
  // Outputs are written at run time: they cannot go to a constant pool.
  expectError("[[pools]]\nname = \"ram\"\n[[pools]]\nname = \"rom\"\nkind = \"constant\"\nplacement = \"static\"\n"
              "[[rules]]\nop = \"Conv\"\noutputs = [\"rom\"]\n",
              {"bad.toml:9:", "'outputs' names constant pool 'rom'"});
}

TEST(BoardTomlErrors, RuleRestrictsNothing) {
  expectError("[[pools]]\nname = \"ram\"\n[[rules]]\nop = \"Conv\"\n", {"bad.toml:3:", "restricts nothing"});
  expectError("[[pools]]\nname = \"ram\"\n[[rules]]\nop = \"Conv\"\nscratch = []\n", {"bad.toml:5:", "'scratch' is empty"});
}

TEST(BoardTomlErrors, AccessNamesUnknownTarget) {
  expectError("[[pools]]\nname = \"ram\"\naccess = [\"cpu\", \"npuu\"]\n[[targets]]\nname = \"cpu\"\n"
              "[[targets]]\nname = \"npu\"\nkind = \"accelerator\"\n",
              {"bad.toml:3:", "'access' names target 'npuu'", "did you mean 'npu'?"});
}

TEST(BoardTomlErrors, PoolNobodyCanAccess) {
  expectError("[[pools]]\nname = \"ram\"\naccess = []\n", {"bad.toml:3:", "'access' is empty"});
}

TEST(BoardTomlErrors, NoCpuTarget) {
  // Without a cpu target pools would have no default access and generated code nowhere to run.
  expectError("[[targets]]\nname = \"npu\"\nkind = \"accelerator\"\n[[pools]]\nname = \"ram\"\naccess = [\"npu\"]\n",
              {"bad.toml", "no cpu target"});
}

TEST(BoardTomlErrors, DuplicatePoolNames) {
  expectError("[[pools]]\nname = \"ram\"\n\n[[pools]]\nname = \"ram\"\n",
              {"bad.toml:5:", "pool 'ram' is defined twice", "first defined at bad.toml:1"});
  expectError("[[targets]]\nname = \"cpu\"\n[[targets]]\nname = \"cpu\"\n[[pools]]\nname = \"ram\"\n",
              {"bad.toml:4:", "target 'cpu' is defined twice"});
}

TEST(BoardTomlErrors, BanksTimesBankSizeNotSize) {
  expectError("[[pools]]\nname = \"ram\"\nsize = \"64KiB\"\nbanks = 2\nbank_size = \"16KiB\"\n",
              {"bad.toml:5:", "'banks' * 'bank_size' = 2 * 16KiB is not 'size' 64KiB"});
  expectError("[[pools]]\nname = \"ram\"\nsize = 1000\nbanks = 3\n", {"bad.toml:4:", "not a multiple of 3 banks"});
  expectError("[[pools]]\nname = \"ram\"\nbanks = 0\n", {"bad.toml:3:", "'banks' must be between 1"});
}

TEST(BoardTomlErrors, BankBases) {
  // Two banks of 1 MiB starting 0.5 MiB apart overlap.
  expectError("[[pools]]\nname = \"v\"\nplacement = \"fixed\"\nbank_size = \"1MiB\"\n"
              "bank_bases = [0xD8000000, 0xD8080000]\n",
              {"bad.toml:5:", "overlap"});
  expectError("[[pools]]\nname = \"v\"\nplacement = \"fixed\"\nsize = \"2MiB\"\nbanks = 3\n"
              "bank_bases = [0xD8000000, 0xD8800000]\n",
              {"bad.toml:6:", "lists 2 addresses but 'banks' is 3"});
  expectError("[[pools]]\nname = \"v\"\nsize = \"2MiB\"\nbank_bases = [0xD8000000, 0xD8800000]\n",
              {"bad.toml:4:", "'bank_bases' is only for placement = \"fixed\""});
}

TEST(BoardTomlErrors, FixedPoolsOneTargetReachesMustNotOverlap) {
  const std::string npu = "[[targets]]\nname = \"cpu\"\n[[targets]]\nname = \"npu\"\nkind = \"accelerator\"\ncores = 4\n";
  auto pool = [](const std::string& name, const std::string& where, const std::string& access) {
    return "[[pools]]\nname = \"" + name + "\"\nplacement = \"fixed\"\naccess = [" + access + "]\n" + where;
  };
  // The accumulator placed inside the scratchpad's range: both reachable by the npu.
  expectError(npu + pool("spad", "size = \"256KiB\"\nbase = 0x0\n", "\"npu\"") +
                  pool("acc", "size = \"64KiB\"\nbase = 0x100\n", "\"npu\""),
              {"bad.toml:18:", "pool 'acc'", "0x100 .. 0x100FF overlap pool 'spad' (0x0 .. 0x3FFFF)", "target 'npu' can access both",
               "at 0x40000 or above", "pool 'spad' is defined at bad.toml:7"});
  // Right after it: fine.
  EXPECT_TRUE(parseBoardToml(npu + "[[pools]]\nname = \"dram\"\n" + pool("spad", "size = \"256KiB\"\nbase = 0x0\n", "\"npu\"") +
                                 pool("acc", "size = \"64KiB\"\nbase = 0x40000\n", "\"npu\""),
                             "ok.toml")
                  .ok());
  // The same addresses in two targets' private memories (no target reaches both): fine.
  EXPECT_TRUE(parseBoardToml(npu + "[[pools]]\nname = \"dram\"\n" + pool("tcm", "size = \"64KiB\"\nbase = 0x0\n", "\"cpu\"") +
                                 pool("spad", "size = \"64KiB\"\nbase = 0x0\n", "\"npu\""),
                             "ok.toml")
                  .ok());
  // Per-core copies (4 cores, 64 KiB apart) run into a pool placed after the first copy.
  expectError(npu + pool("l1", "size = \"32KiB\"\nbase = 0x10000000\nper_core_stride = \"64KiB\"\n", "\"npu\"") +
                  pool("l1b", "size = \"32KiB\"\nbase = 0x10020000\n", "\"npu\""),
              {"pool 'l1b'", "overlap pool 'l1' (0x10020000 .. 0x10027FFF)"});
  // A bank of a split pool inside another pool.
  expectError(npu + pool("vtcm", "bank_size = \"1MiB\"\nbank_bases = [0xD8000000, 0xD8800000]\n", "\"npu\"") +
                  pool("other", "size = \"1MiB\"\nbase = 0xD8080000\n", "\"npu\""),
              {"pool 'other'", "overlap pool 'vtcm' (0xD8000000 .. 0xD80FFFFF)"});
}

TEST(BoardTomlErrors, SectionOnNonStaticPool) {
  expectError("[[pools]]\nname = \"ram\"\nplacement = \"user\"\nsection = \".dtcm\"\n",
              {"bad.toml:4:", "'section' is only for placement = \"static\""});
}

TEST(BoardTomlErrors, BaseOnUserPoolOrStaticPoolWithoutSize) {
  // A user pool's memory is the application's: a base address means nothing there.
  expectError("[[pools]]\nname = \"ram\"\nbase = 0x20000000\n", {"bad.toml:3:", "'base' is for placement = \"fixed\" or \"static\""});
  // A static pool at a base needs its extent, to be checked against the others and its memory.
  expectError("[[pools]]\nname = \"ram\"\nplacement = \"static\"\nbase = 0x20000000\n", {"bad.toml:4:", "needs a 'size'"});
}

TEST(BoardTomlErrors, FixedPoolWithoutBaseOrSize) {
  expectError("\n[[pools]]\nname = \"tcm\"\nsize = \"4KiB\"\nplacement = \"fixed\"\n",
              {"bad.toml:2:", "pool 'tcm'", "needs a 'base'"});
  expectError("[[pools]]\nname = \"tcm\"\nplacement = \"fixed\"\nbase = 0x1000\n", {"bad.toml:1:", "needs a 'size'"});
}

TEST(BoardTomlErrors, NoWorkspacePool) {
  expectError("[[pools]]\nname = \"rom\"\nkind = \"constant\"\nplacement = \"static\"\n",
              {"bad.toml", "no workspace pool"});
  expectError("name = \"empty\"\n", {"bad.toml", "no workspace pool"});
}

TEST(BoardTomlErrors, EnumsTypesAndNames) {
  expectError("[[pools]]\nname = \"ram\"\nplacement = \"heap\"\n", {"bad.toml:3:", "'placement' must be"});
  expectError("[[pools]]\nname = \"ram\"\nkind = \"weights\"\n", {"bad.toml:3:", "'kind' must be"});
  expectError("[[pools]]\nsize = 16\n", {"bad.toml:1:", "has no 'name'"});
  expectError("[[pools]]\nname = \"my-ram\"\n", {"bad.toml:2:", "identifier"});
  expectError("[[pools]]\nname = \"ram\"\naccess = [\"cpu\", 3]\n", {"bad.toml:3:", "'access' must be an array of strings"});
  expectError("[[pools]]\nname = \"ram\"\nlatency_cycles = -1\n", {"bad.toml:3:", "'latency_cycles' must be a number >= 0"});
  expectError("[[targets]]\nname = \"cpu\"\ncores = 0\n", {"bad.toml:3:", "'cores' must be between 1 and 4096"});
  expectError("[[targets]]\nname = \"cpu\"\nkind = \"gpu\"\n", {"bad.toml:3:", "'kind' must be \"cpu\" or \"accelerator\""});
  expectError("[[targets]]\nname = \"cpu\"\nops = [\"Convolution\"]\n[[pools]]\nname = \"r\"\n", {"bad.toml:3:", "not an IR op"});
  expectError("pools = 3\n", {"bad.toml:1:", "'pools' must be an array of tables"});
  expectError("name = 3\n", {"bad.toml:1:", "'name' must be a string"});
}

TEST(BoardTomlErrors, PinToUnknownPool) {
  expectError("[[pools]]\nname = \"ram\"\n[[pins]]\ntensor = \"x\"\npool = \"rom\"\n",
              {"bad.toml:5:", "pin 'x'", "'pool' names pool 'rom'"});
  expectError("[[pools]]\nname = \"ram\"\n[[pins]]\ntensor = \"x\"\n", {"bad.toml:3:", "has no 'pool'"});
}

TEST(BoardTomlErrors, InvalidToml) {
  expectError("[[pools]]\nname = \"ram\nsize = 3\n", {"bad.toml:2:", "invalid TOML"});
}

}  // namespace
}  // namespace stowage
