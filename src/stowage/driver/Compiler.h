// The compile pipeline, top to bottom: import -> fold constants -> fold batch norm -> verify -> liveness ->
// plan -> validate -> emit C -> write the output folder. `stowage compile` and `stowage run` call it; each
// stage is timed.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "stowage/codegen/CEmitter.h"
#include "stowage/lower/LayerKernels.h"
#include "stowage/ir/Graph.h"
#include "stowage/plan/PlanProgram.h"
#include "stowage/plan/ProgramPlan.h"
#include "stowage/target/Board.h"
#include "stowage/support/Diagnostic.h"

namespace stowage {

struct TileSearchObserver;  // stowage/tile/TileChoice.h
struct EmulatedMachine;     // stowage/firmware/EmulatedMachine.h

struct CompileOptions {
  std::string modelPath;  ///< the ONNX model file
  /// Folder receiving <name>.h, <name>.c, <name>_weights.c (and any <name>_weights_<pool>.bin); empty: emit in memory only (`stowage run`).
  /// Written through a temporary folder beside it and renamed into place only when everything succeeded.
  std::string outDir;
  std::string name = "net";                    ///< prefix of every generated symbol (a C identifier)
  std::map<std::string, Shape> inputShapes;    ///< `--shape NAME=1x3x32x32` for dynamic input dims
  std::map<std::string, Tensor> boundInputs;   ///< `--bind NAME=FILE`: inputs frozen to constants
  bool dumpIr = false;                         ///< fill CompileResult::irDump with the IR after passes
  BoardFlags board;                            ///< `--board FILE`, `--pool`, `--rule`, `--pin`; empty: default board
  PlanOptions planner;                         ///< `--planner NAME`, `--time-limit S`
  bool guard = false;                          ///< `--guard`: canaries, poison and checksums in the generated C
  /// `--weights auto|c|bin`: constants as C arrays in <name>_weights.c or as one binary image per constant pool
  /// (<name>_weights_<pool>.bin), see WeightsFormat.
  WeightsFormat weights = WeightsFormat::Auto;
  /// `--io-in-pools`: graph inputs and outputs planned into the pools; the API maps them (<name>_map_inputs).
  bool ioInPools = false;
  bool doubleBuffer = true;                    ///< `--no-double-buffer` turns off ping-pong tiles of offloaded layers
  bool resident = true;                        ///< `--no-resident` moves every activation through main memory
  bool prefetchWeights = true;                 ///< `--no-weight-prefetch`: each layer loads its own first weight tiles
  bool weightsOnce = true;                     ///< `--no-weights-once`: every core's first weight tile is a transfer of its own
  bool farWeightPrefetch = true;               ///< `--no-far-weight-prefetch`: a prefetch's issuer at most 4 layers back
  bool everyOnceCore = true;                   ///< `--no-every-once-core`: weights loaded once by the round-robin issuing core only
  bool weightStream = true;                    ///< `--no-weight-stream`: an issuer loads the weights of at most one later layer per channel
  bool sharedInput = true;                     ///< `--no-shared-input`: every core loads its own input tiles (tile/SharedInput.h)
  bool sharedWholeInput = true;                ///< `--no-shared-whole-input`: only row blocks outer share their input
  bool handInputs = true;                      ///< `--no-input-handover`: each engine layer loads its own first input tile
  bool fuse = true;                            ///< `--no-fuse` keeps each Relu apart from the Conv before it
  /// `--no-fuse-qdq`: QDQ operators (float ops between DequantizeLinear and QuantizeLinear) stay float (pass/FuseQdq.h).
  bool fuseQdq = true;
  /// `--no-qdq-nhwc`: the QDQ pass's int8 convolutions and fully connected layers stay on the NCHW QLinear kernels
  /// instead of the NHWC int8 kernels (pass/QdqNhwc.h).
  bool qdqNhwc = true;
  /// `--no-reorder`: keep the model's node order; by default the nodes of branching graphs run in the order with the
  /// lowest peak of live activation bytes (pass/ReorderForMemory.h).
  bool reorder = true;
  /// `--no-fold-pad`: keep every explicit Pad as a layer of its own; by default an int8 Pad of the zero point read only
  /// by a convolution becomes that convolution's padding (pass/FoldPad.h).
  bool foldPad = true;
  /// `--no-fold-constant-channels`: keep every output channel's weights and requantization as the model has them; by
  /// default a channel that writes one byte for every input is rewritten to that constant (pass/FoldConstantChannels.h).
  bool foldConstantChannels = true;
  /// `--no-fuse-layers`: run every layer whole; by default chains of int8 NHWC layers around the peak run band by band
  /// on CPU-only boards (tile/FusedBands.h). `--fuse-layers` (forceFuseLayers) fuses even where the peak fits the pool.
  bool fuseLayers = true;
  bool forceFuseLayers = false;
  /// `--fuse-extra-macs`: the most MACs (percent of the model's) the fused bands' recomputed halos may add.
  double fuseExtraMacsPercent = 15.0;
  /// `--kernels portable`: ignore the board's own kernels ([[kernels]], docs/kernels.md) and call the portable ones.
  bool portableKernels = false;
  /// `--emulate MACHINE`: the board is mapped onto this QEMU machine (boardForMachine) before compiling; null: as is.
  const EmulatedMachine* emulate = nullptr;
  /// `--project DIR`: also write a firmware project there (firmware/FirmwareProject.h); needs a board with a [device]
  /// and memories, or `emulate`. Written like the output folder: only when everything succeeded.
  std::string projectDir;
  /// Sees every offloaded layer's tile search (analyses of the tiling space, bench/accel); null: none.
  const TileSearchObserver* tileSearchObserver = nullptr;
};

/// Wall time of one pipeline stage.
struct StageTime {
  std::string stage;    ///< "import", "fold-constants", ...
  double milliseconds;  ///< wall-clock ms
};

struct CompileResult {
  std::string name;            ///< model name used for the symbols
  Graph graph;                 ///< the graph after passes, as emitted
  ProgramPlan plan;            ///< validated memory plan over the board's pools
  GeneratedC code;             ///< the generated files
  std::string irDump;          ///< printGraph of `graph` when CompileOptions::dumpIr, else empty
  std::vector<StageTime> timings;
  int64_t macs = 0;            ///< multiply-accumulates of one run (sum of macCount over nodes)
  int64_t fusedBandExtraMacs = 0;  ///< of those, MACs (pool taps) recomputed for the halos of fused bands (tile/FusedBands.h)
  int fusedChains = 0;             ///< chains of layers run band by band
  size_t weightBytes = 0;      ///< bytes of constant data (the weights file's arrays)
  std::vector<std::string> remarks;  ///< what the compiler changed on its own (e.g. memories moved for an emulated machine)
  KernelIsa kernelIsa;         ///< the instruction-set paths the runtime kernels are built with (the board's CPU, --kernels)
  std::vector<LayerKernel> layerKernels;  ///< per step: the kernel each layer calls and its variant
};

/// The board of `options`: resolveBoard, then mapped onto `options.emulate` when set (remarks say what moved).
Result<Board> resolveCompileBoard(const CompileOptions& options, std::vector<std::string>* remarks = nullptr);

/// The linker-script files of a compile: <name>_sections.ld when a pool has a section or the board has memories,
/// <name>_memory.ld with memories, <name>.ld (complete) with a [device] and memories.
Result<std::vector<GeneratedFile>> linkerScriptFiles(const CompileResult& result);

/// Imports `options.modelPath` (TFLite by extension or identifier, else ONNX, with `inputShapes` and `boundInputs`).
Result<Graph> importModel(const CompileOptions& options);

/// Compiles `options.modelPath`; writes the files when `options.outDir` is set. Errors name the model file,
/// node or output folder; on any error no output folder is created or modified.
Result<CompileResult> compileModel(const CompileOptions& options);

/// The pipeline after import, on an already built graph (hand-built in tests, imported by compileModel):
/// resolves the board, then passes, verification, planning, validation and emission. Does not write files;
/// `options.modelPath`, `inputShapes` and `boundInputs` are ignored. `timings` receives one entry per stage.
Result<CompileResult> compileGraph(Graph graph, const CompileOptions& options, std::vector<StageTime> timings = {});

/// compileGraph on an already resolved `board` (its `options.board` is ignored).
Result<CompileResult> compileGraphOnBoard(Graph graph, const Board& board, const CompileOptions& options,
                                          std::vector<StageTime> timings = {});

}  // namespace stowage
