// Rendering of user-facing diagnostics (see Diagnostic.h).
#include "stowage/support/Diagnostic.h"

namespace stowage {

std::string Diagnostic::render() const {
  std::string out = "error: ";
  if (!location.empty()) out += location + ": ";
  out += message + "\n";
  for (const auto& n : notes) out += "  note: " + n + "\n";
  if (!hint.empty()) out += "  hint: " + hint + "\n";
  return out;
}

Diagnostic makeError(std::string location, std::string message, std::string hint) {
  Diagnostic d;
  d.location = std::move(location);
  d.message = std::move(message);
  d.hint = std::move(hint);
  return d;
}

Diagnostic makeUnsupported(std::string location, std::string message, std::string hint) {
  Diagnostic d = makeError(std::move(location), std::move(message), std::move(hint));
  d.unsupported = true;
  return d;
}

}  // namespace stowage
