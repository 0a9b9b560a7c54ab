// Turning a parsed Beast request into the HttpRequest handlers see: the target is split
// into path and query and percent-decoded, header names are lower-cased.
#pragma once

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/http_types.h"

namespace adapt::api {

// Only origin-form targets ("/path?query") are accepted; nullopt means the request is
// malformed (400). Takes the body out of `msg` on success; `remote` is the peer's address.
std::optional<HttpRequest> ToHttpRequest(
    boost::beast::http::request<boost::beast::http::string_body>&& msg, const std::string& remote);
// The same from a header alone, for a request whose body is streamed (body left empty).
std::optional<HttpRequest> ToHttpRequest(const boost::beast::http::request_header<>& msg,
                                         const std::string& remote);

// The path part of a request-target as the router matches it: its non-empty segments, each
// percent-decoded on its own (an escape that does not decode is kept as sent), joined by '/'
// after a leading one. "/v1//sandboxes/x/fil%65s" is "/v1/sandboxes/x/files". The server
// decides with it which requests' bodies stream, so that it decides as the router routes.
std::string RoutedPath(std::string_view raw_path);
// The same segments, apart: what the router matches routes against.
std::vector<std::string> RouteSegments(std::string_view raw_path);

}  // namespace adapt::api
