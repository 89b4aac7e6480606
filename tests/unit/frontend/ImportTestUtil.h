// Import helpers shared by the ONNX importer tests: import a ModelBuilder's bytes expecting success (and a
// graph the verifier accepts) or an error, and find a node by op.
#pragma once

#include <gtest/gtest.h>

#include "OnnxTestModels.h"
#include "stowage/frontend/OnnxImporter.h"
#include "stowage/ir/Printer.h"
#include "stowage/ir/Verifier.h"

namespace stowage::test {

inline Graph importOk(const ModelBuilder& m, const OnnxImportOptions& options = {}) {
  auto g = importOnnxBytes(m.serialize(), "test.onnx", options);
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().render());
  if (!g.ok()) return Graph{};
  EXPECT_TRUE(verifyGraph(*g).ok());
  return std::move(*g);
}

inline Diagnostic importFails(const ModelBuilder& m, const OnnxImportOptions& options = {}) {
  auto g = importOnnxBytes(m.serialize(), "test.onnx", options);
  EXPECT_FALSE(g.ok()) << "expected an error; got\n" << (g.ok() ? printGraph(*g) : "");
  return g.ok() ? Diagnostic{} : g.error();
}

inline const Node* findNode(const Graph& g, OpKind op) {
  for (const Node& n : g.nodes)
    if (n.op == op) return &n;
  return nullptr;
}

}  // namespace stowage::test
