// ONNX frontend: reads a ModelProto, runs onnx::checker and ONNX shape inference, folds constant
// subgraphs and builds the graph IR with canonical attributes (see ir/Ops.def).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "stowage/ir/Graph.h"
#include "stowage/support/Diagnostic.h"

namespace stowage {

struct OnnxImportOptions {
  /// Static shapes for inputs with dynamic dims (`--shape NAME=1x3x32x32`).
  std::map<std::string, Shape> inputShapes;
  /// Graph inputs frozen to a known value at compile time (`--bind NAME=file.pb`): they become constants.
  /// Needed when a model takes e.g. Reshape's shape as a graph input.
  std::map<std::string, Tensor> boundInputs;
  /// Largest constant (elements) the importer computes at compile time from a node whose inputs are known
  /// (ConstantOfShape, Range, Tile, elementwise ops on constants, ...): larger results stay nodes or, where they must be
  /// known, are an error. The fuzz target lowers it so that no input spends seconds filling one constant.
  int64_t maxFoldElements = int64_t{1} << 26;
};

/// Loads and converts an ONNX model file. Errors name the file and, where it applies, the node and op.
Result<Graph> importOnnxFile(const std::string& path, const OnnxImportOptions& options = {});

/// Same, from serialized ModelProto bytes; `displayName` is used in diagnostics.
Result<Graph> importOnnxBytes(const std::string& bytes, const std::string& displayName,
                              const OnnxImportOptions& options = {});

/// ONNX op types (domain "" / "ai.onnx") the importer accepts, sorted, for error messages and `stowage info`.
const std::vector<std::string>& supportedOnnxOps();

}  // namespace stowage
