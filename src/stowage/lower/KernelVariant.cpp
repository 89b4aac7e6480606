// Variant selection (see KernelVariant.h).
#include "stowage/lower/KernelVariant.h"

#include <cstdint>

namespace stowage {

const char* kernelVariantName(KernelVariant v) {
  switch (v) {
    case KernelVariant::Portable: return "portable";
    case KernelVariant::CortexMDsp: return "cortex-m-dsp";
    case KernelVariant::HeliumMve: return "helium-mve";
    case KernelVariant::Board: return "board";
    case KernelVariant::Engine: return "engine";
  }
  return "portable";
}

KernelIsa kernelIsaFor(const Board& board, bool portableKernels) {
  KernelIsa isa;
  if (!board.device) return isa;
  const CpuSpec& cpu = board.device->cpu;
  isa.cpu = cpu.name;
  const bool dsp = cpu.isa == IsaFamily::Arm && cpu.dsp;
  const bool mve = cpu.isa == IsaFamily::Arm && !cpu.mve.empty();
  if (portableKernels) {
    isa.noSimd = dsp || mve;
    return isa;
  }
  isa.dsp = dsp;
  isa.mve = mve;
  return isa;
}

TensorId firstTensorOf(const KernelCall& call) {
  for (TensorId id : call.inputs)
    if (id != kNoTensor) return id;
  return kNoTensor;
}

const KernelOverride* boardKernelFor(const Graph& g, const Board& board, int target, const std::string& function,
                                     TensorId firstTensor) {
  if (board.kernels.empty() || target < 0 || static_cast<size_t>(target) >= board.targets.size() || firstTensor == kNoTensor)
    return nullptr;
  return board.findKernel(function, kernelDtypeName(g.tensor(firstTensor).dtype), board.targets[static_cast<size_t>(target)]);
}

namespace {

/// Whether the int8 kernel of `q` runs its fast path, whose dot products have the DSP and Helium variants: asked of
/// the runtime kernels themselves (stowage_kernels_int8.h), so the report cannot drift from what runs.
bool takesFastPath(const QuantCall& q) {
  switch (q.kernel) {
    case QuantKernel::Conv2d: return stowage_qconv2d_s8_is_fast(&std::get<stowage_qconv_params>(q.params)) != 0;
    case QuantKernel::DepthwiseConv2d:
      return stowage_qdepthwise_conv2d_s8_is_fast(&std::get<stowage_qconv_params>(q.params)) != 0;
    case QuantKernel::FullyConnected: return stowage_qfully_connected_s8_is_fast(&std::get<stowage_qfc_params>(q.params)) != 0;
    default: return false;
  }
}

}  // namespace

bool runsInt8ReferenceLoops(const KernelCall& call) {
  const auto* q = std::get_if<QuantCall>(&call.params);
  if (q == nullptr) return false;
  switch (q->kernel) {
    case QuantKernel::Conv2d:
    case QuantKernel::DepthwiseConv2d:
    case QuantKernel::FullyConnected: return !takesFastPath(*q);
    default: return false;
  }
}

int int8ConvPaths(const KernelCall& call) {
  const auto* q = std::get_if<QuantCall>(&call.params);
  if (q == nullptr || q->kernel != QuantKernel::Conv2d) return 0;
  return stowage_qconv2d_s8_paths(&std::get<stowage_qconv_params>(q->params));
}

int int8DepthwisePaths(const KernelCall& call) {
  const auto* q = std::get_if<QuantCall>(&call.params);
  if (q == nullptr || q->kernel != QuantKernel::DepthwiseConv2d) return 0;
  return stowage_qdepthwise_conv2d_s8_paths(&std::get<stowage_qconv_params>(q->params));
}

KernelVariant cpuKernelVariant(const Graph& g, const Board& board, int target, const KernelCall& call, const KernelIsa& isa) {
  if (boardKernelFor(g, board, target, kernelFunctionName(call), firstTensorOf(call)) != nullptr) return KernelVariant::Board;
  const auto* q = std::get_if<QuantCall>(&call.params);
  if (q == nullptr || !takesFastPath(*q)) return KernelVariant::Portable;
  if (isa.mve) return KernelVariant::HeliumMve;
  if (isa.dsp) return KernelVariant::CortexMDsp;
  return KernelVariant::Portable;
}

}  // namespace stowage
