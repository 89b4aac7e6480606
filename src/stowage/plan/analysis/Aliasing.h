// Alias analysis: which activation buffers can share memory by design, so that the planner places one buffer per
// group. Pure views (Reshape, and the ONNX Flatten/Squeeze/Unsqueeze/Identity it stands for) share their input's
// bytes, and elementwise Add / int8 QAdd writes in place into an input that dies at that node.
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
  size_t savedBytes = 0;  ///< bytes of buffers no longer planned on their own
  std::vector<std::string> remarks;  ///< one per alias given up (no common candidate pool), then a summary line
};

/// Decides alias groups over `buffers` (analyzeBuffers' result, activations and constants of `g`) and records
/// them: a member gets `aliasOf` = its group's root (the earliest buffer of the group, which is the one the
/// planner places); the root's lifetime becomes the union [min firstStep, max endStep) of its members, its
/// candidates the intersection of theirs (a member whose intersection would be empty stays a buffer of its own,
/// with a remark), its reads the sum. Legal only between activations with a buffer (graph inputs and outputs
/// have one only with --io-in-pools) of the same byte size; an in-place Add also needs the same shape and dtype
/// as its output, and its group must end at that node (nothing reads the old bytes later) and hold no graph
/// output (the application reads those after the run).
AliasSummary assignAliases(const Graph& g, std::vector<PlacedBuffer>& buffers);

}  // namespace stowage
