// Diagnostics: user-facing errors carrying where they happened (file, node, tensor, pool) and how to fix
// them. Every stage returns these as values (Result<T>); the CLI prints them and exits with code 2.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace stowage {

/// One user-facing error. `message` says what is wrong; `location` names the file, node, tensor or pool;
/// `notes` add context and `hint` says how to fix it. Rendered as one paragraph by `render()`.
struct Diagnostic {
  std::string location;            ///< e.g. "model.onnx: node 'conv1' (Conv)"; may be empty
  std::string message;             ///< what is wrong, one sentence
  std::vector<std::string> notes;  ///< extra facts, one per line
  std::string hint;                ///< how to fix it; may be empty
  /// True when the input is valid but uses something Stowage does not support (an op, a dtype, an
  /// attribute value); false for malformed input. Test suites skip the former and fail on the latter.
  bool unsupported = false;

  /// "error: <location>: <message>\n  note: ...\n  hint: ...\n"
  std::string render() const;
};

Diagnostic makeError(std::string location, std::string message, std::string hint = {});
/// A Diagnostic with `unsupported` set.
Diagnostic makeUnsupported(std::string location, std::string message, std::string hint = {});

/// Either a value or a Diagnostic. Cheap to move; `ok()` tells which.
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  Result(Diagnostic d) : v_(std::move(d)) {}

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Diagnostic& error() const { return std::get<Diagnostic>(v_); }

 private:
  std::variant<T, Diagnostic> v_;
};

/// Result for operations that produce nothing.
class Status {
 public:
  Status() = default;
  Status(Diagnostic d) : d_(std::move(d)) {}
  static Status success() { return Status(); }
  bool ok() const { return !d_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Diagnostic& error() const { return *d_; }

 private:
  std::optional<Diagnostic> d_;
};

}  // namespace stowage

/// Propagate an error from an expression returning Status or Result<T>.
#define STOWAGE_TRY(expr)                              \
  do {                                                 \
    auto&& stowage_try_r_ = (expr);                    \
    if (!stowage_try_r_.ok()) return stowage_try_r_.error(); \
  } while (0)

#define STOWAGE_CONCAT_INNER_(a, b) a##b
#define STOWAGE_CONCAT_(a, b) STOWAGE_CONCAT_INNER_(a, b)
/// `STOWAGE_ASSIGN_OR_RETURN(auto x, f());` binds the value or returns the error.
#define STOWAGE_ASSIGN_OR_RETURN(decl, expr)                                   \
  auto STOWAGE_CONCAT_(stowage_r_, __LINE__) = (expr);                         \
  if (!STOWAGE_CONCAT_(stowage_r_, __LINE__).ok())                             \
    return STOWAGE_CONCAT_(stowage_r_, __LINE__).error();                      \
  decl = std::move(STOWAGE_CONCAT_(stowage_r_, __LINE__)).value()
