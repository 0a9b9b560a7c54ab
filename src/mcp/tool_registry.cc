#include "mcp/tool_registry.h"

#include <algorithm>
#include <stdexcept>

namespace adapt::mcp {

void ToolRegistry::Add(Tool tool) {
  if (Find(tool.name)) throw std::logic_error("MCP tool added twice: " + tool.name);
  tools_.push_back(std::move(tool));
}

const Tool* ToolRegistry::Find(const std::string& name) const {
  for (const auto& t : tools_)
    if (t.name == name) return &t;
  return nullptr;
}

Result<ToolPage> ToolRegistry::List(const std::string& cursor) const {
  // The cursor is "tools:<offset>": opaque to clients, checked here.
  size_t offset = 0;
  if (!cursor.empty()) {
    const std::string prefix = "tools:";
    std::string digits = cursor.rfind(prefix, 0) == 0 ? cursor.substr(prefix.size()) : "";
    if (digits.empty() || digits.size() > 6 ||
        digits.find_first_not_of("0123456789") != std::string::npos)
      return InvalidArgument("cursor", "cursor is not one this server returned");
    offset = std::stoul(digits);
    if (offset == 0 || offset >= tools_.size())
      return InvalidArgument("cursor", "cursor is not one this server returned");
  }
  ToolPage page;
  size_t end = std::min(tools_.size(), offset + kPageSize);
  for (size_t i = offset; i < end; ++i) page.tools.push_back(&tools_[i]);
  if (end < tools_.size()) page.next_cursor = "tools:" + std::to_string(end);
  return page;
}

}  // namespace adapt::mcp
