// compileModel: import, the graph pipeline, then the output folder (see Compiler.h).
#include "stowage/driver/Compiler.h"

#include "stowage/codegen/CNames.h"
#include "stowage/driver/OutputDir.h"
#include "stowage/driver/StageTimer.h"
#include "stowage/frontend/OnnxImporter.h"
#include "stowage/frontend/TfliteImporter.h"
#include "stowage/frontend/TfliteReader.h"
#include "stowage/report/ReportHtml.h"
#include "stowage/report/ReportJson.h"

namespace stowage {

Result<CompileResult> compileModel(const CompileOptions& options) {
  STOWAGE_TRY(validateModelName(options.name));  // before the slow stages: a bad flag fails at once
  STOWAGE_ASSIGN_OR_RETURN(Board board, resolveBoard(options.board));
  std::vector<StageTime> timings;
  OnnxImportOptions importOptions;
  importOptions.inputShapes = options.inputShapes;
  importOptions.boundInputs = options.boundInputs;
  // .tflite files (by extension or the "TFL3" identifier) go to the TFLite frontend, everything else to ONNX.
  STOWAGE_ASSIGN_OR_RETURN(Graph graph, timeStage(timings, "import", [&]() -> Result<Graph> {
    if (tflite::looksLikeTflite(options.modelPath)) {
      if (!options.inputShapes.empty() || !options.boundInputs.empty())
        return makeUnsupported(options.modelPath, "--shape and --bind apply to ONNX models only; TFLite models have static shapes");
      return importTfliteFile(options.modelPath);
    }
    return importOnnxFile(options.modelPath, importOptions);
  }));
  STOWAGE_ASSIGN_OR_RETURN(CompileResult result, compileGraphOnBoard(std::move(graph), board, options, std::move(timings)));
  if (!options.outDir.empty()) {
    STOWAGE_TRY(timeStage(result.timings, "write", [&] {
      return commitOutputDir(options.outDir, [&](const std::filesystem::path& tmp) -> Status {
        for (const GeneratedFile* f : {&result.code.header, &result.code.source, &result.code.weights})
          STOWAGE_TRY(writeTextFile(tmp / f->fileName, f->text));
        for (const GeneratedImage& image : result.code.images) STOWAGE_TRY(writeTextFile(tmp / image.fileName, image.bytes));
        // The reports: report.json, report.html and one plan_<pool>.csv per pool holding buffers.
        const ReportContext context{options.modelPath, options.name};
        STOWAGE_TRY(writeTextFile(tmp / "report.json", reportJsonText(result.graph, result.plan, context)));
        STOWAGE_TRY(writeTextFile(tmp / "report.html", buildReportHtml(result.graph, result.plan, context)));
        for (const PoolUse& u : result.plan.pools)
          if (u.buffers > 0)
            STOWAGE_TRY(writeTextFile(tmp / ("plan_" + result.plan.board.pools[static_cast<size_t>(u.pool)].name + ".csv"),
                                      poolPlanCsv(result.graph, result.plan, u.pool)));
        return Status::success();
      });
    }));
  }
  return result;
}

}  // namespace stowage
