// TFLite flatbuffer reader (see TfliteReader.h): a verification pass over every table the reader touches,
// written like generated Verify() code but by hand, then a reading pass through flatbuffers::Table.
#include "stowage/frontend/TfliteReader.h"

#include <flatbuffers/flatbuffers.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <type_traits>
#include <filesystem>
#include <fstream>

namespace stowage::tflite {

namespace {

using flatbuffers::Table;
using flatbuffers::Verifier;
using flatbuffers::voffset_t;
template <typename T>
using Vec = flatbuffers::Vector<T>;
using TableVec = Vec<flatbuffers::Offset<Table>>;

/// vtable slot of field `id` (FlatBuffers: 4 bytes of vtable header, then one uint16 per field).
constexpr voffset_t slot(int id) { return static_cast<voffset_t>(4 + 2 * id); }

// ---- Field ids (docs/tflite-format-notes.md section 2) ----
namespace model { enum { kVersion = 0, kOperatorCodes = 1, kSubgraphs = 2, kDescription = 3, kBuffers = 4, kMetadata = 6 }; }
namespace opcode { enum { kDeprecatedBuiltinCode = 0, kCustomCode = 1, kVersion = 2, kBuiltinCode = 3 }; }
namespace subgraph { enum { kTensors = 0, kInputs = 1, kOutputs = 2, kOperators = 3, kName = 4 }; }
namespace tensor { enum { kShape = 0, kType = 1, kBuffer = 2, kName = 3, kQuantization = 4, kIsVariable = 5, kSparsity = 6, kShapeSignature = 7 }; }
namespace quant { enum { kMin = 0, kMax = 1, kScale = 2, kZeroPoint = 3, kDetailsType = 4, kDetails = 5, kQuantizedDimension = 6 }; }
namespace buffer { enum { kData = 0, kOffset = 1, kSize = 2 }; }
namespace op { enum { kOpcodeIndex = 0, kInputs = 1, kOutputs = 2, kBuiltinOptionsType = 3, kBuiltinOptions = 4, kCustomOptions = 5 }; }
namespace metadata { enum { kName = 0, kBuffer = 1 }; }

/// Field-by-field verification helpers over one Verifier.
class Check {
 public:
  explicit Check(Verifier& v) : v_(v) {}

  bool start(const Table* t) { return t->VerifyTableStart(v_); }
  bool end() { return v_.EndTable(); }
  template <typename T>
  bool scalar(const Table* t, int id) {
    return t->VerifyField<T>(v_, slot(id), sizeof(T));
  }
  template <typename T>
  bool vector(const Table* t, int id) {
    return t->VerifyOffset(v_, slot(id)) && v_.VerifyVector(t->GetPointer<const Vec<T>*>(slot(id)));
  }
  /// An offset field whose target is never read (only bounds-checked).
  bool offset(const Table* t, int id) { return t->VerifyOffset(v_, slot(id)); }
  bool string(const Table* t, int id) {
    return t->VerifyOffset(v_, slot(id)) && v_.VerifyString(t->GetPointer<const flatbuffers::String*>(slot(id)));
  }
  /// A sub-table field, verified by `fn` (which must call start/end) when present.
  template <typename Fn>
  bool table(const Table* t, int id, Fn fn) {
    if (!t->VerifyOffset(v_, slot(id))) return false;
    const Table* sub = t->GetPointer<const Table*>(slot(id));
    return !sub || fn(sub);
  }
  /// A vector-of-tables field, each element verified by `fn`.
  template <typename Fn>
  bool tables(const Table* t, int id, Fn fn) {
    if (!vector<flatbuffers::Offset<Table>>(t, id)) return false;
    const TableVec* vec = t->GetPointer<const TableVec*>(slot(id));
    if (!vec) return true;
    for (flatbuffers::uoffset_t i = 0; i < vec->size(); ++i)
      if (!fn(vec->Get(i))) return false;
    return true;
  }

 private:
  Verifier& v_;
};

bool verifyOptions(Check& c, const Table* t, uint8_t type) {
  if (!c.start(t)) return false;
  bool ok = true;
  auto i8 = [&](int id) { ok = ok && c.scalar<int8_t>(t, id); };
  auto i32 = [&](int id) { ok = ok && c.scalar<int32_t>(t, id); };
  switch (type) {
    case 1: i8(0), i32(1), i32(2), i8(3), i32(4), i32(5), i8(6); break;           // Conv2DOptions
    case 2: i8(0), i32(1), i32(2), i32(3), i8(4), i32(5), i32(6); break;          // DepthwiseConv2DOptions
    case 5: i8(0), i32(1), i32(2), i32(3), i32(4), i8(5); break;                  // Pool2DOptions
    case 8: i8(0), i8(1), i8(2), i8(3), i8(4); break;                             // FullyConnectedOptions
    case 9: ok = ok && c.scalar<float>(t, 0); break;                              // SoftmaxOptions
    case 10: i32(0), i8(1); break;                                                // ConcatenationOptions
    case 11: case 28: i8(0), i8(1); break;                                        // Add/SubOptions
    case 17: case 30: ok = ok && c.vector<int32_t>(t, 0); break;                  // Reshape/SqueezeOptions
    case 21: case 27: i8(0); break;                                               // Mul/ReducerOptions
    default: break;  // tables the importer never reads: the header check above is enough
  }
  return ok && c.end();
}

bool verifyQuant(Check& c, const Table* t) {
  return c.start(t) && c.vector<float>(t, quant::kMin) && c.vector<float>(t, quant::kMax) && c.vector<float>(t, quant::kScale) &&
         c.vector<int64_t>(t, quant::kZeroPoint) && c.scalar<uint8_t>(t, quant::kDetailsType) &&
         c.offset(t, quant::kDetails) && c.scalar<int32_t>(t, quant::kQuantizedDimension) && c.end();
}

bool verifyTensor(Check& c, const Table* t) {
  return c.start(t) && c.vector<int32_t>(t, tensor::kShape) && c.scalar<int8_t>(t, tensor::kType) &&
         c.scalar<uint32_t>(t, tensor::kBuffer) && c.string(t, tensor::kName) &&
         c.table(t, tensor::kQuantization, [&](const Table* q) { return verifyQuant(c, q); }) &&
         c.scalar<uint8_t>(t, tensor::kIsVariable) && c.offset(t, tensor::kSparsity) &&
         c.vector<int32_t>(t, tensor::kShapeSignature) && c.end();
}

bool verifyOperator(Check& c, const Table* t) {
  if (!(c.start(t) && c.scalar<uint32_t>(t, op::kOpcodeIndex) && c.vector<int32_t>(t, op::kInputs) &&
        c.vector<int32_t>(t, op::kOutputs) && c.scalar<uint8_t>(t, op::kBuiltinOptionsType) &&
        c.vector<uint8_t>(t, op::kCustomOptions)))
    return false;
  const auto type = t->GetField<uint8_t>(slot(op::kBuiltinOptionsType), 0);
  return c.table(t, op::kBuiltinOptions, [&](const Table* o) { return verifyOptions(c, o, type); }) && c.end();
}

bool verifySubGraph(Check& c, const Table* t) {
  return c.start(t) && c.tables(t, subgraph::kTensors, [&](const Table* x) { return verifyTensor(c, x); }) &&
         c.vector<int32_t>(t, subgraph::kInputs) && c.vector<int32_t>(t, subgraph::kOutputs) &&
         c.tables(t, subgraph::kOperators, [&](const Table* x) { return verifyOperator(c, x); }) &&
         c.string(t, subgraph::kName) && c.end();
}

bool verifyModel(Check& c, const Table* t) {
  auto opcodeOk = [&](const Table* x) {
    return c.start(x) && c.scalar<int8_t>(x, opcode::kDeprecatedBuiltinCode) && c.string(x, opcode::kCustomCode) &&
           c.scalar<int32_t>(x, opcode::kVersion) && c.scalar<int32_t>(x, opcode::kBuiltinCode) && c.end();
  };
  auto bufferOk = [&](const Table* x) {
    return c.start(x) && c.vector<uint8_t>(x, buffer::kData) && c.scalar<uint64_t>(x, buffer::kOffset) &&
           c.scalar<uint64_t>(x, buffer::kSize) && c.end();
  };
  auto metadataOk = [&](const Table* x) {
    return c.start(x) && c.string(x, metadata::kName) && c.scalar<uint32_t>(x, metadata::kBuffer) && c.end();
  };
  return c.start(t) && c.scalar<uint32_t>(t, model::kVersion) && c.tables(t, model::kOperatorCodes, opcodeOk) &&
         c.tables(t, model::kSubgraphs, [&](const Table* x) { return verifySubGraph(c, x); }) &&
         c.string(t, model::kDescription) && c.tables(t, model::kBuffers, bufferOk) &&
         c.tables(t, model::kMetadata, metadataOk) && c.end();
}

// ---- Reading (after verification) ----

/// A vector of scalars, copied bytewise: the verifier guarantees only 4-byte alignment of a vector, so a
/// malformed file can put an int64 vector at an address that is not a multiple of 8 (a typed load would be
/// undefined behaviour). Flatbuffer scalars are little-endian, as is every host Stowage runs on.
template <typename T>
std::vector<T> readVector(const Table* t, int id) {
  static_assert(std::is_arithmetic_v<T>);
  const auto* v = t->GetPointer<const Vec<T>*>(slot(id));
  std::vector<T> out;
  if (v == nullptr || v->size() == 0) return out;
  out.resize(v->size());
  std::memcpy(out.data(), v->Data(), out.size() * sizeof(T));
  return out;
}

std::string readString(const Table* t, int id) {
  const auto* s = t->GetPointer<const flatbuffers::String*>(slot(id));
  return s ? s->str() : std::string();
}

template <typename Fn>
void forEachTable(const Table* t, int id, Fn fn) {
  const auto* v = t->GetPointer<const TableVec*>(slot(id));
  if (!v) return;
  for (flatbuffers::uoffset_t i = 0; i < v->size(); ++i) fn(v->Get(i));
}

TensorInfo readTensor(const Table* t) {
  TensorInfo info;
  info.shape = readVector<int32_t>(t, tensor::kShape);
  info.type = t->GetField<int8_t>(slot(tensor::kType), kFloat32);
  info.buffer = t->GetField<uint32_t>(slot(tensor::kBuffer), 0);
  info.name = readString(t, tensor::kName);
  info.isVariable = t->GetField<uint8_t>(slot(tensor::kIsVariable), 0) != 0;
  info.hasSparsity = t->CheckField(slot(tensor::kSparsity));
  if (t->CheckField(slot(tensor::kShapeSignature))) info.shapeSignature = readVector<int32_t>(t, tensor::kShapeSignature);
  if (const Table* q = t->GetPointer<const Table*>(slot(tensor::kQuantization))) {
    QuantizationInfo qi;
    qi.scales = readVector<float>(q, quant::kScale);
    qi.zeroPoints = readVector<int64_t>(q, quant::kZeroPoint);
    qi.quantizedDimension = q->GetField<int32_t>(slot(quant::kQuantizedDimension), 0);
    qi.hasDetails = q->GetField<uint8_t>(slot(quant::kDetailsType), 0) != 0;
    if (!qi.scales.empty() || !qi.zeroPoints.empty() || qi.hasDetails) info.quant = std::move(qi);
  }
  return info;
}

OperatorInfo readOperator(const Table* t) {
  OperatorInfo info;
  info.opcodeIndex = t->GetField<uint32_t>(slot(op::kOpcodeIndex), 0);
  info.inputs = readVector<int32_t>(t, op::kInputs);
  info.outputs = readVector<int32_t>(t, op::kOutputs);
  const auto type = t->GetField<uint8_t>(slot(op::kBuiltinOptionsType), 0);
  info.options = OptionsTable(t->GetPointer<const Table*>(slot(op::kBuiltinOptions)), type);
  info.hasCustomOptions = t->CheckField(slot(op::kCustomOptions));
  return info;
}

SubGraphInfo readSubGraph(const Table* t) {
  SubGraphInfo g;
  forEachTable(t, subgraph::kTensors, [&](const Table* x) { g.tensors.push_back(readTensor(x)); });
  g.inputs = readVector<int32_t>(t, subgraph::kInputs);
  g.outputs = readVector<int32_t>(t, subgraph::kOutputs);
  forEachTable(t, subgraph::kOperators, [&](const Table* x) { g.operators.push_back(readOperator(x)); });
  g.name = readString(t, subgraph::kName);
  return g;
}

/// Index checks that make every later lookup safe.
Status checkIndices(const Model& m, const std::string& where) {
  for (size_t s = 0; s < m.subgraphs.size(); ++s) {
    const SubGraphInfo& g = m.subgraphs[s];
    const auto numTensors = static_cast<int64_t>(g.tensors.size());
    for (size_t i = 0; i < g.tensors.size(); ++i)
      if (g.tensors[i].buffer >= m.buffers.size())
        return makeError(where, fmt::format("subgraph {}: tensor {} ('{}') refers to buffer {}, but the model has {} buffers", s, i,
                                            g.tensors[i].name, g.tensors[i].buffer, m.buffers.size()));
    for (const auto* list : {&g.inputs, &g.outputs})
      for (int32_t id : *list)
        if (id < 0 || id >= numTensors)
          return makeError(where, fmt::format("subgraph {}: {} tensor index {} is out of range (the subgraph has {} tensors)", s,
                                              list == &g.inputs ? "input" : "output", id, numTensors));
    for (size_t k = 0; k < g.operators.size(); ++k) {
      const OperatorInfo& o = g.operators[k];
      if (o.opcodeIndex >= m.operatorCodes.size())
        return makeError(where, fmt::format("subgraph {}: operator {} uses opcode index {}, but the model has {} operator codes", s, k,
                                            o.opcodeIndex, m.operatorCodes.size()));
      for (const auto* list : {&o.inputs, &o.outputs})
        for (int32_t id : *list)
          if (id < -1 || id >= numTensors)
            return makeError(where, fmt::format("subgraph {}: operator {} refers to tensor {}, out of range (the subgraph has {} tensors)",
                                                s, k, id, numTensors));
    }
  }
  return Status::success();
}

}  // namespace

int32_t OptionsTable::getInt(int fieldId, int32_t fallback) const {
  return table_ ? table_->GetField<int32_t>(slot(fieldId), fallback) : fallback;
}
int8_t OptionsTable::getByte(int fieldId, int8_t fallback) const {
  return table_ ? table_->GetField<int8_t>(slot(fieldId), fallback) : fallback;
}
float OptionsTable::getFloat(int fieldId, float fallback) const {
  return table_ ? table_->GetField<float>(slot(fieldId), fallback) : fallback;
}
std::optional<std::vector<int32_t>> OptionsTable::getInts(int fieldId) const {
  if (!table_ || !table_->CheckField(slot(fieldId))) return std::nullopt;
  return readVector<int32_t>(table_, fieldId);
}

std::string builtinOpName(int32_t code) {
  static const char* const kNames[] = {
      "ADD", "AVERAGE_POOL_2D", "CONCATENATION", "CONV_2D", "DEPTHWISE_CONV_2D", "DEPTH_TO_SPACE", "DEQUANTIZE",
      "EMBEDDING_LOOKUP", "FLOOR", "FULLY_CONNECTED", "HASHTABLE_LOOKUP", "L2_NORMALIZATION", "L2_POOL_2D",
      "LOCAL_RESPONSE_NORMALIZATION", "LOGISTIC", "LSH_PROJECTION", "LSTM", "MAX_POOL_2D", "MUL", "RELU", "RELU_N1_TO_1",
      "RELU6", "RESHAPE", "RESIZE_BILINEAR", "RNN", "SOFTMAX", "SPACE_TO_DEPTH", "SVDF", "TANH", "CONCAT_EMBEDDINGS",
      "SKIP_GRAM", "CALL", "CUSTOM", "EMBEDDING_LOOKUP_SPARSE", "PAD", "UNIDIRECTIONAL_SEQUENCE_RNN", "GATHER",
      "BATCH_TO_SPACE_ND", "SPACE_TO_BATCH_ND", "TRANSPOSE", "MEAN", "SUB", "DIV", "SQUEEZE",
      "UNIDIRECTIONAL_SEQUENCE_LSTM", "STRIDED_SLICE", "BIDIRECTIONAL_SEQUENCE_RNN", "EXP", "TOPK_V2", "SPLIT",
      "LOG_SOFTMAX", "DELEGATE", "BIDIRECTIONAL_SEQUENCE_LSTM", "CAST", "PRELU", "MAXIMUM", "ARG_MAX", "MINIMUM", "LESS",
      "NEG", "PADV2", "GREATER", "GREATER_EQUAL", "LESS_EQUAL", "SELECT", "SLICE", "SIN", "TRANSPOSE_CONV",
      "SPARSE_TO_DENSE", "TILE", "EXPAND_DIMS", "EQUAL", "NOT_EQUAL", "LOG", "SUM", "SQRT", "RSQRT", "SHAPE", "POW",
      "ARG_MIN", "FAKE_QUANT", "REDUCE_PROD", "REDUCE_MAX", "PACK", "LOGICAL_OR", "ONE_HOT", "LOGICAL_AND",
      "LOGICAL_NOT", "UNPACK", "REDUCE_MIN", "FLOOR_DIV", "REDUCE_ANY", "SQUARE", "ZEROS_LIKE", "FILL", "FLOOR_MOD",
      "RANGE", "RESIZE_NEAREST_NEIGHBOR", "LEAKY_RELU", "SQUARED_DIFFERENCE", "MIRROR_PAD", "ABS", "SPLIT_V", "UNIQUE",
      "CEIL", "REVERSE_V2", "ADD_N", "GATHER_ND", "COS", "WHERE", "RANK", "ELU", "REVERSE_SEQUENCE", "MATRIX_DIAG",
      "QUANTIZE", "MATRIX_SET_DIAG", "ROUND", "HARD_SWISH", "IF", "WHILE", "NON_MAX_SUPPRESSION_V4",
      "NON_MAX_SUPPRESSION_V5", "SCATTER_ND", "SELECT_V2", "DENSIFY", "SEGMENT_SUM", "BATCH_MATMUL",
      "PLACEHOLDER_FOR_GREATER_OP_CODES"};
  if (code >= 0 && static_cast<size_t>(code) < std::size(kNames)) return kNames[code];
  return fmt::format("BUILTIN_{}", code);
}

std::string tensorTypeName(int8_t type) {
  static const char* const kNames[] = {"FLOAT32", "FLOAT16", "INT32",   "UINT8",   "INT64",      "STRING", "BOOL",
                                       "INT16",   "COMPLEX64", "INT8",  "FLOAT64", "COMPLEX128", "UINT64", "RESOURCE",
                                       "VARIANT", "UINT32",  "UINT16",  "INT4",    "BFLOAT16"};
  if (type >= 0 && static_cast<size_t>(type) < std::size(kNames)) return kNames[type];
  return fmt::format("TYPE_{}", type);
}

bool looksLikeTflite(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext == ".tflite") return true;
  std::ifstream in(path, std::ios::binary);
  char head[8] = {};
  if (!in.read(head, sizeof head)) return false;
  return std::memcmp(head + 4, "TFL3", 4) == 0;
}

Result<Model> readTfliteBytes(std::vector<uint8_t> bytes, const std::string& where) {
  static const char kLfs[] = "version https://git-lfs";
  if (bytes.size() >= sizeof kLfs - 1 && std::memcmp(bytes.data(), kLfs, sizeof kLfs - 1) == 0)
    return makeError(where, "is a Git LFS pointer, not a TFLite model", "fetch the real file with `git lfs pull`");
  if (bytes.size() < 8)
    return makeError(where, fmt::format("is too small to be a TFLite model ({} bytes)", bytes.size()));
  if (std::memcmp(bytes.data() + 4, "TFL3", 4) != 0) {
    std::string id;
    for (size_t i = 4; i < 8; ++i) id += std::isprint(bytes[i]) ? static_cast<char>(bytes[i]) : '?';
    return makeError(where, fmt::format("file identifier is \"{}\", not \"TFL3\": not a TFLite flatbuffer", id));
  }
  if (bytes.size() >= FLATBUFFERS_MAX_BUFFER_SIZE) return makeUnsupported(where, "models of 2 GiB or more are not supported");
  Verifier verifier(bytes.data(), bytes.size());
  Check check(verifier);
  const flatbuffers::uoffset_t rootOffset = verifier.VerifyOffset(0);
  if (rootOffset == 0 || !verifyModel(check, reinterpret_cast<const Table*>(bytes.data() + rootOffset)))
    return makeError(where, "is not a valid TFLite flatbuffer (truncated or corrupted: the flatbuffers verifier rejected it)");

  Model m;
  m.bytes = std::move(bytes);
  const Table* root = reinterpret_cast<const Table*>(m.bytes.data() + rootOffset);
  m.version = root->GetField<uint32_t>(slot(model::kVersion), 0);
  m.description = readString(root, model::kDescription);
  forEachTable(root, model::kOperatorCodes, [&](const Table* t) {
    OperatorCodeInfo c;
    const int32_t deprecated = t->GetField<int8_t>(slot(opcode::kDeprecatedBuiltinCode), 0);
    c.code = std::max(deprecated, t->GetField<int32_t>(slot(opcode::kBuiltinCode), 0));
    c.customCode = readString(t, opcode::kCustomCode);
    c.version = t->GetField<int32_t>(slot(opcode::kVersion), 1);
    m.operatorCodes.push_back(std::move(c));
  });
  forEachTable(root, model::kSubgraphs, [&](const Table* t) { m.subgraphs.push_back(readSubGraph(t)); });
  Status bufferStatus;
  forEachTable(root, model::kBuffers, [&](const Table* t) {
    BufferInfo b;
    if (const auto* data = t->GetPointer<const Vec<uint8_t>*>(slot(buffer::kData))) {
      b.data = data->data();
      b.size = data->size();
    }
    if (t->GetField<uint64_t>(slot(buffer::kOffset), 0) > 1 && bufferStatus.ok())
      bufferStatus = makeUnsupported(where, fmt::format("buffer {} is stored after the flatbuffer (a model over 2 GB); not supported",
                                                        m.buffers.size()));
    m.buffers.push_back(b);
  });
  STOWAGE_TRY(bufferStatus);
  forEachTable(root, model::kMetadata, [&](const Table* t) { m.metadataNames.push_back(readString(t, metadata::kName)); });
  if (m.subgraphs.empty()) return makeError(where, "has no subgraphs");
  STOWAGE_TRY(checkIndices(m, where));
  return m;
}

Result<Model> readTfliteFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return makeError(path, "cannot open the model file");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return makeError(path, "cannot read the model file");
  return readTfliteBytes(std::move(bytes), path);
}

}  // namespace stowage::tflite
