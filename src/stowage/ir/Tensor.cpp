// Shape helpers (see Tensor.h).
#include "stowage/ir/Tensor.h"

namespace stowage {

int64_t shapeElements(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::string shapeToString(const Shape& s) {
  if (s.empty()) return "scalar";
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += 'x';
    out += std::to_string(s[i]);
  }
  return out;
}

}  // namespace stowage
