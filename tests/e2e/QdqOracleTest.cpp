// Quantized ONNX (QDQ) models against ONNX Runtime (issue 28): every QDQ pattern model (tests/e2e/QdqPatternModels.h)
// and the zoo's ResNet-8, DS-CNN and MobileNet quantized as ONNX Runtime's quantizer would, compiled by Stowage (the
// QDQ pass turns them into integer operators with int8 weights, pass/FuseQdq.h) and run on the host, give ONNX
// Runtime's bytes: the outputs are DequantizeLinear'd, so equal floats mean equal int8 values. ONNX Runtime runs at
// level "disabled" (the model as written, the same on every machine: docs/quantized-onnx.md says why).
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "E2eSupport.h"
#include "OrtOracle.h"
#include "QdqPatternModels.h"
#include "stowage/frontend/OnnxImporter.h"
#include "stowage/pass/FuseQdq.h"
#include "stowage/zoo/QdqQuantizer.h"

namespace stowage::e2e {
namespace {

namespace fs = std::filesystem;

/// Exact: the compared outputs are dequantized int8.
constexpr Tolerance kQdqExact{0.0, 0.0};

void qdqWriteModel(const onnx::ModelProto& m, const fs::path& file) {
  std::ofstream out(file, std::ios::binary);
  m.SerializeToOstream(&out);
}

/// The float operators a QDQ graph still has after the QDQ pass (imported in-process, as the compiler does).
std::vector<std::string> qdqFloatOperators(const fs::path& model) {
  auto g = importOnnxFile(model.string());
  if (!g.ok()) return {"import failed: " + g.error().render()};
  auto remarks = fuseQdq(*g);
  if (!remarks.ok()) return {"fuseQdq failed: " + remarks.error().render()};
  std::vector<std::string> left;
  for (const Node& n : g->nodes) {
    if (g->tensor(n.outputs[0]).dtype != DType::Float32) continue;  // a view or Concat of int8 tensors
    switch (n.op) {
      case OpKind::Conv:
      case OpKind::Gemm:
      case OpKind::MatMul:
      case OpKind::Add:
      case OpKind::Mul:
      case OpKind::AveragePool:
      case OpKind::MaxPool:
      case OpKind::Transpose:
      case OpKind::Sigmoid:
      case OpKind::Softmax:
      case OpKind::GlobalAveragePool: left.push_back(std::string(opName(n.op)) + " '" + n.name + "'"); break;
      default: break;
    }
  }
  return left;
}

/// Patterns the QDQ pass covers (name prefixes); the others (Concat of differently quantized inputs, a kept Relu/Clip with
/// its own Q/DQ) stay float and are only compared.
bool qdqPatternIsInteger(const std::string& name) {
  for (const char* prefix : {"conv3x3", "conv1x1", "conv_depthwise", "conv_relu_fused", "conv_clip6_fused", "gemm", "matmul", "add",
                             "mul", "averagepool", "globalaveragepool", "maxpool", "conv_reshape_conv", "conv_transpose_conv",
                             "conv_flatten_gemm", "conv_sigmoid", "sigmoid", "softmax"})
    if (name.rfind(prefix, 0) == 0) return true;
  return false;
}

/// The scale of the DequantizeLinear that writes graph output `output` (0 when there is none or it is not a constant).
float qdqOutputScale(const onnx::ModelProto& m, const std::string& output) {
  for (const onnx::NodeProto& n : m.graph().node()) {
    if (n.op_type() != "DequantizeLinear" || n.output_size() != 1 || n.output(0) != output || n.input_size() < 2) continue;
    for (const onnx::TensorProto& t : m.graph().initializer())
      if (t.name() == n.input(1)) {
        if (t.float_data_size() == 1) return t.float_data(0);
        float v = 0.0f;
        if (t.raw_data().size() == sizeof v) std::memcpy(&v, t.raw_data().data(), sizeof v);  // little-endian host
        return v;
      }
  }
  return 0.0f;
}

/// "" when Stowage's outputs are ONNX Runtime's: those of the model as written (level "disabled", `ort`), or, where
/// they differ, those of ONNX Runtime's own integer operators (level "all", which fuses the QDQ groups on this machine
/// where its kernels allow): at an exact .5 the float graph's rounding noise decides, and the two levels disagree
/// (matmul_act_s8_sym: 1 of 24 outputs), and Softmax, which ONNX Runtime computes in float as written and with its
/// QLinearSoftmax's integer table at level all (Stowage's arithmetic). Average pools may be 1 step off either (ONNX
/// Runtime's own QLinearAveragePool tests allow 1 step: an exact .5 mean is common when the output scale is the input's).
std::string qdqDiffFromOnnxRuntime(const std::string& name, const onnx::ModelProto& proto, const fs::path& model,
                                   const std::vector<Tensor>& inputs,
                                   const std::vector<Tensor>& ours, const std::vector<Tensor>& ort, const fs::path& work) {
  const Tolerance tol = kQdqExact;
  const std::string asWritten = diffOutputs(ours, ort, tol);
  if (asWritten.empty()) return "";
  if (name.find("averagepool") != std::string::npos) {
    // One step: the outputs are dequantized, so a step is the scale of the DequantizeLinear writing the output.
    bool withinOneStep = ours.size() == ort.size();
    for (size_t i = 0; withinOneStep && i < ours.size(); ++i) {
      const float step = qdqOutputScale(proto, proto.graph().output(static_cast<int>(i)).name());
      withinOneStep = step > 0.0f && diffTensors(ours[i], ort[i], Tolerance{0.0, 1.01 * step}).same();
    }
    if (withinOneStep) return "";
  }
  ModelRun fused = runOrtOracle(model, inputs, work, "all");
  if (!fused.ok()) return "as written: " + asWritten + "ONNX Runtime at level all failed: " + fused.error;
  const std::string integer = diffOutputs(ours, fused.outputs, tol);
  if (integer.empty()) return "";
  return "as written (level disabled): " + asWritten + "integer operators (level all): " + integer;
}

/// The variants run here (the 224 of qdqPatternModels() take 80 s; `make test` has no room for that): every int8
/// variant but the 7-bit-weight ones (those exist for ONNX Runtime's fused kernels, not for Stowage) and the symmetric
/// per-tensor ones, and the uint8 ones with asymmetric activations: 30 patterns, 123 models, ~45 s.
bool qdqPatternVariantIsRun(const std::string& name) {
  if (name.size() >= 3 && name.compare(name.size() - 3, 3, "_rr") == 0) return false;
  const bool sym = name.find("_sym") != std::string::npos, perTensor = name.find("_pt_") != std::string::npos;
  if (name.find("_s8") != std::string::npos) return !(sym && perTensor);
  return !sym;
}

/// Runs the chosen pattern models of one activation type (`typeTag`: "_s8" or "_u8") through ONNX Runtime and Stowage.
void qdqCheckPatterns(const std::string& typeTag) {
  std::string why;
  if (!ortOracleAvailable(&why)) GTEST_SKIP() << "ONNX Runtime oracle: " << why;
  const fs::path dir = scratchDir("qdq_patterns" + typeTag);
  int compared = 0, integer = 0;
  // Every model through ONNX Runtime first, in one Node process; then each through Stowage.
  const std::vector<QdqPatternModel> patterns = qdqPatternModels();
  std::vector<const QdqPatternModel*> models;
  std::vector<OrtJob> jobs;
  for (const QdqPatternModel& p : patterns) {
    if (p.name.find(typeTag + "_") == std::string::npos || !qdqPatternVariantIsRun(p.name)) continue;
    SCOPED_TRACE(p.name);
    const fs::path file = dir / (p.name + ".onnx");
    qdqWriteModel(p.model, file);
    std::string error;
    std::vector<Tensor> inputs = randomModelInputs(file, 28, &error);
    ASSERT_FALSE(inputs.empty()) << error;
    models.push_back(&p);
    jobs.push_back(OrtJob{file, std::move(inputs), dir / (p.name + "_ort")});
  }
  const std::vector<ModelRun> ortRuns = runOrtOracleBatch(jobs, dir / "ort_batch.json");
  for (size_t m = 0; m < models.size(); ++m) {
    const QdqPatternModel& p = *models[m];
    const OrtJob& job = jobs[m];
    SCOPED_TRACE(p.name);
    if (qdqPatternIsInteger(p.name)) {
      EXPECT_EQ(::testing::PrintToString(qdqFloatOperators(job.model)), "{}") << "operators left in float";
      ++integer;
    }
    const ModelRun& ort = ortRuns[m];
    ASSERT_TRUE(ort.ok()) << ort.error;
    ModelRun ours = runStowageCli(job.model, job.inputs, dir / (p.name + "_stowage"));
    ASSERT_TRUE(ours.ok()) << ours.error;
    EXPECT_EQ(qdqDiffFromOnnxRuntime(p.name, p.model, job.model, job.inputs, ours.outputs, ort.outputs, dir / (p.name + "_ort_all")), "");
    ++compared;
  }
  std::printf("  %d QDQ pattern models (%s) compared with ONNX Runtime, %d of them checked to run on integer kernels only\n", compared,
              typeTag.c_str() + 1, integer);
  EXPECT_GE(integer, 30);
}

TEST(QdqOracle, Int8PatternModelsRunOnIntegerKernelsWithOnnxRuntimesBytes) { qdqCheckPatterns("_s8"); }
TEST(QdqOracle, Uint8PatternModelsRunOnIntegerKernelsWithOnnxRuntimesBytes) { qdqCheckPatterns("_u8"); }

struct QdqZooCase {
  const char* model;
  zoo::QdqActivationType activations;
  bool perChannel;
};

class QdqZoo : public ::testing::TestWithParam<QdqZooCase> {};

TEST_P(QdqZoo, RunsOnIntegerKernelsWithInt8WeightsAndOnnxRuntimesBytes) {
  std::string why;
  if (!ortOracleAvailable(&why)) GTEST_SKIP() << "ONNX Runtime oracle: " << why;
  const QdqZooCase& c = GetParam();
  zoo::QdqOptions options;
  options.activations = c.activations;
  options.perChannel = c.perChannel;
  // 7-bit weights (ONNX Runtime's reduce_range): its uint8 integer kernels are then exact on x86 without VNNI too.
  options.reduceRange = true;
  auto built = zoo::buildZooQdqModel(c.model, 1, options);
  ASSERT_TRUE(built.ok()) << built.error().render();
  const std::string name = std::string(c.model) + (c.activations == zoo::QdqActivationType::Int8 ? "_s8" : "_u8") + (c.perChannel ? "_pc" : "_pt");
  const fs::path dir = scratchDir("qdq_zoo_" + name);
  const fs::path file = dir / (name + ".onnx");
  qdqWriteModel(built->model, file);

  // Every Conv, Gemm, Add and pool on integer kernels; only the Softmax stays float (its output is the graph's, not
  // quantized: ONNX Runtime computes it in float too), and a remark says so.
  EXPECT_EQ(::testing::PrintToString(qdqFloatOperators(file)), "{ \"Softmax 'softmax'\" }");
  const CommandResult compiled = runCommand(shellQuote(cli()) + " compile " + shellQuote(file.string()) + " -o " + shellQuote((dir / "out").string()));
  ASSERT_EQ(compiled.exitCode, 0) << compiled.err;
  EXPECT_NE(compiled.out.find("run on integer kernels with their int8 weights"), std::string::npos) << compiled.out;
  const nlohmann::json report = nlohmann::json::parse(readFileBytes(dir / "out" / "report.json"));
  for (const auto& layer : report["layers"]) {
    const std::string op = layer["op"];
    EXPECT_TRUE(op.rfind("QLinear", 0) == 0 || op == "QuantizeLinear" || op == "DequantizeLinear" || op == "Reshape" || op == "Softmax")
        << "layer " << layer["name"] << " runs " << op;
  }
  // Weight bytes: what the compiled program stores (the weights pool) against the float model's parameters.
  int64_t weightBytes = 0;
  for (const auto& pool : report["pools"])
    if (pool["name"] == "weights") weightBytes = pool["used"];
  std::printf("  %s: %lld weight bytes in the program, float model %lld (%.2f)\n", name.c_str(), static_cast<long long>(weightBytes),
              static_cast<long long>(built->floatWeightBytes), static_cast<double>(weightBytes) / static_cast<double>(built->floatWeightBytes));
  EXPECT_GT(weightBytes, 0);
  EXPECT_LT(weightBytes * 10, built->floatWeightBytes * 3) << "weights should be about a quarter of the float model's";

  for (uint64_t seed : {1, 2}) {
    std::string error;
    const std::vector<Tensor> inputs = randomModelInputs(file, seed, &error);
    ASSERT_FALSE(inputs.empty()) << error;
    ModelRun ort = runOrtOracle(file, inputs, dir / ("ort" + std::to_string(seed)), "all");
    ASSERT_TRUE(ort.ok()) << ort.error;
    ModelRun ours = runStowageCli(file, inputs, dir / ("stowage" + std::to_string(seed)));
    ASSERT_TRUE(ours.ok()) << ours.error;
    // The Softmax (float in both, on identical dequantized logits) differs by float rounding at most.
    EXPECT_EQ(diffOutputs(ours.outputs, ort.outputs, Tolerance{1e-6, 1e-7}), "") << "seed " << seed;
  }
}

// uint8 activations, 7-bit weights, ONNX Runtime at level "all": its graph optimizer turns every QDQ group into its own
// integer operators (QLinearConv, QLinearAdd, QGemm, QLinearAveragePool ...), which Stowage must match byte for byte
// through the whole network. (With int8 activations ONNX Runtime on x86 without VNNI keeps the Conv in float, and its
// float sums differ from the exact integer ones where a value lands within rounding noise of .5: on the zoo's
// ResNet-8, 1 of 16,384 stem outputs, which then spreads; docs/quantized-onnx.md.)
INSTANTIATE_TEST_SUITE_P(Models, QdqZoo,
                         ::testing::Values(QdqZooCase{"resnet8", zoo::QdqActivationType::UInt8, true},
                                           QdqZooCase{"ds-cnn", zoo::QdqActivationType::UInt8, false},
                                           QdqZooCase{"mobilenet-v1-0.25", zoo::QdqActivationType::UInt8, true}),
                         [](const auto& info) {
                           std::string n = std::string(info.param.model) + (info.param.activations == zoo::QdqActivationType::Int8 ? "_s8" : "_u8") +
                                           (info.param.perChannel ? "_pc" : "_pt");
                           for (char& ch : n)
                             if (ch == '-' || ch == '.') ch = '_';
                           return n;
                         });


// The zoo's networks as the firmware bench writes them (int8 activations, per-channel int8 weights): the QDQ pass's
// convolutions, depthwise convolutions and fully connected layers move to the NHWC int8 kernels (pass/QdqNhwc.h) and
// take their fast paths (with the DSP extension on the Cortex-M4 board), with ONNX Runtime's float32 requantization:
// the outputs equal byte for byte those of the NCHW QLinear kernels (--no-qdq-nhwc), whose arithmetic the pattern
// models above check against ONNX Runtime. (With int8 activations ONNX Runtime itself runs these Conv nodes in float
// on x86 without VNNI, which is why the whole networks are compared with the integer kernels here, not with it.)
class QdqNhwcZoo : public ::testing::TestWithParam<const char*> {};

TEST_P(QdqNhwcZoo, Int8LayersRunOnTheFastNhwcKernelsWithTheQLinearKernelsBytes) {
  const std::string model = GetParam();
  zoo::QdqOptions options;
  options.activations = zoo::QdqActivationType::Int8;
  options.perChannel = true;
  auto built = zoo::buildZooQdqModel(model, 1, options);
  ASSERT_TRUE(built.ok()) << built.error().render();
  const fs::path dir = scratchDir("qdq_nhwc_" + model);
  const fs::path file = dir / (model + "_s8.onnx");
  qdqWriteModel(built->model, file);
  const std::string board = std::string(STOWAGE_SOURCE_DIR) + "/examples/boards/mps2-an386.toml";
  const CommandResult compiled = runCommand(shellQuote(cli()) + " compile " + shellQuote(file.string()) + " -o " +
                                            shellQuote((dir / "out").string()) + " --board " + shellQuote(board));
  ASSERT_EQ(compiled.exitCode, 0) << compiled.err;
  EXPECT_NE(compiled.out.find("on the NHWC int8 kernels with ONNX Runtime's requantization"), std::string::npos) << compiled.out;
  const nlohmann::json report = nlohmann::json::parse(readFileBytes(dir / "out" / "report.json"));
  int fast = 0;
  for (const auto& layer : report["layers"]) {
    const std::string op = layer["op"];
    EXPECT_NE(op, "QLinearConv") << "layer " << layer["name"] << " still runs the NCHW QLinearConv kernel";
    if (op == "QConv2d" || op == "QDepthwiseConv2d" || op == "QFullyConnected") {
      EXPECT_EQ(layer.value("kernel_variant", std::string()), "cortex-m-dsp") << "layer " << layer["name"] << " misses the fast path";
      ++fast;
    }
  }
  EXPECT_GE(fast, 5);
  std::string error;
  const std::vector<Tensor> inputs = randomModelInputs(file, 1, &error);
  ASSERT_FALSE(inputs.empty()) << error;
  ModelRun nhwc = runStowageCli(file, inputs, dir / "nhwc");
  ASSERT_TRUE(nhwc.ok()) << nhwc.error;
  ModelRun nchw = runStowageCli(file, inputs, dir / "nchw", "--no-qdq-nhwc");
  ASSERT_TRUE(nchw.ok()) << nchw.error;
  EXPECT_EQ(diffOutputs(nhwc.outputs, nchw.outputs, kQdqExact), "");
  // Tiled on an accelerator's engine (the simulator's intrinsics) and on a DSP's cores (the tiles call the kernels'
  // _rqf32 entry points): the same bytes.
  for (const char* accel : {"gemmini-like", "hexagon-vtcm"}) {
    const std::string flags = " --board " + shellQuote(std::string(STOWAGE_SOURCE_DIR) + "/examples/boards/" + accel + ".toml");
    const fs::path out = dir / (std::string("out_") + accel);
    const CommandResult c = runCommand(shellQuote(cli()) + " compile " + shellQuote(file.string()) + " -o " + shellQuote(out.string()) + flags);
    ASSERT_EQ(c.exitCode, 0) << c.err;
    const std::string text = readFileBytes(out / "report.json");
    EXPECT_NE(text.find("\"offload\""), std::string::npos) << accel << ": nothing offloaded";
    ModelRun tiled = runStowageCli(file, inputs, dir / (std::string("run_") + accel), flags.substr(1));
    ASSERT_TRUE(tiled.ok()) << accel << ": " << tiled.error;
    EXPECT_EQ(diffOutputs(tiled.outputs, nhwc.outputs, kQdqExact), "") << accel;
  }
}

INSTANTIATE_TEST_SUITE_P(Models, QdqNhwcZoo, ::testing::Values("resnet8", "ds-cnn", "mobilenet-v1-0.25"), [](const auto& info) {
  std::string n = info.param;
  for (char& ch : n)
    if (ch == '-' || ch == '.') ch = '_';
  return n;
});

}  // namespace
}  // namespace stowage::e2e
