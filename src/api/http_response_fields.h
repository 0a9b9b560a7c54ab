// Response header hygiene shared by the HTTP connection: handlers set headers, but only
// these functions put them on the wire, so client text echoed by a handler cannot split a
// response and framing stays the server's.
#pragma once

#include <boost/beast/http/fields.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/http_types.h"

namespace adapt::api {

// Client-controlled text in logs: quoted and escaped so it cannot forge log lines.
std::string Quote(std::string_view s);

// A bodyful response in API.md's error format, for errors the server answers itself.
HttpResponse ServerErrorResponse(int status, const std::string& code, const std::string& message);

bool IsSafeHeaderName(std::string_view name);
bool IsSafeHeaderValue(std::string_view value);

// Copies a handler's headers, dropping invalid ones (logged) and the framing headers
// Content-Length, Transfer-Encoding and Connection.
void AddHandlerHeaders(boost::beast::http::fields& fields,
                       const std::vector<std::pair<std::string, std::string>>& headers);

void SetContentType(boost::beast::http::fields& fields, const std::string& content_type);

}  // namespace adapt::api
