// compileModel: import, the graph pipeline, then the output folder (see Compiler.h).
#include "stowage/driver/Compiler.h"

#include "stowage/codegen/CNames.h"
#include "stowage/driver/OutputDir.h"
#include "stowage/driver/StageTimer.h"
#include "stowage/frontend/OnnxImporter.h"

namespace stowage {

Result<CompileResult> compileModel(const CompileOptions& options) {
  STOWAGE_TRY(validateModelName(options.name));  // before the slow stages: a bad flag fails at once
  STOWAGE_ASSIGN_OR_RETURN(Board board, resolveBoard(options.board));
  std::vector<StageTime> timings;
  OnnxImportOptions importOptions;
  importOptions.inputShapes = options.inputShapes;
  importOptions.boundInputs = options.boundInputs;
  STOWAGE_ASSIGN_OR_RETURN(Graph graph, timeStage(timings, "import", [&] { return importOnnxFile(options.modelPath, importOptions); }));
  STOWAGE_ASSIGN_OR_RETURN(CompileResult result, compileGraphOnBoard(std::move(graph), board, options, std::move(timings)));
  if (!options.outDir.empty()) {
    STOWAGE_TRY(timeStage(result.timings, "write", [&] {
      return commitOutputDir(options.outDir, [&](const std::filesystem::path& tmp) -> Status {
        for (const GeneratedFile* f : {&result.code.header, &result.code.source, &result.code.weights})
          STOWAGE_TRY(writeTextFile(tmp / f->fileName, f->text));
        return Status::success();
      });
    }));
  }
  return result;
}

}  // namespace stowage
