#include "mcp/tools.h"

#include <algorithm>
#include <cctype>
#include <utility>

namespace adapt::mcp {

void RegisterTools(ToolRegistry& registry, const ToolServices& services) {
  AddSandboxTools(registry, services);
  AddEnvironmentTools(registry, services);
  AddCommandTools(registry, services);
  AddWorkspaceFileTools(registry, services);
  AddAppTools(registry, services);
  AddSandboxPowerTools(registry, services);
  AddStorageTools(registry, services);
  AddObjectTools(registry, services);
}

std::string FailureSentence(const Status& status) {
  static const std::pair<const char*, const char*> kNames[] = {
      {"memoryMiB", "memory_gib"},       {"securityProfile", "security_profile"},
      {"startupClass", "startup_class"}, {"timeoutSeconds", "timeout_seconds"},
      {"waitSeconds", "wait_seconds"},   {"ttlSeconds", "ttl_seconds"},
      {"labels.name", "name"},           {"stdin", "code"}};
  std::string s = status.message();
  for (const auto& [from, to] : kNames)
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + 1))
      s.replace(at, std::string(from).size(), to);
  // Capitalize a leading plain word, never an argument name or an id.
  std::string first = s.substr(0, s.find(' '));
  if (!s.empty() && first.find_first_of("_0123456789'") == std::string::npos)
    s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  if (!s.empty() && s.back() != '.') s += '.';
  return s;
}

}  // namespace adapt::mcp
