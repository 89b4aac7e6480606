// Attribute accessors (see Node.h).
#include "stowage/ir/Node.h"

namespace stowage {

int64_t Attributes::getInt(const std::string& name, int64_t fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  if (auto* v = std::get_if<int64_t>(&it->second)) return *v;
  if (auto* f = std::get_if<float>(&it->second)) return static_cast<int64_t>(*f);
  return fallback;
}

float Attributes::getFloat(const std::string& name, float fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  if (auto* f = std::get_if<float>(&it->second)) return *f;
  if (auto* v = std::get_if<int64_t>(&it->second)) return static_cast<float>(*v);
  return fallback;
}

std::vector<int64_t> Attributes::getInts(const std::string& name, std::vector<int64_t> fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  if (auto* v = std::get_if<std::vector<int64_t>>(&it->second)) return *v;
  if (auto* i = std::get_if<int64_t>(&it->second)) return {*i};
  return fallback;
}

std::vector<float> Attributes::getFloats(const std::string& name, std::vector<float> fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  if (auto* v = std::get_if<std::vector<float>>(&it->second)) return *v;
  if (auto* f = std::get_if<float>(&it->second)) return {*f};
  return fallback;
}

std::string Attributes::getString(const std::string& name, std::string fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  if (auto* s = std::get_if<std::string>(&it->second)) return *s;
  return fallback;
}

}  // namespace stowage
