// CORS for /mcp and the OAuth endpoints, so that an MCP client in a browser page can
// discover the authorization server, register, get a token and call /mcp: the browser
// sends a preflight (OPTIONS) before each such cross-origin request and reads the answer
// only when it carries Access-Control-* headers.
#pragma once

#include <string>

#include "api/http_types.h"
#include "mcp/http_routes.h"

namespace adapt::mcp {

// OPTIONS for /mcp and every OAuth path. /mcp's preflight passes the same Origin and Host
// check as /mcp itself (403 otherwise: DNS-rebinding protection stays); the OAuth endpoints
// are public metadata and token exchanges, open to any origin as OAuth clients expect.
HttpRoutes CorsPreflights(const std::string& listen_host);

// The headers a browser needs to read a /mcp answer: the allowed origin, and the response
// headers a client reads (Mcp-Session-Id, WWW-Authenticate).
void AddMcpCorsHeaders(const api::HttpRequest& req, api::HttpResponse& response);

}  // namespace adapt::mcp
