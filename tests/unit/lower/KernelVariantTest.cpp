// Variant selection (lower/KernelVariant.h): the int8 convolution, depthwise convolution and fully connected calls
// take the Cortex-M DSP path on a Cortex-M4, the Helium path on a Cortex-M55 and the portable loops on the host and
// with `--kernels portable`; calls the kernels run through their reference loops, and other kernels, stay portable.
#include <gtest/gtest.h>

#include "stowage/lower/KernelVariant.h"

namespace stowage {
namespace {

/// A board whose [device] is CPU `cpu` (its default features), or the host's (no [device]) for "".
Board boardWithCpu(const std::string& cpu) {
  Board b;
  b.name = cpu.empty() ? "host" : cpu;
  if (!cpu.empty()) {
    Device d;
    d.cpu = *defaultCpuSpec(cpu);
    b.device = d;
  }
  return b;
}

/// A 3x3 int8 convolution, 8 -> 16 channels on a 12x12 image (groups 1: the kernel's fast path).
KernelCall qconvCall(int32_t kc = 8) {
  stowage_qconv_params p{};
  p.n = 1;
  p.h = p.w = p.oh = p.ow = 12;
  p.c = 8;
  p.kc = kc;
  p.m = 16;
  p.kh = p.kw = 3;
  p.stride_h = p.stride_w = p.dil_h = p.dil_w = 1;
  p.pad_top = p.pad_left = 1;
  p.depth_multiplier = 1;
  QuantCall q;
  q.kernel = QuantKernel::Conv2d;
  q.params = p;
  return KernelCall{q, {0, 1, 2, 3, 4}, 5};
}

KernelCall qfcCall() {
  stowage_qfc_params p{};
  p.batches = 1;
  p.k = 64;
  p.m = 10;
  QuantCall q;
  q.kernel = QuantKernel::FullyConnected;
  q.params = p;
  return KernelCall{q, {0, 1, 2, 3, 4}, 5};
}

KernelVariant variantOn(const std::string& cpu, const KernelCall& call, bool portable = false) {
  const Board board = boardWithCpu(cpu);
  return cpuKernelVariant(Graph{}, board, 0, call, kernelIsaFor(board, portable));
}

TEST(KernelVariant, CortexM4TakesTheDspPath) {
  const KernelIsa isa = kernelIsaFor(boardWithCpu("cortex-m4"), false);
  EXPECT_EQ(isa.cpu, "cortex-m4");
  EXPECT_TRUE(isa.dsp);
  EXPECT_FALSE(isa.mve);
  EXPECT_EQ(variantOn("cortex-m4", qconvCall()), KernelVariant::CortexMDsp);
  EXPECT_EQ(variantOn("cortex-m4", qfcCall()), KernelVariant::CortexMDsp);
  EXPECT_STREQ(kernelVariantName(variantOn("cortex-m4", qconvCall())), "cortex-m-dsp");
}

TEST(KernelVariant, CortexM55TakesTheHeliumPath) {
  const KernelIsa isa = kernelIsaFor(boardWithCpu("cortex-m55"), false);
  EXPECT_TRUE(isa.mve);
  EXPECT_EQ(variantOn("cortex-m55", qconvCall()), KernelVariant::HeliumMve);
  EXPECT_EQ(variantOn("cortex-m55", qfcCall()), KernelVariant::HeliumMve);
  EXPECT_STREQ(kernelVariantName(variantOn("cortex-m55", qconvCall())), "helium-mve");
}

TEST(KernelVariant, HostAndCpusWithoutDspArePortable) {
  const KernelIsa host = kernelIsaFor(boardWithCpu(""), false);
  EXPECT_EQ(host.cpu, "host");
  EXPECT_FALSE(host.dsp || host.mve || host.noSimd);
  EXPECT_EQ(variantOn("", qconvCall()), KernelVariant::Portable);
  // No DSP extension on the Cortex-M3, none on RISC-V.
  EXPECT_EQ(variantOn("cortex-m3", qconvCall()), KernelVariant::Portable);
  EXPECT_EQ(variantOn("rv32imac", qconvCall()), KernelVariant::Portable);
}

TEST(KernelVariant, KernelsPortableForcesThePortableLoops) {
  const KernelIsa isa = kernelIsaFor(boardWithCpu("cortex-m55"), true);
  EXPECT_FALSE(isa.dsp || isa.mve);
  EXPECT_TRUE(isa.noSimd);  // the build must say so: the C compiler would pick the paths by itself
  EXPECT_EQ(variantOn("cortex-m55", qconvCall(), true), KernelVariant::Portable);
  EXPECT_EQ(variantOn("cortex-m4", qconvCall(), true), KernelVariant::Portable);
  // On a CPU without the paths there is nothing to turn off.
  EXPECT_FALSE(kernelIsaFor(boardWithCpu("cortex-m3"), true).noSimd);
}

TEST(KernelVariant, CallsOutsideTheFastPathsArePortable) {
  // A grouped convolution (4 input channels per group) runs the reference loops on every CPU.
  EXPECT_EQ(variantOn("cortex-m4", qconvCall(4)), KernelVariant::Portable);
  // A kernel without DSP or Helium code.
  QuantCall softmax;
  softmax.kernel = QuantKernel::Softmax;
  softmax.params = stowage_qsoftmax_params{};
  EXPECT_EQ(variantOn("cortex-m55", KernelCall{softmax, {0}, 1}), KernelVariant::Portable);
  EXPECT_EQ(variantOn("cortex-m4", KernelCall{CopyCall{16}, {0}, 1}), KernelVariant::Portable);
}

}  // namespace
}  // namespace stowage
