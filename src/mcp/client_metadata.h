// The body of /oauth/register (RFC 7591 client metadata) read into what adaptd keeps of it,
// or the OAuth error to answer. Pure, so the fuzzer reaches it without a store.
#pragma once

#include <string>
#include <vector>

namespace adapt::mcp {

struct ClientMetadata {
  std::string name;
  std::vector<std::string> redirect_uris;
};

struct ClientMetadataError {
  std::string error;  // "invalid_client_metadata" or "invalid_redirect_uri"
  std::string description;
};

// A redirect URI a public client may register: https, http on a loopback address, or a
// private-use scheme ("com.example.app:/cb") of a native app; never with a fragment.
bool AcceptableRedirect(const std::string& uri);

// Fills `out` from `body`, or says what is wrong with it in `problem` and returns false.
// Nesting past kMaxJsonDepth is refused while parsing (base/json_parse.h).
bool ParseClientMetadata(const std::string& body, ClientMetadata& out,
                         ClientMetadataError& problem);

}  // namespace adapt::mcp
