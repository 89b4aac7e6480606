// Positional I/O of the generated C API: the parts of <name>.h and <name>.c that reach inputs, outputs and pools
// by index (<name>_input_info, _set_input, _get_output, _pool_info, _set_pool; types in
// runtime/include/stowage_io.h), so one generic application can serve every model and board. CEmitter calls it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "stowage/codegen/CNames.h"
#include "stowage/ir/Graph.h"
#include "stowage/target/MemoryPool.h"

namespace stowage {

/// One board pool as the positional API describes it (CEmitter fills these in Board::pools order).
struct PositionalPool {
  const MemoryPool* pool = nullptr;
  std::string ident;          ///< its <name>_workspaces field, "sram"
  std::string macro;          ///< its macro stem, "NET_POOL_SRAM" (_SIZE, _ALIGN, _BASE, _IMAGE)
  bool inWorkspaces = false;  ///< a field of <name>_workspaces the application sets
  bool image = false;         ///< a constant pool delivered as a binary image (a `const uint8_t*` field when in ws)
  bool imageMacro = false;    ///< the header defines <macro>_IMAGE (an image holding at least one constant)
  bool baseMacro = false;     ///< the header defines <macro>_BASE (a fixed pool)
};

/// "STOWAGE_DTYPE_FLOAT32", ...: the stowage_io.h constant of `t`.
std::string_view stowageDtypeConstant(DType t);

/// Declarations and comments for <name>.h (after <name>_run): <P>_IO_IN_POOLS, <P>_NUM_POOLS, the info
/// functions, <name>_set_input / _set_output (not with --io-in-pools, where <name>_run reads no pointer of the
/// structs), <name>_get_input / _get_output (returning const exactly where the struct fields are const) and
/// <name>_set_pool. Needs <P>_ERR_INDEX defined with the other return codes.
std::string positionalIoDeclarations(const CSymbols& syms, size_t numPools, bool ioInPools);

/// Their definitions for <name>.c: read-only info tables (no zero-length arrays) and one switch per function.
std::string positionalIoDefinitions(const Graph& g, const CSymbols& syms, const std::vector<PositionalPool>& pools, bool ioInPools);

}  // namespace stowage
