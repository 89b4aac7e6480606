// compileModel: import, the graph pipeline, then the output folder (see Compiler.h).
#include "stowage/driver/Compiler.h"

#include <algorithm>
#include <optional>

#include "stowage/codegen/CNames.h"
#include "stowage/driver/HostRunner.h"
#include "stowage/driver/OutputDir.h"
#include "stowage/firmware/EmulatedMachine.h"
#include "stowage/firmware/FirmwareProject.h"
#include "stowage/firmware/LinkerScript.h"
#include "stowage/driver/StageTimer.h"
#include "stowage/frontend/OnnxImporter.h"
#include "stowage/frontend/TfliteImporter.h"
#include "stowage/frontend/TfliteReader.h"
#include "stowage/report/ReportHtml.h"
#include "stowage/report/ReportJson.h"

namespace stowage {

Result<Board> resolveCompileBoard(const CompileOptions& options, std::vector<std::string>* remarks) {
  STOWAGE_ASSIGN_OR_RETURN(Board board, resolveBoard(options.board));
  if (!options.emulate) return board;
  return boardForMachine(board, *options.emulate, remarks);
}

Result<std::vector<GeneratedFile>> linkerScriptFiles(const CompileResult& result) {
  const Board& board = result.plan.board;
  std::vector<GeneratedFile> files;
  const bool anySection = std::any_of(board.pools.begin(), board.pools.end(), [&](const MemoryPool& p) { return !poolSectionName(board, p).empty(); });
  if (anySection || !board.memories.empty())
    files.push_back({result.name + "_sections.ld", linkerSectionsFragment(board, result.plan, result.name)});
  if (!board.memories.empty()) files.push_back({result.name + "_memory.ld", linkerMemoryFragment(board)});
  if (board.device && !board.memories.empty()) {
    STOWAGE_ASSIGN_OR_RETURN(std::string full, fullLinkerScript(board, result.plan, result.name));
    files.push_back({result.name + ".ld", full});
  }
  return files;
}

Result<Graph> importModel(const CompileOptions& options) {
  OnnxImportOptions importOptions;
  importOptions.inputShapes = options.inputShapes;
  importOptions.boundInputs = options.boundInputs;
  // .tflite files (by extension or the "TFL3" identifier) go to the TFLite frontend, everything else to ONNX.
  if (tflite::looksLikeTflite(options.modelPath)) {
    if (!options.inputShapes.empty() || !options.boundInputs.empty())
      return makeUnsupported(options.modelPath, "--shape and --bind apply to ONNX models only; TFLite models have static shapes");
    return importTfliteFile(options.modelPath);
  }
  return importOnnxFile(options.modelPath, importOptions);
}

Result<CompileResult> compileModel(const CompileOptions& options) {
  STOWAGE_TRY(validateModelName(options.name));  // before the slow stages: a bad flag fails at once
  std::vector<std::string> remarks;
  STOWAGE_ASSIGN_OR_RETURN(Board board, resolveCompileBoard(options, &remarks));
  if (!options.projectDir.empty() && (!board.device || board.memories.empty()))
    return makeError(options.board.boardPath.empty() ? "--project" : options.board.boardPath,
                     "a firmware project needs a board with a [device] table and [[memories]]",
                     "describe the device (docs/memory-description.md, e.g. examples/boards/mps2-an386.toml), or add --emulate MACHINE");
  std::vector<StageTime> timings;
  STOWAGE_ASSIGN_OR_RETURN(Graph graph, timeStage(timings, "import", [&] { return importModel(options); }));
  STOWAGE_ASSIGN_OR_RETURN(CompileResult result, compileGraphOnBoard(std::move(graph), board, options, std::move(timings)));
  result.remarks.insert(result.remarks.begin(), remarks.begin(), remarks.end());
  STOWAGE_ASSIGN_OR_RETURN(std::vector<GeneratedFile> linkerFiles, linkerScriptFiles(result));
  std::optional<FirmwareProject> project;
  if (!options.projectDir.empty()) {
    FirmwareProjectOptions po;
    po.runtimeDir = runtimeSourceDir();
    po.machine = options.emulate;
    po.noSimd = result.kernelIsa.noSimd;
    if (!po.machine && board.device && !board.device->qemuMachine.empty()) {
      // The board names its QEMU machine: run and debug targets when the board maps onto it unchanged.
      auto m = findEmulatedMachine(board.device->qemuMachine);
      std::vector<std::string> moved;
      if (m.ok() && boardForMachine(board, **m, &moved).ok() && moved.empty()) po.machine = *m;
    }
    STOWAGE_ASSIGN_OR_RETURN(project, makeFirmwareProject(result.graph, result.plan, result.code, result.name, po));
  }
  if (!options.outDir.empty()) {
    STOWAGE_TRY(timeStage(result.timings, "write", [&] {
      return commitOutputDir(options.outDir, [&](const std::filesystem::path& tmp) -> Status {
        for (const GeneratedFile* f : {&result.code.header, &result.code.source, &result.code.weights})
          STOWAGE_TRY(writeTextFile(tmp / f->fileName, f->text));
        for (const GeneratedImage& image : result.code.images) STOWAGE_TRY(writeTextFile(tmp / image.fileName, image.bytes));
        for (const GeneratedFile& f : result.code.kernelFiles) STOWAGE_TRY(writeTextFile(tmp / f.fileName, f.text));
        for (const GeneratedFile& f : linkerFiles) STOWAGE_TRY(writeTextFile(tmp / f.fileName, f.text));
        // The reports: report.json, report.html and one plan_<pool>.csv per pool holding buffers.
        const ReportContext context{options.modelPath, options.name, result.layerKernels, result.fusedBandExtraMacs};
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
  if (project)
    STOWAGE_TRY(timeStage(result.timings, "project", [&] {
      return commitOutputDir(options.projectDir, [&](const std::filesystem::path& tmp) { return writeFirmwareProject(*project, tmp.string()); });
    }));
  return result;
}

}  // namespace stowage
