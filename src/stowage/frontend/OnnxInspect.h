// Model inventory for `stowage info`: what an ONNX file contains (inputs, outputs, op types and whether
// Stowage supports them, parameters) even when the import stops at an unsupported op, plus the imported graph
// when the import succeeds.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "stowage/frontend/OnnxImporter.h"

namespace stowage {

enum class OnnxOpSupport {
  Supported,     ///< converted to IR nodes
  ConstantOnly,  ///< evaluated at import time; supported only when its inputs are compile-time constants
  Unsupported,
};

/// "yes", "constant inputs only", "no".
const char* onnxOpSupportName(OnnxOpSupport s);
/// Classification of one ONNX op type (domain "" or "ai.onnx" for standard ops).
OnnxOpSupport classifyOnnxOp(const std::string& domain, const std::string& opType);

struct OnnxValueSummary {
  std::string name;
  std::string dtype;  ///< ONNX element type name ("FLOAT", ...) or the IR name when imported
  std::string shape;  ///< "1x3x224x224"; unknown dims as their dim_param or "?"; "scalar" for rank 0
};

struct OnnxOpSummary {
  std::string opType;
  std::string domain;
  std::vector<std::string> nodes;  ///< node names (invented "<op>_<index>" when empty), in model order
  OnnxOpSupport support = OnnxOpSupport::Unsupported;
};

struct OnnxModelSummary {
  std::string graphName;
  int64_t irVersion = 0;
  int64_t opset = 0;  ///< ai.onnx opset; 0 when the model imports none
  std::string producer;
  std::vector<OnnxValueSummary> inputs;   ///< graph inputs that are not initializers, as declared
  std::vector<OnnxValueSummary> outputs;  ///< as declared
  std::vector<OnnxOpSummary> ops;         ///< sorted by op type
  int64_t initializerParams = 0;          ///< elements of all initializers and Constant nodes
  int64_t initializerBytes = 0;
  std::optional<Graph> graph;             ///< the imported graph, when the import succeeded
  std::optional<Diagnostic> importError;  ///< why the import failed, otherwise
};

/// Reads and checks the model (parse or checker failure, missing file: error), then inventories it and tries
/// a full import with `options`; an import failure is reported in `importError`, not as an error.
Result<OnnxModelSummary> inspectOnnxFile(const std::string& path, const OnnxImportOptions& options = {});

}  // namespace stowage
