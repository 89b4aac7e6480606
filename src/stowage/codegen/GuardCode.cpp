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
  int slice; /* inside a group root's bytes: no canaries of its own; the root poisons them */
}} {0}_guard_buf;

static uint32_t {0}_guard_hash(const uint8_t* d, size_t n) {{
  uint32_t h = 2166136261u;
  size_t i;
  for (i = 0; i < n; ++i) h = (h ^ d[i]) * 16777619u;
  return h;
}}

/* Before the group's first producer runs: canaries on both sides, poison inside. A slice is only marked
 * unwritten: its bytes were poisoned with its root's, and a nested Concat's slices hold data already. */
static void {0}_guard_arm({0}_guard_buf* b) {{
  if (!b->slice) {{
    memset(b->data - {2}_GUARD_BYTES, {2}_GUARD_CANARY, {2}_GUARD_BYTES);
    memset(b->data + b->size, {2}_GUARD_CANARY, {2}_GUARD_BYTES);
    memset(b->data, {2}_GUARD_POISON, b->size);
  }}
  b->live = 0;
}}

static void {0}_guard_canaries(const {0}_guard_buf* b, int step) {{
  size_t i;
  if (b->slice) return;
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

namespace {

/// Whether an overlapping layer's output `y` and the group of the input it overlaps share a byte when each is taken
/// with its canaries (plan.guardBytes on either side of the data).
bool guardBytesMeetInput(const ProgramPlan& plan, const PlacedBuffer& y) {
  if (y.overlapsInput == kNoTensor || y.sizeBytes == 0) return false;
  const int xi = plan.bufferOf(y.overlapsInput);
  if (xi < 0) return false;
  const PlacedBuffer* x = &plan.buffers[static_cast<size_t>(xi)];
  if (x->aliasOf != kNoTensor && plan.bufferOf(x->aliasOf) >= 0) x = &plan.buffers[static_cast<size_t>(plan.bufferOf(x->aliasOf))];
  if (!(x->slot == y.slot) || x->sizeBytes == 0) return false;
  const size_t g = plan.guardBytes;
  return y.offset < x->offset + x->sizeBytes + 2 * g && x->offset < y.offset + y.sizeBytes + 2 * g;
}

}  // namespace

GuardLayout guardLayout(const Graph& g, const ProgramPlan& plan) {
  GuardLayout out;
  out.index.assign(g.tensors.size(), -1);
  if (plan.guardBytes == 0) return out;
  // Last step reading (or writing) each tensor.
  std::vector<int> lastUse(g.tensors.size(), -1);
  for (size_t step = 0; step < g.nodes.size(); ++step) {
    for (TensorId id : g.nodes[step].inputs)
      if (id != kNoTensor) lastUse[static_cast<size_t>(id)] = static_cast<int>(step);
    for (TensorId id : g.nodes[step].outputs)
      if (id != kNoTensor) lastUse[static_cast<size_t>(id)] = std::max(lastUse[static_cast<size_t>(id)], static_cast<int>(step));
  }
  struct Key {
    TensorId root;
    size_t offset, size;
  };
  std::vector<Key> keys;
  auto recordFor = [&](const Key& k, TensorId tensor, bool slice) {
    for (size_t i = 0; i < keys.size(); ++i)
      if (keys[i].root == k.root && keys[i].offset == k.offset && keys[i].size == k.size) return static_cast<int>(i);
    keys.push_back(k);
    GuardRecord r;
    r.tensor = tensor;
    r.size = k.size;
    r.slice = slice;
    out.records.push_back(r);
    return static_cast<int>(keys.size() - 1);
  };
  // Roots first, in plan order (each gets the whole group's bytes), then the aliases: a member on all of its
  // root's bytes shares the root's record, a smaller one (a slice) gets one per distinct byte range. A strided
  // slice (runs of channels of an NHWC Concat output) gets none: its bytes are not one range to checksum, and
  // the root's canaries, poison and checksum (from the Concat on) cover the group.
  for (const PlacedBuffer& b : plan.buffers) {
    if (b.role != BufferRole::Activation || b.sizeBytes == 0 || b.aliasOf != kNoTensor) continue;
    const int k = recordFor({b.tensor, 0, b.sizeBytes}, b.tensor, false);
    out.index[static_cast<size_t>(b.tensor)] = k;
    out.records[static_cast<size_t>(k)].armStep = b.firstStep;
    out.records[static_cast<size_t>(k)].retireStep = b.endStep - 1;
  }
  for (const PlacedBuffer& b : plan.buffers) {
    if (b.aliasOf == kNoTensor || b.aliasRunBytes != 0 || b.sizeBytes == 0 || out.index[static_cast<size_t>(b.aliasOf)] < 0)
      continue;
    out.index[static_cast<size_t>(b.tensor)] = recordFor({b.aliasOf, b.aliasOffset, b.sizeBytes}, b.tensor, true);
  }
  // --io-in-pools: the application writes graph inputs before the run, so no step arms (poisons) their group.
  for (TensorId id : g.inputs) {
    const int k = plan.bufferOf(id) < 0 ? -1 : out.index[static_cast<size_t>(id)];
    if (k < 0) continue;
    const PlacedBuffer& b = plan.buffers[static_cast<size_t>(plan.bufferOf(id))];
    const TensorId root = b.aliasOf == kNoTensor ? id : b.aliasOf;
    GuardRecord& r = out.records[static_cast<size_t>(out.index[static_cast<size_t>(root)])];
    r.armStep = -1;
    r.writtenByApplication = true;
  }
  std::vector<std::vector<std::pair<int, int>>> lifetimes(out.records.size());  // per record: its tensors' [write, last use]
  for (size_t id = 0; id < out.index.size(); ++id)
    if (out.index[id] >= 0) {
      GuardRecord& r = out.records[static_cast<size_t>(out.index[id])];
      r.deadStep = std::max(r.deadStep, lastUse[id]);
      const int b = plan.bufferOf(static_cast<TensorId>(id));
      if (b >= 0) lifetimes[static_cast<size_t>(out.index[id])].push_back({plan.buffers[static_cast<size_t>(b)].firstStep, lastUse[id]});
    }
  for (size_t k = 0; k < out.records.size(); ++k) {
    if (!out.records[k].slice) continue;
    for (const auto& [first, last] : lifetimes[k]) {
      const bool another = std::any_of(lifetimes[k].begin(), lifetimes[k].end(),
                                       [&, last = last](const std::pair<int, int>& o) { return o.first <= last && last < o.second; });
      if (!another && last < out.records[k].deadStep) out.records[k].idleSteps.push_back(last);
    }
  }
  // Overlapping layers: the output's record is armed after its write; every record on the input's group bytes
  // stops at that step. Not only when the data overlap: the planner's shifts hold the canaries too, so the output's
  // canary may lie on the input's data (armed before the step, it would overwrite input bytes still to be read) or
  // its data on the input's canary.
  for (const PlacedBuffer& y : plan.buffers) {
    if (!guardBytesMeetInput(plan, y) || out.index[static_cast<size_t>(y.tensor)] < 0) continue;
    out.records[static_cast<size_t>(out.index[static_cast<size_t>(y.tensor)])].armAfterWrite = true;
    const PlacedBuffer& x = plan.buffers[static_cast<size_t>(plan.bufferOf(y.overlapsInput))];
    const TensorId root = x.aliasOf == kNoTensor ? x.tensor : x.aliasOf;
    for (GuardRecord& r : out.records) {
      const int b = plan.bufferOf(r.tensor);
      if (b < 0) continue;
      const PlacedBuffer& rb = plan.buffers[static_cast<size_t>(b)];
      if ((rb.aliasOf == kNoTensor ? rb.tensor : rb.aliasOf) == root) r.overwrittenAt = y.firstStep;
    }
  }
  return out;
}

namespace {

/// The distinct records of `ids`, in order.
std::vector<int> guarded(const std::vector<TensorId>& ids, const std::vector<int>& guard) {
  std::vector<int> out;
  for (TensorId id : ids)
    if (id != kNoTensor && guard[static_cast<size_t>(id)] >= 0 &&
        std::find(out.begin(), out.end(), guard[static_cast<size_t>(id)]) == out.end())
      out.push_back(guard[static_cast<size_t>(id)]);
  return out;
}

}  // namespace

std::string guardBeforeStep(const Graph& g, const ProgramPlan& plan, const GuardLayout& guard, int step, const std::string& p) {
  if (plan.guardBytes == 0) return "";
  const Node& n = g.nodes[static_cast<size_t>(step)];
  std::string s;
  const std::vector<int> read = guarded(n.inputs, guard.index);
  // Groups starting here (a root's first producer; for a Concat output, its first slice's producer).
  for (size_t k = 0; k < guard.records.size(); ++k)
    if (!guard.records[k].slice && guard.records[k].armStep == step)
      s += guard.records[k].armAfterWrite ? fmt::format("guard[{}].live = 0; /* written over its input: armed after */\n", k)
                                          : fmt::format("{}_guard_arm(&guard[{}]);\n", p, k);
  // Slices this node writes (an output sharing an input's record, a view or an in-place write, keeps its bytes).
  for (int k : guarded(n.outputs, guard.index))
    if (guard.records[static_cast<size_t>(k)].slice && std::find(read.begin(), read.end(), k) == read.end())
      s += fmt::format("{}_guard_arm(&guard[{}]);\n", p, k);
  for (int k : read) s += fmt::format("{}_guard_read(&guard[{}], {});\n", p, k, step);
  return s;
}

std::string guardInputsWrittenByApplication(const Graph& g, const GuardLayout& guard, const std::string& p) {
  const std::string P = upperIdentifier(p);
  // With inputs and outputs planned, a graph can have guard records that no step arms, reads or retires (e.g. an
  // Add written in place over its input): mark the helpers used so -Wunused-function stays quiet.
  std::string s = fmt::format("(void){0}_guard_arm;\n(void){0}_guard_read;\n(void){0}_guard_wrote;\n(void){0}_guard_check;\n"
                              "(void){0}_guard_retire;\n",
                              p);
  // Canaries around each group holding an input (the input itself, or the root it is a slice of), then each input
  // record taken as written (a slice checks no canaries of its own).
  for (size_t k = 0; k < guard.records.size(); ++k)
    if (guard.records[k].writtenByApplication && !guard.records[k].slice)
      s += fmt::format("memset(guard[{0}].data - {1}_GUARD_BYTES, {1}_GUARD_CANARY, {1}_GUARD_BYTES);\n"
                       "memset(guard[{0}].data + guard[{0}].size, {1}_GUARD_CANARY, {1}_GUARD_BYTES);\n",
                       k, P);
  for (int k : guarded(g.inputs, guard.index)) s += fmt::format("{}_guard_wrote(&guard[{}], -1);\n", p, k);
  return s;
}

std::string guardAfterStep(const Graph& g, const ProgramPlan& plan, const GuardLayout& guard, int step, const std::string& p) {
  if (plan.guardBytes == 0 || guard.records.empty()) return "";
  const Node& n = g.nodes[static_cast<size_t>(step)];
  std::string s;
  const std::string P = upperIdentifier(p);
  for (size_t k = 0; k < guard.records.size(); ++k)
    if (guard.records[k].overwrittenAt == step) s += fmt::format("guard[{}].live = 0; /* its bytes are this step's output now */\n", k);
  for (int k : guarded(n.outputs, guard.index)) {
    if (guard.records[static_cast<size_t>(k)].armAfterWrite && guard.records[static_cast<size_t>(k)].armStep == step)
      s += fmt::format("memset(guard[{0}].data - {1}_GUARD_BYTES, {1}_GUARD_CANARY, {1}_GUARD_BYTES);\n"
                       "memset(guard[{0}].data + guard[{0}].size, {1}_GUARD_CANARY, {1}_GUARD_BYTES);\n",
                       k, P);
    s += fmt::format("{}_guard_wrote(&guard[{}], {});\n", p, k, step);
  }
  s += fmt::format("{}_guard_check(guard, {}_GUARD_COUNT, {});\n", p, upperIdentifier(p), step);
  // Graph outputs in pools (--io-in-pools) stay intact after the run: the application reads them.
  const std::vector<int> outputs = guarded(g.outputs, guard.index);
  for (size_t k = 0; k < guard.records.size(); ++k) {
    const GuardRecord& r = guard.records[k];
    if (std::find(outputs.begin(), outputs.end(), static_cast<int>(k)) != outputs.end()) continue;
    if (r.overwrittenAt == step) continue;
    if (r.retireStep == step) s += fmt::format("{}_guard_retire(&guard[{}]);\n", p, k);
    else if (r.deadStep == step || std::find(r.idleSteps.begin(), r.idleSteps.end(), step) != r.idleSteps.end())
      s += fmt::format("guard[{}].live = 0;\n", k);
  }
  return s;
}

}  // namespace stowage
