// The HTTP routes the MCP module answers (/mcp, OAuth, their CORS preflights), as a table:
// mcp speaks HTTP through api_http's plain request and response types but does not link the
// REST API, so the daemon adds these to the API's router (all public: each checks its own
// credentials).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "api/http_types.h"

namespace adapt::mcp {

struct HttpRoute {
  std::string method;
  std::string path;  // exact, no parameters
  std::function<api::HttpResponse(const api::HttpRequest&)> handle;
};
using HttpRoutes = std::vector<HttpRoute>;

}  // namespace adapt::mcp
