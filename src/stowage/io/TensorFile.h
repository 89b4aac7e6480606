// Single-tensor files: ONNX TensorProto (.pb), NumPy (.npy) and raw little-endian bytes. `stowage run`
// reads its inputs and writes its outputs with these; test suites read reference outputs with them.
#pragma once

#include <string>

#include "stowage/ir/Tensor.h"
#include "stowage/support/Diagnostic.h"

namespace stowage {

/// Reads one tensor, choosing the format by extension (case-insensitive):
/// - `.pb`: a serialized onnx::TensorProto; `name` is the proto's name (the file stem when empty).
/// - `.npy`: NumPy format 1.0, 2.0 or 3.0 with dtype float32, int8, uint8, int32, int64 or bool, C order,
///   little-endian; `name` is the file stem ("input_0" for "dir/input_0.npy").
/// The result has kind Input and `data` holding all element bytes (row-major, little-endian), although
/// Tensor::data is otherwise only filled for constants. Every failure (missing file, unknown extension,
/// truncated or malformed content, unsupported dtype, Fortran order, big-endian) is a Diagnostic whose
/// location is `path`.
Result<Tensor> readTensorFile(const std::string& path);

/// Decodes the bytes of a `.pb` tensor file (a serialized onnx::TensorProto) as readTensorFile does; `where` (the
/// file name) is the location of every error. The name is the proto's, empty when it has none. Kind Input.
Result<Tensor> decodeTensorPb(const std::string& bytes, const std::string& where);

/// Reads raw little-endian element bytes, row-major, with the given dtype and shape. The file size must be
/// exactly numElements x dtypeSize bytes; the error states the expected and actual byte counts.
/// `name` is the file stem, kind Input.
Result<Tensor> readRawTensor(const std::string& path, DType dtype, const Shape& shape);

/// Writes `t` (dtype, shape, name, data) as a serialized onnx::TensorProto. Fails when `t.data` does not
/// hold exactly t.byteSize() bytes, or on I/O errors.
Status writeTensorPb(const std::string& path, const Tensor& t);

/// Writes `t` as NumPy format 1.0 (2.0 only if the header would exceed 65,535 bytes), C order, with the
/// header padded by spaces and a final newline so the data starts at a multiple of 64 bytes, as NumPy
/// writes it. The name is not stored. Same failure cases as writeTensorPb.
Status writeNpy(const std::string& path, const Tensor& t);

/// Writes the element bytes of `t` as they are (raw little-endian, no header).
Status writeRaw(const std::string& path, const Tensor& t);

}  // namespace stowage
