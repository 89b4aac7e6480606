// `NAME=1x3x32x32` parsing (see ShapeParse.h).
#include "stowage/ir/ShapeParse.h"

#include <fmt/format.h>

namespace stowage {

namespace {
constexpr const char* kForm = "write it as NAME=DxDx... (e.g. input=1x3x32x32), or NAME=scalar for rank 0";
}

Result<Shape> parseShape(const std::string& text) {
  if (text == "scalar") return Shape{};
  if (text.empty()) return makeError(fmt::format("shape '{}'", text), "is empty", kForm);
  Shape s;
  size_t pos = 0;
  while (true) {
    size_t end = text.find_first_of("xX", pos);
    std::string part = text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    if (part.empty() || part.size() > 10 || part.find_first_not_of("0123456789") != std::string::npos)
      return makeError(fmt::format("shape '{}'", text), fmt::format("has an invalid dimension '{}'", part), kForm);
    const int64_t d = std::stoll(part);
    if (d >= (int64_t{1} << 31)) return makeError(fmt::format("shape '{}'", text), fmt::format("dimension {} is too large", d), kForm);
    s.push_back(d);
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return s;
}

Result<std::pair<std::string, Shape>> parseShapeBinding(const std::string& text) {
  const size_t eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0)
    return makeError(fmt::format("--shape '{}'", text), "is not of the form NAME=SHAPE", kForm);
  auto shape = parseShape(text.substr(eq + 1));
  if (!shape.ok()) {
    Diagnostic d = shape.error();
    d.location = fmt::format("--shape '{}'", text);
    return d;
  }
  return std::make_pair(text.substr(0, eq), std::move(*shape));
}

}  // namespace stowage
