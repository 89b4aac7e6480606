// Fuzz target of the text the CLI takes in flags: each line of the input is one flag, "pool SPEC", "rule SPEC",
// "pin SPEC" or "shape SPEC" (as `--pool`, `--rule`, `--pin`, `--shape`). The shapes go through parseShapeBinding,
// the board flags through resolveBoard (parsePoolFlag, parseRuleFlag, parsePinFlag, defaults, validateBoard).
#include <string_view>

#include "FuzzTarget.h"
#include "stowage/ir/ShapeParse.h"
#include "stowage/target/Board.h"

STOWAGE_FUZZ_TARGET(cli_flags) {
  using namespace stowage;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string_view text(reinterpret_cast<const char*>(data), size);
  BoardFlags flags;
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    const std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    const size_t space = line.find(' ');
    if (space == std::string_view::npos) continue;
    const std::string_view flag = line.substr(0, space);
    const std::string spec(line.substr(space + 1));
    if (flag == "pool") flags.pools.push_back(spec);
    if (flag == "rule") flags.rules.push_back(spec);
    if (flag == "pin") flags.pins.push_back(spec);
    if (flag == "shape") {
      Result<std::pair<std::string, Shape>> shape = parseShapeBinding(spec);
      if (!shape.ok()) fuzz::abortIfDiagnosticAdmitsBug(shape.error(), input);
    }
  }
  Result<Board> board = resolveBoard(flags);
  if (!board.ok()) fuzz::abortIfDiagnosticAdmitsBug(board.error(), input);
  return 0;
}
