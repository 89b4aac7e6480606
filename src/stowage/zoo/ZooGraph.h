// A bundled zoo model as the compiler's graph (built, serialized and imported like a model file), for the
// benchmarks and tests that compile zoo models in-process.
#pragma once

#include <cstdint>
#include <string>

#include "stowage/ir/Graph.h"
#include "stowage/support/Diagnostic.h"

namespace stowage::zoo {

/// buildZooModel(name, seed) imported as "<name>.onnx" (no passes run yet).
Result<Graph> zooGraph(const std::string& name, uint64_t seed);

}  // namespace stowage::zoo
