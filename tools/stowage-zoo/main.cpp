// `stowage-zoo`: writes the bundled example architectures (src/stowage/zoo) as ONNX files with seeded
// weights. Parses flags and prints; the models themselves are built by the library.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "stowage/io/FileBytes.h"
#include "stowage/io/TensorFile.h"
#include "stowage/zoo/QdqQuantizer.h"
#include "stowage/zoo/ZooModels.h"

namespace {

namespace fs = std::filesystem;
using namespace stowage;

constexpr int kExitUserError = 2;

int fail(const Diagnostic& d) {
  std::fputs(d.render().c_str(), stderr);
  return kExitUserError;
}

/// 1234567 -> "1,234,567".
std::string grouped(int64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

int listModels() {
  std::printf("%-18s %-11s %9s %12s  %s\n", "name", "input", "params", "MACs", "description");
  for (const zoo::ZooModelInfo& info : zoo::zooModels()) {
    auto built = zoo::buildZooModel(info.name, 1);
    if (!built.ok()) return fail(built.error());
    std::printf("%-18s %-11s %9s %12s  %s\n", info.name.c_str(), shapeToString(info.inputShape).c_str(),
                grouped(built->params).c_str(), grouped(built->macs).c_str(), info.description.c_str());
  }
  return 0;
}

/// Builds `name` and writes it to `path`; prints one line saying what was written.
int writeModel(const std::string& name, const std::string& path, uint64_t seed) {
  auto built = zoo::buildZooModel(name, seed);
  if (!built.ok()) return fail(built.error());
  Status s = writeFileBytes(path, zoo::serializeModel(built->model));
  if (!s.ok()) return fail(s.error());
  std::printf("wrote %s: %s, %s params, %s MACs, seed %llu\n", path.c_str(), name.c_str(),
              grouped(built->params).c_str(), grouped(built->macs).c_str(), static_cast<unsigned long long>(seed));
  return 0;
}

/// Builds `name`, calibrates it on sample inputs and writes it in QDQ form to `path`.
int writeQdqModel(const std::string& name, const std::string& path, uint64_t seed, const zoo::QdqOptions& options,
                  int samples) {
  auto built = zoo::buildZooQdqModel(name, seed, options, samples);
  if (!built.ok()) return fail(built.error());
  Status s = writeFileBytes(path, zoo::serializeModel(built->model));
  if (!s.ok()) return fail(s.error());
  std::printf("wrote %s: %s QDQ, %s%s activations, %s%s weights, calibrated on %d inputs, seed %llu; initializers %s "
              "bytes (float model %s)\n",
              path.c_str(), name.c_str(), options.activations == zoo::QdqActivationType::Int8 ? "int8" : "uint8",
              options.symmetricActivations ? " symmetric" : "", options.perChannel ? "per-channel" : "per-tensor",
              options.reduceRange ? " 7-bit" : "", samples, static_cast<unsigned long long>(seed), grouped(built->qdqWeightBytes).c_str(),
              grouped(built->floatWeightBytes).c_str());
  return 0;
}

int writeSampleInput(const std::string& name, const std::string& path, uint64_t seed) {
  for (const zoo::ZooModelInfo& info : zoo::zooModels()) {
    if (info.name != name) continue;
    Tensor input = zoo::sampleInput(info, seed);
    std::string ext = fs::path(path).extension().string();
    Status s = ext == ".pb" ? writeTensorPb(path, input) : writeNpy(path, input);
    if (!s.ok()) return fail(s.error());
    std::printf("wrote %s: input %s float32\n", path.c_str(), shapeToString(input.shape).c_str());
    return 0;
  }
  return fail(makeError("stowage-zoo", "unknown model '" + name + "'"));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "stowage-zoo: writes tiny standard architectures (MLPerf Tiny layouts) as ONNX files with seeded random "
      "weights, for demos and tests.\nTypical use:\n  stowage-zoo list\n  stowage-zoo write resnet8 -o resnet8.onnx "
      "--seed 7\n  stowage-zoo write resnet8 -o resnet8-qdq.onnx --qdq s8\n  stowage-zoo write-all -o models/"};
  app.require_subcommand(1);

  CLI::App* list = app.add_subcommand("list", "Show each model: name, input shape, parameters, MACs, description");

  std::string name, outFile, sampleInput, outDir;
  uint64_t seed = 1;
  CLI::App* write = app.add_subcommand("write", "Write one model as an ONNX file");
  write->add_option("name", name, "Model name (see `stowage-zoo list`)")->required();
  write->add_option("-o,--output", outFile, "Output .onnx file")->required();
  write->add_option("--seed", seed, "Seed of the weights; the same seed gives a byte-identical file")
      ->capture_default_str();
  write->add_option("--sample-input", sampleInput,
                    "Also write a deterministic input (values in [-1, 1) from the seed) to this .npy or .pb file");
  std::string qdq;
  bool perTensor = false, keepActivations = false, quantizeSoftmax = false, symmetric = false, reduceRange = false;
  int calibrationSamples = 8;
  write->add_option("--qdq", qdq,
                    "Write the model quantized in QDQ form as ONNX Runtime's quantize_static does: int8 weights "
                    "(symmetric, per channel) and int32 biases behind DequantizeLinear, activations (s8: int8, u8: "
                    "uint8) between QuantizeLinear/DequantizeLinear pairs with ranges calibrated by running the float "
                    "model on --calibration-samples seeded inputs; BatchNormalization folded, Relu/Clip after a layer "
                    "removed, float model input and output")
      ->check(CLI::IsMember({"s8", "u8"}));
  write->add_flag("--per-tensor", perTensor, "With --qdq: one weight scale per tensor instead of per output channel");
  write->add_flag("--keep-activations", keepActivations,
                  "With --qdq: keep Relu/Clip as nodes with their own QuantizeLinear/DequantizeLinear");
  write->add_flag("--quantize-softmax", quantizeSoftmax,
                  "With --qdq: quantize Softmax too (output range [0, 1]); by default its output stays float");
  write->add_flag("--symmetric-activations", symmetric,
                  "With --qdq: symmetric activation ranges (int8 zero point 0, uint8 128; Relu/Clip then kept)");
  write->add_flag("--reduce-range", reduceRange,
                  "With --qdq: 7-bit weights in [-64, 64] (ORT's reduce_range, which its int8 kernels on x86 without "
                  "VNNI need to avoid saturating)");
  write->add_option("--calibration-samples", calibrationSamples, "With --qdq: number of calibration inputs")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));

  CLI::App* writeAll = app.add_subcommand("write-all", "Write every model as DIR/<name>.onnx");
  writeAll->add_option("-o,--output", outDir, "Output folder (created if missing)")->required();
  writeAll->add_option("--seed", seed, "Seed of the weights")->capture_default_str();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : kExitUserError;
  }

  if (list->parsed()) return listModels();
  if (write->parsed()) {
    const std::string ext = fs::path(sampleInput).extension().string();
    if (!sampleInput.empty() && ext != ".npy" && ext != ".pb")
      return fail(makeError(sampleInput, "unknown extension for --sample-input", "use .npy or .pb"));
    if (qdq.empty() && (perTensor || keepActivations || quantizeSoftmax || symmetric || reduceRange))
      return fail(makeError("stowage-zoo write", "--per-tensor, --keep-activations, --quantize-softmax, "
                                                 "--symmetric-activations and --reduce-range need --qdq s8|u8"));
    if (!qdq.empty()) {
      zoo::QdqOptions options;
      options.activations = qdq == "u8" ? zoo::QdqActivationType::UInt8 : zoo::QdqActivationType::Int8;
      options.perChannel = !perTensor;
      options.keepActivations = keepActivations;
      options.quantizeSoftmax = quantizeSoftmax;
      options.symmetricActivations = symmetric;
      options.reduceRange = reduceRange;
      if (int rc = writeQdqModel(name, outFile, seed, options, calibrationSamples); rc != 0) return rc;
    } else if (int rc = writeModel(name, outFile, seed); rc != 0) {
      return rc;
    }
    return sampleInput.empty() ? 0 : writeSampleInput(name, sampleInput, seed);
  }
  if (writeAll->parsed()) {
    std::error_code ec;
    fs::create_directories(outDir, ec);
    if (ec) return fail(makeError(outDir, "cannot create the output folder: " + ec.message()));
    for (const zoo::ZooModelInfo& info : zoo::zooModels())
      if (int rc = writeModel(info.name, (fs::path(outDir) / (info.name + ".onnx")).string(), seed); rc != 0)
        return rc;
    return 0;
  }
  return kExitUserError;
}
