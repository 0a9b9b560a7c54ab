#include "cli/record_view.h"

#include <utility>
#include <vector>

#include "cli/output.h"

namespace adapt::cli {
namespace {

// A list of scalars as one cell; "" for a list holding objects or lists (left out).
std::string ListCell(const nlohmann::json& list) {
  std::string joined;
  for (const nlohmann::json& item : list) {
    if (item.is_structured()) return "";
    joined += (joined.empty() ? "" : " ") + JsonCell(item);
  }
  return joined;
}

}  // namespace

std::string DescribeRecord(const nlohmann::json& record) {
  if (!record.is_object()) return JsonCell(record) + "\n";
  std::vector<std::pair<std::string, std::string>> fields;
  for (const auto& [key, value] : record.items()) {
    if (key == "stdout" || key == "stderr" || value.is_null() || value.is_object()) continue;
    fields.emplace_back(key, value.is_array() ? ListCell(value) : JsonCell(value));
  }
  auto truncated = record.find("truncated");
  const bool cut = truncated != record.end() && *truncated == true;
  std::string out = FormatFields(fields);
  for (const char* name : {"stdout", "stderr"}) {
    auto text = record.find(name);
    if (text != record.end()) out += FormatOutputSection(name, *text, cut);
  }
  return out;
}

}  // namespace adapt::cli
