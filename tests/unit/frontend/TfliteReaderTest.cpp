// TFLite reader and importer: a tiny model built with FlatBufferBuilder imports; malformed files (truncated,
// flipped bytes, wrong identifier, Git LFS pointer, out-of-range indices) give clean errors; unsupported and
// custom ops give `unsupported` diagnostics naming the op and its version.
#include <gtest/gtest.h>

#include <cstring>

#include "TfliteTestModels.h"
#include "stowage/lower/KernelCall.h"
#include "stowage/frontend/TfliteImporter.h"
#include "stowage/frontend/TfliteQuant.h"
#include "stowage/frontend/TfliteReader.h"
#include "stowage/ir/Verifier.h"

namespace stowage {
namespace {

using tflitetest::buildTinyFcModel;
using tflitetest::TinyModelOptions;

Result<Graph> importBytes(std::vector<uint8_t> bytes) { return importTfliteBytes(std::move(bytes), "tiny.tflite"); }

std::string errorText(const Result<Graph>& r) { return r.ok() ? std::string("(imported)") : r.error().render(); }

TEST(TfliteReader, TinyModelImportsAsOneQuantizedFullyConnected) {
  auto g = importBytes(buildTinyFcModel());
  ASSERT_TRUE(g.ok()) << errorText(g);
  ASSERT_EQ(g->nodes.size(), 1u);
  EXPECT_EQ(g->nodes[0].op, OpKind::QFullyConnected);
  EXPECT_EQ(g->nodes[0].name, "FULLY_CONNECTED_0");
  ASSERT_EQ(g->inputs.size(), 1u);
  EXPECT_EQ(g->tensor(g->inputs[0]).dtype, DType::Int8);
  EXPECT_EQ(g->tensor(g->inputs[0]).shape, (Shape{1, 4}));
  EXPECT_EQ(g->tensor(g->inputs[0]).quant->zeroPoints, (std::vector<int64_t>{1}));
  // Fused RELU on output zero point -2: the clamp starts at the quantized 0.
  EXPECT_EQ(g->nodes[0].attrs.getInt("act_min", 0), -2);
  EXPECT_TRUE(verifyGraph(*g).ok());
}

TEST(TfliteReader, OptionalBiasMayBeLeftOut) {
  TinyModelOptions o;
  o.withBias = false;
  auto g = importBytes(buildTinyFcModel(o));
  ASSERT_TRUE(g.ok()) << errorText(g);
  ASSERT_EQ(g->nodes.size(), 1u);
  EXPECT_EQ(g->nodes[0].input(4), kNoTensor);
  auto calls = lowerNode(*g, g->nodes[0]);
  ASSERT_TRUE(calls.ok()) << calls.error().render();
  EXPECT_EQ((*calls)[0].inputs[2], kNoTensor);  // the kernel's bias argument is NULL
}

TEST(TfliteReader, DeprecatedBuiltinCodeAloneIsEnough) {
  TinyModelOptions o;
  o.builtinCode = -1;  // older converters leave builtin_code absent (0 = ADD): max() picks field 0
  auto g = importBytes(buildTinyFcModel(o));
  ASSERT_TRUE(g.ok()) << errorText(g);
  EXPECT_EQ(g->nodes[0].op, OpKind::QFullyConnected);
}

TEST(TfliteReader, WrongIdentifierIsRejected) {
  TinyModelOptions o;
  o.identifier = "ABCD";
  auto g = importBytes(buildTinyFcModel(o));
  ASSERT_FALSE(g.ok());
  EXPECT_FALSE(g.error().unsupported);
  EXPECT_NE(g.error().message.find("\"ABCD\", not \"TFL3\""), std::string::npos) << errorText(g);
}

TEST(TfliteReader, GitLfsPointerIsNamed) {
  const std::string text = "version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 98496\n";
  auto g = importBytes(std::vector<uint8_t>(text.begin(), text.end()));
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.error().message.find("Git LFS"), std::string::npos) << errorText(g);
}

TEST(TfliteReader, TruncatedFilesAreCleanErrors) {
  const std::vector<uint8_t> full = buildTinyFcModel();
  // Every truncation point: the verifier (or the size check) must reject each one without reading past the end.
  for (size_t n = 0; n < full.size(); n += 3) {
    auto g = importBytes(std::vector<uint8_t>(full.begin(), full.begin() + static_cast<ptrdiff_t>(n)));
    ASSERT_FALSE(g.ok()) << "truncated to " << n << " bytes";
    EXPECT_FALSE(g.error().unsupported) << errorText(g);
  }
}

TEST(TfliteReader, FlippedBytesNeverCrash) {
  const std::vector<uint8_t> full = buildTinyFcModel();
  size_t rejected = 0;
  for (size_t i = 0; i < full.size(); ++i) {
    std::vector<uint8_t> bad = full;
    bad[i] ^= 0xA5;
    auto g = importBytes(std::move(bad));
    if (!g.ok()) ++rejected;
    else EXPECT_TRUE(verifyGraph(*g).ok()) << "flip at " << i;  // an accepted file still gives a valid graph
  }
  EXPECT_GT(rejected, 0u);
}

TEST(TfliteReader, OutOfRangeBufferIndexIsNamed) {
  TinyModelOptions o;
  o.weightBuffer = 99;
  auto g = importBytes(buildTinyFcModel(o));
  ASSERT_FALSE(g.ok());
  EXPECT_FALSE(g.error().unsupported);
  EXPECT_NE(g.error().message.find("refers to buffer 99, but the model has 3 buffers"), std::string::npos) << errorText(g);
}

TEST(TfliteReader, OutOfRangeOpcodeAndTensorIndicesAreNamed) {
  TinyModelOptions o;
  o.opcodeIndex = 4;
  auto g = importBytes(buildTinyFcModel(o));
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.error().message.find("opcode index 4"), std::string::npos) << errorText(g);
  TinyModelOptions t;
  t.inputTensor = 17;
  g = importBytes(buildTinyFcModel(t));
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.error().message.find("refers to tensor 17"), std::string::npos) << errorText(g);
}

TEST(TfliteReader, UnsupportedBuiltinOpIsNamedWithItsVersion) {
  TinyModelOptions o;
  o.builtinCode = 23;  // RESIZE_BILINEAR
  o.deprecatedCode = 23;
  o.version = 2;
  auto g = importBytes(buildTinyFcModel(o));
  ASSERT_FALSE(g.ok());
  EXPECT_TRUE(g.error().unsupported);
  EXPECT_NE(g.error().render().find("RESIZE_BILINEAR"), std::string::npos) << errorText(g);
  EXPECT_NE(g.error().render().find("version 2"), std::string::npos) << errorText(g);
  // Codes past the deprecated int8 field (here 150) still get a name.
  o.builtinCode = 150;
  o.deprecatedCode = 127;
  g = importBytes(buildTinyFcModel(o));
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.error().render().find("BUILTIN_150"), std::string::npos) << errorText(g);
}

TEST(TfliteReader, CustomOpIsUnsupportedAndNamed) {
  TinyModelOptions o;
  o.builtinCode = 32;
  o.deprecatedCode = 32;
  o.customCode = "ethos-u";
  auto g = importBytes(buildTinyFcModel(o));
  ASSERT_FALSE(g.ok());
  EXPECT_TRUE(g.error().unsupported);
  EXPECT_NE(g.error().render().find("custom op \"ethos-u\""), std::string::npos) << errorText(g);
  EXPECT_NE(g.error().hint.find("Vela"), std::string::npos) << errorText(g);
}

TEST(TfliteQuant, QuantizeMultiplierFollowsFrexpRounding) {
  auto q = tflite::quantizeMultiplier(0.5);
  EXPECT_EQ(q.multiplier, 1 << 30);
  EXPECT_EQ(q.shift, 0);
  q = tflite::quantizeMultiplier(0.75 / 1024.0);
  EXPECT_EQ(q.multiplier, 1610612736);  // 0.75 * 2^31
  EXPECT_EQ(q.shift, -10);
  // A fraction that rounds up to 2^31 is halved and the shift bumped.
  q = tflite::quantizeMultiplier(1.0 - 1e-12);
  EXPECT_EQ(q.multiplier, 1 << 30);
  EXPECT_EQ(q.shift, 1);
  EXPECT_EQ(tflite::quantizeMultiplier(0.0).multiplier, 0);
  EXPECT_EQ(tflite::quantizeMultiplier(1e-12).multiplier, 0);  // shift below -31 flushes to zero
}

TEST(TfliteQuant, ActivationRangesQuantizeTheirBounds) {
  auto r = tflite::activationRangeInt8(3, 0.05f, -10);  // RELU6: [-10, -10 + 120]
  EXPECT_EQ(r.min, -10);
  EXPECT_EQ(r.max, 110);
  r = tflite::activationRangeInt8(0, 0.05f, -10);
  EXPECT_EQ(r.min, -128);
  EXPECT_EQ(r.max, 127);
  EXPECT_FALSE(tflite::activationRangeInt8(4, 0.05f, 0).ok);  // TANH is not a clamp
}

}  // namespace
}  // namespace stowage
