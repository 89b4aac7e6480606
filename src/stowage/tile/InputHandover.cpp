// Input handover between consecutive matrix-engine layers (see InputHandover.h).
#include "stowage/tile/InputHandover.h"

#include <fmt/format.h>

#include <map>
#include <tuple>

#include "stowage/plan/MemoryPlan.h"
#include "stowage/tile/CostModel.h"
#include "stowage/tile/ResidentTensors.h"
#include "stowage/tile/TileChoice.h"
#include "stowage/tile/TileProgram.h"
#include "stowage/tile/WeightPrefetch.h"

namespace stowage {

TileCopy handedInputCopy(const TileSchedule& schedule) {
  if (schedule.tiles.empty() || !schedule.tiles.front().loadX) return {};
  return schedule.tiles.front().x;
}

namespace {

/// Main-memory bytes [first, end) a 2-D copy touches (rows spaced `stride` apart): a superset of them.
std::pair<size_t, size_t> span(const TileCopy& c) {
  if (c.rows == 0 || c.rowBytes == 0) return {c.offset, c.offset};
  return {c.offset, c.offset + (c.rows - 1) * c.stride + c.rowBytes};
}

}  // namespace

void handInputsAcrossLayers(const Graph& g, const Board& board, TiledProgram& tiled, const PoolBudget* budget) {
  std::vector<OffloadedLayer>& layers = tiled.offloaded;
  auto aligned = [&](int pool, size_t bytes) { return alignUp(bytes, board.pools[static_cast<size_t>(pool)].alignment); };
  // Bytes live per (pool, step) and (pool, bank, step): tile buffers (from their first step), resident tensors and
  // the bytes that can only live in the pool.
  std::map<std::pair<int, int>, size_t> poolLive;
  std::map<std::tuple<int, int, int>, size_t> bankLive;
  std::map<std::string, size_t> requestOf;
  for (size_t i = 0; i < tiled.scratch.size(); ++i) {
    const ScratchRequest& r = tiled.scratch[i];
    requestOf[r.name] = i;
    for (int s = r.firstStep >= 0 ? r.firstStep : r.step; s <= r.step; ++s) {
      poolLive[{r.pool, s}] += aligned(r.pool, r.sizeBytes);
      if (r.bank >= 0) bankLive[{r.pool, r.bank, s}] += aligned(r.pool, r.sizeBytes);
    }
  }
  std::vector<ResidentTensor> resident = tiled.resident;
  if (budget) std::erase_if(resident, [&](const ResidentTensor& r) { return budget->counts(r.viewOf == kNoTensor ? r.tensor : r.viewOf); });
  for (const auto& [poolStep, size] : residentBytesByPoolAndStep(g, board, resident)) poolLive[poolStep] += size;
  if (budget)
    for (const auto& [poolStep, size] : budget->forced) poolLive[poolStep] += size;

  int pairs = 0;
  uint64_t saved = 0;
  for (size_t i = 0; i + 1 < layers.size(); ++i) {
    OffloadedLayer& from = layers[i];
    OffloadedLayer& to = layers[i + 1];
    if (from.mode != "engine" || to.mode != "engine" || from.target != to.target || to.step != from.step + 1) continue;
    if (to.direct[0] || to.buffers[0][0].empty()) continue;
    const auto fromShape = layerShapeOf(g, g.nodes[static_cast<size_t>(from.step)]).shape;
    const auto toShape = layerShapeOf(g, g.nodes[static_cast<size_t>(to.step)]).shape;
    if (!fromShape || !toShape || toShape->call.inputs.empty() || toShape->call.inputs[0] == kNoTensor) continue;
    const TileSchedule toSchedule = offloadedSchedule(*toShape, to);
    if (toSchedule.tiles.empty() || toSchedule.tiles.front().xBuf != 0) continue;
    const TileCopy x = handedInputCopy(toSchedule);
    if (x.bytes() == 0) continue;
    // The input buffer's half 0 then lives from the earlier layer's step.
    const auto req = requestOf.find(to.buffers[0][0]);
    if (req == requestOf.end()) continue;
    ScratchRequest& x0 = tiled.scratch[req->second];
    const MemoryPool& pool = board.pools[static_cast<size_t>(x0.pool)];
    const size_t bytes = aligned(x0.pool, x0.sizeBytes);
    if (pool.sizeBytes && poolLive[{x0.pool, from.step}] + bytes > *pool.sizeBytes) continue;
    if (x0.bank >= 0 && pool.banks > 1 && pool.bankSizeBytes > 0 && bankLive[{x0.pool, x0.bank, from.step}] + bytes > pool.bankSizeBytes) continue;
    const Target& target = board.targets[static_cast<size_t>(from.target)];
    const CrossLayerWeights toCross = crossLayerTransfers(g, board, layers, i + 1);
    CrossLayerWeights fromCross = crossLayerTransfers(g, board, layers, i);
    const uint64_t before = estimateLayer(target, *fromShape, offloadedSchedule(*fromShape, from), operandBuffersOf(from), fromCross).total +
                            estimateLayer(target, *toShape, toSchedule, operandBuffersOf(to), toCross).total;
    CrossLayerWeights handedCross = toCross;
    handedCross.inputHandedOver = true;
    const LayerCost toCost = estimateLayer(target, *toShape, toSchedule, operandBuffersOf(to), handedCross);
    fromCross.issueInput = dmaCycles(target, x);
    // The earlier layer's last output tile is stored beside the load: they must not touch the same bytes.
    const TileSchedule fromSchedule = offloadedSchedule(*fromShape, from);
    if (fromSchedule.tiles.empty()) continue;
    if (toShape->call.inputs[0] == fromShape->call.output) {
      const auto [a0, a1] = span(x);
      const auto [b0, b1] = span(fromSchedule.tiles.back().y);
      if (a0 < b1 && b0 < a1) continue;
    }
    // Faster, both layers together, under the cost model?
    const LayerCost fromCost = estimateLayer(target, *fromShape, fromSchedule, operandBuffersOf(from), fromCross);
    if (fromCost.total + toCost.total >= before) continue;
    saved += before - (fromCost.total + toCost.total);
    from.handsInputTo = to.step;
    to.inputHandedOver = true;
    recordEstimate(from, fromCost);
    recordEstimate(to, toCost);
    x0.firstStep = from.step;
    poolLive[{x0.pool, from.step}] += bytes;
    if (x0.bank >= 0) bankLive[{x0.pool, x0.bank, from.step}] += bytes;
    ++pairs;
  }
  if (pairs > 0)
    tiled.remarks.push_back(fmt::format("input handover: {} engine layer(s) load the next layer's first input tile while they store their last "
                                        "output tile, after a fence ({} estimated cycles fewer; --no-input-handover turns it off)",
                                        pairs, saved));
}

}  // namespace stowage
