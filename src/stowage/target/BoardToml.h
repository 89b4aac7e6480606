// Internal to target/: the board-file reader without defaults or validation, used by resolveBoard to merge
// --pool/--rule/--pin flags into a file before validating the result with the file's key locations.
#pragma once

#include <string>
#include <string_view>

#include "stowage/target/Board.h"
#include "stowage/target/BoardCheck.h"

namespace stowage {

/// Parses a board file's text into a Board (items as written, no defaults, no cross-item checks) and fills
/// `locations` with where each key was written.
Result<Board> readBoardToml(std::string_view text, const std::string& sourceName, BoardLocations& locations);
/// The whole file at `path`; errors name the path.
Result<std::string> readBoardText(const std::string& path);

}  // namespace stowage
