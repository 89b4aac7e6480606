// Guard-mode C (see GuardCode.h).
#include "stowage/codegen/GuardCode.h"

#include <fmt/format.h>

#include <algorithm>

#include "stowage/codegen/CNames.h"

namespace stowage {

std::string guardHelpers(const ProgramPlan& plan, const std::string& p) {
  if (plan.guardBytes == 0) return "";
  return fmt::format(R"GUARD(
/* Guard mode: canaries around every intermediate tensor, poison outside its lifetime, and a checksum of its
 * bytes between the step that writes it and its last reader. A violation calls stowage_guard_fail. */
#define {2}_GUARD_BYTES {1}u
#define {2}_GUARD_CANARY 0xCAu
#define {2}_GUARD_POISON 0xA5u
typedef struct {{
  uint8_t* data;
  size_t size;
  const char* name;
  uint32_t sum;
  int live;
}} {0}_guard_buf;

static uint32_t {0}_guard_hash(const uint8_t* d, size_t n) {{
  uint32_t h = 2166136261u;
  size_t i;
  for (i = 0; i < n; ++i) h = (h ^ d[i]) * 16777619u;
  return h;
}}

/* Before the producer runs: canaries on both sides, poison inside. */
static void {0}_guard_arm({0}_guard_buf* b) {{
  memset(b->data - {2}_GUARD_BYTES, {2}_GUARD_CANARY, {2}_GUARD_BYTES);
  memset(b->data + b->size, {2}_GUARD_CANARY, {2}_GUARD_BYTES);
  memset(b->data, {2}_GUARD_POISON, b->size);
  b->live = 0;
}}

static void {0}_guard_canaries(const {0}_guard_buf* b, int step) {{
  size_t i;
  for (i = 0; i < {2}_GUARD_BYTES; ++i)
    if ((b->data - {2}_GUARD_BYTES)[i] != {2}_GUARD_CANARY || b->data[b->size + i] != {2}_GUARD_CANARY)
      stowage_guard_fail(b->name, "a canary byte next to it was overwritten", step);
}}

static void {0}_guard_read(const {0}_guard_buf* b, int step) {{
  if (!b->live) stowage_guard_fail(b->name, "read while poisoned (before it was written or after its lifetime)", step);
  if ({0}_guard_hash(b->data, b->size) != b->sum) stowage_guard_fail(b->name, "overwritten while live, before this read", step);
}}

static void {0}_guard_wrote({0}_guard_buf* b, int step) {{
  {0}_guard_canaries(b, step);
  b->sum = {0}_guard_hash(b->data, b->size);
  b->live = 1;
}}

/* After each step: every live tensor still holds what its producer wrote, with intact canaries. */
static void {0}_guard_check(const {0}_guard_buf* g, int n, int step) {{
  int i;
  for (i = 0; i < n; ++i) {{
    if (!g[i].live) continue;
    {0}_guard_canaries(&g[i], step);
    if ({0}_guard_hash(g[i].data, g[i].size) != g[i].sum) stowage_guard_fail(g[i].name, "overwritten while live", step);
  }}
}}

static void {0}_guard_retire({0}_guard_buf* b) {{
  memset(b->data, {2}_GUARD_POISON, b->size);
  b->live = 0;
}}
)GUARD",
                     p, plan.guardBytes, upperIdentifier(p));
}

std::vector<int> guardIndex(const Graph& g, const ProgramPlan& plan) {
  std::vector<int> index(g.tensors.size(), -1);
  if (plan.guardBytes == 0) return index;
  int next = 0;
  for (const PlacedBuffer& b : plan.buffers)
    if (b.role == BufferRole::Activation && b.sizeBytes > 0 && b.aliasOf == kNoTensor) index[static_cast<size_t>(b.tensor)] = next++;
  // Declared aliases share their root's record: one buffer, one lifetime.
  for (const PlacedBuffer& b : plan.buffers)
    if (b.aliasOf != kNoTensor) index[static_cast<size_t>(b.tensor)] = index[static_cast<size_t>(b.aliasOf)];
  return index;
}

namespace {

/// The distinct tensors of `ids` that have a guard record, in order.
std::vector<int> guarded(const std::vector<TensorId>& ids, const std::vector<int>& guard) {
  std::vector<int> out;
  for (TensorId id : ids)
    if (id != kNoTensor && guard[static_cast<size_t>(id)] >= 0 &&
        std::find(out.begin(), out.end(), guard[static_cast<size_t>(id)]) == out.end())
      out.push_back(guard[static_cast<size_t>(id)]);
  return out;
}

}  // namespace

std::string guardBeforeStep(const Graph& g, const ProgramPlan& plan, const std::vector<int>& guard, int step, const std::string& p) {
  if (plan.guardBytes == 0) return "";
  const Node& n = g.nodes[static_cast<size_t>(step)];
  std::string s;
  const std::vector<int> read = guarded(n.inputs, guard);
  for (int k : guarded(n.outputs, guard))  // an output sharing an input's record (view, in place) keeps its bytes
    if (std::find(read.begin(), read.end(), k) == read.end()) s += fmt::format("{}_guard_arm(&guard[{}]);\n", p, k);
  for (int k : read) s += fmt::format("{}_guard_read(&guard[{}], {});\n", p, k, step);
  return s;
}

std::string guardInputsWrittenByApplication(const Graph& g, const std::vector<int>& guard, const std::string& p) {
  const std::string P = upperIdentifier(p);
  // With inputs and outputs planned, a graph can have guard records that no step arms, reads or retires (e.g. an
  // Add written in place over its input): mark the helpers used so -Wunused-function stays quiet.
  std::string s = fmt::format("(void){0}_guard_arm;\n(void){0}_guard_read;\n(void){0}_guard_wrote;\n(void){0}_guard_check;\n"
                              "(void){0}_guard_retire;\n",
                              p);
  for (int k : guarded(g.inputs, guard))
    s += fmt::format("memset(guard[{0}].data - {2}_GUARD_BYTES, {2}_GUARD_CANARY, {2}_GUARD_BYTES);\n"
                     "memset(guard[{0}].data + guard[{0}].size, {2}_GUARD_CANARY, {2}_GUARD_BYTES);\n"
                     "{1}_guard_wrote(&guard[{0}], -1);\n",
                     k, p, P);
  return s;
}

std::string guardAfterStep(const Graph& g, const ProgramPlan& plan, const std::vector<int>& guard, int step, const std::string& p) {
  if (plan.guardBytes == 0 || std::none_of(guard.begin(), guard.end(), [](int k) { return k >= 0; })) return "";
  const Node& n = g.nodes[static_cast<size_t>(step)];
  std::string s;
  for (int k : guarded(n.outputs, guard)) s += fmt::format("{}_guard_wrote(&guard[{}], {});\n", p, k, step);
  s += fmt::format("{}_guard_check(guard, {}_GUARD_COUNT, {});\n", p, upperIdentifier(p), step);
  const std::vector<int> outputs = guarded(g.outputs, guard);
  for (const PlacedBuffer& b : plan.buffers) {
    const int k = b.tensor == kNoTensor ? -1 : guard[static_cast<size_t>(b.tensor)];
    if (k >= 0 && b.aliasOf == kNoTensor && b.endStep == step + 1 && std::find(outputs.begin(), outputs.end(), k) == outputs.end())
      s += fmt::format("{}_guard_retire(&guard[{}]);\n", p, k);
  }
  return s;
}

}  // namespace stowage
