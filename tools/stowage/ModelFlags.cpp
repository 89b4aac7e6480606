// --shape / --bind parsing (see ModelFlags.h).
#include "ModelFlags.h"

#include <fmt/format.h>

#include "stowage/io/TensorFile.h"
#include "stowage/support/ShapeParse.h"

namespace stowage::cli {

Status applyModelFlags(const std::vector<std::string>& shapes, const std::vector<std::string>& binds, CompileOptions& options) {
  for (const std::string& v : shapes) {
    STOWAGE_ASSIGN_OR_RETURN(auto binding, parseShapeBinding(v));
    options.inputShapes[binding.first] = binding.second;
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
