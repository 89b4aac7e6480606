// Activations kept in an accelerator's local pool between its layers (see ResidentTensors.h).
#include "stowage/tile/ResidentTensors.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "stowage/plan/MemoryPlan.h"
#include "stowage/plan/analysis/BufferConstraints.h"
#include "stowage/tile/TileProgram.h"
#include "stowage/tile/ScratchLayout.h"

namespace stowage {

namespace {

/// The operand (0 x, 1 w, 2 y) tensor `t` is in the layer's tile kernel, or -1 when it is used otherwise too (a side
/// operand, or two operands at once).
int operandOf(const LayerShape& s, TensorId t) {
  int op = -1, uses = 0;
  if (s.call.output == t) {
    op = 2;
    ++uses;
  }
  for (size_t i = 0; i < s.call.inputs.size(); ++i) {
    if (s.call.inputs[i] != t) continue;
    if (i > 1) return -1;
    op = static_cast<int>(i);
    ++uses;
  }
  return uses == 1 ? op : -1;
}

/// Who makes and reads each tensor (node steps; a node reading a tensor twice counts once).
struct TensorUses {
  std::vector<int> producer;
  std::vector<std::vector<int>> readers;
  explicit TensorUses(const Graph& g) : producer(g.producers()), readers(g.tensors.size()) {
    for (size_t step = 0; step < g.nodes.size(); ++step)
      for (TensorId t : g.nodes[step].inputs) {
        if (t == kNoTensor) continue;
        auto& r = readers[static_cast<size_t>(t)];
        if (r.empty() || r.back() != static_cast<int>(step)) r.push_back(static_cast<int>(step));
      }
  }
  /// The producer, then the readers.
  std::vector<int> touching(TensorId t) const {
    std::vector<int> steps = {producer[static_cast<size_t>(t)]};
    const auto& r = readers[static_cast<size_t>(t)];
    steps.insert(steps.end(), r.begin(), r.end());
    return steps;
  }
};

/// True when the offloaded layers of `tiled` whose resident operands or reserved bytes differ between `was` and
/// `is` (residentOperandsByStep of two sets of residents), tiled again, all still tile with `is` and take fewer
/// estimated cycles in all than with `was`.
bool fasterWith(const TiledProgram& tiled, const std::map<int, ResidentOperands>& was, const std::map<int, ResidentOperands>& is,
                const RetiledCycles& retiled) {
  auto at = [](const std::map<int, ResidentOperands>& m, int step) {
    const auto it = m.find(step);
    return it == m.end() ? ResidentOperands{} : it->second;
  };
  uint64_t cyclesBefore = 0, cyclesAfter = 0;
  bool changed = false;
  for (const OffloadedLayer& L : tiled.offloaded) {
    const ResidentOperands a = at(was, L.step), b = at(is, L.step);
    if (a.reservedBytes == b.reservedBytes && a.resident == b.resident) continue;
    const std::optional<uint64_t> x = retiled(L.step, a), y = retiled(L.step, b);
    if (!x || !y) return false;
    cyclesBefore += *x;
    cyclesAfter += *y;
    changed = true;
  }
  return changed && cyclesAfter < cyclesBefore;
}

}  // namespace

std::vector<ResidentTensor> chooseResidentTensors(const Graph& g, const Board& board, const TiledProgram& tiled, bool throughViews,
                                                  const RetiledCycles& retiled, const PoolBudget* budget,
                                                  std::vector<std::string>* remarks) {
  std::vector<ResidentTensor> out;
  std::optional<std::map<int, ResidentOperands>> outOperands;  // residentOperandsByStep(out), built when first needed
  const size_t steps = g.nodes.size();
  // Layers that may use a resident tensor: run in cores mode by an accelerator (each with its tile kernel's shape).
  std::vector<const OffloadedLayer*> layerAt(steps, nullptr);
  std::vector<std::optional<LayerShape>> shapeAt(steps);
  for (const OffloadedLayer& L : tiled.offloaded) {
    const Target& t = board.targets[static_cast<size_t>(L.target)];
    if (L.mode != "cores" || t.kind != TargetKind::Accelerator || t.engineDim > 0) continue;
    const size_t step = static_cast<size_t>(L.step);
    shapeAt[step] = layerShapeOf(g, g.nodes[step]).shape;
    if (shapeAt[step]) layerAt[step] = &L;
  }
  // The pools the planner may give each activation under this partition (access, rules, pins; a view touches no
  // memory when the planner shares its input's buffer with its output).
  NodeTargets targets;
  targets.targetOf = tiled.nodeTargets;
  auto buffers = analyzeBuffers(g, board, targets, false, throughViews);
  if (!buffers) return out;
  std::vector<const PlacedBuffer*> bufferOf(g.tensors.size(), nullptr);
  for (const PlacedBuffer& b : *buffers)
    if (b.role == BufferRole::Activation && b.tensor != kNoTensor) bufferOf[static_cast<size_t>(b.tensor)] = &b;
  // Tile buffer bytes per (pool, step) of the first tiling.
  std::map<std::pair<int, int>, size_t> scratchAt, residentAt;
  for (const ScratchRequest& r : tiled.scratch)
    scratchAt[{r.pool, r.step}] += alignUp(r.sizeBytes, board.pools[static_cast<size_t>(r.pool)].alignment);
  const TensorUses uses(g);
  for (const PlacedBuffer& b : *buffers) {
    if (b.role != BufferRole::Activation || b.tensor == kNoTensor) continue;
    const size_t ti = static_cast<size_t>(b.tensor);
    const int p = uses.producer[ti];
    if (p < 0 || uses.readers[ti].empty() || !layerAt[static_cast<size_t>(p)]) continue;
    const int target = layerAt[static_cast<size_t>(p)]->target;
    bool ok = operandOf(*shapeAt[static_cast<size_t>(p)], b.tensor) == 2;
    std::vector<int> pools = scratchPoolsFor(board, target, g.nodes[static_cast<size_t>(p)]);
    // The tensor, then its views (with throughViews): every reader is a layer of the target using it as x or w, or
    // a view whose output is read likewise.
    std::vector<const PlacedBuffer*> group = {&b};
    for (size_t k = 0; k < group.size() && ok; ++k) {
      const TensorId t = group[k]->tensor;
      for (int r : uses.readers[static_cast<size_t>(t)]) {
        const size_t rs = static_cast<size_t>(r);
        const Node& rn = g.nodes[rs];
        if (throughViews && rn.op == OpKind::Reshape && !layerAt[rs] && rn.outputs.size() == 1) {
          const PlacedBuffer* view = bufferOf[static_cast<size_t>(rn.outputs[0])];  // none for a graph output
          ok = view != nullptr && !uses.readers[static_cast<size_t>(view->tensor)].empty();
          if (!ok) break;
          group.push_back(view);
          continue;
        }
        if (!layerAt[rs] || layerAt[rs]->target != target) {
          ok = false;
          break;
        }
        const int op = operandOf(*shapeAt[rs], t);
        if (op != 0 && op != 1) ok = false;
        const std::vector<int> mine = scratchPoolsFor(board, target, rn);
        std::erase_if(pools, [&](int pi) { return std::find(mine.begin(), mine.end(), pi) == mine.end(); });
      }
    }
    if (!ok) continue;
    int pool = -1;
    for (int pi : pools) {
      const MemoryPool& mp = board.pools[static_cast<size_t>(pi)];
      if (mp.kind == PoolKind::Workspace && mp.perCoreStride == 0 && mp.sizeBytes &&
          std::all_of(group.begin(), group.end(), [&](const PlacedBuffer* m) {
            return std::find(m->candidates.begin(), m->candidates.end(), pi) != m->candidates.end();
          })) {
        pool = pi;
        break;
      }
    }
    if (pool < 0) continue;
    const MemoryPool& mp = board.pools[static_cast<size_t>(pool)];
    const size_t size = alignUp(b.sizeBytes, mp.alignment);
    int first = b.firstStep, end = b.endStep;
    for (const PlacedBuffer* m : group) {
      first = std::min(first, m->firstStep);
      end = std::max(end, m->endStep);
    }
    // Half of what the pool holds beside the bytes that can only live there at each step (a tensor pinned there is
    // one of them: its bytes are counted already).
    const size_t charged = budget && budget->counts(b.tensor) ? 0 : size;
    bool fits = true, residentsFit = true, residentsFitWhole = true;
    for (int s = first; s < end; ++s) {
      const size_t forced = budget ? budget->forcedBytes(pool, s) : 0;
      const size_t half = forced >= *mp.sizeBytes ? 0 : (*mp.sizeBytes - forced) / 2;
      fits = fits && residentAt[{pool, s}] + charged + scratchAt[{pool, s}] <= half;
      residentsFit = residentsFit && residentAt[{pool, s}] + charged <= half;
      residentsFitWhole = residentsFitWhole && residentAt[{pool, s}] + charged <= *mp.sizeBytes / 2;
    }
    if (!residentsFit && residentsFitWhole && remarks)
      remarks->push_back(fmt::format("resident: '{}' ({} bytes) goes through main memory: half of what '{}' holds beside the buffers that "
                                     "can only live there is too small for it ({})",
                                     g.tensor(b.tensor).name, size, mp.name, budget->why(board, pool, first, end)));
    std::vector<ResidentTensor> with = out;
    with.push_back({b.tensor, pool, target});
    for (size_t k = 1; k < group.size(); ++k) with.push_back({group[k]->tensor, pool, target, b.tensor});
    if (!fits) {
      if (!residentsFit || !retiled) continue;
      if (!outOperands) outOperands = residentOperandsByStep(g, board, out);
      std::map<int, ResidentOperands> withOperands = residentOperandsByStep(g, board, with);
      if (!fasterWith(tiled, *outOperands, withOperands, retiled)) continue;
      outOperands = std::move(withOperands);
    } else {
      outOperands.reset();
    }
    for (int s = first; s < end; ++s) residentAt[{pool, s}] += charged;
    out = std::move(with);
  }
  return out;
}

std::map<std::pair<int, int>, size_t> residentBytesByPoolAndStep(const Graph& g, const Board& board, const std::vector<ResidentTensor>& resident) {
  std::map<std::pair<int, int>, size_t> bytes;
  const TensorUses uses(g);
  for (const ResidentTensor& r : resident) {
    if (r.viewOf != kNoTensor) continue;  // counted with the tensor it views
    std::vector<int> steps = uses.touching(r.tensor);
    for (const ResidentTensor& v : resident)
      if (v.viewOf == r.tensor) {
        const std::vector<int> more = uses.touching(v.tensor);
        steps.insert(steps.end(), more.begin(), more.end());
      }
    const int end = *std::max_element(steps.begin(), steps.end()) + 1;
    const size_t size = alignUp(g.tensor(r.tensor).byteSize(), board.pools[static_cast<size_t>(r.pool)].alignment);
    for (int s = steps.front(); s < end; ++s) bytes[{r.pool, s}] += size;
  }
  return bytes;
}

std::map<int, ResidentOperands> residentOperandsByStep(const Graph& g, const Board& board, const std::vector<ResidentTensor>& resident) {
  std::map<int, ResidentOperands> m;
  for (const auto& [poolStep, size] : residentBytesByPoolAndStep(g, board, resident)) m[poolStep.second].reservedBytes += size;
  std::map<int, std::optional<LayerShape>> shapes;  // each layer lowered once
  const TensorUses uses(g);
  for (const ResidentTensor& r : resident) {
    for (int step : uses.touching(r.tensor)) {
      auto [it, fresh] = shapes.try_emplace(step);
      if (fresh) it->second = layerShapeOf(g, g.nodes[static_cast<size_t>(step)]).shape;
      const int op = it->second ? operandOf(*it->second, r.tensor) : -1;
      if (op >= 0) m[step].resident.direct[op] = true;
    }
  }
  return m;
}

std::vector<ResidentTensor> residentsStillOffloaded(const Graph& g, const TiledProgram& tiled, const std::vector<ResidentTensor>& resident) {
  std::vector<bool> offloaded(g.nodes.size(), false);
  for (const OffloadedLayer& L : tiled.offloaded) offloaded[static_cast<size_t>(L.step)] = true;
  const TensorUses uses(g);
  // The steps of the views among them copy nothing and run no layer.
  std::vector<bool> view(g.nodes.size(), false);
  for (const ResidentTensor& v : resident)
    if (v.viewOf != kNoTensor) view[static_cast<size_t>(uses.producer[static_cast<size_t>(v.tensor)])] = true;
  auto layersStay = [&](const ResidentTensor& r) {
    const std::vector<int> steps = uses.touching(r.tensor);
    return std::all_of(steps.begin(), steps.end(), [&](int s) {
      const size_t st = static_cast<size_t>(s);
      return view[st] || (offloaded[st] && tiled.nodeTargets[st] == r.target);
    });
  };
  std::vector<ResidentTensor> kept;
  for (const ResidentTensor& r : resident) {
    if (r.viewOf != kNoTensor) continue;
    bool stays = layersStay(r);
    for (const ResidentTensor& v : resident)
      if (v.viewOf == r.tensor) stays = stays && layersStay(v);
    if (!stays) continue;
    kept.push_back(r);
    for (const ResidentTensor& v : resident)
      if (v.viewOf == r.tensor) kept.push_back(v);
  }
  return kept;
}

}  // namespace stowage
