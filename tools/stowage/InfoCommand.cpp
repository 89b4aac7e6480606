// `stowage info model.onnx [--shape NAME=1x3x32x32]...`: prints what a model contains and what Stowage makes
// of it (inputs, outputs, op inventory with support, parameters, MACs, per-node table). Parsing and printing
// only; the inventory comes from frontend/OnnxInspect.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "Commands.h"
#include "stowage/frontend/OnnxInspect.h"
#include "stowage/frontend/TfliteImporter.h"
#include "stowage/frontend/TfliteReader.h"
#include "stowage/ir/ShapeParse.h"

namespace stowage::cli {

namespace {

struct InfoArgs {
  std::string model;
  std::vector<std::string> shapes;
  bool noNodes = false;
};

/// Left-aligned text table with a header row.
void printTable(const std::vector<std::vector<std::string>>& rows, const std::string& indent = "  ") {
  if (rows.empty()) return;
  std::vector<size_t> width(rows.front().size(), 0);
  for (const auto& r : rows)
    for (size_t c = 0; c < r.size() && c < width.size(); ++c) width[c] = std::max(width[c], r[c].size());
  for (const auto& r : rows) {
    std::string line = indent;
    for (size_t c = 0; c < r.size(); ++c) {
      line += r[c];
      if (c + 1 < r.size()) line += std::string(width[c] - r[c].size() + 2, ' ');
    }
    fmt::print("{}\n", line);
  }
}

std::string withThousands(int64_t v) {
  std::string s = std::to_string(v);
  for (int i = static_cast<int>(s.size()) - 3; i > (v < 0 ? 1 : 0); i -= 3) s.insert(static_cast<size_t>(i), ",");
  return s;
}

int runInfo(const InfoArgs& args) {
  OnnxImportOptions options;
  for (const auto& text : args.shapes) {
    auto b = parseShapeBinding(text);
    if (!b.ok()) {
      std::fputs(b.error().render().c_str(), stderr);
      return kExitUserError;
    }
    options.inputShapes[b->first] = b->second;
  }
  const bool tflite = tflite::looksLikeTflite(args.model);
  auto summary = tflite ? inspectTfliteFile(args.model) : inspectOnnxFile(args.model, options);
  if (!summary.ok()) {
    std::fputs(summary.error().render().c_str(), stderr);
    return kExitUserError;
  }
  const OnnxModelSummary& s = *summary;
  const Graph* g = s.graph ? &*s.graph : nullptr;

  fmt::print("model: {}\n", s.graphName.empty() ? args.model : s.graphName);
  if (tflite)
    fmt::print("  file: {}\n  format: TFLite (schema version {}){}\n", args.model, s.irVersion,
               s.producer.empty() ? "" : "  description: " + s.producer);
  else
    fmt::print("  file: {}\n  ir_version: {}  opset: {}{}\n", args.model, s.irVersion, s.opset,
               s.producer.empty() ? "" : "  producer: " + s.producer);

  // Inputs and outputs: resolved types when imported, as declared otherwise.
  auto printValues = [&](const char* title, const std::vector<OnnxValueSummary>& declared, bool inputs) {
    fmt::print("{}:\n", title);
    std::vector<std::vector<std::string>> rows{{"name", "dtype", "shape"}};
    if (g) {
      for (TensorId id : inputs ? g->inputs : g->outputs) {
        const Tensor& t = g->tensor(id);
        rows.push_back({t.name, std::string(dtypeName(t.dtype)), shapeToString(t.shape)});
      }
    } else {
      for (const auto& v : declared) rows.push_back({v.name, v.dtype, v.shape});
    }
    if (rows.size() == 1) fmt::print("  (none)\n");
    else printTable(rows);
  };
  printValues("inputs", s.inputs, true);
  printValues("outputs", s.outputs, false);

  fmt::print("ops ({} types):\n", s.ops.size());
  std::vector<std::vector<std::string>> opRows{{"op", "count", "supported"}};
  std::vector<const OnnxOpSummary*> unsupported;
  for (const auto& op : s.ops) {
    std::string name = op.domain.empty() || op.domain == "ai.onnx" ? op.opType : op.domain + "::" + op.opType;
    opRows.push_back({name, std::to_string(op.nodes.size()), onnxOpSupportName(op.support)});
    if (op.support == OnnxOpSupport::Unsupported) unsupported.push_back(&op);
  }
  printTable(opRows);

  fmt::print("parameters: {} ({} bytes){}\n", withThousands(s.initializerParams), withThousands(s.initializerBytes),
             g ? "" : " as stored in the model");
  if (g) {
    int64_t total = 0;
    std::vector<std::vector<std::string>> nodeRows{{"node", "op", "output shape", "MACs"}};
    for (const Node& n : g->nodes) {
      const int64_t macs = macCount(*g, n);
      total += macs;
      std::string shapes;
      for (TensorId o : n.outputs) shapes += (shapes.empty() ? "" : ", ") + shapeToString(g->tensor(o).shape);
      nodeRows.push_back({n.name, std::string(opName(n.op)), shapes, withThousands(macs)});
    }
    fmt::print("MACs: {}\n", withThousands(total));
    if (!args.noNodes) {
      fmt::print("nodes ({} after import and constant folding):\n", g->nodes.size());
      printTable(nodeRows);
    }
  }

  if (!unsupported.empty()) {
    fmt::print("unsupported ops ({}):\n", unsupported.size());
    for (const OnnxOpSummary* op : unsupported) {
      std::string nodes;
      for (size_t i = 0; i < op->nodes.size(); ++i) {
        if (i == 8) {
          nodes += fmt::format(", ... ({} more)", op->nodes.size() - 8);
          break;
        }
        nodes += (i ? ", " : "") + op->nodes[i];
      }
      fmt::print("  {}: {}\n", op->domain.empty() ? op->opType : op->domain + "::" + op->opType, nodes);
    }
  }
  if (s.importError) {
    const Diagnostic& d = *s.importError;
    if (d.unsupported) {
      // Valid model that Stowage cannot compile yet: informational, exit 0.
      fmt::print("not compilable yet:\n{}", d.render());
      return kExitOk;
    }
    std::fputs(d.render().c_str(), stderr);
    return kExitUserError;
  }
  return kExitOk;
}

}  // namespace

CommandRunner registerInfoCommand(CLI::App& app) {
  auto args = std::make_shared<InfoArgs>();
  CLI::App* sub = app.add_subcommand(
      "info",
      "Describe an ONNX or TFLite model: inputs and outputs (dtype, shape), op types with counts and whether Stowage supports "
      "them, parameter count and bytes, total MACs and a per-node table (name, op, output shape, MACs). Unsupported "
      "ops are listed (exit code 0); an unreadable or invalid model prints a diagnostic (exit code 2).\n"
      "Example: stowage info model.onnx --shape input=1x3x32x32");
  sub->add_option("model", args->model, "Path of the model file: .onnx, or .tflite (TFLite flatbuffer, chosen by extension or its TFL3 identifier)")->required();
  sub->add_option("--shape", args->shapes,
                  "Static shape for a model input with dynamic dims, NAME=DxDx... (e.g. input=1x3x32x32; 'scalar' "
                  "for rank 0). Repeatable.")
      ->type_name("NAME=SHAPE");
  sub->add_flag("--no-nodes", args->noNodes, "Omit the per-node table");
  return [args] { return runInfo(*args); };
}

}  // namespace stowage::cli
