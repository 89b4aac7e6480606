// A board's own kernel ("bring your own kernel"): a `[[kernels]]` table naming, for one portable kernel of
// runtime/include/stowage_kernels*.h and optionally one data type, the C function with the same signature that the
// generated code calls instead, on the CPU or on an accelerator's cores. Part of the memory description (target/);
// codegen/ reads it when printing calls. Format and example: docs/kernels.md.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stowage/ir/DType.h"
#include "stowage/target/Target.h"

namespace stowage {

/// One `[[kernels]]` table.
struct KernelOverride {
  std::string kernel;                ///< the portable kernel it replaces: "stowage_qconv2d_s8"
  std::optional<std::string> dtype;  ///< only calls whose first tensor argument has this type ("int8"); nullopt = all
  std::vector<std::string> targets;  ///< targets whose code calls it; empty = every cpu target
  std::string function;              ///< the C function to call instead (an identifier, not starting with "stowage_")
  std::string header;                ///< path of the header declaring it, resolved against the board file's folder
  std::string source;                ///< path of the C file defining it, likewise
  std::string origin;                ///< "board.toml:30:1", for diagnostics

  /// True when this override is meant for code running on `target`.
  bool appliesTo(const Target& target) const;
  /// True when it applies to a call whose first tensor argument has element type `dtype` ("int8").
  bool appliesToDtype(std::string_view dtype) const;
};

/// A portable kernel a board may replace: its name and the element types its first tensor argument may have
/// (board-file spelling: "int8", "uint8", "float32", "int32", "int64", "bool").
struct PortableKernel {
  std::string name;
  std::vector<std::string> dtypes;
};

/// Every kernel of runtime/include/stowage_kernels*.h that generated code calls, in header order.
const std::vector<PortableKernel>& portableKernels();
/// The entry of `name`, or null.
const PortableKernel* findPortableKernel(std::string_view name);
/// The board-file spelling of element types, in the order above.
const std::vector<std::string>& kernelDtypeNames();
/// The board-file spelling of `t`: "float32", "int8", ...
std::string_view kernelDtypeName(DType t);

}  // namespace stowage
