// Shared state of the TFLite importer's op converters: the model being read, the graph being built, and the
// mapping from TFLite tensor indices to graph tensors (created on first use). Private to frontend/Tflite*.
#pragma once

#include <string>
#include <vector>

#include "stowage/frontend/TfliteReader.h"
#include "stowage/ir/Graph.h"

namespace stowage::tflite {

class ImportContext {
 public:
  ImportContext(const Model& model, const SubGraphInfo& subgraph, Graph& graph, std::string file)
      : model_(model), sg_(subgraph), g_(graph), file_(std::move(file)), ids_(subgraph.tensors.size(), kNoTensor) {}

  const Model& model() const { return model_; }
  const SubGraphInfo& subgraph() const { return sg_; }
  Graph& graph() { return g_; }
  const std::string& file() const { return file_; }

  /// The graph tensor for TFLite tensor `index` (a constant when its buffer holds data, else an activation),
  /// created on first use with dtype, shape and quantization checked.
  Result<TensorId> tensor(int32_t index);
  /// Adds an int32 constant (e.g. per-channel multipliers) named `name`.
  TensorId addInt32Constant(const std::string& name, const std::vector<int32_t>& values);
  /// Adds a node; its name is made unique.
  void addNode(Node node);

 private:
  const Model& model_;
  const SubGraphInfo& sg_;
  Graph& g_;
  std::string file_;
  std::vector<TensorId> ids_;
};

/// One operator being converted: its info, its location for diagnostics, and typed access to its tensors.
struct OpRef {
  ImportContext& ctx;
  const OperatorInfo& op;
  int32_t code;      ///< effective builtin code
  int32_t version;
  size_t index;      ///< position in the subgraph's operator list
  std::string name;  ///< node name: "<OP_NAME>_<index>"
  std::string loc;   ///< "<file>: operator <index> (<OP_NAME> v<version>)"

  /// TFLite tensor index of input i (-1 when absent or past the end).
  int32_t inputIndex(size_t i) const { return i < op.inputs.size() ? op.inputs[i] : -1; }
  const TensorInfo* inputInfo(size_t i) const;
  const TensorInfo* outputInfo(size_t i) const;
};

/// Converts one builtin operator to graph nodes (TfliteOpConverters.cpp). Unsupported ops or attribute
/// values give `unsupported` diagnostics naming the op and version.
Status convertOperator(OpRef& op);
/// Whether convertOperator handles builtin `code` at all.
bool isSupportedBuiltin(int32_t code);
/// Builtin codes with a converter, for supportedTfliteOps().
const std::vector<int32_t>& supportedBuiltinCodes();

}  // namespace stowage::tflite
