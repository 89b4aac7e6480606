// --shape / --bind parsing (see ModelFlags.h).
#include "ModelFlags.h"

#include <fmt/format.h>

#include "stowage/io/TensorFile.h"
#include "stowage/ir/ShapeParse.h"

namespace stowage::cli {

void addBoardFlags(CLI::App* sub, CompileOptions& options) {
  sub->add_option("--board", options.board.boardPath,
                  "Memory description (TOML): targets, pools (size, alignment, kind, access, placement user/static/fixed, "
                  "banks), placement rules and pins; see docs/memory-description.md. Default: one unlimited `user` "
                  "workspace pool and a static constant pool")
      ->type_name("FILE");
  sub->add_option("--pool", options.board.pools,
                  "Add a pool, tvmc-style: \"name=dtcm;size=64KiB;access=cpu;placement=static;section=.dtcm\" (replaces a "
                  "board pool of the same name). Repeatable")
      ->type_name("SPEC");
  sub->add_option("--rule", options.board.rules,
                  "Add a placement rule: \"op=Conv;inputs=sram;outputs=act_mem\" (also node=GLOB, weights=, scratch=; "
                  "lists with ','). Repeatable")
      ->type_name("SPEC");
  sub->add_option("--pin", options.board.pins, "Pin tensors to a pool: TENSOR=POOL (TENSOR may be a glob). Repeatable")
      ->type_name("TENSOR=POOL");
  sub->add_option("--planner", options.planner.algorithm,
                  "Offset algorithm: auto (greedy ones, then exact until the lower bound or the time limit), greedy-size, "
                  "greedy-conflicts, hill-climb, exact")
      ->capture_default_str();
  sub->add_flag("--guard", options.guard,
                "Checked build: canary bytes around every intermediate tensor, its bytes poisoned outside its lifetime and "
                "checksummed while live; a violation aborts naming the tensor (stowage_guard_fail in stowage_hal.h)");
  sub->add_option_function<std::string>(
         "--weights",
         [&options](const std::string& v) { options.weights = weightsFormatFromName(v).value_or(WeightsFormat::Auto); },
         "How constants are delivered: auto (default: C arrays in <name>_weights.c for `static` constant pools, a binary "
         "image <name>_weights_<pool>.bin for `user` and `fixed` ones), c (C arrays only; an error for a `user` or `fixed` "
         "constant pool), bin (one binary image per constant pool, each constant at its planned offset, padding zeroed, "
         "for devices that load weights at boot: the application passes each image's address in <name>_workspaces, or "
         "loads it at a fixed pool's _BASE)")
      ->check(CLI::IsMember({"auto", "c", "bin"}))
      ->type_name("auto|c|bin");
  sub->add_option_function<std::string>(
         "--kernels", [&options](const std::string& v) { options.portableKernels = v == "portable"; },
         "Which kernels the generated code calls: board (default: the board's own kernels where its [[kernels]] tables name "
         "one, the portable kernels of runtime/ elsewhere) or portable (the portable kernels everywhere); docs/kernels.md")
      ->check(CLI::IsMember({"board", "portable"}))
      ->type_name("board|portable");
  sub->add_flag("--io-in-pools", options.ioInPools,
                "Plan graph inputs and outputs into the pools like other tensors (an input is live from the start to its last "
                "reader, an output from its producer to the end) instead of in application memory: <name>_map_inputs(ws, &in) "
                "and <name>_map_outputs(ws, &out) give where to write inputs and read outputs, and <name>_run(ws) copies "
                "nothing");
  sub->add_flag("--no-double-buffer{false}", options.doubleBuffer,
                "Layers offloaded to accelerators or cores use one buffer per tile instead of two (DMA then no longer "
                "overlaps compute); for comparison");
  sub->add_flag("--no-resident{false}", options.resident,
                "Move every activation through main memory: by default an activation made and read only by layers that one "
                "accelerator runs on its cores stays in that accelerator's scratch pool (e.g. VTCM, L1) and the layers use "
                "it in place, with no DMA; for comparison");
  sub->add_flag("--no-weight-prefetch{false}", options.prefetchWeights,
                "Each layer offloaded to an accelerator's cores loads its own first weight tiles: by default the cores load "
                "them during their last tile of the layer before on the same accelerator (the weight buffer lives one layer "
                "longer where it fits); for comparison");
  sub->add_flag("--no-shared-input{false}", options.sharedInput,
                "Every core of a layer loads and holds its own input tiles: by default, where the cost model finds it "
                "faster, the cores of a layer share each row block's input in one buffer, loaded once (by one core or "
                "split over all of them) and read by every core after a barrier; for comparison");
  sub->add_flag("--no-shared-whole-input{false}", options.sharedWholeInput,
                "Cores share an input only row block by row block: by default, where the cost model finds it faster, a layer "
                "of a single row block (every output row) whose cores take different output channels loads its whole input "
                "once into one shared buffer, split over the cores' DMA; for comparison");
  sub->add_flag("--no-weights-once{false}", options.weightsOnce,
                "A prefetched first weight tile moves as one transfer per core: by default, where the cost model finds it "
                "faster, one core of the layer before loads the first weight tiles of all the cores in one transfer into "
                "their regions of the shared scratch pool (one DMA setup instead of one per core); for comparison");
  sub->add_flag("--no-far-weight-prefetch{false}", options.farWeightPrefetch,
                "A prefetched first weight tile is loaded by one of the 4 layers before on the same accelerator: by default, "
                "where the cost model finds the whole model faster, by one up to 10 layers before (short DMA-bound layers, "
                "such as fully connected ones streaming their weights, then start their transfers earlier); for comparison");
  sub->add_flag("--no-weight-stream{false}", options.weightStream,
                "An issuing layer loads the first weight tiles of at most one later layer per DMA channel: by default, where "
                "a run of offloaded layers mostly waits for transfers and the cost model finds the whole model faster, a layer may "
                "load those of any number of later layers, queued on every core's channels (the weight stream); for comparison");
  sub->add_flag("--no-every-once-core{false}", options.everyOnceCore,
                "First weight tiles loaded once for all cores are loaded by issuing core k mod cores for the k-th receiver: "
                "by default, where the cost model finds the whole model faster, by any core of the issuing layer (its "
                "channels may be free where that core's carry its own loads); for comparison");
  sub->add_flag("--no-input-handover{false}", options.handInputs,
                "Each layer on a matrix engine loads its own first input tile: by default, where the cost model finds it "
                "faster, the layer before loads it after a fence that follows its last compute, beside its last output "
                "store; for comparison");
  sub->add_flag("--no-fuse{false}", options.fuse,
                "Keep every Relu a layer of its own instead of fusing it into the float Conv before it (fusion is skipped "
                "anyway where a rule or pin needs the two tensors apart; report remarks list both); for comparison");
  sub->add_flag("--no-fuse-qdq{false}", options.fuseQdq,
                "Compute the operators of a QDQ model (float Conv, Gemm, MatMul between DequantizeLinear and QuantizeLinear) in "
                "float as written, with float weights: by default they run on integer kernels with their int8 weights, as ONNX "
                "Runtime's integer kernels compute them (docs/quantized-onnx.md); for comparison");
  sub->add_flag("--no-qdq-nhwc{false}", options.qdqNhwc,
                "Keep the int8 convolutions and fully connected layers of a QDQ model on the NCHW QLinear kernels: by default "
                "they run on the NHWC int8 kernels (DSP / Helium paths) with ONNX Runtime's requantization, the same bytes "
                "(docs/quantized-onnx.md); for comparison");
  sub->add_flag("--no-overlap{false}", options.planner.overlapLayers,
                "Plan every int8 convolution's, depthwise convolution's and pool's output apart from its input: by default a "
                "layer run on the CPU may write its output over the input rows it no longer reads, as far as its kernel's row "
                "order allows (checked by the validator; report.json \"overlaps\"); for comparison");
  sub->add_flag("--no-fold-pad{false}", options.foldPad,
                "Keep every explicit PAD as a layer with its padded copy: by default an int8 PAD of the zero point over height "
                "and width whose only reader is a convolution or depthwise convolution becomes that layer's padding (a "
                "placement rule or pin naming the Pad or its output keeps it; the summary's remark lists them); for comparison");
  sub->add_flag("--no-fold-constant-channels{false}", options.foldConstantChannels,
                "Keep every output channel of the int8 convolutions and fully connected layers as the model has it: by default "
                "a channel that writes the same byte for every input (a dead filter: its scale rounds every reachable "
                "accumulator to one value) gets zero weights and a requantization giving that byte, so that its layer takes the "
                "kernels' fast requantization (the summary's remark lists them); for comparison");
  sub->add_flag("--no-fuse-layers{false}", options.fuseLayers,
                "Run every layer whole: by default, on a board without accelerators, chains of int8 convolutions, depthwise "
                "convolutions, pools and residual adds around the peak of live bytes run one band of output rows at a time "
                "through the whole chain (halos recomputed; the summary says how many MACs that adds); for comparison");
  sub->add_flag("--fuse-layers", options.forceFuseLayers,
                "Fuse the chain around the peak into bands even where the layer-by-layer plan already fits the fastest pool");
  sub->add_option("--fuse-extra-macs", options.fuseExtraMacsPercent,
                  "Percent of the model's MACs that the halos fused bands recompute may add at most: higher trades compute for "
                  "RAM, lower RAM for compute (0: no fused bands with a halo)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1000.0));
  sub->add_flag("--no-reorder{false}", options.reorder,
                "Run the nodes in the model's order: by default, in a branching graph (residual blocks, concatenations) they "
                "run in the order with the lowest peak of live activation bytes (exact for small graphs, a beam search "
                "beyond; the summary's remark says how many bytes it saved); for comparison");
  sub->add_option("--time-limit", options.planner.timeLimitSeconds, "Seconds the planner may spend in all (exact, hill-climb and auto search within it; greedy plans are kept when it runs out)")
      ->capture_default_str();
}

Status applyModelFlags(const std::vector<std::string>& shapes, const std::vector<std::string>& binds, CompileOptions& options) {
  for (const std::string& v : shapes) {
    STOWAGE_ASSIGN_OR_RETURN(auto binding, parseShapeBinding(v));
    options.inputShapes[binding.first] = binding.second;
  }
  for (const std::string& v : binds) {
    const size_t eq = v.find('=');
    const std::string flag = "--bind " + v;
    if (eq == std::string::npos || eq == 0 || eq + 1 == v.size())
      return makeError(flag, "expected NAME=FILE", "for example --bind shape=shape.pb");
    const std::string file = v.substr(eq + 1);
    STOWAGE_ASSIGN_OR_RETURN(Tensor t, readTensorFile(file));
    t.kind = TensorKind::Constant;
    t.name = v.substr(0, eq);
    options.boundInputs[t.name] = std::move(t);
  }
  return Status::success();
}

}  // namespace stowage::cli
