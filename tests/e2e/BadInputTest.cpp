// Bad input through the CLI: every case must print a one-paragraph error on stderr, exit with code 2,
// never crash, and leave no output folder behind.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <fstream>
#include <random>

#include "E2eSupport.h"

namespace stowage::e2e {
namespace {

namespace fs = std::filesystem;

void writeBytes(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary);
  out << bytes;
}

/// A valid one-node float model: y = OP(x) with x, y of shape [1, 4].
onnx::ModelProto oneNodeModel(const std::string& op, const std::string& input = "x") {
  onnx::ModelProto m;
  m.set_ir_version(7);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("tiny");
  for (auto [list, name] : {std::pair{g->add_input(), "x"}, std::pair{g->add_output(), "y"}}) {
    list->set_name(name);
    auto* tt = list->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    tt->mutable_shape()->add_dim()->set_dim_value(1);
    tt->mutable_shape()->add_dim()->set_dim_value(4);
  }
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name("the_node");
  n->add_input(input);
  n->add_output("y");
  return m;
}

/// Runs `stowage compile` on `model` into a fresh output path and checks the bad-input contract.
std::string expectCleanFailure(const fs::path& model, const fs::path& outDir) {
  auto r = runCommand(cli() + " compile " + shellQuote(model.string()) + " -o " + shellQuote(outDir.string()));
  EXPECT_EQ(r.exitCode, 2) << r.err;
  EXPECT_NE(r.err.find("error:"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(outDir)) << "a failed compile left " << outDir;
  EXPECT_EQ(r.out, "") << "errors go to stderr";
  return r.err;
}

TEST(BadInput, MissingFileNamesThePath) {
  fs::path work = scratchDir("bad_missing");
  std::string err = expectCleanFailure(work / "no_such_model.onnx", work / "out");
  EXPECT_NE(err.find("no_such_model.onnx"), std::string::npos) << err;
}

TEST(BadInput, RandomBytesAreNotAModel) {
  fs::path work = scratchDir("bad_random");
  std::mt19937 rng(42);
  std::string bytes(4096, '\0');
  for (char& c : bytes) c = static_cast<char>(rng() & 0xff);
  writeBytes(work / "random.onnx", bytes);
  std::string err = expectCleanFailure(work / "random.onnx", work / "out");
  EXPECT_NE(err.find("random.onnx"), std::string::npos) << err;
}

TEST(BadInput, TruncatedModel) {
  fs::path work = scratchDir("bad_truncated");
  auto w = runCommand(zoo() + " write ds-cnn -o " + shellQuote((work / "full.onnx").string()));
  ASSERT_EQ(w.exitCode, 0) << w.err;
  std::ifstream in(work / "full.onnx", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  writeBytes(work / "cut.onnx", bytes.substr(0, bytes.size() / 2));
  expectCleanFailure(work / "cut.onnx", work / "out");
}

TEST(BadInput, ModelFailingTheOnnxChecker) {
  fs::path work = scratchDir("bad_checker");
  // The node reads a tensor nothing defines: the ONNX checker rejects the graph.
  writeBytes(work / "m.onnx", oneNodeModel("Relu", "undefined_tensor").SerializeAsString());
  std::string err = expectCleanFailure(work / "m.onnx", work / "out");
  EXPECT_NE(err.find("m.onnx"), std::string::npos) << err;
}

TEST(BadInput, UnsupportedOpNamesOpNodeAndSupportedOps) {
  fs::path work = scratchDir("bad_unsupported");
  writeBytes(work / "m.onnx", oneNodeModel("Hardmax").SerializeAsString());
  std::string err = expectCleanFailure(work / "m.onnx", work / "out");
  EXPECT_NE(err.find("Hardmax"), std::string::npos) << err;
  EXPECT_NE(err.find("the_node"), std::string::npos) << err;
  EXPECT_NE(err.find("Conv"), std::string::npos) << "the error should list supported ops: " << err;
}

TEST(BadInput, UnwritableOutputDir) {
  fs::path work = scratchDir("bad_unwritable");
  writeBytes(work / "m.onnx", oneNodeModel("Relu").SerializeAsString());
  writeBytes(work / "a_file", "not a folder");
  // The output path lies under a regular file, so it cannot be created.
  auto r = runCommand(cli() + " compile " + shellQuote((work / "m.onnx").string()) + " -o " +
                      shellQuote((work / "a_file" / "out").string()));
  EXPECT_EQ(r.exitCode, 2) << r.err;
  EXPECT_NE(r.err.find("error:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("a_file"), std::string::npos) << r.err;
}

TEST(BadInput, DynamicInputDimSuggestsShapeFlag) {
  fs::path work = scratchDir("bad_dynamic");
  onnx::ModelProto m = oneNodeModel("Relu");
  for (auto* vi : {m.mutable_graph()->mutable_input(0), m.mutable_graph()->mutable_output(0)})
    vi->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("batch");
  writeBytes(work / "m.onnx", m.SerializeAsString());
  std::string err = expectCleanFailure(work / "m.onnx", work / "out");
  EXPECT_NE(err.find("--shape"), std::string::npos) << err;
  EXPECT_NE(err.find("x"), std::string::npos) << err;
  // With the shape given, it compiles.
  auto ok = runCommand(cli() + " compile " + shellQuote((work / "m.onnx").string()) + " -o " +
                       shellQuote((work / "out").string()) + " --shape x=1x4");
  EXPECT_EQ(ok.exitCode, 0) << ok.err;
}

TEST(BadInput, RunRejectsAnInputOfTheWrongShape) {
  fs::path work = scratchDir("bad_input_shape");
  writeBytes(work / "m.onnx", oneNodeModel("Relu").SerializeAsString());
  onnx::TensorProto t;
  t.set_name("x");
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(1);
  t.add_dims(5);
  for (int i = 0; i < 5; ++i) t.add_float_data(1.0f);
  writeBytes(work / "in.pb", t.SerializeAsString());
  auto r = runCommand(cli() + " run " + shellQuote((work / "m.onnx").string()) + " --input " +
                      shellQuote((work / "in.pb").string()) + " --output-dir " + shellQuote((work / "out").string()));
  EXPECT_EQ(r.exitCode, 2) << r.err;
  EXPECT_NE(r.err.find("1x4"), std::string::npos) << "the error should give the expected shape: " << r.err;
  EXPECT_FALSE(fs::exists(work / "out"));
}

TEST(Cli, HelpIsCompleteForEverySubcommand) {
  auto top = runCommand(cli() + " --help");
  EXPECT_EQ(top.exitCode, 0);
  for (const char* sub : {"info", "compile", "run"}) EXPECT_NE(top.out.find(sub), std::string::npos) << sub;
  auto compile = runCommand(cli() + " compile --help");
  EXPECT_EQ(compile.exitCode, 0);
  for (const char* flag : {"--output", "--name", "--shape", "--bind", "--dump-ir"})
    EXPECT_NE(compile.out.find(flag), std::string::npos) << "compile --help lacks " << flag;
  auto run = runCommand(cli() + " run --help");
  EXPECT_EQ(run.exitCode, 0);
  for (const char* flag : {"--input", "--output-dir", "--format", "--shape", "--bind"})
    EXPECT_NE(run.out.find(flag), std::string::npos) << "run --help lacks " << flag;
  auto info = runCommand(cli() + " info --help");
  EXPECT_EQ(info.exitCode, 0);
  EXPECT_NE(info.out.find("--shape"), std::string::npos);
}

}  // namespace
}  // namespace stowage::e2e
