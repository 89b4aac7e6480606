// Random board files (TOML) for differential testing (issue 27): CPU boards with pools of every placement, banks
// (contiguous or at non-contiguous bases), small fast pools that force spills, rules and pins; and accelerator
// boards in engine and cores mode with random DMA and core parameters. Every board is meant to be valid; a model
// may still not fit one (the planner's clear error: the differential run counts it as skipped).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace stowage::zoo {

/// What the generator may know of the model, so that pool sizes bite (spills) without making every plan infeasible.
struct RandomBoardHints {
  size_t workspaceBytes = 64 * 1024;      ///< the model's peak of live activation bytes on the default board
  std::vector<std::string> tensorNames;   ///< activation tensors that pins may name
  std::vector<std::string> ops;           ///< IR op names of the model (rules name them)
};

struct RandomBoard {
  std::string kind;   ///< "cpu", "engine" (matrix engine accelerator) or "cores" (accelerator with cores)
  std::string toml;   ///< the board file
};

/// The board of `seed` (the same seed and hints give the same text everywhere).
RandomBoard randomBoard(uint64_t seed, const RandomBoardHints& hints);

}  // namespace stowage::zoo
