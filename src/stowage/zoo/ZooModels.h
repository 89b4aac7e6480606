// The bundled example architectures (MLPerf Tiny layouts with seeded weights), built as ONNX models for
// the demo, the tests and `stowage-zoo`, since the repository cannot ship downloaded models.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

#include "stowage/ir/Tensor.h"
#include "stowage/support/Diagnostic.h"

namespace stowage::zoo {

/// What `stowage-zoo list` shows about a model before building it.
struct ZooModelInfo {
  std::string name;         ///< e.g. "resnet8"
  Shape inputShape;         ///< float32, NCHW (or [N, features])
  std::string description;  ///< one line
};

/// The models in a fixed order: resnet8, ds-cnn, mobilenet-v1-0.25, autoencoder.
const std::vector<ZooModelInfo>& zooModels();

/// A built model and the facts measured while building it.
struct ZooModel {
  onnx::ModelProto model;
  int64_t params = 0;  ///< elements of the rank >= 1 initializers (BatchNorm statistics included)
  int64_t macs = 0;    ///< multiply-accumulates of Conv and Gemm for one inference
};

/// Builds model `name` with weights drawn from `seed`. The same name and seed always give the same model
/// (and the same bytes from serializeModel). Unknown names are an error listing the known ones.
Result<ZooModel> buildZooModel(const std::string& name, uint64_t seed);

/// Deterministic protobuf serialization of `model`.
std::string serializeModel(const onnx::ModelProto& model);

/// A deterministic input for model `info`: name "input", float32, values uniform in [-1, 1) from `seed`.
Tensor sampleInput(const ZooModelInfo& info, uint64_t seed);

}  // namespace stowage::zoo
