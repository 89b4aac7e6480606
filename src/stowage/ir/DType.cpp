// Element type helpers (see DType.h).
#include "stowage/ir/DType.h"

namespace stowage {

size_t dtypeSize(DType t) {
  switch (t) {
    case DType::Float32: return 4;
    case DType::Int8: return 1;
    case DType::UInt8: return 1;
    case DType::Int32: return 4;
    case DType::Int64: return 8;
    case DType::Bool: return 1;
  }
  return 0;
}

std::string_view dtypeName(DType t) {
  switch (t) {
    case DType::Float32: return "f32";
    case DType::Int8: return "i8";
    case DType::UInt8: return "u8";
    case DType::Int32: return "i32";
    case DType::Int64: return "i64";
    case DType::Bool: return "bool";
  }
  return "?";
}

std::string_view dtypeCType(DType t) {
  switch (t) {
    case DType::Float32: return "float";
    case DType::Int8: return "int8_t";
    case DType::UInt8: return "uint8_t";
    case DType::Int32: return "int32_t";
    case DType::Int64: return "int64_t";
    case DType::Bool: return "uint8_t";
  }
  return "void";
}

std::optional<DType> dtypeFromName(std::string_view name) {
  for (DType t : {DType::Float32, DType::Int8, DType::UInt8, DType::Int32, DType::Int64, DType::Bool})
    if (dtypeName(t) == name) return t;
  return std::nullopt;
}

}  // namespace stowage
