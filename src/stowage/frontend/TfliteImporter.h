// TFLite frontend: reads a .tflite file (TfliteReader), then builds the graph IR from subgraph 0 with one
// converter per builtin op (TfliteOpConverters.cpp). Activations stay NHWC; int8 ops become the quantized
// IR ops of Ops.def (QConv2d, ...) with TFLite's integer requantization parameters precomputed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stowage/frontend/OnnxInspect.h"
#include "stowage/ir/Graph.h"
#include "stowage/support/Diagnostic.h"

namespace stowage {

/// Loads and converts a .tflite file. Errors name the file and, where it applies, the operator index, op
/// name and version; unsupported ops (including custom ops such as Vela's "ethos-u") are `unsupported`.
Result<Graph> importTfliteFile(const std::string& path);

/// Same, from the file's bytes; `displayName` is used in diagnostics.
Result<Graph> importTfliteBytes(std::vector<uint8_t> bytes, const std::string& displayName);

/// TFLite builtin ops the importer converts ("ADD", "CONV_2D", ...), sorted.
const std::vector<std::string>& supportedTfliteOps();

/// `stowage info` inventory of a .tflite file in the ONNX summary's shape: irVersion holds the schema
/// version, opset 0, producer the description; ops are builtin op names (custom ops in domain "custom");
/// an import failure goes to importError. A file that cannot be read at all is an error.
Result<OnnxModelSummary> inspectTfliteFile(const std::string& path);

}  // namespace stowage
