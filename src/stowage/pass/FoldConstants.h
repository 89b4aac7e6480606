// Constant folding pass: runs, at compile time, every node whose inputs are all constants, using the same
// C kernels (through lower/KernelCall) that the generated code calls, so folded values are bit-identical
// to what the device would compute.
#pragma once

#include "stowage/ir/Graph.h"
#include "stowage/support/Diagnostic.h"

namespace stowage {

/// Contract. Precondition: the graph verifies (verifyGraph). In schedule order, each node whose inputs are
/// all Constant tensors (absent optional inputs allowed) is evaluated on the host and removed; its output
/// becomes a Constant holding the result. Folding cascades, since folded outputs feed later nodes.
/// A node is kept (not folded) when: its output is a graph output (outputs stay node-produced Activations,
/// see Graph::outputs), or folding would grow the weights (output above 64 KiB and larger than the sum of
/// its constant inputs, e.g. an Expand of a scalar). Afterwards unused tensors are removed
/// (Graph::compactTensors), which renumbers TensorIds. Fails only when a foldable node cannot be lowered
/// to a kernel; the folds done before it are kept and the graph stays valid.
Status foldConstants(Graph& g);

}  // namespace stowage
