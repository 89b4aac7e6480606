// Tensor file reading and writing by format (see TensorFile.h): .pb goes through the ONNX frontend's
// TensorProto conversion, .npy through NpyFormat, raw files are the element bytes alone.
#include "stowage/io/TensorFile.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "stowage/frontend/OnnxTensor.h"
#include "stowage/io/FileBytes.h"
#include "stowage/io/NpyFormat.h"

namespace stowage {
namespace {

namespace fs = std::filesystem;

std::string lowerExtension(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext;
}

std::string stem(const std::string& path) { return fs::path(path).stem().string(); }

/// The bytes of `t.data` as a string, or an error when their count does not match dtype and shape.
Result<std::string> elementBytes(const Tensor& t, const std::string& where) {
  if (t.data.size() != t.byteSize())
    return makeError(where, fmt::format("tensor '{}' ({} {}) holds {} data bytes, expected {}", t.name,
                                        dtypeName(t.dtype), shapeToString(t.shape), t.data.size(), t.byteSize()));
  return std::string(reinterpret_cast<const char*>(t.data.data()), t.data.size());
}

Result<Tensor> readTensorPb(const std::string& path) {
  STOWAGE_ASSIGN_OR_RETURN(std::string bytes, readFileBytes(path));
  STOWAGE_ASSIGN_OR_RETURN(Tensor t, decodeTensorPb(bytes, path));
  if (t.name.empty()) t.name = stem(path);
  return t;
}

Result<Tensor> readNpy(const std::string& path) {
  STOWAGE_ASSIGN_OR_RETURN(std::string bytes, readFileBytes(path));
  STOWAGE_ASSIGN_OR_RETURN(Tensor t, decodeNpy(bytes, path));
  t.name = stem(path);
  return t;
}

}  // namespace

Result<Tensor> decodeTensorPb(const std::string& bytes, const std::string& where) {
  onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes))
    return makeError(where, "not a serialized ONNX TensorProto (protobuf parse failed)",
                     "a .pb tensor file holds one onnx.TensorProto, as in ONNX test data sets");
  STOWAGE_ASSIGN_OR_RETURN(Tensor t, tensorFromOnnx(proto, where));
  t.kind = TensorKind::Input;
  if (t.data.size() != t.byteSize())
    return makeError(where, fmt::format("tensor '{}' ({} {}) holds {} data bytes, expected {}", t.name,
                                        dtypeName(t.dtype), shapeToString(t.shape), t.data.size(), t.byteSize()));
  return t;
}

Result<Tensor> readTensorFile(const std::string& path) {
  const std::string ext = lowerExtension(path);
  if (ext == ".pb") return readTensorPb(path);
  if (ext == ".npy") return readNpy(path);
  return makeError(path, ext.empty() ? "tensor file has no extension" : "unknown tensor file extension '" + ext + "'",
                   "use .pb (ONNX TensorProto) or .npy (NumPy); raw bytes need an explicit dtype and shape");
}

Result<Tensor> readRawTensor(const std::string& path, DType dtype, const Shape& shape) {
  Tensor t;
  t.name = stem(path);
  t.dtype = dtype;
  t.kind = TensorKind::Input;
  uint64_t elements = 1;
  for (int64_t d : shape) {
    if (d < 0) return makeError(path, fmt::format("raw tensor shape {} has a negative dimension", shapeToString(shape)));
    if (__builtin_mul_overflow(elements, static_cast<uint64_t>(d), &elements))
      return makeError(path, fmt::format("raw tensor shape {} has too many elements", shapeToString(shape)));
  }
  t.shape = shape;
  STOWAGE_ASSIGN_OR_RETURN(std::string bytes, readFileBytes(path));
  const uint64_t want = elements * dtypeSize(dtype);
  if (bytes.size() != want)
    return makeError(path,
                     fmt::format("raw tensor size mismatch: {} {} needs {} bytes, the file holds {} bytes",
                                 dtypeName(dtype), shapeToString(shape), want, bytes.size()),
                     "check the dtype and shape given for the raw file");
  t.data.assign(bytes.begin(), bytes.end());
  return t;
}

Status writeTensorPb(const std::string& path, const Tensor& t) {
  STOWAGE_TRY(elementBytes(t, path));
  onnx::TensorProto proto = tensorToOnnx(t);
  std::string bytes;
  if (!proto.SerializeToString(&bytes))
    return makeError(path, fmt::format("cannot serialize tensor '{}' as an ONNX TensorProto", t.name));
  return writeFileBytes(path, bytes);
}

Status writeNpy(const std::string& path, const Tensor& t) {
  STOWAGE_ASSIGN_OR_RETURN(std::string bytes, encodeNpy(t, path));
  return writeFileBytes(path, bytes);
}

Status writeRaw(const std::string& path, const Tensor& t) {
  STOWAGE_ASSIGN_OR_RETURN(std::string bytes, elementBytes(t, path));
  return writeFileBytes(path, bytes);
}

}  // namespace stowage
