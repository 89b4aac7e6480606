// Hand-built graphs for the codegen tests: small helpers to add tensors and nodes without a frontend.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "stowage/ir/Graph.h"

namespace stowage::testing {

inline TensorId addTensor(Graph& g, const std::string& name, Shape shape, TensorKind kind = TensorKind::Activation,
                          DType dtype = DType::Float32) {
  Tensor t;
  t.name = name;
  t.shape = std::move(shape);
  t.kind = kind;
  t.dtype = dtype;
  return g.addTensor(std::move(t));
}

inline TensorId addInput(Graph& g, const std::string& name, Shape shape) {
  TensorId id = addTensor(g, name, std::move(shape), TensorKind::Input);
  g.inputs.push_back(id);
  return id;
}

inline TensorId addConstant(Graph& g, const std::string& name, Shape shape, const std::vector<float>& values) {
  TensorId id = addTensor(g, name, std::move(shape), TensorKind::Constant);
  Tensor& t = g.tensor(id);
  t.data.resize(values.size() * sizeof(float));
  if (!values.empty()) std::memcpy(t.data.data(), values.data(), t.data.size());
  return id;
}

inline Node& addNode(Graph& g, const std::string& name, OpKind op, std::vector<TensorId> in, TensorId out,
                     Attributes attrs = {}) {
  Node n;
  n.name = name;
  n.op = op;
  n.inputs = std::move(in);
  n.outputs = {out};
  n.attrs = std::move(attrs);
  g.addNode(std::move(n));
  return g.nodes.back();
}

inline Tensor floatTensor(const std::string& name, Shape shape, const std::vector<float>& values) {
  Tensor t;
  t.name = name;
  t.shape = std::move(shape);
  t.kind = TensorKind::Input;
  t.data.resize(values.size() * sizeof(float));
  if (!values.empty()) std::memcpy(t.data.data(), values.data(), t.data.size());
  return t;
}

inline std::vector<float> floats(const Tensor& t) {
  std::vector<float> v(static_cast<size_t>(t.numElements()));
  if (!v.empty()) std::memcpy(v.data(), t.data.data(), v.size() * sizeof(float));
  return v;
}

}  // namespace stowage::testing
