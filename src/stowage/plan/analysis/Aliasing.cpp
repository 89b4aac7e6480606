// Alias analysis (see Aliasing.h).
#include "stowage/plan/analysis/Aliasing.h"

#include "stowage/ir/LoweringAttributes.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <cstdint>

namespace stowage {

namespace {

class AliasBuilder {
 public:
  AliasBuilder(const Graph& g, std::vector<PlacedBuffer>& buffers, bool concatSlices, const std::vector<bool>& stepOnCpu)
      : g_(g), buffers_(buffers), index_(g.tensors.size(), -1), concatSlices_(concatSlices), stepOnCpu_(stepOnCpu),
        producers_(g.producers()), uses_(g.useCounts()) {
    live_.assign(g.nodes.size() + 1, 0);
    for (size_t i = 0; i < buffers.size(); ++i)
      if (buffers[i].role == BufferRole::Activation && buffers[i].sizeBytes > 0) {
        index_[static_cast<size_t>(buffers[i].tensor)] = static_cast<int>(i);
        addLive(buffers[i], 1);
      }
    // --io-in-pools: graph outputs have buffers, and the application reads them after the run.
    holdsOutput_.assign(buffers.size(), false);
    for (TensorId id : g.outputs)
      if (index_[static_cast<size_t>(id)] >= 0) holdsOutput_[static_cast<size_t>(index_[static_cast<size_t>(id)])] = true;
  }

  AliasSummary run() {
    for (size_t step = 0; step < g_.nodes.size(); ++step) {
      const Node& n = g_.nodes[step];
      if (n.outputs.size() != 1 || n.inputs.empty()) continue;
      const TensorId out = n.outputs[0];
      if (n.op == OpKind::Reshape) {
        if (join(out, n.inputs[0], "view")) ++summary_.views;
      } else if (n.op == OpKind::Slice) {
        // Graph inputs and outputs in pools (--io-in-pools) keep their own bytes: the application writes or reads them.
        const bool io = std::find(g_.inputs.begin(), g_.inputs.end(), n.inputs[0]) != g_.inputs.end() ||
                        std::find(g_.outputs.begin(), g_.outputs.end(), out) != g_.outputs.end();
        if (const std::optional<size_t> at = contiguousSliceOffset(n); !io && at && join(out, n.inputs[0], "row view", *at)) ++summary_.views;
      } else if (n.op == OpKind::Add || n.op == OpKind::QAdd) {
        if (n.inputs.size() < 2) continue;
        for (size_t k = 0; k < 2; ++k)
          if (inPlaceLegal(static_cast<int>(step), out, n.inputs[k], n.inputs[1 - k]) && join(out, n.inputs[k], "in-place add")) {
            ++summary_.inPlace;
            break;
          }
      } else if (n.op == OpKind::Concat && concatSlices_) {
        concat(n);
      }
    }
    if (slicesKept_ > 0)
      summary_.remarks.push_back(fmt::format("aliasing: {} concat input(s) keep a buffer of their own: reserving the whole output "
                                             "from their producer on would raise the peak of live bytes",
                                             slicesKept_));
    if (summary_.views + summary_.inPlace + summary_.slices > 0)
      summary_.remarks.push_back(fmt::format("aliasing: {} view(s) share their input's buffer, {} add(s) write in place and {} "
                                             "concat input(s) are written straight into their output{}, saving {} bytes of buffers",
                                             summary_.views, summary_.inPlace, summary_.slices,
                                             summary_.stridedSlices > 0
                                                 ? fmt::format(" ({} as strided channel slices)", summary_.stridedSlices)
                                                 : std::string(),
                                             summary_.savedBytes));
    return summary_;
  }

 private:
  /// Index in buffers_ of the root of `id`'s group, or -1 when `id` has no activation buffer.
  int rootOf(TensorId id) const {
    if (id == kNoTensor) return -1;
    int i = index_[static_cast<size_t>(id)];
    while (i >= 0 && buffers_[static_cast<size_t>(i)].aliasOf != kNoTensor)
      i = index_[static_cast<size_t>(buffers_[static_cast<size_t>(i)].aliasOf)];
    return i;
  }

  /// Adds (sign 1) or removes (-1) root `b`'s bytes from the live-bytes profile over its lifetime.
  void addLive(const PlacedBuffer& b, int sign) {
    for (int t = std::max(0, b.firstStep); t < b.endStep && static_cast<size_t>(t) < live_.size(); ++t)
      live_[static_cast<size_t>(t)] += sign > 0 ? static_cast<int64_t>(b.sizeBytes) : -static_cast<int64_t>(b.sizeBytes);
  }

  /// Where `id`'s bytes start in its group's root (0 for a root).
  size_t offsetInRoot(TensorId id) const {
    const int i = index_[static_cast<size_t>(id)];
    return i < 0 ? 0 : buffers_[static_cast<size_t>(i)].aliasOffset;
  }

  /// Merges the group lifetimes, candidates, pin, alignment and reads of root `from` into root `into`; false
  /// (with a remark naming `member`) when no pool may hold both.
  bool mergeRoots(PlacedBuffer& into, const PlacedBuffer& from, TensorId member, const char* what) {
    std::vector<int> common;
    for (int p : into.candidates)
      if (std::find(from.candidates.begin(), from.candidates.end(), p) != from.candidates.end()) common.push_back(p);
    if (common.empty()) {
      summary_.remarks.push_back(fmt::format("aliasing: {} '{}' keeps a buffer of its own: no pool may hold both it and '{}'", what,
                                             g_.tensor(member).name, g_.tensor(into.tensor).name));
      return false;
    }
    into.candidates = std::move(common);
    if (into.pinnedPool < 0 && from.pinnedPool >= 0) {
      into.pinnedPool = from.pinnedPool;
      into.pinOrigin = from.pinOrigin;
    }
    into.firstStep = std::min(into.firstStep, from.firstStep);
    into.endStep = std::max(into.endStep, from.endStep);
    into.alignment = std::max(into.alignment, from.alignment);
    into.reads += from.reads;
    return true;
  }

  /// A Concat whose inputs are contiguous slices of its output: each input's group moves into its slice.
  void concat(const Node& n) {
    const TensorId out = n.outputs[0];
    const int o = rootOf(out);
    if (o < 0) return;
    const Tensor& to = g_.tensor(out);
    const int64_t axis = n.attrs.getInt("axis", 0);
    if (axis < 0 || axis >= static_cast<int64_t>(to.shape.size())) return;
    for (int64_t d = 0; d < axis; ++d)
      if (to.shape[static_cast<size_t>(d)] != 1) {
        // Slices interleave: only inputs whose producer writes with an output pixel stride can go in place.
        if (axis + 1 == static_cast<int64_t>(to.shape.size())) stridedConcat(n, o);
        return;
      }
    // Which inputs may go in place; then whether all of them together keep under the peak (the output is reserved
    // once for all of them: judged one by one, each would pay for the whole output while the others still hold their
    // own bytes, as a Concat of many bands does).
    std::vector<bool> eligible(n.inputs.size(), false);
    std::vector<int> roots;
    for (size_t k = 0, at = offsetInRoot(out); k < n.inputs.size(); at += g_.tensor(n.inputs[k]).byteSize(), ++k) {
      const TensorId in = n.inputs[k];
      const bool first = std::find(n.inputs.begin(), n.inputs.begin() + static_cast<std::ptrdiff_t>(k), in) ==
                         n.inputs.begin() + static_cast<std::ptrdiff_t>(k);
      // Graph inputs and outputs in pools (--io-in-pools) keep their own bytes: the application writes or reads them.
      const bool io = std::find(g_.inputs.begin(), g_.inputs.end(), in) != g_.inputs.end() ||
                      std::find(g_.outputs.begin(), g_.outputs.end(), in) != g_.outputs.end();
      const int r = rootOf(in);
      const int producer = producers_[static_cast<size_t>(in)];
      const bool ownBuffer = producer >= 0 && g_.nodes[static_cast<size_t>(producer)].attrs.has(kOwnBufferAttr);
      eligible[k] = first && !io && !ownBuffer && g_.tensor(in).dtype == to.dtype && r >= 0 && r != o && offsetInRoot(in) == 0 &&
                    buffers_[static_cast<size_t>(r)].sizeBytes == g_.tensor(in).byteSize() &&
                    at + g_.tensor(in).byteSize() <= buffers_[static_cast<size_t>(o)].sizeBytes;
      if (eligible[k] && std::find(roots.begin(), roots.end(), r) == roots.end()) roots.push_back(r);
    }
    jointlyChecked_ = roots.size() > 1 && fitsTogether(o, roots);
    size_t at = offsetInRoot(out);
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const TensorId in = n.inputs[k];
      const size_t bytes = g_.tensor(in).byteSize();
      if (eligible[k] && moveGroup(in, o, at)) ++summary_.slices;
      at += bytes;
    }
    jointlyChecked_ = false;
  }

  /// True when reserving root `into` from the earliest of `roots` on, with all of `roots` inside it, keeps every
  /// step at or below the peak of live bytes.
  bool fitsTogether(int into, const std::vector<int>& roots) const {
    const int64_t peak = *std::max_element(live_.begin(), live_.end());
    const PlacedBuffer& ib = buffers_[static_cast<size_t>(into)];
    int first = ib.firstStep, end = ib.endStep;
    for (int r : roots) {
      first = std::min(first, buffers_[static_cast<size_t>(r)].firstStep);
      end = std::max(end, buffers_[static_cast<size_t>(r)].endStep);
    }
    auto in = [](const PlacedBuffer& b, int t) { return b.firstStep <= t && t < b.endStep ? static_cast<int64_t>(b.sizeBytes) : 0; };
    for (int t = std::max(0, first); t < end && static_cast<size_t>(t) < live_.size(); ++t) {
      int64_t live = live_[static_cast<size_t>(t)] - in(ib, t) + static_cast<int64_t>(ib.sizeBytes);
      for (int r : roots) live -= in(buffers_[static_cast<size_t>(r)], t);
      if (live > peak) return false;
    }
    return true;
  }

  /// A Concat on the innermost axis with interleaved slices (NHWC on channels): each input that qualifies (see
  /// assignAliases) becomes runs of its channels every output pixel.
  void stridedConcat(const Node& n, int o) {
    const TensorId out = n.outputs[0];
    const int ob = index_[static_cast<size_t>(out)];
    if (ob < 0 || buffers_[static_cast<size_t>(ob)].aliasRunBytes != 0) return;
    const Tensor& to = g_.tensor(out);
    const size_t elem = dtypeSize(to.dtype);
    const size_t strideBytes = static_cast<size_t>(to.shape.back()) * elem;
    size_t at = offsetInRoot(out);
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const TensorId in = n.inputs[k];
      const Tensor& ti = g_.tensor(in);
      const size_t run = ti.shape.empty() ? 0 : static_cast<size_t>(ti.shape.back()) * elem;
      if (run > 0 && run < strideBytes && ti.dtype == to.dtype && ti.quant == to.quant && stridedWriterOf(in) &&
          soloGroup(in) && moveStrided(in, o, at, run, strideBytes)) {
        ++summary_.slices;
        ++summary_.stridedSlices;
      }
      at += run;
    }
  }

  /// True when `in` is made by a CPU node whose kernel writes with an output pixel stride and is read once (by
  /// the Concat being aliased), never by the application.
  bool stridedWriterOf(TensorId in) const {
    const int p = producers_[static_cast<size_t>(in)];
    if (p < 0 || uses_[static_cast<size_t>(in)] != 1) return false;
    const Node& n = g_.nodes[static_cast<size_t>(p)];
    if (n.outputs.size() != 1 || !writesStridedOutput(n.op)) return false;
    if (!stepOnCpu_.empty() && (static_cast<size_t>(p) >= stepOnCpu_.size() || !stepOnCpu_[static_cast<size_t>(p)])) return false;
    return std::find(g_.inputs.begin(), g_.inputs.end(), in) == g_.inputs.end() &&
           std::find(g_.outputs.begin(), g_.outputs.end(), in) == g_.outputs.end();
  }

  /// True when `id` has a buffer that is its own group's root and no other buffer shares it.
  bool soloGroup(TensorId id) const {
    const int i = index_[static_cast<size_t>(id)];
    if (i < 0 || rootOf(id) != i || buffers_[static_cast<size_t>(i)].sizeBytes != g_.tensor(id).byteSize()) return false;
    for (const PlacedBuffer& b : buffers_)
      if (b.aliasOf == id) return false;
    return true;
  }

  /// Makes the buffer of `member` (alone in its group) runs of `run` bytes every `stride` from byte `at` of root
  /// `into`; false when it cannot.
  bool moveStrided(TensorId member, int into, size_t at, size_t run, size_t stride) {
    const int r = index_[static_cast<size_t>(member)];
    if (r == into) return false;
    PlacedBuffer& rb = buffers_[static_cast<size_t>(r)];
    const size_t bytes = rb.sizeBytes;
    if (bytes % run != 0 || at + (bytes / run - 1) * stride + run > buffers_[static_cast<size_t>(into)].sizeBytes) return false;
    if (!absorb(r, into, member)) return false;
    rb.aliasOf = buffers_[static_cast<size_t>(into)].tensor;
    rb.aliasOffset = at;
    rb.aliasRunBytes = run;
    rb.aliasStrideBytes = stride;
    summary_.savedBytes += bytes;
    return true;
  }

  /// Moves the whole group of `member` (whose root must be exactly `member`'s bytes) into root `into` at byte
  /// `at`; false when it cannot.
  bool moveGroup(TensorId member, int into, size_t at) {
    const int r = rootOf(member);
    if (r < 0 || r == into) return false;
    PlacedBuffer &rb = buffers_[static_cast<size_t>(r)], &ib = buffers_[static_cast<size_t>(into)];
    const size_t bytes = g_.tensor(member).byteSize();
    if (offsetInRoot(member) != 0 || rb.sizeBytes != bytes || at + bytes > ib.sizeBytes) return false;
    if (!absorb(r, into, member)) return false;
    const TensorId oldRoot = rb.tensor;
    for (PlacedBuffer& b : buffers_) {
      if (b.tensor != oldRoot && b.aliasOf != oldRoot) continue;
      b.aliasOf = ib.tensor;
      b.aliasOffset += at;
    }
    summary_.savedBytes += bytes;
    return true;
  }

  /// Merges root `r` (the group of Concat input `member`) into root `into` when that does not raise the peak of
  /// live bytes and a pool may hold both; the caller then relabels the members.
  bool absorb(int r, int into, TensorId member) {
    PlacedBuffer &rb = buffers_[static_cast<size_t>(r)], &ib = buffers_[static_cast<size_t>(into)];
    // The output's bytes are reserved from the earliest slice's producer on: give up when that raises the peak.
    const int64_t peak = *std::max_element(live_.begin(), live_.end());
    const int first = std::min(ib.firstStep, rb.firstStep), end = std::max(ib.endStep, rb.endStep);
    for (int t = std::max(0, first); t < end && static_cast<size_t>(t) < live_.size() && !jointlyChecked_; ++t) {
      auto in = [t](const PlacedBuffer& b) { return b.firstStep <= t && t < b.endStep ? static_cast<int64_t>(b.sizeBytes) : 0; };
      if (live_[static_cast<size_t>(t)] - in(ib) - in(rb) + static_cast<int64_t>(ib.sizeBytes) > peak) {
        ++slicesKept_;
        return false;
      }
    }
    addLive(ib, -1);
    addLive(rb, -1);
    if (!mergeRoots(ib, rb, member, "concat input")) {
      addLive(ib, 1);
      addLive(rb, 1);
      return false;
    }
    addLive(ib, 1);
    if (holdsOutput_[static_cast<size_t>(r)]) holdsOutput_[static_cast<size_t>(into)] = true;
    return true;
  }

  /// An Add at `step` may write `out` over `in`: same shape and dtype, and nothing of `in`'s group is read after
  /// `step` (the group ends there). `other` (the second operand) must not live in the same bytes.
  bool inPlaceLegal(int step, TensorId out, TensorId in, TensorId other) const {
    const int r = rootOf(in);
    if (r < 0 || index_[static_cast<size_t>(out)] < 0) return false;
    const Tensor &to = g_.tensor(out), &ti = g_.tensor(in);
    if (to.shape != ti.shape || to.dtype != ti.dtype) return false;
    if (buffers_[static_cast<size_t>(r)].endStep != step + 1 || holdsOutput_[static_cast<size_t>(r)]) return false;
    return rootOf(other) != r;
  }

  /// The byte offset of a Slice's output in its input when the output is one contiguous run of the input's bytes
  /// (steps 1; every dimension before the first sliced one of extent 1 in the output, every one after it whole), the
  /// same dtype: e.g. rows of an NHWC image with batch 1. Nothing otherwise.
  std::optional<size_t> contiguousSliceOffset(const Node& n) const {
    if (n.inputs.size() != 1 || n.inputs[0] == kNoTensor) return std::nullopt;
    const Tensor &x = g_.tensor(n.inputs[0]), &y = g_.tensor(n.outputs[0]);
    const auto starts = n.attrs.getInts("starts"), steps = n.attrs.getInts("steps", std::vector<int64_t>(x.shape.size(), 1));
    if (x.dtype != y.dtype || starts.size() != x.shape.size() || steps.size() != x.shape.size() || y.shape.size() != x.shape.size())
      return std::nullopt;
    size_t first = x.shape.size();
    for (size_t d = 0; d < x.shape.size(); ++d) {
      if (steps[d] != 1) return std::nullopt;
      if (first == x.shape.size() && y.shape[d] != x.shape[d]) first = d;
    }
    if (first == x.shape.size()) return std::nullopt;  // the whole input: a copy of it (a view would be a Reshape)
    for (size_t d = 0; d < first; ++d)
      if (y.shape[d] != 1) return std::nullopt;
    for (size_t d = first + 1; d < x.shape.size(); ++d)
      if (y.shape[d] != x.shape[d]) return std::nullopt;
    int64_t offset = 0, stride = 1;
    for (size_t d = x.shape.size(); d-- > 0;) {
      offset += starts[d] * stride;
      stride *= x.shape[d];
    }
    return static_cast<size_t>(offset) * dtypeSize(x.dtype);
  }

  /// Makes `member`'s buffer share `source`'s group, `within` bytes into `source` (a Slice: a part of it; otherwise
  /// the whole); false (with a remark when a pool conflict is the reason) when it cannot.
  bool join(TensorId member, TensorId source, const char* what, std::optional<size_t> within = std::nullopt) {
    const int m = index_[static_cast<size_t>(member)], r = rootOf(source);
    if (m < 0 || r < 0 || m == r || buffers_[static_cast<size_t>(m)].aliasOf != kNoTensor) return false;
    PlacedBuffer &mb = buffers_[static_cast<size_t>(m)], &rb = buffers_[static_cast<size_t>(r)];
    const size_t at = offsetInRoot(source) + within.value_or(0);
    const size_t sourceBytes = g_.tensor(source).byteSize();
    if (within ? *within + mb.sizeBytes > sourceBytes : mb.sizeBytes != sourceBytes) return false;
    if (at + mb.sizeBytes > rb.sizeBytes) return false;
    addLive(rb, -1);
    addLive(mb, -1);
    if (!mergeRoots(rb, mb, member, what)) {
      addLive(rb, 1);
      addLive(mb, 1);
      return false;
    }
    addLive(rb, 1);
    mb.aliasOf = rb.tensor;
    mb.aliasOffset = at;
    if (holdsOutput_[static_cast<size_t>(m)]) holdsOutput_[static_cast<size_t>(r)] = true;
    summary_.savedBytes += mb.sizeBytes;
    return true;
  }

  const Graph& g_;
  std::vector<PlacedBuffer>& buffers_;
  std::vector<int> index_;  ///< per tensor: its activation buffer, or -1
  bool concatSlices_;
  const std::vector<bool>& stepOnCpu_;  ///< by step: runs on a CPU target (empty: all do)
  std::vector<int> producers_, uses_;   ///< per tensor: producing node (or -1), readers
  std::vector<int64_t> live_;  ///< per step: bytes of the group roots live there
  int slicesKept_ = 0;         ///< concat inputs left apart because aliasing them would raise the peak
  bool jointlyChecked_ = false;  ///< the Concat being aliased was checked for all its inputs at once (fitsTogether)
  std::vector<bool> holdsOutput_;  ///< per buffer: its group holds a graph output (never written over in place)
  AliasSummary summary_;
};

}  // namespace

AliasSummary assignAliases(const Graph& g, std::vector<PlacedBuffer>& buffers, bool concatSlices, const std::vector<bool>& stepOnCpu) {
  return AliasBuilder(g, buffers, concatSlices, stepOnCpu).run();
}

bool writesStridedOutput(OpKind op) {
  return op == OpKind::QConv2d || op == OpKind::QDepthwiseConv2d || op == OpKind::ConvNhwc || op == OpKind::DepthwiseConvNhwc;
}

}  // namespace stowage
