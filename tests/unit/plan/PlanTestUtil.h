// Helper shared by the offset-planning tests: a buffer of `size` bytes live over steps [first, end).
#pragma once

#include "stowage/plan/Validate.h"

namespace stowage::testing {

inline Buffer buf(size_t size, int first, int end, size_t alignment = 1) {
  Buffer b;
  b.sizeBytes = size;
  b.alignment = alignment;
  b.firstStep = first;
  b.endStep = end;
  return b;
}

}  // namespace stowage::testing
