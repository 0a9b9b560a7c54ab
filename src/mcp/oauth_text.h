// Text helpers of the OAuth endpoints: form bodies, URLs, HTML and PKCE.
#pragma once

#include <map>
#include <string>

namespace adapt::mcp {

// application/x-www-form-urlencoded to fields ('+' is a space; the first of repeats wins).
std::map<std::string, std::string> DecodeForm(const std::string& body);
// BASE64URL(SHA256(verifier)) without padding: the S256 code challenge.
std::string S256Challenge(const std::string& verifier);
// `uri` with `params` appended as query parameters.
std::string WithQuery(const std::string& uri, const std::map<std::string, std::string>& params);

}  // namespace adapt::mcp
