// Turning a parsed Beast request into the HttpRequest handlers see: the target is split
// into path and query and percent-decoded, header names are lower-cased.
#pragma once

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "api/http_types.h"

namespace adapt::api {

// Only origin-form targets ("/path?query") are accepted; nullopt means the request is
// malformed (400). Takes the body out of `msg` on success; `remote` is the peer's address.
std::optional<HttpRequest> ToHttpRequest(
    boost::beast::http::request<boost::beast::http::string_body>&& msg, const std::string& remote);
// The same from a header alone, for a request whose body is streamed (body left empty).
std::optional<HttpRequest> ToHttpRequest(const boost::beast::http::request_header<>& msg,
                                         const std::string& remote);

}  // namespace adapt::api
