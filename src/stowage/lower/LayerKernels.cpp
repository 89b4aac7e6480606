// The kernel of a layer (see LayerKernels.h).
#include "stowage/lower/LayerKernels.h"

#include "stowage/lower/TileKernel.h"

namespace stowage {

LayerKernel layerKernelOf(const Graph& g, const ProgramPlan& plan, int step, const std::vector<KernelCall>& calls, const KernelIsa& isa) {
  LayerKernel l;
  if (calls.empty()) return l;
  const KernelCall& call = calls.front();
  if (const OffloadedLayer* o = plan.offloadedAt(step); o != nullptr) {
    const std::optional<TileKernel> k = tileKernelOfIntrinsic(o->kernel);
    l.kernel = l.function = k ? tileKernelFunction(*k) : kernelFunctionName(call);
    if (o->mode == "engine") {
      l.variant = KernelVariant::Engine;
    } else if (const KernelOverride* own = boardKernelFor(g, plan.board, o->target, l.kernel, firstTensorOf(call)); own != nullptr) {
      l.variant = KernelVariant::Board;
      l.function = own->function;
    }
    return l;
  }
  const size_t s = static_cast<size_t>(step);
  const int target = s < plan.nodeTargets.size() ? plan.nodeTargets[s] : -1;
  l.kernel = l.function = kernelFunctionName(call);
  l.variant = cpuKernelVariant(g, plan.board, target, call, isa);
  if (l.variant == KernelVariant::Board) l.function = boardKernelFor(g, plan.board, target, l.kernel, firstTensorOf(call))->function;
  return l;
}

}  // namespace stowage
