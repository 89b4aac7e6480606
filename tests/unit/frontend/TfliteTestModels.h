// A tiny int8 TFLite model (one FULLY_CONNECTED) written with flatbuffers::FlatBufferBuilder field by field,
// with knobs to make it malformed or unsupported. Used by the TFLite reader tests and the TFLite fuzz test.
#pragma once

#include <flatbuffers/flatbuffers.h>

#include <cstdint>
#include <string>
#include <vector>

namespace stowage::tflitetest {

struct TinyModelOptions {
  int32_t builtinCode = 9;       ///< OperatorCode.builtin_code (9 = FULLY_CONNECTED); -1 leaves it absent
  int8_t deprecatedCode = 9;     ///< OperatorCode.deprecated_builtin_code
  int32_t version = 1;
  std::string customCode;        ///< set with code 32 (CUSTOM)
  uint32_t opcodeIndex = 0;      ///< Operator.opcode_index
  uint32_t weightBuffer = 1;     ///< Tensor.buffer of the weights
  int32_t inputTensor = 0;       ///< Operator.inputs[0]
  bool withBias = true;          ///< false: Operator.inputs[2] = -1 (optional bias left out)
  const char* identifier = "TFL3";
};

/// Input int8 [1,4] (scale 0.5, zp 1) -> FC with int8 weights [3,4] (scale 0.25) and int32 bias [3]
/// -> output int8 [1,3] (scale 1, zp -2).
inline std::vector<uint8_t> buildTinyFcModel(const TinyModelOptions& o = {}) {
  using flatbuffers::Offset;
  auto slot = [](int id) { return static_cast<flatbuffers::voffset_t>(4 + 2 * id); };
  flatbuffers::FlatBufferBuilder b;
  auto table = [&](auto fill) {
    auto start = b.StartTable();
    fill();
    return Offset<flatbuffers::Table>(b.EndTable(start));
  };
  auto quant = [&](std::vector<float> scales, std::vector<int64_t> zps) {
    auto s = b.CreateVector(scales);
    auto z = b.CreateVector(zps);
    return table([&] {
      b.AddOffset(slot(2), s);
      b.AddOffset(slot(3), z);
    });
  };
  auto tensor = [&](std::vector<int32_t> shape, int8_t type, uint32_t buffer, const char* name, Offset<flatbuffers::Table> q) {
    auto sh = b.CreateVector(shape);
    auto nm = b.CreateString(name);
    return table([&] {
      b.AddOffset(slot(0), sh);
      b.AddElement<int8_t>(slot(1), type, 0);
      b.AddElement<uint32_t>(slot(2), buffer, 0);
      b.AddOffset(slot(3), nm);
      if (!q.IsNull()) b.AddOffset(slot(4), q);
    });
  };
  std::vector<Offset<flatbuffers::Table>> tensors = {
      tensor({1, 4}, 9, 0, "input", quant({0.5f}, {1})),
      tensor({3, 4}, 9, o.weightBuffer, "weights", quant({0.25f}, {0})),
      tensor({3}, 2, 2, "bias", quant({0.125f}, {0})),
      tensor({1, 3}, 9, 0, "output", quant({1.0f}, {-2})),
  };
  auto tensorVec = b.CreateVector(tensors);
  auto ins = b.CreateVector(std::vector<int32_t>{0});
  auto outs = b.CreateVector(std::vector<int32_t>{3});
  auto opIns = b.CreateVector(std::vector<int32_t>{o.inputTensor, 1, o.withBias ? 2 : -1});
  auto opOuts = b.CreateVector(std::vector<int32_t>{3});
  auto fcOptions = table([&] { b.AddElement<int8_t>(slot(0), 1, 0); });  // fused RELU
  auto op = table([&] {
    b.AddElement<uint32_t>(slot(0), o.opcodeIndex, 0);
    b.AddOffset(slot(1), opIns);
    b.AddOffset(slot(2), opOuts);
    b.AddElement<uint8_t>(slot(3), 8, 0);  // FullyConnectedOptions
    b.AddOffset(slot(4), fcOptions);
  });
  auto ops = b.CreateVector(std::vector<Offset<flatbuffers::Table>>{op});
  auto sgName = b.CreateString("main");
  auto subgraph = table([&] {
    b.AddOffset(slot(0), tensorVec);
    b.AddOffset(slot(1), ins);
    b.AddOffset(slot(2), outs);
    b.AddOffset(slot(3), ops);
    b.AddOffset(slot(4), sgName);
  });
  auto custom = o.customCode.empty() ? Offset<flatbuffers::String>() : b.CreateString(o.customCode);
  auto opcode = table([&] {
    b.AddElement<int8_t>(slot(0), o.deprecatedCode, 0);
    if (!custom.IsNull()) b.AddOffset(slot(1), custom);
    b.AddElement<int32_t>(slot(2), o.version, 1);
    if (o.builtinCode >= 0) b.ForceDefaults(true), b.AddElement<int32_t>(slot(3), o.builtinCode, 0), b.ForceDefaults(false);
  });
  const std::vector<int8_t> weights = {1, 2, 3, 4, -1, -2, -3, -4, 10, 0, -10, 5};
  const std::vector<int32_t> bias = {8, -8, 0};
  auto wData = b.CreateVector(reinterpret_cast<const uint8_t*>(weights.data()), weights.size());
  auto bData = b.CreateVector(reinterpret_cast<const uint8_t*>(bias.data()), bias.size() * sizeof(int32_t));
  std::vector<Offset<flatbuffers::Table>> buffers = {
      table([&] {}),
      table([&] { b.AddOffset(slot(0), wData); }),
      table([&] { b.AddOffset(slot(0), bData); }),
  };
  auto bufferVec = b.CreateVector(buffers);
  auto opcodes = b.CreateVector(std::vector<Offset<flatbuffers::Table>>{opcode});
  auto subgraphs = b.CreateVector(std::vector<Offset<flatbuffers::Table>>{subgraph});
  auto desc = b.CreateString("stowage test model");
  auto root = table([&] {
    b.AddElement<uint32_t>(slot(0), 3, 0);
    b.AddOffset(slot(1), opcodes);
    b.AddOffset(slot(2), subgraphs);
    b.AddOffset(slot(3), desc);
    b.AddOffset(slot(4), bufferVec);
  });
  b.Finish(root, o.identifier);
  return std::vector<uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
}

}  // namespace stowage::tflitetest
