// Fuzz target of the TFLite frontend: any bytes through importTfliteBytes (the flatbuffers verifier, the reader of
// TfliteReader.h, quantisation checks, the op converters and the IR verifier), then the IR printer and cost model.
#include "FuzzTarget.h"
#include "stowage/frontend/TfliteImporter.h"
#include "stowage/ir/Op.h"
#include "stowage/ir/Printer.h"

STOWAGE_FUZZ_TARGET(tflite) {
  using namespace stowage;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  Result<Graph> graph = importTfliteBytes(std::vector<uint8_t>(data, data + size), "fuzz.tflite");
  if (!graph.ok()) {
    fuzz::abortIfDiagnosticAdmitsBug(graph.error(), input);
    return 0;
  }
  (void)printGraph(*graph);
  for (const Node& n : graph->nodes) (void)macCount(*graph, n);
  return 0;
}
