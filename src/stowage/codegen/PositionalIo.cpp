// Positional I/O of the generated C API (see PositionalIo.h).
#include "stowage/codegen/PositionalIo.h"

#include <fmt/format.h>

namespace stowage {

namespace {

/// `{}` text of a shape: "1, 3, 32, 32".
std::string dims(const Shape& shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s;
}

/// The info table of the inputs or outputs, and <name>_<kind>_info. `kind` is "input" or "output".
std::string infoTable(const Graph& g, const CSymbols& s, const char* kind, const char* KIND, const std::vector<TensorId>& ids) {
  const std::string& p = s.prefix;
  const std::string& P = s.macroPrefix;
  std::string c;
  for (size_t i = 0; i < ids.size(); ++i) {
    const Tensor& t = g.tensor(ids[i]);
    if (!t.shape.empty()) c += fmt::format("static const int64_t {}_io_{}_shape_{}[{}] = {{{}}};\n", p, kind, i, t.shape.size(), dims(t.shape));
  }
  if (!ids.empty()) {
    c += fmt::format("static const stowage_tensor_info {}_io_{}s[{}_NUM_{}S] = {{\n", p, kind, P, KIND);
    for (size_t i = 0; i < ids.size(); ++i) {
      const Tensor& t = g.tensor(ids[i]);
      const std::string shape = t.shape.empty() ? "NULL" : fmt::format("{}_io_{}_shape_{}", p, kind, i);
      c += fmt::format("  {{.name = \"{}\", .dtype = {}, .elems = {}_{}_{}_ELEMS, .bytes = {}_{}_{}_BYTES,\n   .rank = {}u, .shape = {}}},\n",
                       cStringText(t.name), stowageDtypeConstant(t.dtype), P, KIND, i, P, KIND, i, t.shape.size(), shape);
    }
    c += "};\n";
  }
  c += fmt::format("\nconst stowage_tensor_info* {}_{}_info(size_t index) {{\n", p, kind);
  c += ids.empty() ? "  (void)index;\n  return NULL;\n}\n\n"
                   : fmt::format("  return index < {0}_NUM_{1}S ? &{2}_io_{3}s[index] : NULL;\n}}\n\n", P, KIND, p, kind);
  return c;
}

/// `<name>_set_<kind>`: sets field `index` of *`arg` to `data` cast to the field's type.
std::string setter(const Graph& g, const CSymbols& s, const char* kind, const char* type, const char* arg, const char* dataType,
                   bool constFields, const std::vector<TensorId>& ids, const std::vector<std::string>& fields) {
  const std::string& p = s.prefix;
  const std::string& P = s.macroPrefix;
  std::string c = fmt::format("int {0}_set_{1}({0}_{2}* {3}, size_t index, {4} data) {{\n", p, kind, type, arg, dataType);
  c += fmt::format("  if ({} == NULL) return {}_ERR_NULL_ARGUMENT;\n", arg, P);
  if (ids.empty()) return c + fmt::format("  (void)index;\n  (void)data;\n  return {}_ERR_INDEX;\n}}\n\n", P);
  c += "  switch (index) {\n";
  for (size_t i = 0; i < ids.size(); ++i)
    c += fmt::format("    case {}u:\n      {}->{} = ({}{}*)data;\n      return {}_OK;\n", i, arg, fields[i], constFields ? "const " : "",
                     dtypeCType(g.tensor(ids[i]).dtype), P);
  return c + fmt::format("    default:\n      return {}_ERR_INDEX;\n  }}\n}}\n\n", P);
}

/// `<name>_get_<kind>`: field `index` of *`arg`, or NULL.
std::string getter(const CSymbols& s, const char* kind, const char* type, const char* arg, bool constFields,
                   const std::vector<std::string>& fields) {
  const std::string& p = s.prefix;
  std::string c = fmt::format("{4}void* {0}_get_{1}(const {0}_{2}* {3}, size_t index) {{\n", p, kind, type, arg, constFields ? "const " : "");
  c += fmt::format("  if ({} == NULL) return NULL;\n", arg);
  if (fields.empty()) return c + "  (void)index;\n  return NULL;\n}\n\n";
  c += "  switch (index) {\n";
  for (size_t i = 0; i < fields.size(); ++i) c += fmt::format("    case {}u:\n      return {}->{};\n", i, arg, fields[i]);
  return c + "    default:\n      return NULL;\n  }\n}\n\n";
}

const char* poolKindConstant(PoolKind k) { return k == PoolKind::Constant ? "STOWAGE_POOL_CONSTANT" : "STOWAGE_POOL_WORKSPACE"; }

const char* poolPlacementConstant(PoolPlacement p) {
  switch (p) {
    case PoolPlacement::User: return "STOWAGE_POOL_USER";
    case PoolPlacement::Static: return "STOWAGE_POOL_STATIC";
    case PoolPlacement::Fixed: return "STOWAGE_POOL_FIXED";
  }
  return "0";
}

}  // namespace

std::string_view stowageDtypeConstant(DType t) {
  switch (t) {
    case DType::Float32: return "STOWAGE_DTYPE_FLOAT32";
    case DType::Int8: return "STOWAGE_DTYPE_INT8";
    case DType::UInt8: return "STOWAGE_DTYPE_UINT8";
    case DType::Int32: return "STOWAGE_DTYPE_INT32";
    case DType::Int64: return "STOWAGE_DTYPE_INT64";
    case DType::Bool: return "STOWAGE_DTYPE_BOOL";
  }
  return "0";
}

std::string positionalIoDeclarations(const CSymbols& s, size_t numPools, bool ioInPools) {
  const std::string& p = s.prefix;
  const std::string& P = s.macroPrefix;
  std::string h = fmt::format(
      "/* Positional access, for an application written without the model's tensor and pool names (one main.c for\n"
      " * every model and board, firmware receiving input k over a link); the types are in stowage_io.h.\n"
      " * {0}_IO_IN_POOLS is 1 when the model was compiled with --io-in-pools; {0}_NUM_POOLS counts every pool of the\n"
      " * board, in the board's order (the order of the {0}_POOL_* macros above). */\n"
      "#define {0}_IO_IN_POOLS {2}\n#define {0}_NUM_POOLS {3}\n\n"
      "/* Input (output) number `index`: the model's tensor name, stowage_dtype, _ELEMS, _BYTES and shape. NULL when\n"
      " * index >= {0}_NUM_INPUTS ({0}_NUM_OUTPUTS). The data is read-only and lives as long as the program. */\n"
      "const stowage_tensor_info* {1}_input_info(size_t index);\n"
      "const stowage_tensor_info* {1}_output_info(size_t index);\n\n",
      P, p, ioInPools ? 1 : 0, numPools);
  if (ioInPools) {
    h += fmt::format(
        "/* The pointer of input (output) number `index` in *in (*out), as {1}_map_inputs ({1}_map_outputs) set it:\n"
        " * where the application writes that input (reads that output). NULL when in (out) is NULL or index >=\n"
        " * {0}_NUM_INPUTS ({0}_NUM_OUTPUTS). With --io-in-pools there is no {1}_set_input / {1}_set_output: {1}_run\n"
        " * reads no pointer of the structs, the inputs are written at these places. */\n"
        "void* {1}_get_input(const {1}_inputs* in, size_t index);\n"
        "const void* {1}_get_output(const {1}_outputs* out, size_t index);\n\n",
        P, p);
  } else {
    h += fmt::format(
        "/* Sets the pointer of input (output) number `index` in *in (*out) to data, which must hold that tensor's\n"
        " * _BYTES, aligned for its type (as the named field would). Returns {0}_OK, {0}_ERR_NULL_ARGUMENT when in\n"
        " * (out) is NULL, or {0}_ERR_INDEX when index >= {0}_NUM_INPUTS ({0}_NUM_OUTPUTS), leaving *in (*out) as it was. */\n"
        "int {1}_set_input({1}_inputs* in, size_t index, const void* data);\n"
        "int {1}_set_output({1}_outputs* out, size_t index, void* data);\n\n"
        "/* The pointer of input (output) number `index` in *in (*out); NULL when in (out) is NULL or index is out of\n"
        " * range. */\n"
        "const void* {1}_get_input(const {1}_inputs* in, size_t index);\n"
        "void* {1}_get_output(const {1}_outputs* out, size_t index);\n\n",
        P, p);
  }
  h += fmt::format(
      "/* Pool number `index` of the board: its name, kind, placement, _SIZE, _ALIGN, whether it is a field of\n"
      " * {1}_workspaces (in_workspaces), its weights image file (_IMAGE) and fixed address (_BASE). NULL when\n"
      " * index >= {0}_NUM_POOLS. */\n"
      "const stowage_pool_info* {1}_pool_info(size_t index);\n\n"
      "/* Sets the {1}_workspaces field of pool number `index` to memory: for a workspace pool, at least its size\n"
      " * bytes aligned to its align; for a constant pool delivered as an image, the loaded image (read only through\n"
      " * the field). Returns {0}_OK, {0}_ERR_NULL_ARGUMENT when ws is NULL, or {0}_ERR_INDEX when the pool is not a\n"
      " * field of {1}_workspaces (its in_workspaces is 0, or index >= {0}_NUM_POOLS), leaving *ws as it was. */\n"
      "int {1}_set_pool({1}_workspaces* ws, size_t index, void* memory);\n\n",
      P, p);
  return h;
}

std::string positionalIoDefinitions(const Graph& g, const CSymbols& s, const std::vector<PositionalPool>& pools, bool ioInPools) {
  const std::string& p = s.prefix;
  const std::string& P = s.macroPrefix;
  std::string c = "\n/* Positional access (see the comments in the header). */\n";
  c += infoTable(g, s, "input", "INPUT", g.inputs);
  c += infoTable(g, s, "output", "OUTPUT", g.outputs);
  // The struct fields are const where the library only reads them: inputs by default, outputs with --io-in-pools.
  if (!ioInPools) {
    c += setter(g, s, "input", "inputs", "in", "const void*", true, g.inputs, s.inputFields);
    c += setter(g, s, "output", "outputs", "out", "void*", false, g.outputs, s.outputFields);
  }
  c += getter(s, "input", "inputs", "in", !ioInPools, s.inputFields);
  c += getter(s, "output", "outputs", "out", ioInPools, s.outputFields);

  if (!pools.empty()) {
    c += fmt::format("static const stowage_pool_info {}_io_pools[{}_NUM_POOLS] = {{\n", p, P);
    for (const PositionalPool& pp : pools)
      c += fmt::format("  {{.name = \"{}\", .kind = {}, .placement = {},\n   .size = {}_SIZE, .align = {}_ALIGN, "
                       ".in_workspaces = {}, .image = {}, .base = {}}},\n",
                       cStringText(pp.pool->name), poolKindConstant(pp.pool->kind), poolPlacementConstant(pp.pool->placement), pp.macro,
                       pp.macro, pp.inWorkspaces ? 1 : 0, pp.imageMacro ? pp.macro + "_IMAGE" : "NULL",
                       pp.baseMacro ? pp.macro + "_BASE" : "0u");
    c += "};\n";
  }
  c += fmt::format("\nconst stowage_pool_info* {}_pool_info(size_t index) {{\n", p);
  c += pools.empty() ? "  (void)index;\n  return NULL;\n}\n\n"
                     : fmt::format("  return index < {}_NUM_POOLS ? &{}_io_pools[index] : NULL;\n}}\n\n", P, p);

  c += fmt::format("int {0}_set_pool({0}_workspaces* ws, size_t index, void* memory) {{\n", p);
  c += fmt::format("  if (ws == NULL) return {}_ERR_NULL_ARGUMENT;\n", P);
  std::string cases;
  for (size_t i = 0; i < pools.size(); ++i)
    if (pools[i].inWorkspaces)
      cases += fmt::format("    case {}u:\n      ws->{} = ({}uint8_t*)memory;\n      return {}_OK;\n", i, pools[i].ident,
                           pools[i].image ? "const " : "", P);
  if (cases.empty()) return c + fmt::format("  (void)index;\n  (void)memory;\n  return {}_ERR_INDEX;\n}}\n", P);
  return c + "  switch (index) {\n" + cases + fmt::format("    default:\n      return {}_ERR_INDEX;\n  }}\n}}\n", P);
}

}  // namespace stowage
