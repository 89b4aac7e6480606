// PAD folded into the following int8 convolution's padding (see FoldPad.h).
#include "stowage/pass/FoldPad.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace stowage {
namespace {

/// Why the Pad `pad` (read only by `conv`) cannot become `conv`'s padding, or "" when it can.
std::string whyNotFoldable(const Graph& g, const Node& pad, const Node& conv) {
  const Tensor& x = g.tensor(pad.inputs[0]);
  const Tensor& y = g.tensor(pad.outputs[0]);
  if (x.dtype != DType::Int8 || !x.quant || x.quant->zeroPoints.size() != 1 || x.shape.size() != 4) return "not an int8 NHWC tensor";
  if (pad.attrs.getString("mode", "constant") != "constant") return "not constant padding";
  if (pad.attrs.getFloat("value", 0.0f) != static_cast<float>(x.quant->zeroPoints[0])) return "its value is not the zero point";
  if (conv.inputs.empty() || conv.inputs[0] != pad.outputs[0]) return "the padded tensor is not the convolution's input";
  if (!y.quant || y.quant != x.quant) return "input and output quantization differ";
  const auto pads = pad.attrs.getInts("pads", {});
  if (pads.size() != 8 || pads[0] != 0 || pads[3] != 0 || pads[4] != 0 || pads[7] != 0) return "it pads the batch or channels";
  const auto k = g.tensor(conv.inputs[1]).shape;  // [M|1, kh, kw, C]
  const auto dil = conv.attrs.getInts("dilations", {1, 1});
  const auto own = conv.attrs.getInts("pads", {0, 0, 0, 0});
  if (k.size() != 4 || dil.size() != 2 || own.size() != 4) return "unexpected convolution attributes";
  const int64_t span[2] = {dil[0] * (k[1] - 1), dil[1] * (k[2] - 1)};
  const int64_t grown[4] = {own[0] + pads[1], own[1] + pads[2], own[2] + pads[5], own[3] + pads[6]};
  for (int i = 0; i < 4; ++i)
    if (grown[i] > span[i % 2]) return fmt::format("its padding ({}) would exceed the window's span ({})", grown[i], span[i % 2]);
  return {};
}

}  // namespace

Result<std::vector<std::string>> foldPad(Graph& g, const MergeVeto& veto) {
  const std::vector<int> producers = g.producers();
  const std::vector<int> uses = g.useCounts();
  std::vector<bool> drop(g.nodes.size(), false);
  std::vector<std::string> remarks, folded;
  int64_t savedBytes = 0;
  for (Node& conv : g.nodes) {
    if ((conv.op != OpKind::QConv2d && conv.op != OpKind::QDepthwiseConv2d) || conv.inputs.empty()) continue;
    const TensorId padded = conv.inputs[0];
    if (padded == kNoTensor || producers[static_cast<size_t>(padded)] < 0 || uses[static_cast<size_t>(padded)] != 1) continue;
    if (std::find(g.outputs.begin(), g.outputs.end(), padded) != g.outputs.end()) continue;
    const size_t padIndex = static_cast<size_t>(producers[static_cast<size_t>(padded)]);
    const Node& pad = g.nodes[padIndex];
    if (pad.op != OpKind::Pad || pad.inputs.size() != 1 || pad.outputs.size() != 1) continue;
    if (std::string why = whyNotFoldable(g, pad, conv); !why.empty()) {
      remarks.push_back(fmt::format("Pad '{}' kept before '{}': {}", pad.name, conv.name, why));
      continue;
    }
    const TensorId source = pad.inputs[0];
    if (veto) {
      if (std::string why = veto(g, padded, source); !why.empty()) {
        remarks.push_back(fmt::format("Pad '{}' kept before '{}': {}", pad.name, conv.name, why));
        continue;
      }
    }
    const auto pads = pad.attrs.getInts("pads");
    auto own = conv.attrs.getInts("pads", {0, 0, 0, 0});
    own[0] += pads[1];
    own[1] += pads[2];
    own[2] += pads[5];
    own[3] += pads[6];
    conv.attrs.set("pads", own);
    conv.inputs[0] = source;
    savedBytes += g.tensor(padded).byteSize();
    folded.push_back(fmt::format("'{}' into '{}'", pad.name, conv.name));
    drop[padIndex] = true;
  }
  if (folded.empty()) return remarks;
  remarks.insert(remarks.begin(), fmt::format("fold-pad: {} Pad folded into the convolution after it as its padding, no padded copy "
                                              "({} bytes of padded tensors gone; --no-fold-pad keeps them): {}",
                                              folded.size(), savedBytes, fmt::join(folded, ", ")));
  g.removeNodes(drop);
  return remarks;
}

}  // namespace stowage
