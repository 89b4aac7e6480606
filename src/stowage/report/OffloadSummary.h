// Offloaded layers in the reports: one line per layer the tiler put on an accelerator or cores (target, mode,
// tile sizes, number of tiles, double buffering, estimated compute / DMA / total cycles).
#pragma once

#include <string>

#include "stowage/ir/Graph.h"
#include "stowage/plan/ProgramPlan.h"
#include "stowage/tile/WholeModelCycles.h"

namespace stowage {

/// "engine, 12 tiles of 4 rows x 16 channels, double-buffered, est. 1234 cycles (compute 1000, DMA 800)"; ""
/// for nullptr (a CPU step). First weights loaded by an earlier layer name it ("by the layer before", or "by step 0
/// 'encoder1.fc'" when other layers of the target run in between: far issuers, the weight stream).
std::string offloadText(const Graph& g, const ProgramPlan& plan, const OffloadedLayer* layer);

/// The text summary's table of offloaded layers followed by wholeModelText ("" when none).
std::string offloadSummary(const Graph& g, const ProgramPlan& plan);

/// "whole model: estimated N cycles (C of them CPU layers), bound B cycles set by UNIT, ratio R", one line per unit
/// (its least busy cycles, then with the CPU layers) and one of DMA bytes (planned against the least).
std::string wholeModelText(const WholeModelCycles& w);

}  // namespace stowage
