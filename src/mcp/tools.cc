#include "mcp/tools.h"

#include <algorithm>
#include <cctype>

#include "base/client_message.h"

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
  AddAccountTools(registry, services);
  AddJobTools(registry, services);
  AddDeployedAppTools(registry, services);
  AddAutomationTools(registry, services);
  AddDatabaseTools(registry, services);
}

std::string FailureSentence(const Status& status) {
  // The message already names fields as the tool does: each tool maps its own arguments and
  // tells the core its names (McpSandboxFields in sandbox_tools.cc).
  std::string s = ClientMessage(status, "tool call");
  // Capitalize a leading plain word, never an argument name or an id.
  std::string first = s.substr(0, s.find(' '));
  if (!s.empty() && first.find_first_of("_0123456789'") == std::string::npos)
    s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  if (!s.empty() && s.back() != '.') s += '.';
  return s;
}

}  // namespace adapt::mcp
