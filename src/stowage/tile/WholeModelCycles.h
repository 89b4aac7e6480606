// A whole model's cycles under the cost model, after planning: the compiler's estimate of one run (every step as the
// host simulator charges it) and the whole-model bound, the least busy time of the busiest unit (docs/accelerators.md).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "stowage/ir/Graph.h"
#include "stowage/plan/ProgramPlan.h"

namespace stowage {

/// One unit of the board that offloaded work keeps busy: a target's matrix engine (its execute queue) or each of
/// its cores, a DMA queue (an engine's load or store queue, or each of a target's cores x channels DMA channels).
struct UnitBound {
  std::string unit;             ///< "'gemmini' engine execute", "'hvx' each of 4 cores", "'hvx' DMA (each of 8 channels)", "cpu"
  std::string kind;             ///< "compute" or "dma" ("cpu": the CPU layers alone, when nothing is offloaded)
  int target = -1;              ///< index into Board::targets (-1 for "cpu", the CPU layers alone)
  uint64_t offloadedCycles = 0; ///< the least busy cycles the model's offloaded work needs on this unit
  uint64_t cycles = 0;          ///< offloadedCycles + the CPU layers' cycles (they run between offloaded layers)
};

/// The DMA bytes that must move at the least, summed over the targets that tile layers (each moved once, as one
/// transfer per tensor and direction).
struct MinimumDmaBytes {
  uint64_t weights = 0;       ///< constant weight operands of tiled layers, loaded once per target
  uint64_t graphInputs = 0;   ///< graph inputs read by tiled layers, loaded once
  uint64_t graphOutputs = 0;  ///< graph outputs made by tiled layers, stored once
  /// Activations that cross between a tiled layer and a layer on another target (stored by one, loaded by the other),
  /// or that do not fit the local pools of their target or that a matrix engine makes (stored once and loaded once).
  uint64_t activations = 0;
  uint64_t total() const { return weights + graphInputs + graphOutputs + activations; }
};

/// One step's part of the dependency bound (WholeModelCycles::dependencyBound): a lower bound on the time from the
/// end of the previous code-running step's last compute to the end of this step's last compute (a CPU step: its end).
struct DependencyStep {
  int step = -1;
  bool offloaded = false;   ///< an offloaded layer (else a CPU step that runs code)
  /// The bytes of the layer's inputs (x, and w when made by a layer) that the previous code-running step made (the
  /// graph's inputs before the first), received by DMA (not used in place); each at most what its tiles load as planned.
  uint64_t inputBytes = 0;
  /// A layer: one DMA setup before its first compute when it receives such bytes or the layer before it stores its
  /// output by DMA (that store ends before this layer computes); 0 else. A CPU step: the drain of the offloaded layer
  /// before it (one DMA setup when that layer's output is stored by DMA).
  uint64_t fill = 0;
  /// A layer: its compute as one tile divided evenly over its target's compute units (the compute bound's per-layer
  /// term); a CPU step: its cycles (cpuStepCycles).
  uint64_t compute = 0;
  /// A layer: one setup + inputBytes over every DMA queue that can load (an engine's load queue, every core's every
  /// channel), 0 without inputBytes.
  uint64_t load = 0;
  uint64_t cycles = 0;      ///< a layer: max(fill + compute, load); a CPU step: fill + compute
};

/// One target's part of the transfer bound (WholeModelCycles::transferBound, docs/accelerators.md "Transfer bound"):
/// every tensor its layers receive by DMA (not used in place) moves in at least one transfer of setup + bytes, all of
/// them between the start of its first layer and the last compute of its last layer, on its load queues; a tensor
/// whose one transfer would not fit that window goes in pieces, each paying a setup. The last layer's output store
/// (when not in place) follows that compute, and the CPU steps before its first layer and after its last add.
struct TransferBound {
  int target = -1;            ///< index into Board::targets
  std::string targetName;
  size_t tensors = 0;         ///< tensors its layers receive by DMA, each counted once
  uint64_t bytes = 0;         ///< their bytes (per tensor the most any one layer's tiles load of it, at most its size)
  size_t transfers = 0;       ///< the fewest transfers that fit the window: tensors too large for one go in pieces
  int queues = 1;             ///< loadQueues(target)
  uint64_t setup = 0;         ///< setupCycles(target): what each transfer pays
  uint64_t window = 0;        ///< the least time in which those transfers fit the queues, each piece inside it
  uint64_t cpuBefore = 0;     ///< cycles of the CPU steps before its first layer (no transfer is issued before)
  uint64_t drain = 0;         ///< one setup when its last layer stores its output by DMA (after the last load)
  uint64_t cpuAfter = 0;      ///< cycles of the CPU steps after its last layer
  uint64_t cycles = 0;        ///< cpuBefore + window + drain + cpuAfter
};

struct WholeModelCycles {
  /// The compiler's estimate of one run: the sum over steps of each offloaded layer's estimate (after
  /// settlePrefetchArrivals) and each CPU step's cycles (cpuStepCycles). The simulator measures the same total.
  uint64_t estimate = 0;
  uint64_t cpuCycles = 0;        ///< the CPU steps' part of `estimate` (untiled layers on CPU targets)
  std::vector<UnitBound> units;  ///< every unit offloaded work uses, board order; the CPU alone when none
  uint64_t bound = 0;            ///< max over units of UnitBound::cycles
  std::string boundUnit;         ///< the unit setting it (the first such unit in `units`)
  uint64_t dmaBytesPlanned = 0;  ///< bytes the tiled layers' transfers move as planned (every tile's loads and stores)
  MinimumDmaBytes dmaBytesMinimum;
  /// Runs of offloaded layers: maximal sequences of steps one target runs, which the CPU's layers that run code (or
  /// the program's ends, or a change of target) separate.
  size_t offloadedRuns = 0;
  /// What the bound leaves out and no schedule can overlap: per run, one DMA setup before its first compute when its
  /// first layer must receive its input or its weights by DMA (the input not used in place, or the weights neither
  /// used in place nor loaded by an earlier layer), and one after its last compute when its last layer's output is
  /// stored (not used in place). Each is the target's dma_setup_cycles (rounded up), the least any transfer takes.
  uint64_t fillDrainFloor = 0;
  /// The dependency bound (docs/accelerators.md, "Dependency bound"): the host runs the steps one after another, so
  /// the run takes at least the sum over the steps that run code of DependencyStep::cycles, plus finalDrain.
  uint64_t dependencyBound = 0;
  std::vector<DependencyStep> dependencySteps;  ///< the steps that run code, in program order
  /// One DMA setup after the program's last step when that is an offloaded layer whose output is stored by DMA.
  uint64_t finalDrain = 0;
  /// The bound with the fill and drain floor where the two add up to a lower bound: the maximum over units of a
  /// compute unit's cycles plus fillDrainFloor (nothing computes while a run fills or drains) and a DMA unit's cycles
  /// alone (the floor's transfers are on its queues, already in its cycles). bound + fillDrainFloor exceeds it, and
  /// may exceed the run, when a DMA unit sets the bound.
  uint64_t boundWithFloor = 0;
  /// The transfer bound: the largest of the targets' TransferBound::cycles (0 when no target tiles layers).
  uint64_t transferBound = 0;
  std::vector<TransferBound> transferBounds;  ///< per target that tiles layers, board order
  /// The best lower bound the compiler knows: max(boundWithFloor, dependencyBound, transferBound).
  uint64_t bestBound() const { return std::max({boundWithFloor, dependencyBound, transferBound}); }
  double ratio() const { return bound > 0 ? static_cast<double>(estimate) / static_cast<double>(bound) : 0.0; }
  /// estimate / (bound + fillDrainFloor): the measure proposed beside `ratio` (docs/accelerators.md).
  double ratioToBoundAndFloor() const {
    return bound + fillDrainFloor > 0 ? static_cast<double>(estimate) / static_cast<double>(bound + fillDrainFloor) : 0.0;
  }
  /// estimate / bestBound().
  double ratioToBestBound() const { return bestBound() > 0 ? static_cast<double>(estimate) / static_cast<double>(bestBound()) : 0.0; }
};

/// The term that sets bestBound(): "transfer bound", "dependency bound" or "bound with the floor" (the first that
/// equals it, in that order).
const char* bestBoundTerm(const WholeModelCycles& w);

/// The units a target's compute spreads over in the bound: a matrix engine is one, a CPU streams on one core
/// (CpuStreaming.h), an accelerator's layers may use all of its cores.
int computeUnits(const Target& target);
/// The DMA queues that can carry a target's loads: a matrix engine's one load queue (mvin), else every core's every
/// channel.
int loadQueues(const Target& target);
/// One transfer's setup, dma_setup_cycles rounded up.
uint64_t setupCycles(const Target& target);

/// The least window in which transfers of `bytes` (one entry per tensor) fit `queues` queues of `bytesPerCycle` each,
/// every transfer paying `setup` and lying inside the window: the least W with sum over tensors of (p setups + bytes /
/// bytesPerCycle) <= queues x W, where p is the fewest pieces whose largest, setup + bytes / (p x bytesPerCycle),
/// takes at most W. Sets `transfers` to the sum of those p. 0 for no tensors.
uint64_t transferWindow(const std::vector<uint64_t>& bytes, uint64_t setup, double bytesPerCycle, int queues, size_t* transfers = nullptr);

/// The dependency bound's sum split into its parts (the summary line and bench/accel print them).
struct DependencyParts {
  uint64_t offloadedCompute = 0, cpuCycles = 0;
  uint64_t setups = 0;        ///< every step's fill and the final drain
  size_t waitingSteps = 0;    ///< steps with a fill
  uint64_t loadsBeyond = 0;   ///< what loads add beyond the setup and compute of their step
  size_t loadBoundSteps = 0;  ///< steps whose load is longer than their setup and compute
};
DependencyParts dependencyParts(const WholeModelCycles& w);

/// Cycles the host simulator charges step `step` when a CPU runs it untiled: cpuLayerCycles of the node on its
/// target (0 for a node that emits no kernel call, an offloaded step or a step past the plan's targets).
uint64_t cpuStepCycles(const Graph& g, const ProgramPlan& plan, size_t step);

/// The estimate and the whole-model bound of `g` as `plan` runs it. Per target that tiles layers (an accelerator, or a
/// CPU streaming through its fast pool): compute = the sum over its tiled layers of the layer's compute as one tile
/// (the least any tiling costs: engine ceil(N/dim) * ceil(K/dim) * (M + dim), cores ceil(MACs / macs_per_cycle)),
/// divided evenly over the target's cores (ceil; a CPU streams on one core); DMA = one transfer per tensor and
/// direction of the MinimumDmaBytes (setup + ceil(bytes / dma_bytes_per_cycle)), on an engine's load queue (loads) and
/// store queue (stores), on cores divided evenly over every core's channels (ceil). An activation stays local (moves
/// nothing) when it is no graph input or output, its producer and every reader (through views) run on the same
/// target, that target is no matrix engine (its outputs go to main memory: mvout) and its bytes fit the largest scratch
/// pool of that target's tiled layers. Each unit's bound adds cpuCycles. Also the runs of offloaded layers and their
/// fill and drain floor (WholeModelCycles::fillDrainFloor), and the dependency bound (WholeModelCycles::dependencyBound).
WholeModelCycles wholeModelCycles(const Graph& g, const ProgramPlan& plan);

}  // namespace stowage
