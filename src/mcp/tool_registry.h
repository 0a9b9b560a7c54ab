// The tools this server lists, in the order they were added. Each feature adds its tools
// from its own file (see tools.h); one more tool is one more Add.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/status.h"
#include "mcp/tool.h"

namespace adapt::mcp {

struct ToolPage {
  std::vector<const Tool*> tools;
  std::string next_cursor;  // empty on the last page
};

class ToolRegistry {
 public:
  // Every tool on one page (seed 000's 48): many clients list once and never follow a cursor
  // (the official SDKs' listTools() returns one page), so a smaller page hid most of the
  // surface from them. The cursor stays for a registry that outgrows it.
  static constexpr size_t kPageSize = 64;

  // Call before serving; afterwards the registry is read-only and thread-safe.
  void Add(Tool tool);
  const Tool* Find(const std::string& name) const;
  // InvalidArgument for a cursor this registry did not hand out.
  Result<ToolPage> List(const std::string& cursor) const;
  size_t size() const { return tools_.size(); }

 private:
  std::vector<Tool> tools_;
};

}  // namespace adapt::mcp
