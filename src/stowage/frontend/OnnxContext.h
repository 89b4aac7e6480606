// Internal to the ONNX frontend: the state shared by the importer, the per-op converters and the ONNX-level
// constant evaluator while one model is converted (known constant values, IR tensor ids by ONNX name,
// bounded attribute readers). Not a public interface.
#pragma once

#include <onnx/onnx_pb.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "stowage/frontend/OnnxImporter.h"
#include "stowage/ir/Graph.h"
#include "stowage/support/Diagnostic.h"

namespace stowage::onnxfe {

/// Largest element count of any tensor the importer accepts (and of any attribute value, in absolute value):
/// keeps every shape computation far from int64 overflow on corrupt input.
inline constexpr int64_t kMaxElements = int64_t{1} << 31;
inline constexpr int64_t kMaxAttrValue = int64_t{1} << 30;

/// Conversion state of one model.
struct Context {
  std::string file;    ///< display name for diagnostics
  int64_t opset = 1;   ///< ai.onnx opset version of the model
  /// Largest constant the ONNX-level evaluator materializes (elements; OnnxImportOptions::maxFoldElements).
  int64_t maxFoldElements = OnnxImportOptions{}.maxFoldElements;
  Graph graph;
  /// Values known at compile time (initializers, Constant nodes, folded results, bound inputs), by ONNX name.
  std::unordered_map<std::string, Tensor> consts;
  /// IR tensor of each materialized value (graph inputs, node outputs, constants some node reads).
  std::unordered_map<std::string, TensorId> ids;
  /// Every tensor name in use (ONNX names and invented ones), for fresh names.
  std::set<std::string> names;
  std::set<std::string> nodeNames;
  /// Number of ONNX consumers (node inputs + graph outputs) of each value name.
  std::unordered_map<std::string, int> uses;

  bool isConst(const std::string& name) const { return consts.count(name) != 0; }
  const Tensor* constant(const std::string& name) const;
  bool known(const std::string& name) const { return isConst(name) || ids.count(name) != 0; }
  /// Shape / dtype of a known value (constant or IR tensor); nullopt when unknown.
  std::optional<Shape> shapeOf(const std::string& name) const;
  std::optional<DType> dtypeOf(const std::string& name) const;
  /// IR tensor for a known value; a constant is added to the graph on first use.
  Result<TensorId> materialize(const std::string& name, const std::string& where);
  /// A tensor name not used yet, derived from `base`.
  std::string freshName(const std::string& base);
  /// A node name not used yet (`base` itself when free).
  std::string freshNodeName(const std::string& base);
  /// True when an ONNX value is read by some node or is a graph output.
  bool used(const std::string& name) const {
    auto it = uses.find(name);
    return !name.empty() && it != uses.end() && it->second > 0;
  }
};

/// One ONNX node being converted: its proto, the unique name given to its (first) IR node and its
/// diagnostic location "file: node 'x' (OpType)".
struct NodeRef {
  const onnx::NodeProto& proto;
  std::string name;
  std::string loc;
  int emitted = 0;  ///< IR nodes emitted so far (later ones get "<name>_<k>")

  std::string opType() const { return proto.op_type(); }
  /// Input i's name, "" when absent.
  std::string input(int i) const { return i < proto.input_size() ? proto.input(i) : std::string(); }
  std::string output(int i) const { return i < proto.output_size() ? proto.output(i) : std::string(); }
};

// ---- attribute readers: never throw; wrong-typed attributes read as absent ----
const onnx::AttributeProto* findAttr(const onnx::NodeProto& n, const std::string& name);
bool hasAttr(const onnx::NodeProto& n, const std::string& name);
int64_t attrInt(const onnx::NodeProto& n, const std::string& name, int64_t fallback);
float attrFloat(const onnx::NodeProto& n, const std::string& name, float fallback);
std::string attrString(const onnx::NodeProto& n, const std::string& name, const std::string& fallback = {});
std::optional<std::vector<int64_t>> attrInts(const onnx::NodeProto& n, const std::string& name);
std::optional<std::vector<float>> attrFloats(const onnx::NodeProto& n, const std::string& name);

/// Element values of a constant as int64 (from any integer, bool or float dtype).
std::vector<int64_t> constInts(const Tensor& t);
/// Element values as double.
std::vector<double> constDoubles(const Tensor& t);
/// A constant tensor of `dtype` and `shape` from values (converted per element).
Tensor makeConst(const std::string& name, DType dtype, const Shape& shape, const std::vector<double>& values);
Tensor makeConstInts(const std::string& name, DType dtype, const Shape& shape, const std::vector<int64_t>& values);
/// Product of dims with an overflow guard; nullopt when a dim is negative or the product exceeds kMaxElements.
std::optional<int64_t> checkedElements(const Shape& s);
/// numpy broadcast of two shapes.
std::optional<Shape> broadcastShapes(const Shape& a, const Shape& b);
std::string intsString(const std::vector<int64_t>& v);

/// Adds IR node `op` reading `inputs` (ONNX or invented value names; "" = absent optional input) and
/// producing `output`, with its output shape from the op's shape rule. Data-movement and elementwise ops
/// whose inputs are all constants are evaluated instead (the result becomes a known constant). Compute ops
/// on non-float32 tensors give makeUnsupported, unless `outputDType` is given: then the caller has checked the
/// input dtypes (the integer ops) and the output gets that dtype (else input 0's).
Status emit(Context& ctx, NodeRef& node, OpKind op, const std::vector<std::string>& inputs, Attributes attrs,
            const std::string& output, std::optional<DType> outputDType = std::nullopt);

/// Evaluates IR op `op` on constant inputs (data movement of any dtype: Reshape, Slice, Concat, Expand,
/// Transpose; elementwise arithmetic). nullopt when the op is not evaluated here.
/// Results of more than `maxElements` elements are not evaluated.
Result<std::optional<Tensor>> evalIrOnConstants(OpKind op, const std::vector<const Tensor*>& inputs,
                                                const Attributes& attrs, const Shape& outShape,
                                                const std::string& where, int64_t maxElements);

/// ONNX ops that are no IR op but are evaluated at compile time when their inputs are known
/// (Shape, Size, Gather, Cast, ConstantOfShape, Range, Equal, Where, ...). `handled` false: not such an op.
struct FoldResult {
  bool handled = false;
};
Result<FoldResult> foldOnnxNode(Context& ctx, NodeRef& node);
/// ONNX op types foldOnnxNode evaluates.
const std::set<std::string>& foldableOnnxOps();

/// Whole file contents; errors for a missing file, a directory or an unreadable file, naming `path`.
Result<std::string> readModelBytes(const std::string& path);
/// Parses serialized ModelProto bytes and runs onnx::checker; errors name `file` and say how to fix it.
Result<onnx::ModelProto> parseAndCheckOnnx(const std::string& bytes, const std::string& file);

/// Converts one ONNX node to IR nodes (or known constants). Unsupported ops and attribute values give
/// makeUnsupported naming the node.
Status convertOnnxNode(Context& ctx, NodeRef& node);
/// ONNX op types convertOnnxNode accepts.
const std::set<std::string>& convertibleOnnxOps();

}  // namespace stowage::onnxfe
