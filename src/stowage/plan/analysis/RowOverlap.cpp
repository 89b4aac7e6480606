// Overlapping layers (see RowOverlap.h).
#include "stowage/plan/analysis/RowOverlap.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <limits>

#include "stowage/target/KernelOverride.h"

namespace stowage {

namespace {

/// The portable kernel a node with a row order runs (the name a board's [[kernels]] entry would replace).
const char* portableKernelName(OpKind op) {
  switch (op) {
    case OpKind::QConv2d: return "stowage_qconv2d_s8";
    case OpKind::QDepthwiseConv2d: return "stowage_qdepthwise_conv2d_s8";
    case OpKind::QAveragePool2d: return "stowage_qavgpool2d_s8";
    case OpKind::QMaxPool2d: return "stowage_qmaxpool2d_s8";
    default: return nullptr;
  }
}

/// First and one-past-last input row read by output row `oy` (clipped to the input; empty when every tap is in
/// the padding).
std::pair<int64_t, int64_t> rowsReadBy(const RowOrder& o, int64_t oy) {
  int64_t first = -1, last = -1;
  for (int64_t t = 0; t < o.taps; ++t) {
    const int64_t iy = oy * o.stride - o.pad + t * o.dilation;
    if (iy < 0 || iy >= o.inRows) continue;
    if (first < 0) first = iy;
    last = iy;
  }
  return first < 0 ? std::pair<int64_t, int64_t>{0, 0} : std::pair<int64_t, int64_t>{first, last + 1};
}

}  // namespace

std::optional<RowOrder> rowOrderOf(const Graph& g, const Node& n, const Board& board, int target) {
  const char* kernel = portableKernelName(n.op);
  if (kernel == nullptr || n.inputs.empty() || n.outputs.size() != 1) return std::nullopt;
  const Tensor& x = g.tensor(n.inputs[0]);
  const Tensor& y = g.tensor(n.outputs[0]);
  if (x.dtype != DType::Int8 || y.dtype != DType::Int8 || x.shape.size() != 4 || y.shape.size() != 4) return std::nullopt;
  if (x.shape[0] != 1 || y.shape[0] != 1) return std::nullopt;
  if (target >= 0 && static_cast<size_t>(target) < board.targets.size() &&
      board.findKernel(kernel, kernelDtypeName(DType::Int8), board.targets[static_cast<size_t>(target)]) != nullptr)
    return std::nullopt;
  const bool pool = n.op == OpKind::QAveragePool2d || n.op == OpKind::QMaxPool2d;
  const auto strides = n.attrs.getInts("strides", {1, 1});
  const auto pads = n.attrs.getInts("pads", {0, 0, 0, 0});
  const auto dil = pool ? std::vector<int64_t>{1, 1} : n.attrs.getInts("dilations", {1, 1});
  int64_t kh = 0;
  if (pool) {
    const auto k = n.attrs.getInts("kernel_shape");
    if (k.size() != 2) return std::nullopt;
    kh = k[0];
  } else {
    if (n.inputs.size() < 2 || g.tensor(n.inputs[1]).shape.size() != 4) return std::nullopt;
    kh = g.tensor(n.inputs[1]).shape[1];
  }
  if (strides.size() != 2 || pads.size() != 4 || dil.size() != 2 || kh < 1 || strides[0] < 1 || dil[0] < 1) return std::nullopt;
  RowOrder o;
  o.inRows = x.shape[1];
  o.outRows = y.shape[1];
  o.inRowBytes = x.shape[2] * x.shape[3];
  o.outRowBytes = y.shape[2] * y.shape[3];
  o.stride = strides[0];
  o.pad = pads[0];
  o.taps = kh;
  o.dilation = dil[0];
  o.band = 1;
  o.takesBand = !pool;
  if (o.inRows < 1 || o.outRows < 1 || o.inRowBytes < 1 || o.outRowBytes < 1) return std::nullopt;
  return o;
}

int64_t overlapBelowShift(const RowOrder& o) {
  // Band j ends at output row e_j; it and every later band read input rows from f_j = max(0, first row of band j's
  // windows) on (windows move down as j grows). Its rows must end at or below f_j's first byte.
  int64_t best = std::numeric_limits<int64_t>::max();
  for (int64_t j0 = 0; j0 < o.outRows; j0 += o.band) {
    const int64_t end = std::min(o.outRows, j0 + o.band);
    const int64_t first = std::clamp<int64_t>(j0 * o.stride - o.pad, 0, o.inRows);
    best = std::min(best, first * o.inRowBytes - end * o.outRowBytes);
  }
  return best;
}

int64_t overlapAboveShift(const RowOrder& o) {
  if (!o.takesBand) return std::numeric_limits<int64_t>::max();
  // Bands from the last: band j starts at output row j0; it and every band after it (lower ones) read input rows
  // below l_j = one past the last row of band j's windows. Its rows must start at or above l_j's first byte.
  int64_t best = std::numeric_limits<int64_t>::min();
  for (int64_t j0 = 0; j0 < o.outRows; j0 += o.band) {
    const int64_t last = std::min(o.outRows, j0 + o.band) - 1;
    const int64_t below = std::clamp<int64_t>(last * o.stride - o.pad + (o.taps - 1) * o.dilation + 1, 0, o.inRows);
    best = std::max(best, below * o.inRowBytes - j0 * o.outRowBytes);
  }
  return best;
}

std::string checkRowOverlap(const RowOrder& o, int64_t shift) {
  if (o.band < 1) return "the layer has no band order";
  const int64_t bands = (o.outRows + o.band - 1) / o.band;
  auto position = [&](int64_t j) { return o.descending ? bands - 1 - j : j; };  // when band j runs
  // lastRead[r]: the position of the last band reading input row r (-1: none).
  std::vector<int64_t> lastRead(static_cast<size_t>(o.inRows), -1);
  for (int64_t j = 0; j < bands; ++j)
    for (int64_t oy = j * o.band; oy < std::min(o.outRows, (j + 1) * o.band); ++oy) {
      auto [r0, r1] = rowsReadBy(o, oy);
      for (int64_t r = r0; r < r1; ++r) lastRead[static_cast<size_t>(r)] = std::max(lastRead[static_cast<size_t>(r)], position(j));
    }
  for (int64_t j = 0; j < bands; ++j) {
    const int64_t w0 = shift + j * o.band * o.outRowBytes;
    const int64_t w1 = shift + std::min(o.outRows, (j + 1) * o.band) * o.outRowBytes;
    // Input rows under band j's bytes that it or a band after it still reads.
    for (int64_t r = 0; r < o.inRows; ++r) {
      const int64_t b0 = r * o.inRowBytes, b1 = b0 + o.inRowBytes;
      if (b0 < w1 && w0 < b1 && lastRead[static_cast<size_t>(r)] >= position(j))
        return fmt::format("band {} (output rows {}..{}, run {}) writes over input row {}, which is read until the band run {}", j,
                           j * o.band, std::min(o.outRows, (j + 1) * o.band) - 1, position(j) + 1, r,
                           lastRead[static_cast<size_t>(r)] + 1);
    }
  }
  return "";
}

OverlapSummary assignOverlaps(const Graph& g, const Board& board, const std::vector<int>& nodeTargets,
                              const std::vector<bool>& stepOnCpu, std::vector<PlacedBuffer>& buffers) {
  OverlapSummary summary;
  std::vector<int> index(g.tensors.size(), -1);
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].role == BufferRole::Activation && buffers[i].tensor != kNoTensor) index[static_cast<size_t>(buffers[i].tensor)] = static_cast<int>(i);
  auto rootOf = [&](int i) {
    while (i >= 0 && buffers[static_cast<size_t>(i)].aliasOf != kNoTensor) i = index[static_cast<size_t>(buffers[static_cast<size_t>(i)].aliasOf)];
    return i;
  };
  // Groups with a strided member cannot be shifted as one range.
  std::vector<bool> strided(buffers.size(), false);
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].aliasRunBytes != 0) {
      const int r = rootOf(static_cast<int>(i));
      if (r >= 0) strided[static_cast<size_t>(r)] = true;
    }
  // Groups holding a graph output planned in a pool (--io-in-pools): the application reads it after the run, so no
  // layer may write over it, even at its last step inside the program.
  std::vector<bool> holdsOutput(buffers.size(), false);
  for (TensorId out : g.outputs) {
    const int i = out == kNoTensor ? -1 : rootOf(index[static_cast<size_t>(out)]);
    if (i >= 0) holdsOutput[static_cast<size_t>(i)] = true;
  }
  for (size_t step = 0; step < g.nodes.size(); ++step) {
    if (step >= stepOnCpu.size() || !stepOnCpu[step]) continue;
    const Node& n = g.nodes[step];
    const int target = step < nodeTargets.size() ? nodeTargets[step] : -1;
    std::optional<RowOrder> order = rowOrderOf(g, n, board, target);
    if (!order) continue;
    const int xi = n.inputs[0] == kNoTensor ? -1 : index[static_cast<size_t>(n.inputs[0])];
    const int yi = index[static_cast<size_t>(n.outputs[0])];
    if (xi < 0 || yi < 0) continue;  // graph inputs and outputs live in the application's memory
    PlacedBuffer& y = buffers[static_cast<size_t>(yi)];
    const PlacedBuffer& x = buffers[static_cast<size_t>(xi)];
    const int root = rootOf(xi);
    if (root < 0 || root == yi || y.aliasOf != kNoTensor || y.firstStep != static_cast<int>(step) || strided[static_cast<size_t>(yi)]) continue;
    const PlacedBuffer& xr = buffers[static_cast<size_t>(root)];
    if (x.aliasRunBytes != 0 || strided[static_cast<size_t>(root)] || holdsOutput[static_cast<size_t>(root)] ||
        xr.endStep != static_cast<int>(step) + 1)
      continue;
    // The input's group must have been written by an earlier step (the validator's rule): a graph input planned in
    // a pool (--io-in-pools) starts at step 0 like the output of the first layer that reads it.
    if (xr.firstStep >= static_cast<int>(step)) continue;
    // A part of its group (a Slice view: a band's rows of a fused chain's input): the rest of the group is other rows,
    // which the kernel's row order says nothing about.
    if (x.sizeBytes != xr.sizeBytes) continue;
    if (static_cast<int64_t>(x.sizeBytes) != order->inRows * order->inRowBytes ||
        static_cast<int64_t>(y.sizeBytes) != order->outRows * order->outRowBytes)
      continue;
    const int64_t below = overlapBelowShift(*order), above = overlapAboveShift(*order);
    if (below <= -static_cast<int64_t>(y.sizeBytes) && above >= static_cast<int64_t>(x.sizeBytes)) continue;  // no byte to share
    y.overlapsInput = n.inputs[0];
    y.overlapBelow = below;
    y.overlapAbove = above;
    y.rowBand = order->takesBand ? static_cast<int>(order->band) : 0;
    ++summary.layers;
  }
  return summary;
}

int orientRowBands(ProgramPlan& plan) {
  int sharing = 0;
  for (PlacedBuffer& y : plan.buffers) {
    if (y.overlapsInput == kNoTensor) continue;
    const int band = std::abs(y.rowBand);
    const bool shares = sharesBytesWithInput(plan, y);
    y.rowBand = 0;
    if (!shares) continue;
    ++sharing;
    const int64_t shift = static_cast<int64_t>(y.offset) - static_cast<int64_t>(plan.buffers[static_cast<size_t>(plan.bufferOf(y.overlapsInput))].offset);
    if (band > 0) y.rowBand = shift <= y.overlapBelow ? band : -band;
  }
  return sharing;
}

}  // namespace stowage
