// Fused multi-layer bands (patch-based inference) on the CPU: a chain of int8 NHWC layers runs one band of output
// rows at a time through the whole chain, so only a band (plus its halo, recomputed) of each inner tensor is live.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "stowage/ir/Graph.h"
#include "stowage/target/Board.h"

namespace stowage {

/// How fuseLayerBands chooses.
struct FuseBandsOptions {
  /// Force fusion even where the layer-by-layer peak already fits (`--fuse-layers`): the chain around the peak is
  /// fused with the band height that gives its lowest peak.
  bool force = false;
  /// Graph inputs and outputs are planned in the pools (`--io-in-pools`): they count towards the peak.
  bool ioInPools = false;
  /// Layers of a chain at most (the halo grows with every windowed layer).
  int maxChainLayers = 24;
  /// The halos recomputed by all chains together may add at most this share of the graph's MACs (`--fuse-extra-macs`):
  /// higher trades compute for RAM, 0 fuses only chains with no halo.
  double maxExtraMacsPercent = 15.0;
};

/// One fused chain.
struct FusedChain {
  std::vector<std::string> layers;  ///< the original nodes, in order
  int64_t bandRows = 0;             ///< output rows of the chain's last layer per band
  int64_t bands = 0;
  int64_t extraMacs = 0;            ///< MACs computed again for the halos (ir/OpCost: pools and adds count none)
  bool haloCached = false;          ///< halo rows kept from the previous band (copied) instead of recomputed
  size_t peakBefore = 0, peakAfter = 0;  ///< estimated live activation bytes over the chain's steps
};

/// What fuseLayerBands did.
struct FuseBandsResult {
  std::vector<FusedChain> chains;
  int64_t extraMacs = 0;
  size_t peakBefore = 0, peakAfter = 0;  ///< the whole graph's estimated peak of live activation bytes
  std::vector<std::string> remarks;      ///< a summary line per chain; why nothing was fused
};

/// Rewrites `g` (verified, scheduled; a board whose targets are CPUs without a DMA: no accelerator tiling, no CPU
/// streaming) so that chains of consecutive QConv2d, QDepthwiseConv2d, QMaxPool2d, QAveragePool2d and same-shape QAdd
/// nodes (int8, NHWC, batch 1) run band by band. Band j of a chain becomes ordinary nodes on ordinary tensors: for each
/// layer a copy computing only the rows the layers after it need in that band (its pads say where the band touches
/// the image border: tile/TileGeometry.h windowInputRows), a Slice (a view: analysis/Aliasing.h) of the rows it reads
/// where the tensor holds more (a chain input held whole, a band held for several readers), and for the last layer
/// its rows, which a Concat on the height axis collects into the chain's output (written in place by the aliasing).
/// Inner tensors of a chain have readers only inside it and are no graph output; a node that a placement rule with
/// pools matches, or whose output a pin names, stays whole. Halo rows are recomputed by every band that needs them.
/// Choice, within the MAC budget (FuseBandsOptions::maxExtraMacsPercent): while the estimated peak of live activation
/// bytes is above the board's smallest sized workspace pool (or above every step outside the chain when there is
/// none), every chain of 2 .. maxChainLayers nodes holding the peak step is tried with the largest band height that
/// brings it to that goal (else its lowest peak), and the one with the lowest resulting peak is fused; stops when no
/// chain lowers the peak. The caller plans the result against the unfused graph (the estimate sees no overlaps).
FuseBandsResult fuseLayerBands(Graph& g, const Board& board, const FuseBandsOptions& options = {});

/// The size of the smallest workspace pool that has one: what fuseLayerBands fuses down to; 0 when every workspace
/// pool is unlimited (it then fuses only when forced).
int64_t fusedBandsPoolGoal(const Board& board);

}  // namespace stowage
