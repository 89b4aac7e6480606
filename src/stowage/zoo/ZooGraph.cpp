// Zoo model to graph (see ZooGraph.h).
#include "stowage/zoo/ZooGraph.h"

#include "stowage/frontend/OnnxImporter.h"
#include "stowage/zoo/ZooModels.h"

namespace stowage::zoo {

Result<Graph> zooGraph(const std::string& name, uint64_t seed) {
  STOWAGE_ASSIGN_OR_RETURN(ZooModel m, buildZooModel(name, seed));
  return importOnnxBytes(serializeModel(m.model), name + ".onnx");
}

}  // namespace stowage::zoo
