// ProgramPlan helpers (see ProgramPlan.h).
#include "stowage/plan/ProgramPlan.h"

namespace stowage {

const char* bufferRoleName(BufferRole role) {
  switch (role) {
    case BufferRole::Activation: return "activation";
    case BufferRole::Constant: return "constant";
  }
  return "buffer";
}

int ProgramPlan::bufferOf(TensorId tensor) const {
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].tensor == tensor) return static_cast<int>(i);
  return -1;
}

}  // namespace stowage
