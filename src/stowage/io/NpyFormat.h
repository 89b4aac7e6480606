// The NumPy .npy format (versions 1.0, 2.0 and 3.0) encoded and decoded in memory; TensorFile.cpp adds
// the file handling. Spec: numpy/lib/format.py ("NPY format").
#pragma once

#include <string>

#include "stowage/ir/Tensor.h"
#include "stowage/support/Diagnostic.h"

namespace stowage {

/// Parses the bytes of an .npy file. `where` (the file name) is the location of every error. Accepts the
/// descriptors <f4, |i1, |u1, <i4, <i8, |b1 (byte-order mark '<', '|' or '='; for one-byte types also '>');
/// rejects fortran_order True, big-endian multi-byte types, other dtypes, negative dims, and data whose size
/// differs from the header's shape (truncated or trailing bytes). Result: kind Input, empty name.
Result<Tensor> decodeNpy(const std::string& bytes, const std::string& where);

/// The .npy descriptor NumPy uses for `t`: "<f4", "|i1", "|u1", "<i4", "<i8", "|b1".
std::string npyDescr(DType t);

/// Serializes `t` as an .npy file image: version 1.0 (2.0 when the header needs more than 65,535 bytes),
/// header "{'descr': ..., 'fortran_order': False, 'shape': (...), }" padded with spaces and ending in '\n'
/// so that the data offset is a multiple of 64. Fails when `t.data` is not exactly t.byteSize() bytes.
Result<std::string> encodeNpy(const Tensor& t, const std::string& where);

}  // namespace stowage
