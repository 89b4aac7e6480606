// The tiler's entry point: partitions the scheduled graph between the board's CPU and its accelerators (a node
// goes to an accelerator when the board lists its op there, the engine computes its data types and it has a
// tiled lowering whose tiles fit the accelerator's scratch pools; every fallback is a remark with the reason),
// chooses each offloaded layer's tiles and asks the planner for their scratch buffers.
#pragma once

#include <string>
#include <vector>

#include "stowage/ir/Graph.h"
#include "stowage/plan/PoolBudget.h"
#include "stowage/plan/ProgramPlan.h"
#include "stowage/target/Board.h"
#include "stowage/tile/TileChoice.h"

namespace stowage {

struct TileOptions {
  bool doubleBuffer = true;  ///< `--no-double-buffer` turns it off
  bool resident = true;      ///< activations stay in an accelerator's local pool between its layers (`--no-resident`)
  bool prefetchWeights = true;  ///< a layer's cores load the next layer's first weight tiles (`--no-weight-prefetch`)
  bool viewsShareBuffers = true;  ///< the planner aliases views (PlanOptions::aliasing): residents may pass through them
  const TileSearchObserver* observer = nullptr;  ///< sees each layer's tile search (analyses; not the searches residents try)
  bool weightsOnce = true;  ///< a prefetch may load a layer's first weight tiles for all its cores in one transfer (`--no-weights-once`)
  /// A prefetch's issuer may be up to 9 layers before the layer before on the target, not 3 (`--no-far-weight-prefetch`).
  bool farWeightPrefetch = true;
  /// Weights loaded once are tried with every issuing core, not only the round-robin one (`--no-every-once-core`).
  bool everyOnceCore = true;
  /// Where the layers mostly wait for DMA, an issuer may load the first weight tiles of any number of later layers
  /// (the weight stream, tile/WeightPrefetch.h; `--no-weight-stream`).
  bool weightStream = true;
  /// What each pool can still hold beside the buffers that can only live there (plan/PoolBudget.h): tiles, residents
  /// and prefetched weight buffers stay within it. Null: the pools' whole sizes.
  const PoolBudget* budget = nullptr;
  bool sharedInput = true;  ///< cores may share one input buffer per row block (tile/SharedInput.h; `--no-shared-input`)
  /// ... also as one row block of every output row, the whole input loaded once (`--no-shared-whole-input`)
  bool sharedWholeInput = true;
  /// Consecutive matrix-engine layers overlap the one's last store with the next's first input load
  /// (tile/InputHandover.h; `--no-input-handover`).
  bool handInputs = true;
};

struct TiledProgram {
  std::vector<int> nodeTargets;          ///< by step: index into Board::targets
  std::vector<std::string> remarks;      ///< fallbacks with their reasons
  std::vector<ScratchRequest> scratch;   ///< every tile buffer (pairedWith indexes this list)
  std::vector<int> scratchPools;         ///< pools holding tile buffers
  std::vector<OffloadedLayer> offloaded; ///< by step
  std::vector<ResidentTensor> resident;  ///< activations kept in a local pool (the planner pins them there)
};

/// Tiles `g` (verified, scheduled) for `board` (validated). With `options.resident`, tiles it twice: the
/// activations the first tiling leaves between layers of one cores-mode accelerator stay in its local pool
/// (tile/ResidentTensors.h) and the second tiling uses them in place. With `options.prefetchWeights`, consecutive
/// layers of one accelerator's cores hand over their first weight tiles (tile/WeightPrefetch.h). All three stay within
/// `options.budget`: the plan of the result needs no second tiling.
TiledProgram tileProgram(const Graph& g, const Board& board, const TileOptions& options);

/// Records the tiled layer at `step` on `target` ("engine" or "cores" `mode`) in `r`: its OffloadedLayer and its
/// scratch requests. `reservePools` keeps other activations out of the pools of its tiles (accelerator pools).
void recordTiledLayer(TiledProgram& r, int step, int target, const std::string& mode, const LayerShape& s, TileChoice choice,
                      bool reservePools);

}  // namespace stowage
