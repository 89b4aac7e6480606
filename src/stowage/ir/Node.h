// Graph nodes: one operation with its input/output tensors and canonical attributes (see Ops.def).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "stowage/ir/Op.h"
#include "stowage/ir/Tensor.h"

namespace stowage {

/// An attribute value: int, float, list of ints, list of floats, or string.
using AttrValue = std::variant<int64_t, float, std::vector<int64_t>, std::vector<float>, std::string>;

/// Attributes by name; std::map keeps iteration (and so IR dumps and generated C) deterministic.
class Attributes {
 public:
  void set(const std::string& name, AttrValue v) { values_[name] = std::move(v); }
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  void erase(const std::string& name) { values_.erase(name); }

  int64_t getInt(const std::string& name, int64_t fallback) const;
  float getFloat(const std::string& name, float fallback) const;
  std::vector<int64_t> getInts(const std::string& name, std::vector<int64_t> fallback = {}) const;
  std::vector<float> getFloats(const std::string& name, std::vector<float> fallback = {}) const;
  std::string getString(const std::string& name, std::string fallback = {}) const;

  const std::map<std::string, AttrValue>& all() const { return values_; }
  bool operator==(const Attributes&) const = default;

 private:
  std::map<std::string, AttrValue> values_;
};

struct Node {
  std::string name;  ///< unique in the graph; frontends invent one when the model has none
  OpKind op = OpKind::Relu;
  std::vector<TensorId> inputs;  ///< kNoTensor for an absent optional input
  std::vector<TensorId> outputs;
  Attributes attrs;

  /// Input i, or kNoTensor when absent.
  TensorId input(size_t i) const { return i < inputs.size() ? inputs[i] : kNoTensor; }
};

}  // namespace stowage
