// Text the CLI prints: aligned tables and field listings for people, pretty JSON for --json,
// and the one-line error report.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace adapt::cli {

using TableRow = std::vector<std::string>;

// `text` with its terminal controls shown rather than acted on: C0 controls but tab, and DEL,
// as "\x1b", C1 controls as "\u009b". Names, labels, keys and output a sandbox chose reach
// the user's terminal through the tables and fields below, where an escape sequence could set
// the clipboard (OSC 52) or rewrite what was printed. Streamed command output stays raw.
std::string TerminalSafe(std::string_view text);

// `header` then `rows` (TerminalSafe), as left-aligned columns two spaces apart, each as wide as
// its widest cell (in UTF-8 code points). Lines end in "\n" and carry no trailing spaces. Rows
// shorter than the header get empty cells.
std::string FormatTable(const TableRow& header, const std::vector<TableRow>& rows);

// "name:  value" lines with the values aligned (TerminalSafe); fields with an empty value are
// left out.
std::string FormatFields(const std::vector<std::pair<std::string, std::string>>& fields);

// "name:\n" (or "name (truncated):\n") and `text` indented two spaces a line (each
// TerminalSafe), for output that may span many lines; "" when `text` is not a non-empty string.
std::string FormatOutputSection(const std::string& name, const nlohmann::json& text,
                                bool truncated);

// Two-space indented JSON and a newline. Invalid UTF-8 in strings is replaced, never thrown.
std::string PrettyJson(const nlohmann::json& value);

// How a JSON value reads in a table cell: strings bare, null empty, anything else as JSON.
std::string JsonCell(const nlohmann::json& value);

// "next cursor: X\n" when a list page's nextCursor is set, else "".
std::string FormatNextCursor(const nlohmann::json& page);

// The single line printed for a failure: "adapt: <message>", plus " (field: X)" when the
// error names a field. No trailing newline.
std::string FormatErrorLine(const Status& status);

}  // namespace adapt::cli
