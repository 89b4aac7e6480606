// --shape / --bind parsing (see ModelFlags.h).
#include "ModelFlags.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "stowage/io/TensorFile.h"

namespace stowage::cli {

namespace {

Result<Shape> parseDims(const std::string& text, const std::string& flag) {
  if (text == "scalar") return Shape{};
  Shape s;
  size_t start = 0;
  while (true) {
    size_t end = text.find_first_of("xX,", start);
    std::string part = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (part.empty() || part.size() > 12 || !std::all_of(part.begin(), part.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      return makeError(flag, fmt::format("'{}' is not a shape like 1x3x32x32", text), "write dims as positive integers joined by 'x'");
    s.push_back(std::stoll(part));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return s;
}

}  // namespace

Status applyModelFlags(const std::vector<std::string>& shapes, const std::vector<std::string>& binds, CompileOptions& options) {
  for (const std::string& v : shapes) {
    const size_t eq = v.rfind('=');
    const std::string flag = "--shape " + v;
    if (eq == std::string::npos || eq == 0)
      return makeError(flag, "expected NAME=SHAPE", "for example --shape input=1x3x32x32");
    STOWAGE_ASSIGN_OR_RETURN(Shape s, parseDims(v.substr(eq + 1), flag));
    options.inputShapes[v.substr(0, eq)] = s;
  }
  for (const std::string& v : binds) {
    const size_t eq = v.find('=');
    const std::string flag = "--bind " + v;
    if (eq == std::string::npos || eq == 0 || eq + 1 == v.size())
      return makeError(flag, "expected NAME=FILE", "for example --bind shape=shape.pb");
    const std::string file = v.substr(eq + 1);
    STOWAGE_ASSIGN_OR_RETURN(Tensor t, readTensorFile(file));
    t.kind = TensorKind::Constant;
    t.name = v.substr(0, eq);
    options.boundInputs[t.name] = std::move(t);
  }
  return Status::success();
}

}  // namespace stowage::cli
