// TFLite flatbuffer reader: verifies a .tflite file with the flatbuffers Verifier (every table, vector and
// string it reads, field by field), then reads Model, SubGraph, Tensor, Buffer, Operator, OperatorCode and
// QuantizationParameters into plain structs through the flatbuffers Table API. No schema or generated code:
// field ids follow docs/tflite-format-notes.md. TfliteImporter builds the graph IR from these.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "stowage/support/Diagnostic.h"

namespace flatbuffers {
class Table;
}

namespace stowage::tflite {

/// BuiltinOperator codes used by the importer.
enum BuiltinOp : int32_t {
  kAdd = 0, kAveragePool2d = 1, kConcatenation = 2, kConv2d = 3, kDepthwiseConv2d = 4, kDequantize = 6,
  kFullyConnected = 9, kLogistic = 14, kMaxPool2d = 17, kMul = 18, kRelu = 19, kReluN1To1 = 20, kRelu6 = 21,
  kReshape = 22, kSoftmax = 25, kTanh = 28, kCustom = 32, kPad = 34, kTranspose = 39, kMean = 40, kSub = 41,
  kSqueeze = 43, kStridedSlice = 45, kMaximum = 55, kMinimum = 57, kLeakyRelu = 98, kQuantize = 114, kHardSwish = 117,
};

/// TensorType values.
enum TensorType : int8_t {
  kFloat32 = 0, kFloat16 = 1, kInt32 = 2, kUInt8 = 3, kInt64 = 4, kString = 5, kBool = 6, kInt16 = 7, kInt8 = 9,
};

/// "CONV_2D" for a builtin code; "BUILTIN_<code>" when the name is not known here.
std::string builtinOpName(int32_t code);
/// "FLOAT32", "INT8", ...; "TYPE_<n>" when unknown.
std::string tensorTypeName(int8_t type);

/// A verified options table (an Operator's builtin_options) with typed field access by field id; an absent
/// field reads as the given default, like generated accessors.
class OptionsTable {
 public:
  OptionsTable() = default;
  OptionsTable(const flatbuffers::Table* table, uint8_t type) : table_(table), type_(type) {}
  uint8_t type() const { return type_; }  ///< BuiltinOptions union tag (0 = none)
  bool present() const { return table_ != nullptr; }
  int32_t getInt(int fieldId, int32_t fallback) const;    ///< int32 field
  int8_t getByte(int fieldId, int8_t fallback) const;     ///< byte / enum / bool field
  float getFloat(int fieldId, float fallback) const;      ///< float field
  std::optional<std::vector<int32_t>> getInts(int fieldId) const;  ///< [int32] field, nullopt when absent

 private:
  const flatbuffers::Table* table_ = nullptr;
  uint8_t type_ = 0;
};

struct QuantizationInfo {
  std::vector<float> scales;
  std::vector<int64_t> zeroPoints;
  int32_t quantizedDimension = 0;
  bool hasDetails = false;  ///< custom/blockwise quantization: the vectors are not meaningful
};

struct TensorInfo {
  std::vector<int32_t> shape;
  std::optional<std::vector<int32_t>> shapeSignature;
  int8_t type = kFloat32;
  uint32_t buffer = 0;  ///< index into Model::buffers (checked in range)
  std::string name;
  std::optional<QuantizationInfo> quant;
  bool isVariable = false;
  bool hasSparsity = false;
};

struct OperatorInfo {
  uint32_t opcodeIndex = 0;  ///< index into Model::operatorCodes (checked in range)
  std::vector<int32_t> inputs, outputs;  ///< tensor indices, -1 = absent (checked in range)
  OptionsTable options;
  bool hasCustomOptions = false;
};

struct OperatorCodeInfo {
  int32_t code = 0;  ///< effective builtin code: max(deprecated_builtin_code, builtin_code)
  std::string customCode;
  int32_t version = 1;
};

struct SubGraphInfo {
  std::vector<TensorInfo> tensors;
  std::vector<int32_t> inputs, outputs;
  std::vector<OperatorInfo> operators;
  std::string name;
};

/// Constant bytes of a Buffer: a view into Model::bytes; empty when the buffer holds no data.
struct BufferInfo {
  const uint8_t* data = nullptr;
  size_t size = 0;  ///< bytes
};

/// A read model. Views (buffers, option tables) point into `bytes`, so a Model is move-only.
struct Model {
  std::vector<uint8_t> bytes;
  uint32_t version = 0;
  std::string description;
  std::vector<OperatorCodeInfo> operatorCodes;
  std::vector<SubGraphInfo> subgraphs;
  std::vector<BufferInfo> buffers;
  std::vector<std::string> metadataNames;

  Model() = default;
  Model(Model&&) = default;
  Model& operator=(Model&&) = default;
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;
};

/// True when `path` ends in .tflite (case-insensitive) or its bytes 4..7 are "TFL3".
bool looksLikeTflite(const std::string& path);

/// Verifies and reads a .tflite file's bytes; `displayName` is the diagnostics' location. Errors: not a
/// TFLite file (wrong identifier, Git LFS pointer), truncated or malformed flatbuffer, out-of-range
/// buffer/tensor/opcode indices, buffers stored outside the flatbuffer.
Result<Model> readTfliteBytes(std::vector<uint8_t> bytes, const std::string& displayName);
Result<Model> readTfliteFile(const std::string& path);

}  // namespace stowage::tflite
