// Fuzz target of the `.pb` tensor file reader (io/TensorFile.h, an ONNX TensorProto, as `--input` and `--bind` read
// it): any bytes through decodeTensorPb; what decodes must survive tensorToOnnx and decode again unchanged.
#include "FuzzTarget.h"
#include "stowage/frontend/OnnxTensor.h"
#include "stowage/io/TensorFile.h"

STOWAGE_FUZZ_TARGET(tensor_pb) {
  using namespace stowage;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  Result<Tensor> t = decodeTensorPb(bytes, "fuzz.pb");
  if (!t.ok()) {
    fuzz::abortIfDiagnosticAdmitsBug(t.error(), bytes);
    return 0;
  }
  std::string encoded;
  if (!tensorToOnnx(*t).SerializeToString(&encoded)) fuzz::abortOnBug("a decoded tensor does not serialize");
  Result<Tensor> again = decodeTensorPb(encoded, "fuzz.pb");
  if (!again.ok()) fuzz::abortOnBug("a re-encoded tensor does not decode:\n" + again.error().render());
  if (again->dtype != t->dtype || again->shape != t->shape || again->data != t->data)
    fuzz::abortOnBug("a tensor changes through encode and decode");
  return 0;
}
