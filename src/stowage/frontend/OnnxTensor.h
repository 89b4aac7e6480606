// Conversion between onnx::TensorProto and IR tensors: initializers, Constant nodes and the .pb tensor files
// that `stowage run` reads and writes. Part of the ONNX frontend; also used by io/.
#pragma once

#include <onnx/onnx_pb.h>

#include <optional>
#include <string>

#include "stowage/ir/Tensor.h"
#include "stowage/support/Diagnostic.h"

namespace stowage {

/// IR dtype of an ONNX TensorProto_DataType value (FLOAT, INT8, UINT8, INT32, INT64, BOOL), else nullopt.
std::optional<DType> dtypeFromOnnx(int32_t onnxType);
/// ONNX TensorProto_DataType value of an IR dtype.
int32_t dtypeToOnnx(DType t);
/// ONNX's name of a TensorProto_DataType value ("FLOAT16", "DOUBLE", ...), for diagnostics.
std::string onnxDtypeName(int32_t onnxType);

/// Reads a TensorProto (raw_data or the typed fields float_data / int32_data / int64_data) into a
/// Constant tensor with the proto's name, dims and little-endian bytes in `data`. Unsupported dtypes and
/// external data give makeUnsupported; negative dims or an element count that does not match the dims give
/// makeError. `where` is the diagnostic location (e.g. "model.onnx: initializer 'conv1.weight'").
Result<Tensor> tensorFromOnnx(const onnx::TensorProto& proto, const std::string& where);

/// Writes `t` (name, dims, dtype, `data` as raw_data). `t.data` should hold t.byteSize() bytes.
onnx::TensorProto tensorToOnnx(const Tensor& t);

}  // namespace stowage
