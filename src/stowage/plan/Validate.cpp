// Memory plan validator (see Validate.h).
#include "stowage/plan/Validate.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace stowage {

Status validatePlan(const MemoryPlan& plan, const std::function<std::string(TensorId)>& nameOf) {
  auto describe = [&](size_t i) {
    const Buffer& b = plan.buffers[i];
    std::string name = nameOf ? nameOf(b.tensor) : fmt::format("tensor #{}", b.tensor);
    return fmt::format("buffer '{}' (bytes [{}, {}), steps [{}, {}))", name, plan.offsets[i], plan.offsets[i] + b.sizeBytes,
                       b.firstStep, b.endStep);
  };
  if (plan.offsets.size() != plan.buffers.size())
    return makeError("memory plan", fmt::format("has {} offsets for {} buffers", plan.offsets.size(), plan.buffers.size()));
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const Buffer& b = plan.buffers[i];
    if (b.alignment == 0 || (b.alignment & (b.alignment - 1)) != 0)
      return makeError("memory plan", fmt::format("{} has alignment {}, not a power of two", describe(i), b.alignment));
    if (plan.offsets[i] % b.alignment != 0)
      return makeError("memory plan", fmt::format("{} is not aligned to {} bytes", describe(i), b.alignment));
    if (plan.offsets[i] + b.sizeBytes > plan.workspaceBytes || plan.offsets[i] + b.sizeBytes < plan.offsets[i])
      return makeError("memory plan", fmt::format("{} ends past the {}-byte workspace", describe(i), plan.workspaceBytes));
    if (b.endStep <= b.firstStep)
      return makeError("memory plan", fmt::format("{} has an empty lifetime", describe(i)));
  }
  // Sweep by start offset: only buffers whose address ranges intersect need a lifetime comparison.
  std::vector<size_t> byOffset(plan.buffers.size());
  std::iota(byOffset.begin(), byOffset.end(), size_t{0});
  std::sort(byOffset.begin(), byOffset.end(), [&](size_t a, size_t b) {
    return plan.offsets[a] != plan.offsets[b] ? plan.offsets[a] < plan.offsets[b] : a < b;
  });
  for (size_t x = 0; x < byOffset.size(); ++x) {
    const size_t i = byOffset[x];
    if (plan.buffers[i].sizeBytes == 0) continue;
    const size_t end = plan.offsets[i] + plan.buffers[i].sizeBytes;
    for (size_t y = x + 1; y < byOffset.size() && plan.offsets[byOffset[y]] < end; ++y) {
      const size_t j = byOffset[y];
      if (plan.buffers[j].sizeBytes == 0 || !lifetimesOverlap(plan.buffers[i], plan.buffers[j])) continue;
      auto [first, second] = std::minmax(i, j);
      return makeError("memory plan", fmt::format("{} and {} overlap in address while both are live", describe(first),
                                                  describe(second)));
    }
  }
  return Status::success();
}

}  // namespace stowage
