// The kernel of every layer (see LayerKernels.h).
#include "stowage/lower/LayerKernels.h"

#include "stowage/lower/TileKernel.h"

namespace stowage {

std::vector<LayerKernel> lowerLayerKernels(const Graph& g, const ProgramPlan& plan, const KernelIsa& isa) {
  std::vector<LayerKernel> layers(g.nodes.size());
  for (size_t step = 0; step < g.nodes.size(); ++step) {
    auto lowered = lowerNode(g, g.nodes[step]);
    if (!lowered.ok() || lowered->empty()) continue;
    const KernelCall& call = lowered->front();
    LayerKernel& l = layers[step];
    if (const OffloadedLayer* o = plan.offloadedAt(static_cast<int>(step)); o != nullptr) {
      const std::optional<TileKernel> k = tileKernelOfIntrinsic(o->kernel);
      l.kernel = l.function = k ? tileKernelFunction(*k) : kernelFunctionName(call);
      if (o->mode == "engine") {
        l.variant = KernelVariant::Engine;
      } else if (const KernelOverride* own = boardKernelFor(g, plan.board, o->target, l.kernel, firstTensorOf(call)); own != nullptr) {
        l.variant = KernelVariant::Board;
        l.function = own->function;
      }
      continue;
    }
    const int target = step < plan.nodeTargets.size() ? plan.nodeTargets[step] : -1;
    l.kernel = l.function = kernelFunctionName(call);
    l.variant = cpuKernelVariant(g, plan.board, target, call, isa);
    if (l.variant == KernelVariant::Board)
      l.function = boardKernelFor(g, plan.board, target, l.kernel, firstTensorOf(call))->function;
  }
  return layers;
}

}  // namespace stowage
