// Fuzz target of the ONNX frontend: any bytes as a ModelProto through importOnnxBytes (protobuf parse, the ONNX
// checker, shape inference, the converters and the IR verifier), then the IR printer and the cost model that
// `stowage info` and reports use on every imported graph.
#include "FuzzTarget.h"
#include "stowage/frontend/OnnxImporter.h"
#include "stowage/ir/Op.h"
#include "stowage/ir/Printer.h"

STOWAGE_FUZZ_TARGET(onnx) {
  using namespace stowage;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  // Constants of at most 2^20 elements (the default is 2^26): a folded ConstantOfShape of 2^26 took 3 s in a release
  // build and over libFuzzer's 10 s timeout under the sanitizers, exploring nothing more than a small one does.
  OnnxImportOptions options;
  options.maxFoldElements = int64_t{1} << 20;
  Result<Graph> graph = importOnnxBytes(bytes, "fuzz.onnx", options);
  if (!graph.ok()) {
    fuzz::abortIfDiagnosticAdmitsBug(graph.error(), bytes);
    return 0;
  }
  (void)printGraph(*graph);
  for (const Node& n : graph->nodes) (void)macCount(*graph, n);
  return 0;
}
