// The Streamable HTTP transport at /mcp: POST carries one JSON-RPC message and is answered
// with application/json, or with an SSE stream (progress notifications, then the result)
// when a tools/call asks for progress; DELETE ends the session; GET is 405 (no server
// stream). Checks Origin/Host, the bearer credential, Mcp-Session-Id and
// MCP-Protocol-Version.
#pragma once

#include <atomic>
#include <boost/asio/thread_pool.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "api/http_types.h"
#include "base/status.h"
#include "core/auth.h"
#include "mcp/http_routes.h"
#include "mcp/mcp_server.h"
#include "mcp/origin_check.h"
#include "mcp/session_store.h"
#include "mcp/tool_registry.h"

namespace adapt::mcp {

// Turns a bearer credential (an API key or an OAuth access token) into a principal.
using Authenticator = std::function<Result<core::Principal>(const std::string& bearer)>;

// The 413 of a body over `max_body_bytes` posted to `path` when it is /mcp (nullopt for any
// other path): a JSON-RPC error with a null id, since MCP clients read every /mcp answer as
// JSON-RPC. The HTTP server enforces the limit before routing
// (api::HttpServerOptions::oversized_body).
std::optional<api::HttpResponse> OversizedMcpBody(std::string_view path, size_t max_body_bytes);

// Requests that run tools (tools/call and the rest of Call) run on `calls`, a pool of
// `max_calls` threads apart from the API workers, and the HTTP answer is deferred meanwhile.
// A tool that waits (wait_for_sandbox, run_command) gives its thread back while it waits
// (Tool::run_later): waits do not count against the bound. With `max_calls` calls running on
// the pool, another is refused at once (429, with Retry-After).
class McpHttp {
 public:
  McpHttp(const ToolRegistry& tools, Authenticator authenticate, std::string listen_host,
          boost::asio::thread_pool& calls, int max_calls);

  api::HttpResponse Post(const api::HttpRequest& req);
  api::HttpResponse Delete(const api::HttpRequest& req);

  // Admits an event stream for an organization, or answers the refusal instead (the API's
  // api::OrgStreamLimit::Admit): a tool call's progress stream counts toward its
  // organization's open event streams as the API's do (a waiting tool holds its stream open
  // for as long as it waits). Unset: every stream is admitted.
  // A refusal is a Status (its message reaches the client).
  using StreamAdmission =
      std::function<Result<api::HttpResponse>(const std::string& org_id, api::HttpResponse)>;
  void SetStreamAdmission(StreamAdmission admit) { admit_stream_ = std::move(admit); }

  // The 401 answer, pointing the client at the protected-resource metadata.
  static api::HttpResponse Unauthorized(const api::HttpRequest& req, const std::string& why);
  // "http://<Host>": the address the client used, once Host was checked.
  static std::string BaseUrl(const api::HttpRequest& req);

 private:
  // Shared checks; fills `who` or returns the refusal.
  std::optional<api::HttpResponse> Admit(const api::HttpRequest& req, core::Principal& who);
  // `protocol_version`: the session's, which shapes the tool results (ToolResultToJson).
  api::HttpResponse Call(const Message& request, const std::string& session_id,
                         const std::string& protocol_version, const core::Principal& who);

  McpServer server_;
  Authenticator authenticate_;
  OriginCheck origins_;
  boost::asio::thread_pool& calls_;
  const int max_calls_;
  std::shared_ptr<std::atomic<int>> running_ = std::make_shared<std::atomic<int>>(0);
  SessionStore sessions_;
  StreamAdmission admit_stream_;
};

// POST and DELETE /mcp, with the CORS headers a browser client reads.
HttpRoutes McpRoutes(McpHttp& mcp);

}  // namespace adapt::mcp
