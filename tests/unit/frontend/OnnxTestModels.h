// Small ONNX ModelProtos built in code for the frontend tests.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

namespace stowage::test {

/// Builds one model: inputs, initializers, nodes, outputs; serialize() gives bytes for importOnnxBytes.
class ModelBuilder {
 public:
  explicit ModelBuilder(int64_t opset = 13, int64_t irVersion = 7) {
    model_.set_ir_version(irVersion);
    model_.set_producer_name("stowage-test");
    auto* o = model_.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    model_.mutable_graph()->set_name("test_graph");
  }

  /// A float input; dims < 0 become a symbolic dim "N".
  ModelBuilder& input(const std::string& name, const std::vector<int64_t>& dims, int elemType = onnx::TensorProto_DataType_FLOAT) {
    auto* vi = model_.mutable_graph()->add_input();
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elemType);
    auto* shape = tt->mutable_shape();
    for (int64_t d : dims) {
      auto* dim = shape->add_dim();
      if (d < 0) dim->set_dim_param("N");
      else dim->set_dim_value(d);
    }
    return *this;
  }

  ModelBuilder& output(const std::string& name, int elemType = onnx::TensorProto_DataType_FLOAT) {
    auto* vi = model_.mutable_graph()->add_output();
    vi->set_name(name);
    vi->mutable_type()->mutable_tensor_type()->set_elem_type(elemType);
    vi->mutable_type()->mutable_tensor_type()->mutable_shape();
    return *this;
  }

  ModelBuilder& floatInit(const std::string& name, const std::vector<int64_t>& dims, float fill = 0.5f) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto_DataType_FLOAT);
    int64_t n = 1;
    for (int64_t d : dims) {
      t->add_dims(d);
      n *= d;
    }
    for (int64_t i = 0; i < n; ++i) t->add_float_data(fill);
    return *this;
  }

  ModelBuilder& intInit(const std::string& name, const std::vector<int64_t>& values, bool scalar = false) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto_DataType_INT64);
    if (!scalar) t->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
    return *this;
  }

  onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& ins, const std::vector<std::string>& outs,
                        const std::string& name = {}) {
    auto* n = model_.mutable_graph()->add_node();
    n->set_op_type(op);
    if (!name.empty()) n->set_name(name);
    for (const auto& i : ins) n->add_input(i);
    for (const auto& o : outs) n->add_output(o);
    return *n;
  }

  static void attr(onnx::NodeProto& n, const std::string& name, int64_t v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto_AttributeType_INT);
    a->set_i(v);
  }
  static void attr(onnx::NodeProto& n, const std::string& name, float v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto_AttributeType_FLOAT);
    a->set_f(v);
  }
  static void attr(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto_AttributeType_INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  static void attr(onnx::NodeProto& n, const std::string& name, const std::string& v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto_AttributeType_STRING);
    a->set_s(v);
  }

  onnx::ModelProto& proto() { return model_; }
  std::string serialize() const { return model_.SerializeAsString(); }

 private:
  onnx::ModelProto model_;
};

}  // namespace stowage::test
