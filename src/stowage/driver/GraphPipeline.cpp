// compileGraph: the pipeline after import (see Compiler.h). Reads top to bottom, one timed stage per line.
#include <fmt/format.h>

#include "stowage/codegen/CEmitter.h"
#include "stowage/codegen/CNames.h"
#include "stowage/driver/Compiler.h"
#include "stowage/driver/StageTimer.h"
#include "stowage/ir/Printer.h"
#include "stowage/ir/Verifier.h"
#include "stowage/pass/FoldBatchNorm.h"
#include "stowage/pass/FoldConstants.h"
#include "stowage/plan/Validate.h"
#include "stowage/plan/algo/GreedyBySize.h"
#include "stowage/plan/analysis/Liveness.h"

namespace stowage {

Result<CompileResult> compileGraph(Graph graph, const CompileOptions& options, std::vector<StageTime> timings) {
  CompileResult r;
  r.name = options.name;
  STOWAGE_TRY(validateModelName(options.name));

  STOWAGE_TRY(timeStage(timings, "verify-input", [&] { return verifyGraph(graph); }));
  STOWAGE_TRY(timeStage(timings, "fold-constants", [&] { return foldConstants(graph); }));
  STOWAGE_TRY(timeStage(timings, "fold-batch-norm", [&] { return foldBatchNormIntoConv(graph); }));
  STOWAGE_TRY(timeStage(timings, "verify", [&] { return verifyGraph(graph); }));
  std::vector<Buffer> buffers = timeStage(timings, "liveness", [&] { return computeLiveness(graph); });
  r.plan = timeStage(timings, "plan", [&] { return planGreedyBySize(std::move(buffers)); });
  STOWAGE_TRY(timeStage(timings, "validate-plan", [&] {
    return validatePlan(r.plan, [&](TensorId id) { return graph.tensor(id).name; });
  }));
  STOWAGE_ASSIGN_OR_RETURN(r.code, timeStage(timings, "emit-c", [&] { return emitC(graph, r.plan, options.name); }));

  for (const Node& n : graph.nodes) r.macs += macCount(graph, n);
  for (const Tensor& t : graph.tensors)
    if (t.isConstant()) r.weightBytes += t.byteSize();
  if (options.dumpIr) r.irDump = printGraph(graph);
  r.graph = std::move(graph);
  r.timings = std::move(timings);
  return r;
}

}  // namespace stowage
