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
  // Allowed overlaps (Buffer::overlapsWith): the output y of a layer may share bytes with its input x only at
  // y's first step, the last of x, and only as far as its shift allows. The sweep below then sees x end one step
  // early; what else starts at that step is checked against x here.
  std::vector<int> endOf(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) endOf[i] = buffers[i].endStep;
  for (size_t y = 0; y < buffers.size(); ++y) {
    const int xi = buffers[y].overlapsWith;
    if (xi < 0 || static_cast<size_t>(xi) >= buffers.size() || static_cast<size_t>(xi) == y) continue;
    const size_t x = static_cast<size_t>(xi);
    const Buffer &by = buffers[y], &bx = buffers[x];
    const bool disjoint = offsets[y] + by.sizeBytes <= offsets[x] || offsets[x] + bx.sizeBytes <= offsets[y];
    if (disjoint || by.sizeBytes == 0 || bx.sizeBytes == 0) continue;
    if (bx.endStep != by.firstStep + 1 || bx.firstStep >= by.firstStep)
      return fail(PlanFailure::Overlap, std::min(x, y), std::max(x, y),
                  fmt::format("{} overlaps its input {}, which is live beyond the step that writes it", describe(y), describe(x)));
    if (!allowedOverlap(by, offsets[y], offsets[x]))
      return fail(PlanFailure::Overlap, std::min(x, y), std::max(x, y),
                  fmt::format("{} starts {} bytes after its input {}: its layer's row order allows at most {} or at least {}",
                              describe(y), static_cast<int64_t>(offsets[y]) - static_cast<int64_t>(offsets[x]), describe(x),
                              by.overlapBelow, by.overlapAbove));
    endOf[x] = by.firstStep;
    for (size_t k = 0; k < buffers.size(); ++k) {
      const Buffer& bk = buffers[k];
      if (k == x || k == y || bk.sizeBytes == 0 || bk.firstStep != by.firstStep) continue;
      if (offsets[k] < offsets[x] + bx.sizeBytes && offsets[x] < offsets[k] + bk.sizeBytes)
        return fail(PlanFailure::Overlap, std::min(x, k), std::max(x, k),
                    fmt::format("{} and {} overlap in address while both are live", describe(std::min(x, k)), describe(std::max(x, k))));
    }
  }
  // Sweep over time. At every moment the live buffers are pairwise disjoint in address (or we have already
  // stopped), so a new buffer overlaps one of them iff it overlaps its neighbour below or above by offset.
  std::vector<size_t> starts, ends;
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].sizeBytes > 0) starts.push_back(i), ends.push_back(i);
  std::sort(starts.begin(), starts.end(), [&](size_t a, size_t b) {
    return buffers[a].firstStep != buffers[b].firstStep ? buffers[a].firstStep < buffers[b].firstStep : a < b;
  });
  std::sort(ends.begin(), ends.end(), [&](size_t a, size_t b) { return endOf[a] != endOf[b] ? endOf[a] < endOf[b] : a < b; });
  std::set<std::pair<size_t, size_t>> live;  // (offset, index)
  size_t e = 0;
  for (size_t i : starts) {
    // Half-open lifetimes: buffers ending at or before this start are gone.
    for (; e < ends.size() && endOf[ends[e]] <= buffers[i].firstStep; ++e)
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
