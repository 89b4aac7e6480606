// Times pipeline stages for the driver: each stage's wall time lands in a StageTime list.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "stowage/driver/Compiler.h"

namespace stowage {

/// Runs `fn` and appends its wall time under `stage` to `timings`; returns what `fn` returns.
template <typename Fn>
auto timeStage(std::vector<StageTime>& timings, std::string stage, Fn&& fn) {
  const auto start = std::chrono::steady_clock::now();
  auto result = fn();
  const std::chrono::duration<double, std::milli> elapsed = std::chrono::steady_clock::now() - start;
  timings.push_back(StageTime{std::move(stage), elapsed.count()});
  return result;
}

}  // namespace stowage
