// --pool/--rule/--pin flag parsing and resolveBoard: defaults, merging flags into a board file, and errors
// that name the flag and the bad item.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "BoardTestUtil.h"
#include "stowage/target/Board.h"

namespace stowage {
namespace {

using namespace stowage::testing;

std::string render(const Diagnostic& d) { return d.render(); }

void expectContains(const std::string& text, std::initializer_list<std::string> parts) {
  for (const auto& p : parts) EXPECT_NE(text.find(p), std::string::npos) << "missing '" << p << "' in:\n" << text;
}

TEST(PoolFlag, IssueExample) {
  auto r = parsePoolFlag("name=dtcm;size=64KiB;access=cpu;placement=static;section=.dtcm", 1);
  ASSERT_TRUE(r.ok()) << render(r.error());
  EXPECT_EQ(r->name, "dtcm");
  EXPECT_EQ(r->sizeBytes, 65536u);
  EXPECT_EQ(r->access, std::vector<std::string>{"cpu"});
  EXPECT_EQ(r->placement, PoolPlacement::Static);
  EXPECT_EQ(r->section, ".dtcm");
  EXPECT_EQ(r->origin, "--pool #1");
}

TEST(PoolFlag, ListsNumbersAndSpaces) {
  auto r = parsePoolFlag(" name = vtcm ; size=8MiB; placement=fixed; access=cpu, npu ;"
                         "bank_bases=0xD8000000,0xD8800000; alignment=128; read_bytes_per_cycle=12.5;latency_cycles=3;",
                         2);
  ASSERT_TRUE(r.ok()) << render(r.error());
  EXPECT_EQ(r->access, (std::vector<std::string>{"cpu", "npu"}));
  EXPECT_EQ(r->banks, 2);
  EXPECT_EQ(r->bankSizeBytes, size_t{4} << 20);
  EXPECT_EQ(r->base, 0xD8000000u);
  EXPECT_EQ(r->readBytesPerCycle, 12.5);
  EXPECT_EQ(r->latencyCycles, 3.0);
  // Access not given: left empty for resolveBoard to fill with every cpu target.
  auto plain = parsePoolFlag("name=ram", 1);
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(plain->access.empty());
  EXPECT_FALSE(plain->sizeBytes.has_value());
}

TEST(PoolFlag, ErrorsNameFlagAndItem) {
  auto zero = parsePoolFlag("name=ram;size=0", 2);
  ASSERT_FALSE(zero.ok());
  expectContains(render(zero.error()), {"--pool #2 'size=0'", "'size' is 0"});
  auto unknown = parsePoolFlag("name=ram;sze=4KiB", 1);
  ASSERT_FALSE(unknown.ok());
  expectContains(render(unknown.error()), {"--pool #1 'sze=4KiB'", "unknown key 'sze'", "did you mean 'size'?"});
  auto noEq = parsePoolFlag("name=ram;static", 3);
  ASSERT_FALSE(noEq.ok());
  expectContains(render(noEq.error()), {"--pool #3 'static'", "not key=value"});
  auto twice = parsePoolFlag("name=ram;size=1KiB;size=2KiB", 1);
  ASSERT_FALSE(twice.ok());
  expectContains(render(twice.error()), {"'size=2KiB'", "given twice"});
  auto badNumber = parsePoolFlag("name=ram;latency_cycles=fast", 1);
  ASSERT_FALSE(badNumber.ok());
  expectContains(render(badNumber.error()), {"'latency_cycles=fast'", "must be a number"});
  auto emptyList = parsePoolFlag("name=ram;access=cpu,,npu", 1);
  ASSERT_FALSE(emptyList.ok());
  expectContains(render(emptyList.error()), {"'access=cpu,,npu'", "empty element"});
  auto sectionUser = parsePoolFlag("name=ram;section=.dtcm", 1);
  ASSERT_FALSE(sectionUser.ok());
  expectContains(render(sectionUser.error()), {"--pool #1 'section=.dtcm'", "only for placement = \"static\""});
  auto fixedNoBase = parsePoolFlag("name=tcm;size=4KiB;placement=fixed", 4);
  ASSERT_FALSE(fixedNoBase.ok());
  expectContains(render(fixedNoBase.error()), {"--pool #4", "needs a 'base'"});
  EXPECT_FALSE(parsePoolFlag("", 1).ok());
  EXPECT_FALSE(parsePoolFlag("size=4KiB", 1).ok());  // no name
}

TEST(RuleFlag, ParsesListsAndChecks) {
  auto r = parseRuleFlag("op=Conv;inputs=sram;outputs=act_mem,sram", 1);
  ASSERT_TRUE(r.ok()) << render(r.error());
  EXPECT_EQ(r->op, "Conv");
  EXPECT_EQ(*r->inputs, std::vector<std::string>{"sram"});
  EXPECT_EQ(*r->outputs, (std::vector<std::string>{"act_mem", "sram"}));
  EXPECT_FALSE(r->scratch.has_value());
  EXPECT_EQ(r->origin, "--rule #1");
  auto byNode = parseRuleFlag("node=backbone/*;scratch=l1", 2);
  ASSERT_TRUE(byNode.ok());
  EXPECT_TRUE(byNode->matches("Relu", "backbone/relu1"));
  auto badOp = parseRuleFlag("op=conv;inputs=sram", 3);
  ASSERT_FALSE(badOp.ok());
  expectContains(render(badOp.error()), {"--rule #3 'op=conv'", "did you mean 'Conv'?"});
  auto nothing = parseRuleFlag("op=Conv", 1);
  ASSERT_FALSE(nothing.ok());
  expectContains(render(nothing.error()), {"--rule #1", "restricts nothing"});
}

TEST(PinFlag, Parses) {
  auto p = parsePinFlag("conv1_out=dtcm");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->tensor, "conv1_out");
  EXPECT_EQ(p->pool, "dtcm");
  auto glob = parsePinFlag("/model/a=b/*=sram");  // split at the last '='
  ASSERT_TRUE(glob.ok());
  EXPECT_EQ(glob->tensor, "/model/a=b/*");
  EXPECT_EQ(glob->pool, "sram");
  EXPECT_FALSE(parsePinFlag("conv1_out").ok());
  EXPECT_FALSE(parsePinFlag("=dtcm").ok());
  auto noPool = parsePinFlag("x=");
  ASSERT_FALSE(noPool.ok());
  expectContains(render(noPool.error()), {"--pin 'x='", "pool name is empty"});
}

TEST(ResolveBoard, DefaultBoard) {
  auto r = resolveBoard({});
  ASSERT_TRUE(r.ok()) << render(r.error());
  ASSERT_EQ(r->targets.size(), 1u);
  EXPECT_EQ(r->targets[0].name, "cpu");
  EXPECT_TRUE(r->targets[0].runs("Conv"));
  ASSERT_EQ(r->pools.size(), 2u);
  const MemoryPool* ws = r->findPool("workspace");
  ASSERT_NE(ws, nullptr);
  EXPECT_EQ(ws->placement, PoolPlacement::User);
  EXPECT_EQ(ws->kind, PoolKind::Workspace);
  EXPECT_FALSE(ws->sizeBytes.has_value());
  EXPECT_EQ(ws->access, std::vector<std::string>{"cpu"});
  const MemoryPool* weights = r->findPool("weights");
  ASSERT_NE(weights, nullptr);
  EXPECT_EQ(weights->kind, PoolKind::Constant);
  EXPECT_EQ(weights->placement, PoolPlacement::Static);
  EXPECT_FALSE(weights->sizeBytes.has_value());
  EXPECT_TRUE(r->sourcePath.empty());
  EXPECT_TRUE(validateBoard(defaultBoard()).ok());
}

TEST(ResolveBoard, DefaultBoardWithRulesAndPins) {
  BoardFlags f;
  f.rules = {"op=Conv;scratch=workspace"};
  f.pins = {"logits=workspace"};
  auto r = resolveBoard(f);
  ASSERT_TRUE(r.ok()) << render(r.error());
  EXPECT_EQ(r->rules.size(), 1u);
  EXPECT_EQ(r->pins.size(), 1u);
}

TEST(ResolveBoard, FlagPoolsOnly) {
  BoardFlags f;
  f.pools = {"name=dtcm;size=64KiB;placement=static;section=.dtcm", "name=sram;size=512KiB"};
  auto r = resolveBoard(f);
  ASSERT_TRUE(r.ok()) << render(r.error());
  ASSERT_EQ(r->pools.size(), 3u);  // no `workspace` default; `weights` added because none is constant
  EXPECT_EQ(r->pools[0].name, "dtcm");
  EXPECT_EQ(r->pools[0].access, std::vector<std::string>{"cpu"});
  EXPECT_EQ(r->pools[1].origin, "--pool #2");
  EXPECT_EQ(r->pools[2].name, "weights");
  // Only constant pools from flags: no workspace pool, an error naming the flags' board.
  BoardFlags constOnly;
  constOnly.pools = {"name=rom;kind=constant;placement=static"};
  auto bad = resolveBoard(constOnly);
  ASSERT_FALSE(bad.ok());
  expectContains(render(bad.error()), {"no workspace pool"});
}

TEST(ResolveBoard, FlagPoolReplacesBoardPool) {
  BoardFlags f;
  f.boardPath = kBoards + "cortex-m7.toml";
  f.pools = {"name=dtcm;size=64KiB;placement=static;section=.dtcm", "name=sdram;size=8MiB;placement=fixed;base=0xC0000000"};
  f.rules = {"op=Conv;outputs=dtcm,sram"};
  f.pins = {"input=sram"};
  auto r = resolveBoard(f);
  ASSERT_TRUE(r.ok()) << render(r.error());
  ASSERT_EQ(r->pools.size(), 5u);
  EXPECT_EQ(r->pools[0].name, "dtcm");  // replaced in place
  EXPECT_EQ(r->pools[0].sizeBytes, 65536u);
  EXPECT_EQ(r->pools[0].origin, "--pool #1");
  EXPECT_EQ(r->pools[4].name, "sdram");  // added at the end
  ASSERT_EQ(r->notes.size(), 1u);
  expectContains(r->notes[0], {"--pool #1 replaces pool 'dtcm'", "cortex-m7.toml:"});
  EXPECT_EQ(r->rules.size(), 1u);
  EXPECT_EQ(r->pins.size(), 1u);
  EXPECT_EQ(r->name, "cortex-m7");
}

TEST(ResolveBoard, FlagErrorsAfterMerging) {
  BoardFlags f;
  f.boardPath = kBoards + "accel-l2-act.toml";
  f.rules = {"op=Relu;inputs=l2_mem", "op=Conv;outputs=act_mme"};
  auto r = resolveBoard(f);
  ASSERT_FALSE(r.ok());
  expectContains(render(r.error()), {"--rule #2", "'outputs' names pool 'act_mme'", "did you mean 'act_mem'?"});

  BoardFlags pin;
  pin.boardPath = f.boardPath;
  pin.pins = {"x=dram"};
  auto p = resolveBoard(pin);
  ASSERT_FALSE(p.ok());
  expectContains(render(p.error()), {"--pin x=dram", "names pool 'dram'"});

  // A flag pool naming a target the board does not have.
  BoardFlags access;
  access.boardPath = f.boardPath;
  access.pools = {"name=act_mem;size=64KiB;access=cpu,gpu"};
  auto a = resolveBoard(access);
  ASSERT_FALSE(a.ok());
  expectContains(render(a.error()), {"--pool #1", "'access' names target 'gpu'",
                                     "note: --pool #1 replaces pool 'act_mem'"});
}

TEST(ResolveBoard, FileErrorsKeepTheirLines) {
  std::filesystem::path path = std::filesystem::path(::testing::TempDir()) / "stowage_bad_board.toml";
  {
    std::ofstream out(path);
    out << "[[pools]]\nname = \"ram\"\nalignment = 3\n";
  }
  BoardFlags f;
  f.boardPath = path.string();
  f.pools = {"name=extra"};
  auto r = resolveBoard(f);
  ASSERT_FALSE(r.ok());
  expectContains(render(r.error()), {path.string() + ":3:", "'alignment' 3"});
  std::filesystem::remove(path);

  BoardFlags missing;
  missing.boardPath = "/nonexistent/b.toml";
  EXPECT_FALSE(resolveBoard(missing).ok());
}

TEST(ValidateBoard, HandBuiltBoards) {
  Board b = defaultBoard();
  b.pools[0].alignment = 12;
  auto s = validateBoard(b);
  ASSERT_FALSE(s.ok());
  expectContains(render(s.error()), {"default", "pool 'workspace'", "'alignment' 12"});
  Board noPools = defaultBoard();
  noPools.pools.clear();
  EXPECT_FALSE(validateBoard(noPools).ok());
  Board noAccess = defaultBoard();
  noAccess.pools[0].access.clear();
  auto na = validateBoard(noAccess);
  ASSERT_FALSE(na.ok());
  expectContains(render(na.error()), {"no target can access"});
  Board unlimitedFixed = defaultBoard();
  unlimitedFixed.pools[0].placement = PoolPlacement::Fixed;
  unlimitedFixed.pools[0].base = 0x1000;
  auto uf = validateBoard(unlimitedFixed);
  ASSERT_FALSE(uf.ok());
  expectContains(render(uf.error()), {"a fixed pool needs a 'size'"});
}

}  // namespace
}  // namespace stowage
