// Graph tensors: shape, element type, optional quantization, and constant data for weights.
// Every buffer the planner places starts as one of these.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "stowage/ir/DType.h"

namespace stowage {

using Shape = std::vector<int64_t>;
/// Index of a tensor in Graph::tensors. kNoTensor marks an absent optional input.
using TensorId = int32_t;
inline constexpr TensorId kNoTensor = -1;

/// Number of elements of a shape (1 for a scalar, rank 0).
int64_t shapeElements(const Shape& s);
/// "1x3x32x32"; "scalar" for rank 0.
std::string shapeToString(const Shape& s);

/// Affine quantization: real = scale * (q - zero_point). Per-tensor when scales.size() == 1,
/// else per-channel along `axis`.
struct QuantParams {
  std::vector<float> scales;
  std::vector<int64_t> zeroPoints;
  int32_t axis = 0;
  bool operator==(const QuantParams&) const = default;
};

enum class TensorKind : uint8_t {
  Input,       ///< graph input, written by the application before each run
  Constant,    ///< weight or folded value; `data` holds its bytes
  Activation,  ///< produced by a node
};

struct Tensor {
  std::string name;
  DType dtype = DType::Float32;
  Shape shape;
  TensorKind kind = TensorKind::Activation;
  std::optional<QuantParams> quant;
  /// Raw little-endian element bytes, row-major; only for kind == Constant.
  std::vector<uint8_t> data;

  int64_t numElements() const { return shapeElements(shape); }
  /// Size in bytes (numElements x element size).
  size_t byteSize() const { return static_cast<size_t>(numElements()) * dtypeSize(dtype); }
  bool isConstant() const { return kind == TensorKind::Constant; }

  /// Typed view of constant data; requires sizeof(T) == dtypeSize(dtype).
  template <typename T>
  const T* dataAs() const { return reinterpret_cast<const T*>(data.data()); }
};

}  // namespace stowage
