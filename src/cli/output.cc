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
    const std::string& cell = i < row.size() ? row[i] : std::string();
    line += cell;
    if (i + 1 < widths.size()) line.append(widths[i] - DisplayWidth(cell) + 2, ' ');
  }
  line.erase(line.find_last_not_of(' ') + 1);
  out += line + "\n";
}

}  // namespace

std::string FormatTable(const TableRow& header, const std::vector<TableRow>& rows) {
  std::vector<size_t> widths(header.size(), 0);
  for (size_t i = 0; i < header.size(); ++i) widths[i] = DisplayWidth(header[i]);
  for (const TableRow& row : rows) {
    for (size_t i = 0; i < std::min(row.size(), widths.size()); ++i) {
      widths[i] = std::max(widths[i], DisplayWidth(row[i]));
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
      section += "  " + line + "\n";
      line.clear();
    } else {
      line.push_back(ch);
    }
  }
  if (!line.empty()) section += "  " + line + "\n";
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
    out += name + ":" + std::string(width - DisplayWidth(name) + 2, ' ') + value + "\n";
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
  return "next cursor: " + it->get<std::string>() + "\n";
}

std::string FormatErrorLine(const Status& status) {
  std::string line = "adapt: " + status.message();
  if (!status.field().empty()) line += " (field: " + status.field() + ")";
  // A server or parser message may span lines; the report must stay one line.
  std::replace(line.begin(), line.end(), '\n', ' ');
  line.erase(std::remove(line.begin(), line.end(), '\r'), line.end());
  return line;
}

}  // namespace adapt::cli
