#include "mcp/client_metadata.h"

#include <nlohmann/json.hpp>

#include "base/json_parse.h"
#include "mcp/origin_check.h"

namespace adapt::mcp {

using nlohmann::json;

bool AcceptableRedirect(const std::string& uri) {
  if (uri.empty() || uri.size() > 2000 || uri.find('#') != std::string::npos) return false;
  for (char c : uri)
    if (static_cast<unsigned char>(c) <= ' ' || c == '"' || c == '<' || c == '>') return false;
  if (uri.rfind("https://", 0) == 0) return uri.size() > 8;
  if (uri.rfind("http://", 0) == 0) {
    std::string rest = uri.substr(7);
    return IsLoopbackHost(HostPart(rest.substr(0, rest.find('/'))));
  }
  size_t colon = uri.find(':');
  if (colon == std::string::npos || colon == 0) return false;
  std::string scheme = uri.substr(0, colon);
  return scheme.find('.') != std::string::npos &&
         scheme.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789.+-") == std::string::npos;
}

bool ParseClientMetadata(const std::string& text, ClientMetadata& out,
                         ClientMetadataError& problem) {
  auto fail = [&problem](const char* error, std::string description) {
    problem = {error, std::move(description)};
    return false;
  };
  auto parsed = ParseJson(text, "the body");
  if (!parsed.ok()) return fail("invalid_client_metadata", parsed.status().message());
  const json& body = *parsed;
  if (!body.is_object()) return fail("invalid_client_metadata", "the body must be a JSON object");
  auto uris = body.find("redirect_uris");
  if (uris == body.end() || !uris->is_array() || uris->empty() || uris->size() > 10)
    return fail("invalid_redirect_uri", "redirect_uris must list 1 to 10 URIs");
  for (const auto& uri : *uris) {
    if (!uri.is_string() || !AcceptableRedirect(uri))
      return fail("invalid_redirect_uri",
                  "each redirect URI must be https, http on a loopback address, or a "
                  "private-use scheme, without a fragment: " +
                      uri.dump(-1, ' ', false, json::error_handler_t::replace));
    out.redirect_uris.push_back(uri);
  }
  if (auto name = body.find("client_name"); name != body.end()) {
    if (!name->is_string() || name->get<std::string>().size() > 200)
      return fail("invalid_client_metadata", "client_name must be a string of at most 200 bytes");
    out.name = *name;
  }
  if (auto grants = body.find("grant_types"); grants != body.end()) {
    bool has_code = false;
    if (grants->is_array())
      for (const auto& g : *grants) has_code = has_code || g == "authorization_code";
    if (!has_code)
      return fail("invalid_client_metadata", "grant_types must include authorization_code");
  }
  return true;
}

}  // namespace adapt::mcp
