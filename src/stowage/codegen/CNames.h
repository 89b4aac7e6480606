// C spelling for the emitters: identifiers derived from tensor names (sanitized, deterministic,
// collision-free), exact literals (hex floats, integer limits) and comment-safe text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "stowage/ir/Graph.h"
#include "stowage/support/Diagnostic.h"

namespace stowage {

/// OK when `name` can prefix every generated symbol: a C identifier ([A-Za-z_][A-Za-z0-9_]*), not a C
/// keyword, not starting with '_', at most 32 characters. The error says why and suggests a fix.
Status validateModelName(const std::string& name);

/// `s` as a C identifier: characters outside [A-Za-z0-9_] become '_', runs of '_' collapse, a leading digit
/// or '_' gets a "t_" prefix, and C keywords or standard macro names (NULL, INFINITY, ...) get a '_' suffix.
std::string sanitizeIdentifier(std::string_view s);

/// Uppercase of an identifier (for macro names).
std::string upperIdentifier(std::string_view s);

/// Text safe inside a C block comment: printable ASCII only, no "*/" and no "??" (trigraphs).
std::string commentText(std::string_view s);

/// Contents for a C string literal (without the quotes): '\\' and '"' escaped, bytes outside printable ASCII
/// and '?' (trigraphs) as three-digit octal escapes.
std::string cStringText(std::string_view s);

/// Exact C99 literal of a float: a hex float with an 'f' suffix ("0x1.8p+1f"), or INFINITY, -INFINITY, NAN
/// (which need <math.h>).
std::string floatLiteral(float v);
/// C99 literal of a finite double that reads back as the same value: the shortest decimal ("16.0", "15.9999999",
/// "1234567.0", "1e+300").
std::string doubleLiteral(double v);
/// True when floatLiteral(v) needs <math.h>.
bool floatNeedsMath(float v);

/// Every C symbol the emitters derive from the graph, assigned once so net.h, net.c, net_weights.c and the
/// host harness agree. Same graph and name, same symbols.
struct CSymbols {
  std::string prefix;       ///< the model name, e.g. "net": prefixes functions, types and arrays
  std::string macroPrefix;  ///< its uppercase, e.g. "NET": prefixes macros
  /// Field of net_inputs / net_outputs per graph input / output (by position); unique ignoring case within
  /// each struct, so the per-field size macros (uppercase) are unique too.
  std::vector<std::string> inputFields, outputFields;
  /// By TensorId: the weight array ("net_w_conv1_weight") of constants, the offset macro
  /// ("NET_OFFSET_CONV1_OUT") of workspace tensors; empty otherwise.
  std::vector<std::string> weightArrays, offsetMacros;
  /// By Board::pools index: the pool's identifier ("sram": the net_workspaces field, the suffix of
  /// net_pool_<ident> static arrays) and macro stem ("NET_POOL_SRAM": _SIZE, _ALIGN, _BASE, ...).
  std::vector<std::string> poolIdents, poolMacros;
};

/// Assigns the symbols for `g` with model name `name` (already validated). `workspaceTensors` lists the
/// tensors that get an offset macro, `poolNames` the board's pools in order.
CSymbols assignSymbols(const Graph& g, const std::string& name, const std::vector<TensorId>& workspaceTensors,
                       const std::vector<std::string>& poolNames = {});

}  // namespace stowage
