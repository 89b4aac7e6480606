// Writes .tflite models with flatbuffers::FlatBufferBuilder, field by field (ids from
// docs/tflite-format-notes.md in ../shared): tensors with quantization and constant data, operators with options.
// Used by the random int8 TFLite models (zoo/RandomTflite.h) and by the tests that write small TFLite models.
#pragma once

#include <flatbuffers/flatbuffers.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace stowage::tflitewriter {

struct TensorSpec {
  std::string name;
  std::vector<int32_t> shape;
  int8_t type = 9;                ///< TensorType: 0 FLOAT32, 2 INT32, 3 UINT8, 9 INT8
  std::vector<float> scales;      ///< empty: no quantization table
  std::vector<int64_t> zeroPoints;
  std::vector<uint8_t> data;      ///< non-empty: a constant
  int32_t quantizedDimension = 0; ///< QuantizationParameters.quantized_dimension (per-channel scales' axis)
};

struct OpSpec {
  int32_t code = 0;  ///< BuiltinOperator
  std::vector<int32_t> inputs, outputs;
  uint8_t optionsTag = 0;  ///< BuiltinOptions union tag; 0 = no options table
  std::vector<std::pair<int, int8_t>> byteFields;
  std::vector<std::pair<int, int32_t>> intFields;
  std::vector<std::pair<int, float>> floatFields;
};

template <class T>
std::vector<uint8_t> bytesOf(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

inline std::vector<uint8_t> buildTfliteModel(const std::vector<TensorSpec>& tensors, const std::vector<OpSpec>& ops,
                                             const std::vector<int32_t>& inputs, const std::vector<int32_t>& outputs) {
  using flatbuffers::Offset;
  using TableRef = Offset<flatbuffers::Table>;
  auto slot = [](int id) { return static_cast<flatbuffers::voffset_t>(4 + 2 * id); };
  flatbuffers::FlatBufferBuilder b;
  b.ForceDefaults(true);
  auto table = [&](auto fill) {
    auto start = b.StartTable();
    fill();
    return TableRef(b.EndTable(start));
  };
  std::vector<TableRef> buffers = {table([] {})};
  std::vector<TableRef> tensorTables;
  for (const TensorSpec& t : tensors) {
    uint32_t buffer = 0;
    if (!t.data.empty()) {
      b.ForceVectorAlignment(t.data.size(), 1, 16);
      auto data = b.CreateVector(t.data);
      buffers.push_back(table([&] { b.AddOffset(slot(0), data); }));
      buffer = static_cast<uint32_t>(buffers.size() - 1);
    }
    TableRef quant;
    if (!t.scales.empty()) {
      auto s = b.CreateVector(t.scales);
      auto z = b.CreateVector(t.zeroPoints);
      quant = table([&] {
        b.AddOffset(slot(2), s);
        b.AddOffset(slot(3), z);
        if (t.quantizedDimension != 0) b.AddElement<int32_t>(slot(6), t.quantizedDimension, 0);
      });
    }
    auto shape = b.CreateVector(t.shape);
    auto name = b.CreateString(t.name);
    tensorTables.push_back(table([&] {
      b.AddOffset(slot(0), shape);
      b.AddElement<int8_t>(slot(1), t.type, -1);
      b.AddElement<uint32_t>(slot(2), buffer, 0xFFFFFFFFu);
      b.AddOffset(slot(3), name);
      if (!quant.IsNull()) b.AddOffset(slot(4), quant);
    }));
  }
  std::vector<int32_t> codes;
  std::vector<TableRef> opTables;
  for (const OpSpec& o : ops) {
    uint32_t index = 0;
    while (index < codes.size() && codes[index] != o.code) ++index;
    if (index == codes.size()) codes.push_back(o.code);
    TableRef options;
    if (o.optionsTag != 0)
      options = table([&] {
        for (auto [id, v] : o.byteFields) b.AddElement<int8_t>(slot(id), v, static_cast<int8_t>(~v));
        for (auto [id, v] : o.intFields) b.AddElement<int32_t>(slot(id), v, ~v);
        for (auto [id, v] : o.floatFields) b.AddElement<float>(slot(id), v, v + 1.0f);
      });
    auto ins = b.CreateVector(o.inputs);
    auto outs = b.CreateVector(o.outputs);
    opTables.push_back(table([&] {
      b.AddElement<uint32_t>(slot(0), index, 0xFFFFFFFFu);
      b.AddOffset(slot(1), ins);
      b.AddOffset(slot(2), outs);
      if (o.optionsTag != 0) {
        b.AddElement<uint8_t>(slot(3), o.optionsTag, 0);
        b.AddOffset(slot(4), options);
      }
    }));
  }
  auto tensorVec = b.CreateVector(tensorTables);
  auto ins = b.CreateVector(inputs);
  auto outs = b.CreateVector(outputs);
  auto opVec = b.CreateVector(opTables);
  auto sgName = b.CreateString("main");
  auto subgraph = table([&] {
    b.AddOffset(slot(0), tensorVec);
    b.AddOffset(slot(1), ins);
    b.AddOffset(slot(2), outs);
    b.AddOffset(slot(3), opVec);
    b.AddOffset(slot(4), sgName);
  });
  std::vector<TableRef> opcodeTables;
  for (int32_t c : codes)
    opcodeTables.push_back(table([&] {
      b.AddElement<int8_t>(slot(0), static_cast<int8_t>(c < 127 ? c : 127), -1);
      b.AddElement<int32_t>(slot(2), 1, 0);
      b.AddElement<int32_t>(slot(3), c, -1);
    }));
  auto opcodes = b.CreateVector(opcodeTables);
  auto subgraphs = b.CreateVector(std::vector<TableRef>{subgraph});
  auto bufferVec = b.CreateVector(buffers);
  auto desc = b.CreateString("stowage test model");
  auto root = table([&] {
    b.AddElement<uint32_t>(slot(0), 3, 0);
    b.AddOffset(slot(1), opcodes);
    b.AddOffset(slot(2), subgraphs);
    b.AddOffset(slot(3), desc);
    b.AddOffset(slot(4), bufferVec);
  });
  b.Finish(root, "TFL3");
  return std::vector<uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
}

}  // namespace stowage::tflitewriter
