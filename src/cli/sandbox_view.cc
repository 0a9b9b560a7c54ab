#include "cli/sandbox_view.h"

#include <utility>
#include <vector>

namespace adapt::cli {
namespace {

// The member, or null when absent or when `object` is no object: views tolerate partial data.
const nlohmann::json& Member(const nlohmann::json& object, const char* name) {
  static const nlohmann::json kNull;
  if (!object.is_object()) return kNull;
  auto it = object.find(name);
  return it == object.end() ? kNull : *it;
}

// Present-and-null means something ("no expiry"), unlike absent, which shows nothing.
std::string CellOr(const nlohmann::json& object, const char* name, const char* if_null) {
  if (!object.is_object() || !object.contains(name)) return "";
  const nlohmann::json& value = object.at(name);
  return value.is_null() ? if_null : JsonCell(value);
}

std::string JoinLabels(const nlohmann::json& labels) {
  if (!labels.is_object()) return "";
  std::string joined;
  for (const auto& [key, value] : labels.items()) {
    if (!joined.empty()) joined += ", ";
    joined += key + "=" + JsonCell(value);
  }
  return joined;
}

// Words with spaces or quotes are shown JSON-quoted, so the argv boundaries stay visible.
std::string JoinWords(const nlohmann::json& words) {
  if (!words.is_array()) return "";
  std::string joined;
  for (const nlohmann::json& word : words) {
    std::string text = JsonCell(word);
    if (!word.is_string() || text.empty() || text.find_first_of(" \t\n\"'") != std::string::npos) {
      text = word.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
    if (!joined.empty()) joined += " ";
    joined += text;
  }
  return joined;
}

std::string DescribeStartup(const nlohmann::json& startup) {
  std::string mode = JsonCell(Member(startup, "mode"));
  std::string argv = JoinWords(Member(startup, "argv"));
  return argv.empty() ? mode : mode + ": " + argv;
}

}  // namespace

const TableRow& SandboxTableHeader() {
  static const TableRow kHeader = {"ID", "STATUS", "IMAGE", "CPU", "MEMORY", "NAME", "CREATED"};
  return kHeader;
}

TableRow SandboxTableRow(const nlohmann::json& sandbox) {
  std::string image = JsonCell(Member(sandbox, "image"));
  if (image.empty()) image = JsonCell(Member(sandbox, "imageId"));
  std::string memory = JsonCell(Member(sandbox, "memoryMiB"));
  if (!memory.empty()) memory += "MiB";
  return {JsonCell(Member(sandbox, "id")),
          JsonCell(Member(sandbox, "status")),
          image,
          JsonCell(Member(sandbox, "cpu")),
          memory,
          JsonCell(Member(Member(sandbox, "labels"), "name")),
          JsonCell(Member(sandbox, "createdAt"))};
}

std::string DescribeSandbox(const nlohmann::json& sandbox) {
  const nlohmann::json& startup = Member(sandbox, "startup");
  const nlohmann::json& names = Member(sandbox, "environmentNames");
  std::string env;
  if (names.is_array()) {
    for (const nlohmann::json& name : names) env += (env.empty() ? "" : ", ") + JsonCell(name);
  }
  std::vector<std::pair<std::string, std::string>> fields = {
      {"id", JsonCell(Member(sandbox, "id"))},
      {"status", JsonCell(Member(sandbox, "status"))},
      {"image", JsonCell(Member(sandbox, "image"))},
      {"imageId", JsonCell(Member(sandbox, "imageId"))},
      {"cpu", JsonCell(Member(sandbox, "cpu"))},
      {"memoryMiB", JsonCell(Member(sandbox, "memoryMiB"))},
      {"diskMiB", JsonCell(Member(sandbox, "diskMiB"))},
      {"ttlSeconds", CellOr(sandbox, "ttlSeconds", "none")},
      {"createdAt", JsonCell(Member(sandbox, "createdAt"))},
      {"expiresAt", CellOr(sandbox, "expiresAt", "never")},
      {"deletedAt", JsonCell(Member(sandbox, "deletedAt"))},
      {"labels", JoinLabels(Member(sandbox, "labels"))},
      {"egress", JsonCell(Member(Member(sandbox, "network"), "egress"))},
      {"env", env},
      {"startup", DescribeStartup(startup)},
      {"exitCode", JsonCell(Member(startup, "exitCode"))},
      {"signal", JsonCell(Member(startup, "signal"))},
      {"startupError", JsonCell(Member(startup, "error"))},
      {"terminationReason", JsonCell(Member(sandbox, "terminationReason"))},
      {"error", JsonCell(Member(sandbox, "error"))},
  };
  const bool truncated = Member(startup, "truncated") == true;
  return FormatFields(fields) +
         FormatOutputSection("stdout", Member(startup, "stdout"), truncated) +
         FormatOutputSection("stderr", Member(startup, "stderr"), truncated);
}

}  // namespace adapt::cli
