// Offloaded layers end to end through the CLI (issue 5): the zoo models and the MLPerf Tiny int8 TFLite models
// (skipped when ../shared is absent) compiled for the Gemmini-like engine, the Hexagon-like DSP with two VTCM
// blocks and the two cluster boards run on the host simulator with outputs bit-identical to the default-board
// CPU run; the summary lists offloaded layers, fallbacks are remarks with a reason, --no-double-buffer,
// --no-resident and --no-weight-prefetch still give the same outputs, and the generated C is byte-identical across
// compiles. A hand-built ONNX QLinearConv -> QLinearMatMul model (uint8 input, per-channel weights, batched
// product) is bit-exact on the engine and the cluster board with both layers offloaded.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <fstream>
#include <iterator>
#include <map>
#include <vector>

#include "E2eSupport.h"

namespace stowage::e2e {
namespace {

namespace fs = std::filesystem;

std::string board(const std::string& name) { return std::string(STOWAGE_SOURCE_DIR) + "/examples/boards/" + name + ".toml"; }

/// A model with its input file and its CPU (default board) output.
struct Case {
  fs::path model, input, cpuOutput;
};

/// Runs `c` on `boardName` with `flags`; returns the output bytes and fills `out` with stdout.
std::string runOn(const Case& c, const fs::path& dir, const std::string& boardName, const std::string& flags, std::string* out = nullptr) {
  auto r = runCommand(cli() + " run " + shellQuote(c.model.string()) + " --input " + shellQuote(c.input.string()) +
                      " --format bin --output-dir " + shellQuote(dir.string()) +
                      (boardName.empty() ? "" : " --board " + shellQuote(board(boardName))) + " " + flags);
  EXPECT_EQ(r.exitCode, 0) << c.model << " on " << boardName << ": " << r.err;
  if (out) *out = r.out;
  return readFileBytes(dir / "output_0.bin");
}

Case zooCase(const fs::path& work, const std::string& name) {
  Case c{work / (name + ".onnx"), work / (name + "_in.npy"), {}};
  auto w = runCommand(zoo() + " write " + name + " -o " + shellQuote(c.model.string()) + " --seed 3 --sample-input " +
                      shellQuote(c.input.string()));
  EXPECT_EQ(w.exitCode, 0) << w.err;
  return c;
}

/// A TFLite model of ../shared/`folder` with a deterministic raw input of `elems` bytes (int8) or floats.
Case tfliteCase(const fs::path& work, const std::string& file, size_t elems, bool floatInput, const std::string& folder = "models/mlperf-tiny/") {
  Case c{sharedPath(folder + file), work / (file + ".bin"), {}};
  std::ofstream o(c.input, std::ios::binary);
  uint32_t s = 12345;
  for (size_t i = 0; i < elems; ++i) {
    s = s * 1103515245u + 12345u;
    if (floatInput) {
      const float v = static_cast<float>((s >> 8) % 2001) / 1000.0f - 1.0f;
      o.write(reinterpret_cast<const char*>(&v), sizeof v);
    } else {
      const char b = static_cast<char>(s >> 24);
      o.write(&b, 1);
    }
  }
  return c;
}

/// The reference is the CPU run with every Relu a layer of its own (--no-fuse); the fused CPU run and every
/// board's run (fused convs, offloaded or not) must equal it.
void expectBitExactOn(const Case& c, const fs::path& work, const std::string& tag, const std::vector<std::string>& boards) {
  const std::string cpu = runOn(c, work / (tag + "_cpu"), "", "--no-fuse");
  ASSERT_FALSE(cpu.empty());
  EXPECT_EQ(runOn(c, work / (tag + "_cpu_fused"), "", ""), cpu) << tag << ": fusing Relu into the convs changed the outputs";
  for (const std::string& b : boards) {
    std::string out;
    const std::string acc = runOn(c, work / (tag + "_" + b), b, "", &out);
    EXPECT_EQ(acc, cpu) << tag << " on " << b << " differs from the CPU run";
  }
}

const std::vector<std::string> kAllBoards = {"gemmini-like", "hexagon-vtcm", "dsp-cluster4", "gap8-cluster"};

TEST(Accelerator, ResNet8BitExactOnEveryAcceleratorBoard) {
  const fs::path work = scratchDir("accel_resnet8");
  expectBitExactOn(zooCase(work, "resnet8"), work, "resnet8", kAllBoards);
}

TEST(Accelerator, DsCnnAndAutoencoderBitExactOnEngineAndCluster) {
  const fs::path work = scratchDir("accel_dscnn");
  expectBitExactOn(zooCase(work, "ds-cnn"), work, "ds-cnn", {"gemmini-like", "dsp-cluster4"});
  expectBitExactOn(zooCase(work, "autoencoder"), work, "autoencoder", {"gemmini-like", "gap8-cluster"});
}

TEST(Accelerator, MobileNetBitExactOnHexagon) {
  const fs::path work = scratchDir("accel_mobilenet");
  expectBitExactOn(zooCase(work, "mobilenet-v1-0.25"), work, "mobilenet", {"hexagon-vtcm"});
}

TEST(Accelerator, MlperfTinyInt8BitExact) {
  if (sharedPath("models/mlperf-tiny/kws_ref_model.tflite").empty()) GTEST_SKIP() << "../shared/models/mlperf-tiny not present";
  const fs::path work = scratchDir("accel_tflite");
  expectBitExactOn(tfliteCase(work, "kws_ref_model.tflite", 490, false), work, "kws", kAllBoards);
  if (!sharedPath("models/mlperf-tiny/model_ToyCar.tflite").empty())
    expectBitExactOn(tfliteCase(work, "model_ToyCar.tflite", 640, true), work, "toycar", {"gemmini-like", "dsp-cluster4"});
}

TEST(Accelerator, WeightsLoadedOnceBitExactOnHexagon) {
  // One core of a layer loads the first weight tiles of all 4 HVX contexts of a later layer in one transfer (a block
  // every core reads, or each core's block into its region; docs/accelerators.md, "Weight prefetch across layers"):
  // MobileNet (zoo) takes the per-core kind and MLPerf VWW int8 the shared one. Outputs byte-identical to the CPU run,
  // by default and (MobileNet) in guard mode. --no-weights-once is the path every other accelerator test runs where no
  // layer takes its weights once (and tile.WeightPrefetch.HexagonLoadsFirstWeightsOnceForAllCores compares the two).
  const fs::path work = scratchDir("accel_weights_once");
  std::vector<std::pair<Case, std::string>> cases = {{zooCase(work, "mobilenet-v1-0.25"), "mobilenet"}};
  if (!sharedPath("models/mlperf-tiny/vww_96_int8.tflite").empty())
    cases.push_back({tfliteCase(work, "vww_96_int8.tflite", 96 * 96 * 3, false), "vww"});
  for (const auto& [c, tag] : cases) {
    const std::string cpu = runOn(c, work / (tag + "_cpu"), "", "");
    ASSERT_FALSE(cpu.empty());
    const std::string compiled = (work / (tag + "_compiled")).string();
    auto r = runCommand(cli() + " compile " + shellQuote(c.model.string()) + " -o " + shellQuote(compiled) + " --board " +
                        shellQuote(board("hexagon-vtcm")));
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("first weights loaded once for all cores"), std::string::npos) << tag << ": " << r.out;
    // VWW's 6 x 6 pointwise layers are tiled in pixels (docs/accelerators.md, "Pointwise convolutions in pixels").
    if (tag == "vww") {
      EXPECT_NE(r.out.find(" pixels x "), std::string::npos) << r.out;
    }
    EXPECT_EQ(runOn(c, work / (tag + "_hexagon"), "hexagon-vtcm", ""), cpu) << tag;
    if (tag == "mobilenet") {
      EXPECT_EQ(runOn(c, work / (tag + "_hexagon_guard"), "hexagon-vtcm", "--guard"), cpu) << tag << " in guard mode";
    }
  }
}

TEST(Accelerator, SharedInputBitExactOnClusters) {
  // The cores of a layer share each row block's input in one buffer (docs/accelerators.md, "Shared input"): the zoo
  // ResNet-8 (float NCHW convolutions) takes it on gap8-cluster (a shared L1); dsp-cluster4's L1 is private to each core
  // (per_core_stride), so there it keeps per-core inputs. Outputs byte-identical to the CPU run, by default, in guard
  // mode and with --no-shared-input, which the summary then no longer mentions.
  const fs::path work = scratchDir("accel_shared_input");
  const Case c = zooCase(work, "resnet8");
  const std::string cpu = runOn(c, work / "cpu", "", "");
  ASSERT_FALSE(cpu.empty());
  for (const std::string b : {"gap8-cluster", "dsp-cluster4"}) {
    const std::string compiled = (work / (b + "_compiled")).string();
    auto r = runCommand(cli() + " compile " + shellQuote(c.model.string()) + " -o " + shellQuote(compiled) + " --board " + shellQuote(board(b)));
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(r.out.find("input shared by all cores") != std::string::npos, b == "gap8-cluster") << b << ": " << r.out;
    EXPECT_EQ(runOn(c, work / (b + "_run"), b, ""), cpu) << b;
    EXPECT_EQ(runOn(c, work / (b + "_guard"), b, "--guard"), cpu) << b << " in guard mode";
    std::string out;
    EXPECT_EQ(runOn(c, work / (b + "_own"), b, "--no-shared-input", &out), cpu) << b << " with --no-shared-input";
    auto own = runCommand(cli() + " compile " + shellQuote(c.model.string()) + " -o " + shellQuote(compiled + "_own") + " --board " +
                          shellQuote(board(b)) + " --no-shared-input");
    ASSERT_EQ(own.exitCode, 0) << own.err;
    EXPECT_EQ(own.out.find("input shared by all cores"), std::string::npos) << b << ": " << own.out;
  }
  // On hexagon-vtcm the stem (one row block, its output in place) shares its whole input ("Shared whole input");
  // --no-shared-whole-input keeps it per row block. Both byte-identical to the CPU run.
  const std::string hexagon = (work / "hexagon_compiled").string();
  for (const std::string flag : {"", "--no-shared-whole-input"}) {
    auto r = runCommand(cli() + " compile " + shellQuote(c.model.string()) + " -o " + shellQuote(hexagon + flag) + " --board " +
                        shellQuote(board("hexagon-vtcm")) + " " + flag);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(r.out.find("whole input shared by all cores") != std::string::npos, flag.empty()) << flag << ": " << r.out;
    EXPECT_EQ(runOn(c, work / ("hexagon_run" + flag), "hexagon-vtcm", flag), cpu) << "hexagon-vtcm " << flag;
  }
}

/// The "whole model: estimated N cycles" of a compile summary (0 when missing).
uint64_t wholeModelEstimate(const std::string& summary) {
  const std::string key = "whole model: estimated ";
  const size_t at = summary.find(key);
  return at == std::string::npos ? 0 : std::stoull(summary.substr(at + key.size()));
}

TEST(Accelerator, ToyCarOnHexagonLoadsWeightsOnceByAFreeIssuingCore) {
  // MLPerf ToyCar int8 on hexagon-vtcm (docs/accelerators.md, "Weights loaded once by any issuing core"): with far
  // issuers its first layer loads the weights of receivers far apart, and the round-robin issuing core may be one
  // whose channels carry that layer's own loads; trying every issuing core finds free ones. The remark counts them,
  // the whole model is faster than with --no-every-once-core (7,397 against 8,207 estimated cycles at this change),
  // and both run byte-identical to the CPU run. Pairs only (--no-weight-stream): the weight stream, which beats both
  // (6,617), tries every issuing core too.
  if (sharedPath("models/mlperf-tiny/model_ToyCar_quant_fullint_micro.tflite").empty())
    GTEST_SKIP() << "../shared/models/mlperf-tiny/model_ToyCar_quant_fullint_micro.tflite not present";
  const fs::path work = scratchDir("accel_every_once_core");
  const Case c = tfliteCase(work, "model_ToyCar_quant_fullint_micro.tflite", 640, true);
  const std::string cpu = runOn(c, work / "cpu", "", "");
  ASSERT_FALSE(cpu.empty());
  uint64_t cycles[2] = {0, 0};
  for (int off = 0; off < 2; ++off) {
    const std::string flag = off ? "--no-weight-stream --no-every-once-core" : "--no-weight-stream", dir = off ? "_round_robin" : "";
    auto r = runCommand(cli() + " compile " + shellQuote(c.model.string()) + " -o " + shellQuote((work / ("compiled" + dir)).string()) +
                        " --board " + shellQuote(board("hexagon-vtcm")) + " " + flag);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(r.out.find("other than the round-robin one") != std::string::npos, off == 0) << flag << ": " << r.out;
    cycles[off] = wholeModelEstimate(r.out);
    EXPECT_GT(cycles[off], 0u) << r.out;
    EXPECT_EQ(runOn(c, work / ("run" + dir), "hexagon-vtcm", flag), cpu) << flag;
  }
  EXPECT_LT(cycles[0], cycles[1]);
  // The weight stream (the default) is faster still, and as exact.
  EXPECT_EQ(runOn(c, work / "run_stream", "hexagon-vtcm", ""), cpu);
  auto r = runCommand(cli() + " compile " + shellQuote(c.model.string()) + " -o " + shellQuote((work / "compiled_stream").string()) + " --board " +
                      shellQuote(board("hexagon-vtcm")));
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("weight stream: "), std::string::npos) << r.out;
  EXPECT_LT(wholeModelEstimate(r.out), cycles[0]) << r.out;
}

TEST(Accelerator, DepthwiseWithDepthMultiplierBitExactOnEveryAcceleratorBoard) {
  // TFLM's person_detect starts with a depthwise convolution of one input channel and depth multiplier 8: a channel
  // tile must hold the multiplier's 8 output channels (tiles of 2 computed the wrong channels on the cluster boards).
  if (sharedPath("models/tflm/person_detect.tflite").empty()) GTEST_SKIP() << "../shared/models/tflm/person_detect.tflite not present";
  const fs::path work = scratchDir("accel_dw_multiplier");
  expectBitExactOn(tfliteCase(work, "person_detect.tflite", 96 * 96, false, "models/tflm/"), work, "person", kAllBoards);
}

TEST(Accelerator, SummaryReportAndFallbackRemarks) {
  const fs::path work = scratchDir("accel_report");
  const Case c = zooCase(work, "resnet8");
  auto r = runCommand(cli() + " compile " + shellQuote(c.model.string()) + " -o " + shellQuote((work / "hx").string()) + " --board " +
                      shellQuote(board("hexagon-vtcm")));
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("offloaded layers: 14"), std::string::npos) << r.out;  // 9 convs, the FC, 3 residual Adds, the AveragePool
  EXPECT_NE(r.out.find("on 'hvx': cores"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("step 12 'pool' (AveragePool) on 'hvx': cores x4 cores"), std::string::npos) << r.out;
  // A node the board lists for the target but that has no tiled lowering runs on the CPU, with a remark saying why
  // (unfused, the Relus are such nodes).
  auto unfused = runCommand(cli() + " compile " + shellQuote(c.model.string()) + " -o " + shellQuote((work / "hx_unfused").string()) +
                            " --no-fuse --board " + shellQuote(board("hexagon-vtcm")));
  ASSERT_EQ(unfused.exitCode, 0) << unfused.err;
  EXPECT_NE(unfused.out.find("remark: fallback: node 'stem.relu' (Relu) runs on 'cpu' instead of 'hvx': no tiled lowering for this op"),
            std::string::npos)
      << unfused.out;
  // The Relu after each conv and after each residual Add is fused into it.
  EXPECT_NE(r.out.find("remark: 7 Relu/Clip fused into the Conv, Gemm, Add, Sub or Mul before them"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("'stem.relu' into 'stem.conv'"), std::string::npos) << r.out;
  // The block activations stay in VTCM between HVX layers, which use them in place.
  EXPECT_NE(r.out.find("remark: resident: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("stay in 'vtcm' between the layers of 'hvx'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("x/y in place"), std::string::npos) << r.out;
  // Consecutive HVX layers hand their first weight tiles over.
  EXPECT_NE(r.out.find("remark: prefetch: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("find their first weight tiles loaded by an earlier layer"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("first weights loaded by the layer before"), std::string::npos) << r.out;
  const std::string json = readFileBytes(work / "hx" / "report.json");
  // (its issuer may load them as its first or, on the other DMA channel, its second receiver's)
  EXPECT_TRUE(json.find("\"prefetches_weights_of\": \"stack1.block0.conv2\"") != std::string::npos ||
              json.find("\"prefetches_second_weights_of\": \"stack1.block0.conv2\"") != std::string::npos);
  EXPECT_NE(json.find("\"offload\""), std::string::npos);
  EXPECT_NE(json.find("\"estimated_cycles\""), std::string::npos);
  EXPECT_NE(json.find("\"role\": \"scratch\""), std::string::npos);
  EXPECT_NE(readFileBytes(work / "hx" / "report.html").find("double-buffered"), std::string::npos);
  // The generated C of an offloaded model is the same on every compile.
  auto again = runCommand(cli() + " compile " + shellQuote(c.model.string()) + " -o " + shellQuote((work / "hx2").string()) +
                          " --board " + shellQuote(board("hexagon-vtcm")));
  ASSERT_EQ(again.exitCode, 0) << again.err;
  EXPECT_EQ(readFileBytes(work / "hx" / "net.c"), readFileBytes(work / "hx2" / "net.c"));
}

TEST(Accelerator, NoDoubleBufferSameOutputs) {
  const fs::path work = scratchDir("accel_nodb");
  const Case c = zooCase(work, "resnet8");
  const std::string db = runOn(c, work / "db", "gemmini-like", "");
  std::string out;
  const std::string single = runOn(c, work / "single", "dsp-cluster4", "--no-double-buffer");
  const std::string singleEngine = runOn(c, work / "single_engine", "gemmini-like", "--no-double-buffer");
  EXPECT_EQ(single, db);
  EXPECT_EQ(singleEngine, db);
  // Activations through DDR instead of resident in VTCM: the same outputs.
  EXPECT_EQ(runOn(c, work / "through_ddr", "hexagon-vtcm", "--no-resident"), db);
  EXPECT_EQ(runOn(c, work / "resident", "hexagon-vtcm", ""), db);
  // Each layer loading its own first weight tiles instead of the layer before: the same outputs.
  EXPECT_EQ(runOn(c, work / "own_weights", "hexagon-vtcm", "--no-weight-prefetch"), db);
  EXPECT_EQ(runOn(c, work / "own_weights_cluster", "dsp-cluster4", "--no-weight-prefetch"), db);
  auto r = runCommand(cli() + " compile " + shellQuote(c.model.string()) + " -o " + shellQuote((work / "c").string()) + " --board " +
                      shellQuote(board("gemmini-like")) + " --no-double-buffer");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("single-buffered"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("double-buffered"), std::string::npos) << r.out;
}

/// An initializer of `type` with `dims` holding `values` (int types in int32_data, floats in float_data).
void addInit(onnx::GraphProto* g, const std::string& name, int type, const std::vector<int64_t>& dims, const std::vector<double>& values) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  for (int64_t d : dims) t->add_dims(d);
  for (double v : values) {
    if (type == onnx::TensorProto_DataType_FLOAT) t->add_float_data(static_cast<float>(v));
    else t->add_int32_data(static_cast<int32_t>(v));
  }
}

/// x u8 [1,3,8,8] -> QLinearConv (8 outputs, 3x3, pad 1, per-channel int8 weights and zero points, bias) -> int8
/// [1,8,8,8] -> QLinearMatMul with int8 B [8,6] (per-column scales / zero points), a batched product over the
/// first two dims -> int8 [1,8,8,6].
Case qlinearCase(const fs::path& work) {
  constexpr int kU8 = onnx::TensorProto_DataType_UINT8, kI8 = onnx::TensorProto_DataType_INT8, kI32 = onnx::TensorProto_DataType_INT32,
                kF32 = onnx::TensorProto_DataType_FLOAT;
  onnx::ModelProto m;
  m.set_ir_version(7);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("qlinear_accel");
  auto* in = g->add_input();
  in->set_name("x");
  in->mutable_type()->mutable_tensor_type()->set_elem_type(kU8);
  for (int64_t d : {1, 3, 8, 8}) in->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
  auto* out = g->add_output();
  out->set_name("y");
  out->mutable_type()->mutable_tensor_type()->set_elem_type(kI8);
  out->mutable_type()->mutable_tensor_type()->mutable_shape();
  std::vector<double> w, b, ws, wz, mb, mbs, mbz;
  for (int i = 0; i < 8 * 3 * 3 * 3; ++i) w.push_back((i * 37 % 255) - 127);
  for (int i = 0; i < 8; ++i) {
    b.push_back(i * 301 - 1200);
    ws.push_back(0.002 + 0.0005 * i);
    wz.push_back(i % 3 - 1);
  }
  for (int i = 0; i < 8 * 6; ++i) mb.push_back((i * 53 % 251) - 125);
  for (int i = 0; i < 6; ++i) {
    mbs.push_back(0.01 + 0.003 * i);
    mbz.push_back(2 - i);
  }
  addInit(g, "x_scale", kF32, {}, {0.02});
  addInit(g, "x_zp", kU8, {}, {120});
  addInit(g, "w", kI8, {8, 3, 3, 3}, w);
  addInit(g, "w_scale", kF32, {8}, ws);
  addInit(g, "w_zp", kI8, {8}, wz);
  addInit(g, "c_scale", kF32, {}, {0.05});
  addInit(g, "c_zp", kI8, {}, {-3});
  addInit(g, "bias", kI32, {8}, b);
  addInit(g, "mb", kI8, {8, 6}, mb);
  addInit(g, "mb_scale", kF32, {6}, mbs);
  addInit(g, "mb_zp", kI8, {6}, mbz);
  addInit(g, "y_scale", kF32, {}, {0.4});
  addInit(g, "y_zp", kI8, {}, {7});
  auto* conv = g->add_node();
  conv->set_op_type("QLinearConv");
  conv->set_name("qconv");
  for (const char* i : {"x", "x_scale", "x_zp", "w", "w_scale", "w_zp", "c_scale", "c_zp", "bias"}) conv->add_input(i);
  conv->add_output("c");
  auto* pads = conv->add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto_AttributeType_INTS);
  for (int k = 0; k < 4; ++k) pads->add_ints(1);
  auto* mm = g->add_node();
  mm->set_op_type("QLinearMatMul");
  mm->set_name("qmatmul");
  for (const char* i : {"c", "c_scale", "c_zp", "mb", "mb_scale", "mb_zp", "y_scale", "y_zp"}) mm->add_input(i);
  mm->add_output("y");
  Case c{work / "qlinear.onnx", work / "qlinear_in.bin", {}};
  std::ofstream(c.model, std::ios::binary) << m.SerializeAsString();
  std::ofstream o(c.input, std::ios::binary);
  for (int i = 0; i < 3 * 8 * 8; ++i) o.put(static_cast<char>((i * 97 + 13) % 256));
  return c;
}

TEST(Accelerator, QLinearConvAndMatMulBitExactOnEngineAndCluster) {
  const fs::path work = scratchDir("accel_qlinear");
  const Case c = qlinearCase(work);
  const std::string cpu = runOn(c, work / "cpu", "", "");
  ASSERT_EQ(cpu.size(), 8u * 8u * 6u);
  // Not a constant output (the check could not tell a broken layer from a working one).
  EXPECT_NE(cpu.find_first_not_of(cpu[0]), std::string::npos);
  for (const std::string b : {"gemmini-like", "dsp-cluster4"}) {
    std::string out;
    EXPECT_EQ(runOn(c, work / b, b, "", &out), cpu) << "on " << b;
    EXPECT_EQ(runOn(c, work / (b + "_single"), b, "--no-double-buffer"), cpu) << "on " << b << " single-buffered";
    auto r = runCommand(cli() + " compile " + shellQuote(c.model.string()) + " -o " + shellQuote((work / (b + "_c")).string()) + " --board " +
                        shellQuote(board(b)));
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("offloaded layers: 2"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("(QLinearConv) on"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("(QLinearMatMul) on"), std::string::npos) << r.out;
  }
}

}  // namespace
}  // namespace stowage::e2e
