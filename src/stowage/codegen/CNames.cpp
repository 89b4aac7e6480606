// C identifiers and literals for the emitters (see CNames.h).
#include "stowage/codegen/CNames.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <set>

namespace stowage {

namespace {

const std::set<std::string, std::less<>>& reservedWords() {
  static const std::set<std::string, std::less<>> words = {
      // C99 keywords.
      "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern",
      "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed",
      "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "_Bool",
      "_Complex", "_Imaginary",
      // Macros and names from the headers generated code includes, and C++ keywords for users including net.h.
      "NULL", "EOF", "errno", "INFINITY", "NAN", "HUGE_VAL", "HUGE_VALF", "offsetof", "assert", "stdin", "stdout",
      "stderr", "bool", "true", "false", "complex", "imaginary", "main", "class", "new", "delete", "this",
      "template", "typename", "namespace", "private", "public", "protected", "virtual", "operator", "friend",
      "throw", "try", "catch", "explicit", "mutable", "using", "asm", "export", "nullptr", "FLT_MAX", "FLT_MIN"};
  return words;
}

/// True for names like INT8_MAX, UINT64_C, SIZE_MAX that <stdint.h> may define as macros.
bool looksLikeStdintMacro(const std::string& s) {
  auto ends = [&](const char* suf) {
    std::string_view v(suf);
    return s.size() >= v.size() && s.compare(s.size() - v.size(), v.size(), v) == 0;
  };
  return ends("_MAX") || ends("_MIN") || ends("_C");
}

/// Makes `base` unique among `taken` (compared by `key`), appending _2, _3, ...
std::string uniquify(const std::string& base, std::set<std::string>& taken, bool ignoreCase) {
  auto key = [&](const std::string& s) { return ignoreCase ? upperIdentifier(s) : s; };
  std::string candidate = base;
  for (int k = 2; taken.count(key(candidate)); ++k) candidate = fmt::format("{}_{}", base, k);
  taken.insert(key(candidate));
  return candidate;
}

}  // namespace

Status validateModelName(const std::string& name) {
  const std::string hint = "use a C identifier such as --name net or --name kws_model";
  if (name.empty()) return makeError("--name", "the model name is empty", hint);
  if (name.size() > 32) return makeError("--name", fmt::format("'{}' is longer than 32 characters", name), hint);
  if (!(std::isalpha(static_cast<unsigned char>(name[0]))))
    return makeError("--name", fmt::format("'{}' must start with a letter", name), hint);
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
      return makeError("--name", fmt::format("'{}' contains '{}', which is not allowed in a C identifier", name, c), hint);
  if (reservedWords().count(name)) return makeError("--name", fmt::format("'{}' is a reserved word in C", name), hint);
  return Status::success();
}

std::string sanitizeIdentifier(std::string_view s) {
  std::string out;
  for (char c : s) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) != 0 && static_cast<unsigned char>(c) < 128;
    char ch = ok ? c : '_';
    if (ch == '_' && !out.empty() && out.back() == '_') continue;
    out += ch;
  }
  while (!out.empty() && out.back() == '_' && out.size() > 1) out.pop_back();
  if (out.empty() || out == "_") return "t";
  if (std::isdigit(static_cast<unsigned char>(out[0])) || out[0] == '_') out = "t_" + (out[0] == '_' ? out.substr(1) : out);
  if (reservedWords().count(out) || looksLikeStdintMacro(out)) out += '_';
  return out;
}

std::string upperIdentifier(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string commentText(std::string_view s) {
  std::string out;
  for (char c : s) {
    char ch = (c >= 0x20 && c < 0x7f) ? c : '_';
    if ((ch == '/' && !out.empty() && out.back() == '*') || (ch == '?' && !out.empty() && out.back() == '?')) out += ' ';
    out += ch;
  }
  return out;
}

std::string cStringText(std::string_view s) {
  std::string out;
  for (char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u >= 0x7f || c == '?') {
      out += fmt::format("\\{:03o}", u);
    } else {
      out += c;
    }
  }
  return out;
}

bool floatNeedsMath(float v) { return !std::isfinite(v); }

std::string doubleLiteral(double v) {
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // "16" -> "16.0" ("inf"/"nan" never: finite only)
  return s;
}

std::string floatLiteral(float v) {
  if (std::isnan(v)) return std::signbit(v) ? "-NAN" : "NAN";
  if (std::isinf(v)) return v < 0 ? "-INFINITY" : "INFINITY";
  if (v == 0.0f) return std::signbit(v) ? "-0.0f" : "0.0f";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%af", static_cast<double>(v));
  return buf;
}

CSymbols assignSymbols(const Graph& g, const std::string& name, const std::vector<TensorId>& workspaceTensors,
                       const std::vector<std::string>& poolNames) {
  CSymbols s;
  s.prefix = name;
  s.macroPrefix = upperIdentifier(name);
  // Fields must not be spelled like our own macros.
  auto field = [&](TensorId id) {
    std::string f = sanitizeIdentifier(g.tensor(id).name);
    if (upperIdentifier(f).rfind(s.macroPrefix + "_", 0) == 0) f = "t_" + f;
    return f;
  };
  std::set<std::string> takenIn, takenOut, takenWeights, takenOffsets;
  for (TensorId id : g.inputs) s.inputFields.push_back(uniquify(field(id), takenIn, true));
  for (TensorId id : g.outputs) s.outputFields.push_back(uniquify(field(id), takenOut, true));
  s.weightArrays.assign(g.tensors.size(), "");
  s.offsetMacros.assign(g.tensors.size(), "");
  for (size_t i = 0; i < g.tensors.size(); ++i)
    if (g.tensors[i].isConstant())
      s.weightArrays[i] = uniquify(name + "_w_" + sanitizeIdentifier(g.tensors[i].name), takenWeights, false);
  std::vector<TensorId> sorted = workspaceTensors;
  std::sort(sorted.begin(), sorted.end());
  for (TensorId id : sorted)
    s.offsetMacros[static_cast<size_t>(id)] =
        uniquify(s.macroPrefix + "_OFFSET_" + upperIdentifier(sanitizeIdentifier(g.tensor(id).name)), takenOffsets, false);
  std::set<std::string> takenPools;
  for (const std::string& pool : poolNames) {
    s.poolIdents.push_back(uniquify(sanitizeIdentifier(pool), takenPools, true));
    s.poolMacros.push_back(s.macroPrefix + "_POOL_" + upperIdentifier(s.poolIdents.back()));
  }
  return s;
}

}  // namespace stowage
