// Fuzz target of the NumPy .npy reader (io/NpyFormat.h): any bytes through decodeNpy; what decodes must encode
// and decode again to the same dtype, shape and data.
#include "FuzzTarget.h"
#include "stowage/io/NpyFormat.h"

STOWAGE_FUZZ_TARGET(npy) {
  using namespace stowage;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  Result<Tensor> t = decodeNpy(bytes, "fuzz.npy");
  if (!t.ok()) {
    fuzz::abortIfDiagnosticAdmitsBug(t.error(), bytes);
    return 0;
  }
  Result<std::string> encoded = encodeNpy(*t, "fuzz.npy");
  if (!encoded.ok()) fuzz::abortOnBug("a decoded .npy does not encode:\n" + encoded.error().render());
  Result<Tensor> again = decodeNpy(*encoded, "fuzz.npy");
  if (!again.ok()) fuzz::abortOnBug("an encoded .npy does not decode:\n" + again.error().render());
  if (again->dtype != t->dtype || again->shape != t->shape || again->data != t->data)
    fuzz::abortOnBug("an .npy changes through encode and decode");
  return 0;
}
