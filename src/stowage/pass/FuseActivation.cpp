// Conv / Gemm + Relu / Clip fusion (see FuseActivation.h).
#include "stowage/pass/FuseActivation.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>

namespace stowage {

Result<std::vector<std::string>> fuseActivation(Graph& g, const MergeVeto& veto) {
  const std::vector<int> producers = g.producers();
  const std::vector<int> uses = g.useCounts();
  std::vector<bool> drop(g.nodes.size(), false);
  std::vector<std::string> remarks, fused;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& act = g.nodes[i];
    if ((act.op != OpKind::Relu && act.op != OpKind::Clip) || act.inputs.size() != 1 || act.outputs.size() != 1) continue;
    const TensorId mid = act.inputs[0];
    const TensorId out = act.outputs[0];
    if (mid == kNoTensor || producers[static_cast<size_t>(mid)] < 0 || uses[static_cast<size_t>(mid)] != 1) continue;
    if (std::find(g.outputs.begin(), g.outputs.end(), mid) != g.outputs.end()) continue;
    Node& producer = g.nodes[static_cast<size_t>(producers[static_cast<size_t>(mid)])];
    const bool fusable = producer.op == OpKind::Conv || producer.op == OpKind::Gemm || producer.op == OpKind::Add ||
                         producer.op == OpKind::Sub || producer.op == OpKind::Mul;
    if (!fusable || producer.outputs.size() != 1 || producer.attrs.has(kFusedActivationAttr)) continue;
    if (g.tensor(mid).dtype != DType::Float32 || g.tensor(out).dtype != DType::Float32 ||
        g.tensor(mid).shape != g.tensor(out).shape)
      continue;
    const std::string op(opName(act.op));
    if (veto) {
      if (std::string why = veto(g, mid, out); !why.empty()) {
        remarks.push_back(fmt::format("{} '{}' not fused into {} '{}': {}", op, act.name, opName(producer.op), producer.name, why));
        continue;
      }
    }
    // Relu is y < 0 ? 0 : y, which is the Clip test with bounds 0 and +inf (NaN and -0 pass through both).
    const float inf = std::numeric_limits<float>::infinity();
    const bool relu = act.op == OpKind::Relu;
    const float lo = relu ? 0.0f : act.attrs.getFloat("min", -inf);
    const float hi = relu ? inf : act.attrs.getFloat("max", inf);
    fused.push_back(fmt::format("'{}' into '{}'", act.name, producer.name));
    producer.attrs.set(kFusedActivationAttr, op);
    producer.attrs.set(kFusedMinAttr, lo);
    producer.attrs.set(kFusedMaxAttr, hi);
    producer.outputs[0] = out;
    drop[i] = true;
  }
  if (fused.empty()) return remarks;
  remarks.insert(remarks.begin(), fmt::format("{} Relu/Clip fused into the Conv, Gemm, Add, Sub or Mul before them (which clamps its outputs; "
                                              "--no-fuse keeps them apart): {}",
                                              fused.size(), fmt::join(fused, ", ")));
  g.removeNodes(drop);
  return remarks;
}

}  // namespace stowage
