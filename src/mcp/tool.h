// One MCP tool: its name, description, schemas, annotations and the code that runs it.
// Tools translate into the core's typed verbs; they never call adaptd over HTTP.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/auth.h"

namespace adapt::mcp {

// What a running tool call may use besides its arguments.
struct ToolContext {
  core::Principal who;
  // Set when the client sent notifications/cancelled for this call: stop the work.
  std::shared_ptr<std::atomic<bool>> cancelled = std::make_shared<std::atomic<bool>>(false);
  // Reports progress when the client asked for it (a progressToken); a no-op otherwise.
  std::function<void(double progress, std::optional<double> total, const std::string& message)>
      progress = [](double, std::optional<double>, const std::string&) {};

  bool Cancelled() const { return cancelled->load(); }
};

// A tool's answer: structured content on success, one actionable sentence on failure.
struct ToolResult {
  bool is_error = false;
  nlohmann::json structured;  // conforms to the tool's outputSchema when !is_error
  std::string error;          // the sentence, when is_error

  static ToolResult Ok(nlohmann::json structured) { return {false, std::move(structured), ""}; }
  static ToolResult Fail(std::string sentence) { return {true, nullptr, std::move(sentence)}; }
};

struct ToolAnnotations {
  bool read_only = false;
  bool destructive = true;
  bool idempotent = false;
  bool open_world = false;
};

struct Tool {
  std::string name;
  std::string title;
  std::string description;
  nlohmann::json input_schema;
  nlohmann::json output_schema;
  ToolAnnotations annotations;
  std::function<ToolResult(ToolContext&, const nlohmann::json& arguments)> run;
};

// The tools/list entry of `tool`.
nlohmann::json ToolToJson(const Tool& tool);
// The tools/call result of `result`: structuredContent plus the same JSON as text.
nlohmann::json ToolResultToJson(const ToolResult& result);

}  // namespace adapt::mcp
