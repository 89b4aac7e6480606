// Memory plan validator (see Validate.h).
#include "stowage/plan/Validate.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <iterator>
#include <set>

namespace stowage {

const char* planFailureName(PlanFailure failure) {
  switch (failure) {
    case PlanFailure::None: return "none";
    case PlanFailure::MissingOffset: return "missing-offset";
    case PlanFailure::BadAlignment: return "bad-alignment";
    case PlanFailure::Misaligned: return "misaligned";
    case PlanFailure::EmptyLifetime: return "empty-lifetime";
    case PlanFailure::OutOfCapacity: return "out-of-capacity";
    case PlanFailure::Overlap: return "overlap";
  }
  return "unknown";
}

PlanCheck checkOffsets(const std::vector<Buffer>& buffers, const std::vector<size_t>& offsets, size_t capacityBytes) {
  return checkOffsets(buffers, offsets, capacityBytes, {});
}

PlanCheck checkOffsets(const std::vector<Buffer>& buffers, const std::vector<size_t>& offsets, size_t capacityBytes,
                       const std::function<std::string(size_t index)>& nameOf) {
  auto describe = [&](size_t i) {
    const Buffer& b = buffers[i];
    std::string name = nameOf ? nameOf(i) : fmt::format("#{}", i);
    if (i >= offsets.size()) return fmt::format("buffer '{}' (steps [{}, {}))", name, b.firstStep, b.endStep);
    return fmt::format("buffer '{}' (bytes [{}, {}), steps [{}, {}))", name, offsets[i], offsets[i] + b.sizeBytes,
                       b.firstStep, b.endStep);
  };
  auto fail = [&](PlanFailure kind, size_t first, size_t second, std::string message) {
    PlanCheck c;
    c.failure = kind;
    c.first = first;
    c.second = second;
    c.message = std::move(message);
    return c;
  };
  if (offsets.size() != buffers.size()) {
    const size_t first = std::min(offsets.size(), buffers.size());
    return fail(PlanFailure::MissingOffset, first, kNoBufferIndex,
                fmt::format("plan has {} offsets for {} buffers", offsets.size(), buffers.size()));
  }
  const std::string capacityText =
      capacityBytes == std::numeric_limits<size_t>::max() ? std::string("address space")
                                                          : fmt::format("{}-byte capacity", capacityBytes);
  for (size_t i = 0; i < buffers.size(); ++i) {
    const Buffer& b = buffers[i];
    if (b.alignment == 0 || (b.alignment & (b.alignment - 1)) != 0)
      return fail(PlanFailure::BadAlignment, i, kNoBufferIndex,
                  fmt::format("{} has alignment {}, not a power of two", describe(i), b.alignment));
    if (offsets[i] % b.alignment != 0)
      return fail(PlanFailure::Misaligned, i, kNoBufferIndex,
                  fmt::format("{} is not aligned to {} bytes", describe(i), b.alignment));
    if (b.endStep <= b.firstStep)
      return fail(PlanFailure::EmptyLifetime, i, kNoBufferIndex, fmt::format("{} has an empty lifetime", describe(i)));
    if (offsets[i] + b.sizeBytes < offsets[i] || offsets[i] + b.sizeBytes > capacityBytes)
      return fail(PlanFailure::OutOfCapacity, i, kNoBufferIndex,
                  fmt::format("{} ends past the {}", describe(i), capacityText));
  }
  // Sweep over time. At every moment the live buffers are pairwise disjoint in address (or we have already
  // stopped), so a new buffer overlaps one of them iff it overlaps its neighbour below or above by offset.
  std::vector<size_t> starts, ends;
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].sizeBytes > 0) starts.push_back(i), ends.push_back(i);
  std::sort(starts.begin(), starts.end(), [&](size_t a, size_t b) {
    return buffers[a].firstStep != buffers[b].firstStep ? buffers[a].firstStep < buffers[b].firstStep : a < b;
  });
  std::sort(ends.begin(), ends.end(), [&](size_t a, size_t b) {
    return buffers[a].endStep != buffers[b].endStep ? buffers[a].endStep < buffers[b].endStep : a < b;
  });
  std::set<std::pair<size_t, size_t>> live;  // (offset, index)
  size_t e = 0;
  for (size_t i : starts) {
    // Half-open lifetimes: buffers ending at or before this start are gone.
    for (; e < ends.size() && buffers[ends[e]].endStep <= buffers[i].firstStep; ++e)
      live.erase({offsets[ends[e]], ends[e]});
    const size_t lo = offsets[i], hi = offsets[i] + buffers[i].sizeBytes;
    auto above = live.lower_bound({lo, 0});
    size_t other = kNoBufferIndex;
    if (above != live.end() && above->first < hi) other = above->second;
    if (other == kNoBufferIndex && above != live.begin()) {
      auto below = std::prev(above);
      if (below->first + buffers[below->second].sizeBytes > lo) other = below->second;
    }
    if (other != kNoBufferIndex) {
      auto [first, second] = std::minmax(i, other);
      return fail(PlanFailure::Overlap, first, second,
                  fmt::format("{} and {} overlap in address while both are live", describe(first), describe(second)));
    }
    live.insert({lo, i});
  }
  return PlanCheck{};
}

Status validatePlan(const MemoryPlan& plan, const std::function<std::string(TensorId)>& nameOf) {
  auto name = [&](size_t i) {
    const TensorId id = plan.buffers[i].tensor;
    return nameOf ? nameOf(id) : fmt::format("tensor #{}", id);
  };
  PlanCheck c = checkOffsets(plan.buffers, plan.offsets, plan.workspaceBytes, name);
  if (c.ok()) return Status::success();
  if (c.failure == PlanFailure::OutOfCapacity)  // say "workspace", the word the compile summary uses
    c.message = fmt::format("buffer '{}' (bytes [{}, {})) ends past the {}-byte workspace", name(c.first),
                            plan.offsets[c.first], plan.offsets[c.first] + plan.buffers[c.first].sizeBytes,
                            plan.workspaceBytes);
  return makeError("memory plan", c.message);
}

}  // namespace stowage
