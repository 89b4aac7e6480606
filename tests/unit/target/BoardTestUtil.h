// Helpers shared by the board description tests: the shipped example boards' folder, parse TOML text expecting
// success, or expecting an error whose message names each given part.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "stowage/target/Board.h"

namespace stowage::testing {

inline const std::string kBoards = std::string(STOWAGE_SOURCE_DIR) + "/examples/boards/";

/// Parses `text` as good.toml, expecting no error.
inline Board parse(const std::string& text) {
  auto r = parseBoardToml(text, "good.toml");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().render());
  return r.ok() ? *r : Board{};
}

/// Parses `text` as bad.toml, expects an error, and checks the rendered message contains each of `parts`.
inline void expectError(const std::string& text, std::initializer_list<std::string> parts) {
  auto r = parseBoardToml(text, "bad.toml");
  ASSERT_FALSE(r.ok()) << "accepted:\n" << text;
  std::string msg = r.error().render();
  for (const auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "missing '" << p << "' in:\n" << msg;
}

}  // namespace stowage::testing
