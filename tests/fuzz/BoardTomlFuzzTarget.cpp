// Fuzz target of the board description reader: any text through parseBoardToml (toml++, the item readers of
// target/, defaults and validateBoard). The file is named as if it sat in examples/boards/, so that `extends` and
// kernel files resolve against the example boards as they would for a user's board.
#include <string_view>

#include "FuzzTarget.h"
#include "stowage/target/Board.h"

STOWAGE_FUZZ_TARGET(board_toml) {
  using namespace stowage;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Result<Board> board = parseBoardToml(text, STOWAGE_SOURCE_DIR "/examples/boards/fuzz-input.toml");
  if (!board.ok()) {
    fuzz::abortIfDiagnosticAdmitsBug(board.error(), text);
    return 0;
  }
  // A board that validates must validate again as it is (defaults filled in are themselves valid).
  if (Status again = validateBoard(*board); !again.ok())
    fuzz::abortOnBug("a parsed board fails validateBoard:\n" + again.error().render());
  return 0;
}
