// Small helpers shared by the kernel lowering files (KernelCall.cpp, NhwcKernelCall.cpp, QuantKernelCall.cpp,
// QLinearKernelCall.cpp): the node named in messages, int32 fields with overflow checks, broadcast strides.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "stowage/ir/Graph.h"
#include "stowage/support/Diagnostic.h"

namespace stowage::lowering {

/// Combines lambdas into one visitor for std::visit.
template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

/// "{1, 2, 3}": the first `count` values of `v` as a C initializer.
template <typename T>
std::string intList(const T* v, int32_t count) {
  std::string s = "{";
  for (int32_t i = 0; i < count; ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "}";
}

/// "node 'conv1' (Conv)": where a lowering message points.
inline std::string nodeLoc(const Node& n) { return fmt::format("node '{}' ({})", n.name, opName(n.op)); }

/// Checks the node reads and writes float32 only (the float kernels).
inline Status requireFloat(const Graph& g, const Node& n) {
  auto check = [&](TensorId id) -> Status {
    if (id == kNoTensor) return Status::success();
    const Tensor& t = g.tensor(id);
    if (t.dtype != DType::Float32)
      return makeUnsupported(nodeLoc(n), fmt::format("tensor '{}' has dtype {}; the {} kernel supports f32 only", t.name,
                                                      dtypeName(t.dtype), opName(n.op)));
    return Status::success();
  };
  for (TensorId id : n.inputs) STOWAGE_TRY(check(id));
  for (TensorId id : n.outputs) STOWAGE_TRY(check(id));
  return Status::success();
}

/// requireFloat for a float op that may have int8 weights (ConvNhwc, DepthwiseConvNhwc, Gemm): when input 3 (the
/// weights' float scales) is present, input 1 must be int8 and is dequantized in the kernel. True for int8 weights.
inline Result<bool> requireFloatOrInt8Weights(const Graph& g, const Node& n) {
  if (n.input(3) == kNoTensor) {
    STOWAGE_TRY(requireFloat(g, n));
    return false;
  }
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const TensorId id = n.inputs[i];
    if (id == kNoTensor) continue;
    const Tensor& t = g.tensor(id);
    const DType want = i == 1 ? DType::Int8 : DType::Float32;
    if (t.dtype != want)
      return makeUnsupported(nodeLoc(n), fmt::format("tensor '{}' has dtype {}; the {} kernel with weight scales needs {} (int8 weights, "
                                                      "float32 otherwise)", t.name, dtypeName(t.dtype), opName(n.op), dtypeName(want)));
  }
  for (TensorId id : n.outputs)
    if (g.tensor(id).dtype != DType::Float32)
      return makeUnsupported(nodeLoc(n), fmt::format("tensor '{}' has dtype {}; the {} kernel writes f32 only", g.tensor(id).name,
                                                      dtypeName(g.tensor(id).dtype), opName(n.op)));
  return true;
}

inline bool fitsI32(int64_t v) { return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max(); }

/// The error for a value of `n` (`what`: "a size", "a dimension") that does not fit the kernels' int32 fields.
inline Diagnostic tooBig(const Node& n, const std::string& what) {
  return makeUnsupported(nodeLoc(n), fmt::format("{} exceeds what the kernel's 32-bit parameters can hold", what));
}

/// Stores each int64 value in its int32 field, or fails naming `n` when one does not fit.
inline Status assignI32(const Node& n, std::initializer_list<std::pair<int32_t*, int64_t>> fields) {
  for (auto [dst, v] : fields) {
    if (!fitsI32(v)) return tooBig(n, "a size");
    *dst = static_cast<int32_t>(v);
  }
  return Status::success();
}

/// Row-major element strides of `in` broadcast against `out` (0 on broadcast dims), right-aligned.
inline std::vector<int64_t> broadcastStrides(const Shape& in, const Shape& out) {
  std::vector<int64_t> strides(out.size(), 0);
  int64_t s = 1;
  for (size_t d = in.size(); d-- > 0;) {
    const size_t od = out.size() - in.size() + d;
    strides[od] = (in[d] == 1 && out[od] != 1) ? 0 : s;
    s *= in[d];
  }
  return strides;
}

/// Loop dims of a broadcast over two operands: `sizes` with per-operand element strides.
struct BroadcastLoops {
  Shape sizes;
  std::vector<int64_t> aStrides, bStrides;
};

/// Drops the size-1 dims of `shape` and merges dims contiguous in both operands (strides `sa`, `sb` from
/// broadcastStrides), so the kernels loop over the fewest levels.
inline BroadcastLoops mergeBroadcastLoops(const Shape& shape, const std::vector<int64_t>& sa, const std::vector<int64_t>& sb) {
  BroadcastLoops r;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!r.sizes.empty() && r.aStrides.back() == sa[d] * shape[d] && r.bStrides.back() == sb[d] * shape[d]) {
      r.sizes.back() *= shape[d];
      r.aStrides.back() = sa[d];
      r.bStrides.back() = sb[d];
    } else {
      r.sizes.push_back(shape[d]);
      r.aStrides.push_back(sa[d]);
      r.bStrides.push_back(sb[d]);
    }
  }
  return r;
}

}  // namespace stowage::lowering
