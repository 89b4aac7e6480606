// Alias analysis (see Aliasing.h).
#include "stowage/plan/analysis/Aliasing.h"

#include <fmt/format.h>

#include <algorithm>

namespace stowage {

namespace {

class AliasBuilder {
 public:
  AliasBuilder(const Graph& g, std::vector<PlacedBuffer>& buffers) : g_(g), buffers_(buffers), index_(g.tensors.size(), -1) {
    for (size_t i = 0; i < buffers.size(); ++i)
      if (buffers[i].role == BufferRole::Activation && buffers[i].sizeBytes > 0)
        index_[static_cast<size_t>(buffers[i].tensor)] = static_cast<int>(i);
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
      } else if (n.op == OpKind::Add || n.op == OpKind::QAdd) {
        if (n.inputs.size() < 2) continue;
        for (size_t k = 0; k < 2; ++k)
          if (inPlaceLegal(static_cast<int>(step), out, n.inputs[k], n.inputs[1 - k]) && join(out, n.inputs[k], "in-place add")) {
            ++summary_.inPlace;
            break;
          }
      }
    }
    if (summary_.views + summary_.inPlace > 0)
      summary_.remarks.push_back(fmt::format("aliasing: {} view(s) share their input's buffer and {} add(s) write in place, "
                                             "saving {} bytes of buffers",
                                             summary_.views, summary_.inPlace, summary_.savedBytes));
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

  /// Makes `member`'s buffer share `source`'s group; false (with a remark when a pool conflict is the reason)
  /// when it cannot.
  bool join(TensorId member, TensorId source, const char* what) {
    const int m = index_[static_cast<size_t>(member)], r = rootOf(source);
    if (m < 0 || r < 0 || m == r || buffers_[static_cast<size_t>(m)].aliasOf != kNoTensor) return false;
    PlacedBuffer &mb = buffers_[static_cast<size_t>(m)], &rb = buffers_[static_cast<size_t>(r)];
    if (mb.sizeBytes != g_.tensor(source).byteSize() || mb.sizeBytes > rb.sizeBytes) return false;
    std::vector<int> common;
    for (int p : rb.candidates)
      if (std::find(mb.candidates.begin(), mb.candidates.end(), p) != mb.candidates.end()) common.push_back(p);
    if (common.empty()) {
      summary_.remarks.push_back(fmt::format("aliasing: {} '{}' keeps a buffer of its own: no pool may hold both it and '{}'", what,
                                             g_.tensor(member).name, g_.tensor(rb.tensor).name));
      return false;
    }
    rb.candidates = std::move(common);
    if (rb.pinnedPool < 0 && mb.pinnedPool >= 0) {
      rb.pinnedPool = mb.pinnedPool;
      rb.pinOrigin = mb.pinOrigin;
    }
    rb.firstStep = std::min(rb.firstStep, mb.firstStep);
    rb.endStep = std::max(rb.endStep, mb.endStep);
    rb.alignment = std::max(rb.alignment, mb.alignment);
    rb.reads += mb.reads;
    mb.aliasOf = rb.tensor;
    if (holdsOutput_[static_cast<size_t>(m)]) holdsOutput_[static_cast<size_t>(r)] = true;
    summary_.savedBytes += mb.sizeBytes;
    return true;
  }

  const Graph& g_;
  std::vector<PlacedBuffer>& buffers_;
  std::vector<int> index_;  ///< per tensor: its activation buffer, or -1
  std::vector<bool> holdsOutput_;  ///< per buffer: its group holds a graph output (never written over in place)
  AliasSummary summary_;
};

}  // namespace

AliasSummary assignAliases(const Graph& g, std::vector<PlacedBuffer>& buffers) { return AliasBuilder(g, buffers).run(); }

}  // namespace stowage
