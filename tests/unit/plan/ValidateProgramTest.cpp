// The program plan validator (checkProgramPlan / validateProgramPlan) on a hand-made two-pool plan: valid as
// built, then one corruption per failure kind, each reported with its kind, the offending buffer(s) and pool.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "stowage/plan/ValidateProgram.h"

namespace stowage {
namespace {

/// Pool 0 "fast": 256 bytes in two banks of 128, alignment 16. Pool 1 "slow": unlimited, alignment 8.
/// Buffers (tensor ids 10..14): a, b in fast bank 0 live together; c in fast bank 1; d in slow pinned there;
/// e an alias of a (a view of it).
ProgramPlan twoPoolPlan() {
  ProgramPlan plan;
  MemoryPool fast;
  fast.name = "fast";
  fast.sizeBytes = 256;
  fast.alignment = 16;
  fast.banks = 2;
  fast.bankSizeBytes = 128;
  MemoryPool slow;
  slow.name = "slow";
  slow.alignment = 8;
  plan.board.pools = {fast, slow};
  plan.steps = 4;
  auto add = [&](TensorId id, size_t size, int first, int end, int pool, int bank, size_t offset) {
    PlacedBuffer b;
    b.tensor = id;
    b.sizeBytes = size;
    b.firstStep = first;
    b.endStep = end;
    b.candidates = {0, 1};
    b.slot = {pool, bank};
    b.offset = offset;
    plan.buffers.push_back(b);
  };
  add(10, 64, 0, 2, 0, 0, 0);     // a: fast bank 0, bytes [0, 64)
  add(11, 64, 1, 3, 0, 0, 64);    // b: fast bank 0, bytes [64, 128), live with a at step 1
  add(12, 100, 0, 4, 0, 1, 128);  // c: fast bank 1
  add(13, 40, 0, 4, 1, 0, 0);     // d: slow, pinned there
  plan.buffers.back().pinnedPool = 1;
  add(14, 32, 1, 2, 0, 0, 0);     // e: a view of a
  plan.buffers.back().aliasOf = 10;
  return plan;
}

std::string nameOf(TensorId id) { return std::string(1, static_cast<char>('a' + (id - 10))); }

/// Checks `plan`, expecting `kind` with the given buffers and pool, and that the Status form carries the same
/// diagnostic with `phrase` in its message.
void expectFailure(const ProgramPlan& plan, ProgramPlanFailure kind, size_t first, size_t second, int pool,
                   const std::string& phrase) {
  ProgramPlanCheck c = checkProgramPlan(plan, nameOf);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.failure, kind) << programPlanFailureName(c.failure) << ": " << c.diagnostic.message;
  EXPECT_EQ(c.first, first);
  EXPECT_EQ(c.second, second);
  EXPECT_EQ(c.pool, pool);
  EXPECT_NE(c.diagnostic.message.find(phrase), std::string::npos) << c.diagnostic.message;
  Status s = validateProgramPlan(plan, nameOf);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, c.diagnostic.message);
  EXPECT_EQ(s.error().location, c.diagnostic.location);
}

TEST(ValidateProgram, AcceptsTheValidPlan) {
  ProgramPlanCheck c = checkProgramPlan(twoPoolPlan(), nameOf);
  EXPECT_TRUE(c.ok()) << c.diagnostic.render();
  EXPECT_EQ(c.failure, ProgramPlanFailure::None);
  EXPECT_TRUE(validateProgramPlan(twoPoolPlan()).ok());
}

TEST(ValidateProgram, NoPool) {
  ProgramPlan p = twoPoolPlan();
  p.buffers[2].slot.pool = 7;
  expectFailure(p, ProgramPlanFailure::NoPool, 2, kNoBufferIndex, -1, "buffer 'c' has no pool");
}

TEST(ValidateProgram, NotACandidate) {
  ProgramPlan p = twoPoolPlan();
  p.buffers[1].candidates = {1};
  expectFailure(p, ProgramPlanFailure::NotACandidate, 1, kNoBufferIndex, 0, "not one of its candidates");
}

TEST(ValidateProgram, NotInPinnedPool) {
  ProgramPlan p = twoPoolPlan();
  p.buffers[3].slot = {0, 1};
  p.buffers[3].offset = 240;
  expectFailure(p, ProgramPlanFailure::NotInPinnedPool, 3, kNoBufferIndex, 0, "pinned to pool 'slow'");
}

TEST(ValidateProgram, NoSuchBank) {
  ProgramPlan p = twoPoolPlan();
  p.buffers[2].slot.bank = 2;
  expectFailure(p, ProgramPlanFailure::NoSuchBank, 2, kNoBufferIndex, 0, "bank 2, but the pool has 2");
}

TEST(ValidateProgram, Misaligned) {
  ProgramPlan p = twoPoolPlan();
  p.buffers[3].offset = 4;  // slow aligns to 8
  expectFailure(p, ProgramPlanFailure::Misaligned, 3, kNoBufferIndex, 1, "not aligned to 8 bytes");
}

TEST(ValidateProgram, OutOfBank) {
  ProgramPlan p = twoPoolPlan();
  p.buffers[1].offset = 96;  // [96, 160) crosses from bank 0 into bank 1
  expectFailure(p, ProgramPlanFailure::OutOfBank, 1, kNoBufferIndex, 0, "leave bank 0");
}

TEST(ValidateProgram, OutOfPool) {
  ProgramPlan p = twoPoolPlan();
  p.board.pools[0].banks = 1;
  p.buffers[2].slot.bank = 0;
  p.buffers[2].offset = 160;  // [160, 260) past 256
  expectFailure(p, ProgramPlanFailure::OutOfPool, 2, kNoBufferIndex, 0, "end past the pool's 256 bytes");
}

TEST(ValidateProgram, BadAlias) {
  ProgramPlan p = twoPoolPlan();
  p.buffers[4].aliasOf = 99;  // no such buffer
  expectFailure(p, ProgramPlanFailure::BadAlias, 4, kNoBufferIndex, 0, "not a planned activation buffer");
  p.buffers[4].aliasOf = 13;  // a buffer, but in another pool... and a constant would also be refused
  p.buffers[3].role = BufferRole::Constant;
  expectFailure(p, ProgramPlanFailure::BadAlias, 4, 3, 0, "not a planned activation buffer");
}

TEST(ValidateProgram, AliasOutsideRoot) {
  ProgramPlan p = twoPoolPlan();
  p.buffers[4].endStep = 3;  // outlives a, which ends at step 2
  expectFailure(p, ProgramPlanFailure::AliasOutsideRoot, 4, 0, 0, "is not inside its bytes");
}

TEST(ValidateProgram, EmptyLifetime) {
  ProgramPlan p = twoPoolPlan();
  p.buffers[3].endStep = 0;
  expectFailure(p, ProgramPlanFailure::EmptyLifetime, 3, kNoBufferIndex, 1, "'d'");
}

TEST(ValidateProgram, OverlapNamesBothBuffers) {
  ProgramPlan p = twoPoolPlan();
  p.buffers[1].offset = 48;  // b [48, 112) over a [0, 64) while both live at step 1
  expectFailure(p, ProgramPlanFailure::Overlap, 0, 1, 0, "overlap");
  ProgramPlanCheck c = checkProgramPlan(p, nameOf);
  EXPECT_NE(c.diagnostic.message.find("'a'"), std::string::npos) << c.diagnostic.message;
  EXPECT_NE(c.diagnostic.message.find("'b'"), std::string::npos) << c.diagnostic.message;
  EXPECT_EQ(c.diagnostic.location, "memory plan: pool 'fast'");
  // Same bytes at disjoint steps are fine; so is the declared alias e over a.
  p.buffers[1].firstStep = 2;
  EXPECT_TRUE(checkProgramPlan(p).ok());
}

TEST(ValidateProgram, EveryKindHasADistinctName) {
  std::set<std::string> names;
  for (int k = 0; k <= static_cast<int>(ProgramPlanFailure::Overlap); ++k)
    names.insert(programPlanFailureName(static_cast<ProgramPlanFailure>(k)));
  EXPECT_EQ(names.size(), static_cast<size_t>(ProgramPlanFailure::Overlap) + 1);
  EXPECT_EQ(names.count("?"), 0u);
}

}  // namespace
}  // namespace stowage
