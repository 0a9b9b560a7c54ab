#include "mcp/cors.h"

#include <nlohmann/json.hpp>

#include "mcp/origin_check.h"

namespace adapt::mcp {
namespace {

using api::HttpRequest;
using api::HttpResponse;

constexpr char kExposed[] = "Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate";
constexpr char kMaxAge[] = "600";

const char* const kOAuthPaths[] = {"/.well-known/oauth-protected-resource",
                                   "/.well-known/oauth-protected-resource/mcp",
                                   "/.well-known/oauth-authorization-server",
                                   "/oauth/register",
                                   "/oauth/token",
                                   "/oauth/authorize"};

HttpResponse Preflight(const std::string& origin, const char* methods, const char* headers) {
  HttpResponse r;
  r.status = 204;
  r.content_type.clear();
  r.headers.emplace_back("Access-Control-Allow-Origin", origin.empty() ? "*" : origin);
  r.headers.emplace_back("Access-Control-Allow-Methods", methods);
  r.headers.emplace_back("Access-Control-Allow-Headers", headers);
  r.headers.emplace_back("Access-Control-Expose-Headers", kExposed);
  r.headers.emplace_back("Access-Control-Max-Age", kMaxAge);
  r.headers.emplace_back("Vary", "Origin");
  return r;
}

}  // namespace

HttpRoutes CorsPreflights(const std::string& listen_host) {
  HttpRoutes routes;
  routes.push_back(
      {"OPTIONS", "/mcp", [check = OriginCheck(listen_host)](const HttpRequest& req) {
         std::string problem = check.Problem(req.Header("host"), req.Header("origin"));
         if (!problem.empty()) {
           HttpResponse r;
           r.status = 403;
           r.body = nlohmann::json{{"error", {{"code", "permission_denied"}, {"message", problem}}}}
                        .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
           return r;
         }
         return Preflight(req.Header("origin"), "POST, GET, DELETE, OPTIONS",
                          "Authorization, Content-Type, Accept, Mcp-Session-Id, "
                          "MCP-Protocol-Version, Last-Event-ID");
       }});
  for (const char* path : kOAuthPaths) {
    routes.push_back({"OPTIONS", path, [](const HttpRequest&) {
                        return Preflight("*", "GET, POST, OPTIONS",
                                         "Authorization, Content-Type, MCP-Protocol-Version");
                      }});
  }
  return routes;
}

void AddMcpCorsHeaders(const HttpRequest& req, HttpResponse& response) {
  std::string origin = req.Header("origin");
  // No Origin: not a browser's cross-origin request. 403: /mcp refused a foreign origin,
  // whose page gets nothing to read.
  if (origin.empty() || response.status == 403) return;
  response.headers.emplace_back("Access-Control-Allow-Origin", origin);
  response.headers.emplace_back("Access-Control-Expose-Headers", kExposed);
  response.headers.emplace_back("Vary", "Origin");
}

}  // namespace adapt::mcp
