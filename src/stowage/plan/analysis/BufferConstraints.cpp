// Buffer constraint analysis (see BufferConstraints.h).
#include "stowage/plan/analysis/BufferConstraints.h"

#include <fmt/format.h>

#include <algorithm>

#include "stowage/plan/analysis/Liveness.h"
#include "stowage/plan/analysis/PoolCost.h"

namespace stowage {

namespace {

std::string listText(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return "[" + s + "]";
}

/// Collects, per pool, the first reason it cannot hold one buffer.
class Exclusions {
 public:
  explicit Exclusions(size_t pools) : why_(pools) {}
  void exclude(size_t pool, std::string reason) {
    if (why_[pool].empty()) why_[pool] = std::move(reason);
  }
  bool allowed(size_t pool) const { return why_[pool].empty(); }
  const std::string& why(size_t pool) const { return why_[pool]; }

 private:
  std::vector<std::string> why_;
};

const std::vector<std::string>* ruleList(const PlacementRule& rule, BufferRole role, bool isOutput) {
  const auto& list = isOutput ? rule.outputs : (role == BufferRole::Constant ? rule.weights : rule.inputs);
  return list ? &*list : nullptr;
}

}  // namespace

Result<std::vector<PlacedBuffer>> analyzeBuffers(const Graph& g, const Board& board, const NodeTargets& targets,
                                                 bool ioInPools, bool viewsShareBuffers) {
  const std::vector<int> producer = g.producers();
  std::vector<std::vector<int>> readers(g.tensors.size());
  for (size_t step = 0; step < g.nodes.size(); ++step)
    for (TensorId id : g.nodes[step].inputs)
      if (id != kNoTensor) readers[static_cast<size_t>(id)].push_back(static_cast<int>(step));

  std::vector<PlacedBuffer> buffers;
  for (const Buffer& b : computeLiveness(g)) {
    PlacedBuffer p;
    p.tensor = b.tensor;
    p.role = BufferRole::Activation;
    p.sizeBytes = b.sizeBytes;
    p.firstStep = b.firstStep;
    p.endStep = b.endStep;
    buffers.push_back(p);
  }
  const int steps = static_cast<int>(g.nodes.size());
  if (ioInPools) {
    std::vector<bool> added(g.tensors.size(), false);
    for (const std::vector<TensorId>* ids : {&g.inputs, &g.outputs})
      for (TensorId id : *ids) {
        const size_t ti = static_cast<size_t>(id);
        if (added[ti] || g.tensors[ti].isConstant()) continue;
        added[ti] = true;
        const bool isOutput = std::find(g.outputs.begin(), g.outputs.end(), id) != g.outputs.end();
        PlacedBuffer p;
        p.tensor = id;
        p.role = BufferRole::Activation;
        p.sizeBytes = g.tensors[ti].byteSize();
        p.firstStep = producer[ti] >= 0 ? producer[ti] : 0;
        int last = producer[ti];
        for (int step : readers[ti]) last = std::max(last, step);
        p.endStep = isOutput ? std::max(1, steps) : std::max(last + 1, p.firstStep + 1);
        buffers.push_back(p);
      }
    std::sort(buffers.begin(), buffers.end(), [](const PlacedBuffer& a, const PlacedBuffer& b) { return a.tensor < b.tensor; });
  }
  for (size_t i = 0; i < g.tensors.size(); ++i) {
    if (!g.tensors[i].isConstant() || readers[i].empty()) continue;
    PlacedBuffer p;
    p.tensor = static_cast<TensorId>(i);
    p.role = BufferRole::Constant;
    p.sizeBytes = g.tensors[i].byteSize();
    p.firstStep = 0;
    p.endStep = std::max(1, steps);
    buffers.push_back(p);
  }

  const std::vector<int> cheapest = poolsCheapestFirst(board);
  std::vector<bool> pinUsed(board.pins.size(), false);
  for (PlacedBuffer& b : buffers) {
    const size_t ti = static_cast<size_t>(b.tensor);
    const Tensor& t = g.tensors[ti];
    b.reads = static_cast<int>(readers[ti].size());
    Exclusions ex(board.pools.size());
    const PoolKind wantKind = b.role == BufferRole::Constant ? PoolKind::Constant : PoolKind::Workspace;
    for (size_t pi = 0; pi < board.pools.size(); ++pi)
      if (board.pools[pi].kind != wantKind)
        ex.exclude(pi, fmt::format("a {} pool cannot hold {}", wantKind == PoolKind::Constant ? "workspace" : "constant",
                                   b.role == BufferRole::Constant ? "constants" : "activations"));

    std::vector<std::pair<int, bool>> touches;  // (step, tensor is an output of that node)
    if (b.role == BufferRole::Activation && producer[ti] >= 0) touches.emplace_back(producer[ti], true);
    for (int step : readers[ti]) touches.emplace_back(step, false);
    for (const auto& [step, isOutput] : touches) {
      const Node& n = g.nodes[static_cast<size_t>(step)];
      const Target& target = board.targets[static_cast<size_t>(targets.targetOf[static_cast<size_t>(step)])];
      const bool touchesNoMemory = viewsShareBuffers && n.op == OpKind::Reshape;
      for (size_t pi = 0; pi < board.pools.size() && !touchesNoMemory; ++pi)
        if (!board.pools[pi].canAccess(target.name))
          ex.exclude(pi, fmt::format("target '{}' (which runs node '{}') cannot access it", target.name, n.name));
      for (const PlacementRule& rule : board.rules) {
        if (!rule.matches(opName(n.op), n.name)) continue;
        const std::vector<std::string>* allowed = ruleList(rule, b.role, isOutput);
        if (allowed == nullptr) continue;
        for (size_t pi = 0; pi < board.pools.size(); ++pi)
          if (std::find(allowed->begin(), allowed->end(), board.pools[pi].name) == allowed->end())
            ex.exclude(pi, fmt::format("the rule at {} allows only {} for the {} of node '{}'", rule.origin, listText(*allowed),
                                       isOutput ? "outputs" : (b.role == BufferRole::Constant ? "weights" : "inputs"), n.name));
      }
    }
    for (int pi : cheapest)
      if (ex.allowed(static_cast<size_t>(pi))) b.candidates.push_back(pi);
    // Pins: the last pin whose glob matches the tensor name decides (flag pins come after the board's).
    for (size_t k = board.pins.size(); k-- > 0;) {
      const PoolPin& pin = board.pins[k];
      if (!globMatch(pin.tensor, t.name)) continue;
      pinUsed[k] = true;
      if (b.pinnedPool >= 0) continue;  // an earlier pin, overridden by a later one
      const MemoryPool* pool = board.findPool(pin.pool);
      if (pool == nullptr)
        return makeError(pin.origin, fmt::format("pin '{}={}' names pool '{}', which the board does not have", pin.tensor, pin.pool, pin.pool));
      const int pi = static_cast<int>(pool - board.pools.data());
      if (!ex.allowed(static_cast<size_t>(pi))) {
        Diagnostic d = makeError(pin.origin, fmt::format("pin '{}={}' puts tensor '{}' in pool '{}', but {}", pin.tensor, pin.pool,
                                                         t.name, pin.pool, ex.why(static_cast<size_t>(pi))));
        d.hint = "remove the pin, or change the board so that pool may hold this tensor";
        return d;
      }
      b.pinnedPool = pi;
      b.pinOrigin = pin.origin;
      b.candidates = {pi};
    }
    if (b.candidates.empty()) {
      Diagnostic d = makeError(fmt::format("tensor '{}'", t.name),
                               fmt::format("no pool of the board can hold this {} ({} bytes)", bufferRoleName(b.role), b.sizeBytes));
      for (size_t pi = 0; pi < board.pools.size(); ++pi)
        d.notes.push_back(fmt::format("pool '{}': {}", board.pools[pi].name, ex.why(pi)));
      d.hint = "add a pool every target touching this tensor can access, or relax the rules that exclude the pools above";
      return d;
    }
    b.alignment = 1;
    for (int pi : b.candidates) b.alignment = std::max(b.alignment, board.pools[static_cast<size_t>(pi)].alignment);
  }
  for (size_t k = 0; k < board.pins.size(); ++k)
    if (!pinUsed[k]) {
      Diagnostic d = makeError(board.pins[k].origin, fmt::format("pin '{}={}' matches no tensor the planner places", board.pins[k].tensor,
                                                                 board.pins[k].pool));
      d.hint = "pins name intermediate tensors or constants (see `stowage compile --dump-ir`); graph inputs and outputs are "
               "passed by the application and are not placed (unless --io-in-pools)";
      return d;
    }
  return buffers;
}

Status restrictCopyingViews(const Graph& g, const Board& board, const NodeTargets& targets, std::vector<PlacedBuffer>& buffers) {
  std::vector<int> index(g.tensors.size(), -1);
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].role == BufferRole::Activation && buffers[i].tensor != kNoTensor) index[static_cast<size_t>(buffers[i].tensor)] = static_cast<int>(i);
  auto rootOf = [&](TensorId id) {
    int i = index[static_cast<size_t>(id)];
    while (i >= 0 && buffers[static_cast<size_t>(i)].aliasOf != kNoTensor) i = index[static_cast<size_t>(buffers[static_cast<size_t>(i)].aliasOf)];
    return i;
  };
  for (size_t step = 0; step < g.nodes.size(); ++step) {
    const Node& n = g.nodes[step];
    if (n.op != OpKind::Reshape || n.inputs.empty() || n.outputs.empty()) continue;
    const TensorId in = n.inputs[0], out = n.outputs[0];
    const int ri = rootOf(in), ro = rootOf(out);
    if (ri >= 0 && ri == ro) {
      const PlacedBuffer &x = buffers[static_cast<size_t>(index[static_cast<size_t>(in)])],
                         &y = buffers[static_cast<size_t>(index[static_cast<size_t>(out)])];
      if (x.aliasOffset == y.aliasOffset && x.aliasRunBytes == 0 && y.aliasRunBytes == 0) continue;  // the same bytes: no copy
    }
    const Target& target = board.targets[static_cast<size_t>(targets.targetOf[step])];
    for (const auto& [tensor, root] : {std::pair{in, ri}, std::pair{out, ro}}) {
      if (root < 0) continue;
      PlacedBuffer& b = buffers[static_cast<size_t>(root)];
      std::vector<std::string> lost;
      std::erase_if(b.candidates, [&](int pi) {
        const bool no = !board.pools[static_cast<size_t>(pi)].canAccess(target.name);
        if (no) lost.push_back(board.pools[static_cast<size_t>(pi)].name);
        return no;
      });
      const bool pinLost = b.pinnedPool >= 0 && !board.pools[static_cast<size_t>(b.pinnedPool)].canAccess(target.name);
      if (!b.candidates.empty() && !pinLost) continue;
      Diagnostic d = makeError(fmt::format("node '{}'", n.name),
                               fmt::format("this view could not share its input's buffer, so target '{}' copies tensor '{}' "
                                           "(placed with '{}'), but it cannot access {}",
                                           target.name, g.tensor(tensor).name, g.tensor(b.tensor).name,
                                           pinLost ? "its pinned pool '" + board.pools[static_cast<size_t>(b.pinnedPool)].name + "'"
                                                   : "any pool left for it " + listText(lost)));
      d.hint = "let the view's input and output share a pool (rules, pins), or give target '" + target.name + "' access to one";
      return d;
    }
  }
  return {};
}

}  // namespace stowage
