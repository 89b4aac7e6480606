// Alias analysis: which activation buffers can share memory by design, so that the planner places one buffer per
// group. Views (Reshape and what it stands for) share their input's bytes, Add / QAdd writes in place into an input
// that dies there, and a Concat's inputs are written by their producers straight into their slices of its output.
#pragma once

#include <string>
#include <vector>

#include "stowage/ir/Graph.h"
#include "stowage/plan/ProgramPlan.h"

namespace stowage {

/// What assignAliases did.
struct AliasSummary {
  int views = 0;          ///< view outputs that share their input's buffer
  int inPlace = 0;        ///< Add/QAdd outputs written into a dying input
  int slices = 0;         ///< Concat inputs written straight into their slice of the output (strided ones included)
  int stridedSlices = 0;  ///< of those, channel slices of an NHWC output (written with an output pixel stride)
  size_t savedBytes = 0;  ///< bytes of buffers no longer planned on their own
  std::vector<std::string> remarks;  ///< one per alias given up (no common candidate pool), then a summary line
};

/// A Slice whose output is one contiguous run of its input's bytes (rows of an NHWC image with batch 1: fused bands,
/// tile/FusedBands.h) is a view at that run's offset, unless its input is a graph input or its output a graph output.
/// Decides alias groups over `buffers` (analyzeBuffers' result, activations and constants of `g`) and records
/// them: a member gets `aliasOf` = its group's root (the one buffer the planner places) and `aliasOffset` = where
/// its bytes start in the root; the root's lifetime becomes the union [min firstStep, max endStep) of its
/// members, its candidates the intersection of theirs (a member whose intersection would be empty stays a buffer
/// of its own, with a remark), its reads the sum. Legal only between activations with a buffer (graph inputs
/// and outputs have one only with --io-in-pools); an in-place Add's group must hold no graph output (the
/// application reads those after the run). A view or an in-place Add takes the bytes of its source (same size; the Add also the same
/// shape and dtype, and its group must end at that node: nothing reads the old bytes later). With
/// `concatSlices`, a Concat whose output slices are contiguous (every output dimension before the axis is 1,
/// e.g. NCHW on axis 1 with batch 1) takes each input's whole group into its slice: the group's root must be
/// exactly that input's bytes, and an input listed twice is aliased once (the second copy is a real copy).
/// Also with `concatSlices`, a Concat on the innermost axis whose outer dimensions are not all 1 (NHWC on the
/// channel axis, H*W > 1) takes as strided slices (aliasRunBytes / aliasStrideBytes) the inputs that: are made
/// by a node whose kernel writes with an output pixel stride (writesStridedOutput) running on a CPU target
/// (`stepOnCpu[step]`; empty = every step), are read by that Concat only, have its dtype and quantization, and
/// are alone in their group. Other inputs keep their own buffer and are copied.
AliasSummary assignAliases(const Graph& g, std::vector<PlacedBuffer>& buffers, bool concatSlices = true,
                           const std::vector<bool>& stepOnCpu = {});

/// True for the ops whose kernels take an output pixel stride (`out_pixel_stride` of stowage_qconv_params and
/// stowage_nhwc_conv_params): QConv2d, QDepthwiseConv2d, ConvNhwc, DepthwiseConvNhwc. The C emitter sets the
/// stride for an output that is a strided alias (codegen setOutputPixelStride) and refuses any other op.
bool writesStridedOutput(OpKind op);

}  // namespace stowage
