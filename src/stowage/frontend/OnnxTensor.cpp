// TensorProto <-> Tensor conversion (see OnnxTensor.h).
#include "stowage/frontend/OnnxTensor.h"

#include <fmt/format.h>

#include <cstring>
#include <limits>

namespace stowage {

std::optional<DType> dtypeFromOnnx(int32_t onnxType) {
  switch (onnxType) {
    case onnx::TensorProto_DataType_FLOAT: return DType::Float32;
    case onnx::TensorProto_DataType_INT8: return DType::Int8;
    case onnx::TensorProto_DataType_UINT8: return DType::UInt8;
    case onnx::TensorProto_DataType_INT32: return DType::Int32;
    case onnx::TensorProto_DataType_INT64: return DType::Int64;
    case onnx::TensorProto_DataType_BOOL: return DType::Bool;
    default: return std::nullopt;
  }
}

int32_t dtypeToOnnx(DType t) {
  switch (t) {
    case DType::Float32: return onnx::TensorProto_DataType_FLOAT;
    case DType::Int8: return onnx::TensorProto_DataType_INT8;
    case DType::UInt8: return onnx::TensorProto_DataType_UINT8;
    case DType::Int32: return onnx::TensorProto_DataType_INT32;
    case DType::Int64: return onnx::TensorProto_DataType_INT64;
    case DType::Bool: return onnx::TensorProto_DataType_BOOL;
  }
  return onnx::TensorProto_DataType_UNDEFINED;
}

std::string onnxDtypeName(int32_t onnxType) {
  if (onnx::TensorProto_DataType_IsValid(onnxType))
    return onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(onnxType));
  return fmt::format("data type {}", onnxType);
}

namespace {

template <typename Dst, typename Field>
void copyTyped(const Field& field, std::vector<uint8_t>& out) {
  out.resize(static_cast<size_t>(field.size()) * sizeof(Dst));
  for (int i = 0; i < field.size(); ++i) {
    Dst v = static_cast<Dst>(field.Get(i));
    std::memcpy(out.data() + static_cast<size_t>(i) * sizeof(Dst), &v, sizeof(Dst));
  }
}

}  // namespace

Result<Tensor> tensorFromOnnx(const onnx::TensorProto& proto, const std::string& where) {
  Tensor t;
  t.name = proto.name();
  t.kind = TensorKind::Constant;
  auto dtype = dtypeFromOnnx(proto.data_type());
  if (!dtype)
    return makeUnsupported(where, fmt::format("tensor '{}' has element type {}, which Stowage does not support",
                                              proto.name(), onnxDtypeName(proto.data_type())),
                           "supported element types: FLOAT, INT8, UINT8, INT32, INT64, BOOL");
  t.dtype = *dtype;
  if (proto.data_location() == onnx::TensorProto_DataLocation_EXTERNAL || proto.external_data_size() > 0)
    return makeUnsupported(where, fmt::format("tensor '{}' stores its data in an external file", proto.name()),
                           "save the model with all tensors inside the .onnx file (onnx.save_model(..., "
                           "save_as_external_data=False))");
  if (proto.has_segment())
    return makeUnsupported(where, fmt::format("tensor '{}' is a segmented tensor", proto.name()));
  // Element count with overflow guard: a corrupt file can claim absurd dims.
  constexpr int64_t kMaxElements = int64_t{1} << 40;
  int64_t count = 1;
  for (int i = 0; i < proto.dims_size(); ++i) {
    int64_t d = proto.dims(i);
    if (d < 0)
      return makeError(where, fmt::format("tensor '{}' has a negative dimension ({})", proto.name(), d));
    t.shape.push_back(d);
    if (d != 0 && count > kMaxElements / d)
      return makeError(where, fmt::format("tensor '{}' claims an impossibly large shape", proto.name()));
    count *= d;
  }
  const size_t elemSize = dtypeSize(t.dtype);
  const size_t expectedBytes = static_cast<size_t>(count) * elemSize;

  if (proto.has_raw_data()) {
    const std::string& raw = proto.raw_data();
    if (raw.size() != expectedBytes)
      return makeError(where, fmt::format("tensor '{}' has {} bytes of raw data but its type {}[{}] needs {}",
                                          proto.name(), raw.size(), dtypeName(t.dtype), shapeToString(t.shape),
                                          expectedBytes));
    t.data.assign(raw.begin(), raw.end());
    return t;
  }

  int64_t have = 0;
  switch (t.dtype) {
    case DType::Float32:
      have = proto.float_data_size();
      if (have == count) copyTyped<float>(proto.float_data(), t.data);
      break;
    case DType::Int64:
      have = proto.int64_data_size();
      if (have == count) copyTyped<int64_t>(proto.int64_data(), t.data);
      break;
    case DType::Int32:
      have = proto.int32_data_size();
      if (have == count) copyTyped<int32_t>(proto.int32_data(), t.data);
      break;
    case DType::Int8:
      have = proto.int32_data_size();
      if (have == count) copyTyped<int8_t>(proto.int32_data(), t.data);
      break;
    case DType::UInt8:
      have = proto.int32_data_size();
      if (have == count) copyTyped<uint8_t>(proto.int32_data(), t.data);
      break;
    case DType::Bool:
      have = proto.int32_data_size();
      if (have == count) {
        t.data.resize(static_cast<size_t>(count));
        for (int i = 0; i < proto.int32_data_size(); ++i) t.data[static_cast<size_t>(i)] = proto.int32_data(i) != 0;
      }
      break;
  }
  if (have != count)
    return makeError(where, fmt::format("tensor '{}' holds {} elements but its shape {} needs {}", proto.name(), have,
                                        shapeToString(t.shape), count));
  return t;
}

onnx::TensorProto tensorToOnnx(const Tensor& t) {
  onnx::TensorProto p;
  p.set_name(t.name);
  p.set_data_type(dtypeToOnnx(t.dtype));
  for (int64_t d : t.shape) p.add_dims(d);
  p.set_raw_data(std::string(t.data.begin(), t.data.end()));
  return p;
}

}  // namespace stowage
