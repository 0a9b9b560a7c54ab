#include "cli/output.h"

#include <algorithm>

namespace adapt::cli {
namespace {

size_t DisplayWidth(const std::string& text) {
  // UTF-8 continuation bytes (10xxxxxx) do not start a new character.
  return std::count_if(text.begin(), text.end(),
                       [](char ch) { return (static_cast<unsigned char>(ch) & 0xC0) != 0x80; });
}

void AppendRow(const TableRow& row, const std::vector<size_t>& widths, std::string& out) {
  std::string line;
  for (size_t i = 0; i < widths.size(); ++i) {
    const std::string cell = i < row.size() ? TerminalSafe(row[i]) : std::string();
    line += cell;
    if (i + 1 < widths.size()) line.append(widths[i] - DisplayWidth(cell) + 2, ' ');
  }
  line.erase(line.find_last_not_of(' ') + 1);
  out += line + "\n";
}

}  // namespace

std::string TerminalSafe(std::string_view text) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const auto ch = static_cast<unsigned char>(text[i]);
    if ((ch < 0x20 && ch != '\t') || ch == 0x7f) {
      out += "\\x";
      out += kHex[ch >> 4];
      out += kHex[ch & 15];
    } else if (ch == 0xc2 && i + 1 < text.size() &&
               static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      // A C1 control (U+0080..U+009F) in UTF-8: U+009B is CSI to some terminals.
      const auto c1 = static_cast<unsigned char>(text[++i]);
      out += "\\u00";
      out += kHex[c1 >> 4];
      out += kHex[c1 & 15];
    } else {
      out.push_back(static_cast<char>(ch));
    }
  }
  return out;
}

std::string FormatTable(const TableRow& header, const std::vector<TableRow>& rows) {
  std::vector<size_t> widths(header.size(), 0);
  for (size_t i = 0; i < header.size(); ++i) widths[i] = DisplayWidth(TerminalSafe(header[i]));
  for (const TableRow& row : rows) {
    for (size_t i = 0; i < std::min(row.size(), widths.size()); ++i) {
      widths[i] = std::max(widths[i], DisplayWidth(TerminalSafe(row[i])));
    }
  }
  std::string out;
  AppendRow(header, widths, out);
  for (const TableRow& row : rows) AppendRow(row, widths, out);
  return out;
}

std::string FormatOutputSection(const std::string& name, const nlohmann::json& text,
                                bool truncated) {
  if (!text.is_string() || text.get<std::string>().empty()) return "";
  std::string section = name + (truncated ? " (truncated):\n" : ":\n");
  std::string line;
  for (char ch : text.get<std::string>()) {
    if (ch == '\n') {
      section += "  " + TerminalSafe(line) + "\n";
      line.clear();
    } else {
      line.push_back(ch);
    }
  }
  if (!line.empty()) section += "  " + TerminalSafe(line) + "\n";
  return section;
}

std::string FormatFields(const std::vector<std::pair<std::string, std::string>>& fields) {
  size_t width = 0;
  for (const auto& [name, value] : fields) {
    if (!value.empty()) width = std::max(width, DisplayWidth(name));
  }
  std::string out;
  for (const auto& [name, value] : fields) {
    if (value.empty()) continue;
    out +=
        name + ":" + std::string(width - DisplayWidth(name) + 2, ' ') + TerminalSafe(value) + "\n";
  }
  return out;
}

std::string PrettyJson(const nlohmann::json& value) {
  return value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string JsonCell(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_null()) return "";
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string FormatNextCursor(const nlohmann::json& page) {
  auto it = page.find("nextCursor");
  if (it == page.end() || !it->is_string() || it->get<std::string>().empty()) return "";
  return "next cursor: " + TerminalSafe(it->get<std::string>()) + "\n";
}

std::string FormatErrorLine(const Status& status) {
  std::string line = "adapt: " + status.message();
  if (!status.field().empty()) line += " (field: " + status.field() + ")";
  // A server or parser message may span lines; the report must stay one line, and carries
  // no terminal controls (a sandbox chooses the file names some messages quote).
  std::replace(line.begin(), line.end(), '\n', ' ');
  line.erase(std::remove(line.begin(), line.end(), '\r'), line.end());
  return TerminalSafe(line);
}

}  // namespace adapt::cli
