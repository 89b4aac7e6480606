// Parsing of `NAME=1x3x32x32` shape bindings, as taken by the `--shape` flag of `stowage info`, `compile`
// and `run`, into the IR's Shape (ir/Tensor.h).
#pragma once

#include <string>
#include <utility>

#include "stowage/ir/Tensor.h"
#include "stowage/support/Diagnostic.h"

namespace stowage {

/// Parses "DxDx..." (each D a non-negative decimal integer below 2^31) or "scalar" (rank 0).
Result<Shape> parseShape(const std::string& text);

/// Parses "NAME=DxDx..." (split at the last '='; NAME non-empty). Errors quote the text and give the form.
Result<std::pair<std::string, Shape>> parseShapeBinding(const std::string& text);

}  // namespace stowage
