// One MCP tool: its name, description, schemas, annotations and the code that runs it.
// Tools translate into the core's typed verbs; they never call adaptd over HTTP.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/auth.h"
#include "mcp/cancel_signal.h"

namespace adapt::mcp {

// What a running tool call may use besides its arguments.
struct ToolContext {
  core::Principal who;
  // The protocol revision the session negotiated (SupportedProtocolVersions); empty: the newest.
  std::string protocol_version;
  // Set when the client sent notifications/cancelled for this call: stop the work.
  std::shared_ptr<CancelSignal> cancelled = std::make_shared<CancelSignal>();
  // Reports progress when the client asked for it (a progressToken); a no-op otherwise.
  std::function<void(double progress, std::optional<double> total, const std::string& message)>
      progress = [](double, std::optional<double>, const std::string&) {};

  bool Cancelled() const { return cancelled->IsSet(); }
};

// A resource the client fetches itself (MCP 2025-06-18's resource_link content): a download
// tool's temporary read-only URL, so the client can offer the file rather than the JSON only.
struct ResourceLink {
  std::string uri;
  std::string name;
  std::string mime_type;  // empty: left out
  std::optional<int64_t> size;
  std::string description;  // empty: left out
};

// A tool's answer: structured content on success, one actionable sentence on failure.
struct ToolResult {
  bool is_error = false;
  nlohmann::json structured;  // conforms to the tool's outputSchema when !is_error
  std::string error;          // the sentence, when is_error
  // Content blocks after the text one, where the session's protocol has resource_link.
  std::vector<ResourceLink> links;

  static ToolResult Ok(nlohmann::json structured) { return {false, std::move(structured), "", {}}; }
  static ToolResult Fail(std::string sentence) { return {true, nullptr, std::move(sentence), {}}; }
};

// How a tool that answers later (Tool::run_later) gives its answer: once, from any thread.
using ToolReply = std::function<void(ToolResult)>;

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
  // Set instead of `run` by a tool that waits (wait_for_sandbox, run_command): it returns at
  // once and calls `reply` when done, holding no thread meanwhile (its wait parks on the
  // core's Waiter). `ctx` stays valid until `reply` was called; a closure that may run after
  // that copies what it needs from it.
  std::function<void(ToolContext&, const nlohmann::json& arguments, ToolReply reply)> run_later =
      nullptr;
};

// The input schema of a `sandbox_id` argument, the same in every tool that takes one.
const nlohmann::json& SandboxIdSchema();

// The tools/list entry of `tool`.
nlohmann::json ToolToJson(const Tool& tool);
// Whether protocol revision `version` (empty: the newest) has resource_link content blocks:
// 2025-06-18 and later. 2025-03-26 has none, and its embedded resource would carry the file's
// bytes, so a session that speaks it gets the link in the text and structuredContent only.
bool HasResourceLinks(const std::string& version);
// The tools/call result of `result`: structuredContent plus the same JSON as text, then a
// resource_link block per link when `protocol_version` has them.
nlohmann::json ToolResultToJson(const ToolResult& result, const std::string& protocol_version = "");

}  // namespace adapt::mcp
