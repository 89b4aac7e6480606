// NumPy .npy encoding and decoding (see NpyFormat.h). The header is a Python dict literal; a small
// recursive-descent parser reads exactly the subset NumPy writes (strings, True/False, int tuples).
#include "stowage/io/NpyFormat.h"

#include <fmt/format.h>

#include <cstring>
#include <limits>
#include <map>
#include <string_view>

namespace stowage {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr size_t kAlign = 64;                ///< NumPy's ARRAY_ALIGN: data offset is a multiple of this
constexpr size_t kGrowthAxisMaxDigits = 21;  ///< NumPy's spare header space for in-place growth

/// One value of the header dict.
struct PyValue {
  enum class Kind { Str, Bool, Tuple } kind = Kind::Str;
  std::string str;
  bool flag = false;
  std::vector<int64_t> ints;
};

/// Parser over the header text; errors are plain strings turned into Diagnostics by the caller.
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : s_(text) {}

  /// Parses "{key: value, ...}" into `out`; returns an error message or empty on success.
  std::string parseDict(std::map<std::string, PyValue>& out) {
    skipSpace();
    if (!eat('{')) return "header does not start with '{'";
    for (;;) {
      skipSpace();
      if (eat('}')) break;
      std::string key;
      if (std::string e = parseString(key); !e.empty()) return "dict key: " + e;
      skipSpace();
      if (!eat(':')) return fmt::format("expected ':' after key '{}'", key);
      skipSpace();
      PyValue v;
      if (std::string e = parseValue(v); !e.empty()) return fmt::format("value of '{}': {}", key, e);
      if (out.count(key)) return fmt::format("key '{}' appears twice", key);
      out.emplace(key, std::move(v));
      skipSpace();
      if (eat(',')) continue;
      skipSpace();
      if (eat('}')) break;
      return fmt::format("expected ',' or '}}' at header offset {}", pos_);
    }
    skipSpace();
    if (pos_ != s_.size()) return fmt::format("unexpected text after the dict at header offset {}", pos_);
    return {};
  }

 private:
  void skipSpace() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }
  bool eat(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool eatWord(std::string_view w) {
    if (s_.substr(pos_, w.size()) == w) {
      pos_ += w.size();
      return true;
    }
    return false;
  }

  std::string parseString(std::string& out) {
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) return "expected a quoted string";
    char q = s_[pos_++];
    while (pos_ < s_.size() && s_[pos_] != q) {
      if (s_[pos_] == '\\') return "escape sequences are not supported in the header";
      out += s_[pos_++];
    }
    if (!eat(q)) return "unterminated string";
    return {};
  }

  std::string parseInt(int64_t& out) {
    bool neg = eat('-');
    if (pos_ >= s_.size() || s_[pos_] < '0' || s_[pos_] > '9') return "expected an integer";
    uint64_t v = 0;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
      v = v * 10 + static_cast<uint64_t>(s_[pos_++] - '0');
      if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return "integer too large";
    }
    eat('L');  // Python 2 long suffix, as old NumPy versions wrote it
    out = neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
    return {};
  }

  std::string parseValue(PyValue& v) {
    if (pos_ >= s_.size()) return "missing value";
    char c = s_[pos_];
    if (c == '\'' || c == '"') {
      v.kind = PyValue::Kind::Str;
      return parseString(v.str);
    }
    if (eatWord("True")) {
      v.kind = PyValue::Kind::Bool;
      v.flag = true;
      return {};
    }
    if (eatWord("False")) {
      v.kind = PyValue::Kind::Bool;
      v.flag = false;
      return {};
    }
    if (c == '(') {
      ++pos_;
      v.kind = PyValue::Kind::Tuple;
      for (;;) {
        skipSpace();
        if (eat(')')) return {};
        int64_t x = 0;
        if (std::string e = parseInt(x); !e.empty()) return e;
        v.ints.push_back(x);
        skipSpace();
        if (eat(',')) continue;
        skipSpace();
        if (eat(')')) return {};
        return "expected ',' or ')' in tuple";
      }
    }
    if (c == '[' || c == '{') return "structured (record) dtypes are not supported";
    return fmt::format("unexpected character '{}'", c);
  }

  std::string_view s_;
  size_t pos_ = 0;
};

/// Maps an .npy descriptor to a DType; on failure returns nullopt and fills `why`/`unsupported`.
std::optional<DType> dtypeFromDescr(const std::string& descr, std::string& why) {
  std::string_view d = descr;
  char order = '|';
  if (!d.empty() && (d[0] == '<' || d[0] == '>' || d[0] == '|' || d[0] == '=')) {
    order = d[0];
    d.remove_prefix(1);
  }
  std::optional<DType> t;
  if (d == "f4") t = DType::Float32;
  else if (d == "i1") t = DType::Int8;
  else if (d == "u1") t = DType::UInt8;
  else if (d == "i4") t = DType::Int32;
  else if (d == "i8") t = DType::Int64;
  else if (d == "b1" || d == "?") t = DType::Bool;
  if (!t) {
    why = fmt::format("dtype '{}' is not supported (supported: <f4, |i1, |u1, <i4, <i8, |b1)", descr);
    return std::nullopt;
  }
  if (order == '>' && dtypeSize(*t) > 1) {
    why = fmt::format("dtype '{}' is big-endian; only little-endian data is supported", descr);
    return std::nullopt;
  }
  return t;
}

uint32_t readLe(const std::string& b, size_t at, size_t n) {
  uint32_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint32_t>(static_cast<uint8_t>(b[at + i])) << (8 * i);
  return v;
}

std::string shapeRepr(const Shape& s) {
  if (s.empty()) return "()";
  if (s.size() == 1) return fmt::format("({},)", s[0]);
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + ")";
}

}  // namespace

std::string npyDescr(DType t) {
  switch (t) {
    case DType::Float32: return "<f4";
    case DType::Int8: return "|i1";
    case DType::UInt8: return "|u1";
    case DType::Int32: return "<i4";
    case DType::Int64: return "<i8";
    case DType::Bool: return "|b1";
  }
  return "?";
}

Result<Tensor> decodeNpy(const std::string& bytes, const std::string& where) {
  const std::string convertHint = "re-save it with numpy.save(path, numpy.ascontiguousarray(a, dtype='<f4'))";
  if (bytes.size() < kMagic.size() + 2 || std::string_view(bytes).substr(0, kMagic.size()) != kMagic)
    return makeError(where, "not a NumPy .npy file (missing the \\x93NUMPY magic)");
  const int major = static_cast<uint8_t>(bytes[6]);
  const int minor = static_cast<uint8_t>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    return makeUnsupported(where, fmt::format("unsupported .npy format version {}.{} (supported: 1.0, 2.0, 3.0)",
                                              major, minor));
  const size_t lenBytes = major == 1 ? 2 : 4;
  const size_t preamble = kMagic.size() + 2 + lenBytes;
  if (bytes.size() < preamble) return makeError(where, "truncated .npy file: ends inside the header length");
  const size_t headerLen = readLe(bytes, kMagic.size() + 2, lenBytes);
  if (bytes.size() < preamble + headerLen)
    return makeError(where, fmt::format("truncated .npy file: header says {} bytes but only {} follow", headerLen,
                                        bytes.size() - preamble));
  const std::string_view header(bytes.data() + preamble, headerLen);

  std::map<std::string, PyValue> dict;
  if (std::string e = HeaderParser(header).parseDict(dict); !e.empty())
    return makeError(where, "malformed .npy header: " + e);
  for (const auto& [key, value] : dict)
    if (key != "descr" && key != "fortran_order" && key != "shape")
      return makeError(where, fmt::format("malformed .npy header: unexpected key '{}'", key));
  for (const char* key : {"descr", "fortran_order", "shape"})
    if (!dict.count(key)) return makeError(where, fmt::format("malformed .npy header: missing key '{}'", key));
  const PyValue& descr = dict["descr"];
  const PyValue& fortran = dict["fortran_order"];
  const PyValue& shape = dict["shape"];
  if (descr.kind != PyValue::Kind::Str) return makeError(where, "malformed .npy header: 'descr' is not a string");
  if (fortran.kind != PyValue::Kind::Bool)
    return makeError(where, "malformed .npy header: 'fortran_order' is not True or False");
  if (shape.kind != PyValue::Kind::Tuple) return makeError(where, "malformed .npy header: 'shape' is not a tuple");

  std::string why;
  std::optional<DType> dtype = dtypeFromDescr(descr.str, why);
  if (!dtype) return makeUnsupported(where, why, convertHint);
  if (fortran.flag)
    return makeUnsupported(where, "array is stored in Fortran (column-major) order; only C order is supported",
                           "re-save it with numpy.save(path, numpy.ascontiguousarray(a))");

  Tensor t;
  t.dtype = *dtype;
  t.kind = TensorKind::Input;
  uint64_t elements = 1;
  for (int64_t d : shape.ints) {
    if (d < 0) return makeError(where, fmt::format("malformed .npy header: negative dimension {}", d));
    if (__builtin_mul_overflow(elements, static_cast<uint64_t>(d), &elements))
      return makeError(where, "malformed .npy header: shape has too many elements");
    t.shape.push_back(d);
  }
  uint64_t want = 0;
  if (__builtin_mul_overflow(elements, static_cast<uint64_t>(dtypeSize(t.dtype)), &want))
    return makeError(where, "malformed .npy header: shape has too many elements");
  const uint64_t have = bytes.size() - preamble - headerLen;
  if (have != want)
    return makeError(where, fmt::format("{} .npy file: shape {} of {} needs {} data bytes, the file holds {}",
                                        have < want ? "truncated" : "corrupt", shapeRepr(t.shape), descr.str, want,
                                        have));
  t.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(preamble + headerLen), bytes.end());
  if (t.dtype == DType::Bool)
    for (size_t i = 0; i < t.data.size(); ++i)
      if (t.data[i] > 1)
        return makeError(where, fmt::format("bool element {} has byte value {} (must be 0 or 1)", i, t.data[i]));
  return t;
}

Result<std::string> encodeNpy(const Tensor& t, const std::string& where) {
  if (t.data.size() != t.byteSize())
    return makeError(where, fmt::format("tensor '{}' ({} {}) holds {} data bytes, expected {}", t.name,
                                        dtypeName(t.dtype), shapeToString(t.shape), t.data.size(), t.byteSize()));
  for (int64_t d : t.shape)
    if (d < 0) return makeError(where, fmt::format("tensor '{}' has negative dimension {}", t.name, d));
  // Same text and padding as numpy.lib.format._write_array_header + _wrap_header.
  std::string dict =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", npyDescr(t.dtype), shapeRepr(t.shape));
  if (!t.shape.empty()) {
    size_t digits = std::to_string(t.shape[0]).size();
    if (digits < kGrowthAxisMaxDigits) dict.append(kGrowthAxisMaxDigits - digits, ' ');
  }
  const size_t hlen = dict.size() + 1;  // + the final '\n'
  int major = 1;
  size_t lenBytes = 2;
  size_t pad = kAlign - ((kMagic.size() + 2 + lenBytes + hlen) % kAlign);
  if (hlen + pad > 0xFFFF) {
    major = 2;
    lenBytes = 4;
    pad = kAlign - ((kMagic.size() + 2 + lenBytes + hlen) % kAlign);
  }
  const size_t headerLen = hlen + pad;
  std::string out(kMagic);
  out += static_cast<char>(major);
  out += '\0';
  for (size_t i = 0; i < lenBytes; ++i) out += static_cast<char>((headerLen >> (8 * i)) & 0xFF);
  out += dict;
  out.append(pad, ' ');
  out += '\n';
  out.append(reinterpret_cast<const char*>(t.data.data()), t.data.size());
  return out;
}

}  // namespace stowage
