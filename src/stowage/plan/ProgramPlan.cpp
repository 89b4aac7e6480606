// ProgramPlan helpers (see ProgramPlan.h).
#include "stowage/plan/ProgramPlan.h"

namespace stowage {

const char* bufferRoleName(BufferRole role) {
  switch (role) {
    case BufferRole::Activation: return "activation";
    case BufferRole::Constant: return "constant";
    case BufferRole::Scratch: return "scratch";
  }
  return "buffer";
}

int ProgramPlan::bufferOf(TensorId tensor) const {
  if (tensor == kNoTensor) return -1;
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].tensor == tensor) return static_cast<int>(i);
  return -1;
}

bool placedOnSameBytes(const PlacedBuffer& x, const PlacedBuffer& y) {
  const bool aliased = x.aliasOf == y.tensor || y.aliasOf == x.tensor || (x.aliasOf != kNoTensor && x.aliasOf == y.aliasOf);
  return aliased && x.slot == y.slot && x.offset == y.offset && x.aliasRunBytes == 0 && y.aliasRunBytes == 0;
}

const OffloadedLayer* offloadedAtStep(const std::vector<OffloadedLayer>& layers, int step) {
  for (const OffloadedLayer& l : layers)
    if (l.step == step) return &l;
  return nullptr;
}

const OffloadedLayer* ProgramPlan::offloadedAt(int step) const { return offloadedAtStep(offloaded, step); }

int ProgramPlan::scratchOf(const std::string& name) const {
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].role == BufferRole::Scratch && buffers[i].name == name) return static_cast<int>(i);
  return -1;
}

size_t bufferExtentBytes(const PlacedBuffer& b) {
  if (b.aliasRunBytes == 0 || b.sizeBytes == 0) return b.sizeBytes;
  const size_t runs = (b.sizeBytes + b.aliasRunBytes - 1) / b.aliasRunBytes;
  return (runs - 1) * b.aliasStrideBytes + b.aliasRunBytes;
}

bool sharesBytesWithInput(const ProgramPlan& plan, const PlacedBuffer& y) {
  if (y.overlapsInput == kNoTensor || y.sizeBytes == 0) return false;
  const int xi = plan.bufferOf(y.overlapsInput);
  if (xi < 0) return false;
  const PlacedBuffer& x = plan.buffers[static_cast<size_t>(xi)];
  return x.slot == y.slot && x.sizeBytes > 0 && y.offset < x.offset + x.sizeBytes && x.offset < y.offset + y.sizeBytes;
}

}  // namespace stowage
