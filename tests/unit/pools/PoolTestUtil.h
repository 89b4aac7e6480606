// Helpers shared by the pool-planning and aliasing tests: find a planned buffer by tensor name, run a compiled
// x[1,2,8,8] model on the host with a fixed ramp input, count occurrences of a string in generated code.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "../codegen/TestGraphs.h"
#include "stowage/driver/Compiler.h"
#include "stowage/driver/HostRunner.h"

namespace stowage::testing {

inline const PlacedBuffer& bufferNamed(const CompileResult& r, const std::string& name) {
  for (const PlacedBuffer& b : r.plan.buffers)
    if (b.tensor != kNoTensor && r.graph.tensor(b.tensor).name == name) return b;
  throw std::runtime_error("no buffer " + name);
}

/// The first output of `r` run on the host with x[1,2,8,8] = 0.1 * ((i % 17) - 8).
inline std::vector<float> runOnRamp(const CompileResult& r) {
  std::vector<float> xv(128);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = 0.1f * static_cast<float>(static_cast<int>(i % 17) - 8);
  auto out = runOnHost(r, {floatTensor("x", {1, 2, 8, 8}, xv)});
  if (!out.ok()) throw std::runtime_error(out.error().render());
  return floats((*out)[0]);
}

/// n values (i * step) % period - bias, as T: a deterministic pattern of small weights and inputs.
template <class T>
std::vector<T> periodicValues(size_t n, int period, int bias, size_t step = 7) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<T>(static_cast<int>((i * step) % static_cast<size_t>(period)) - bias);
  return v;
}

/// How many times `what` occurs in `text`.
inline size_t countOccurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace stowage::testing
