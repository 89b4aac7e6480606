// Element types of graph tensors. Shared by every stage; the C emitter maps them to C types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace stowage {

enum class DType : uint8_t { Float32, Int8, UInt8, Int32, Int64, Bool };

/// Size of one element in bytes.
size_t dtypeSize(DType t);
/// Lower-case name used in IR dumps and reports: "f32", "i8", "u8", "i32", "i64", "bool".
std::string_view dtypeName(DType t);
/// C type used by generated code: "float", "int8_t", ...
std::string_view dtypeCType(DType t);
std::optional<DType> dtypeFromName(std::string_view name);

}  // namespace stowage
