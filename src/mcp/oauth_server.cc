#include "mcp/oauth_server.h"

#include <algorithm>
#include <tuple>

#include "base/client_message.h"
#include "base/ids.h"
#include "base/log.h"
#include "base/markup.h"
#include "base/time.h"
#include "mcp/client_metadata.h"
#include "mcp/mcp_http.h"
#include "mcp/oauth_text.h"

namespace adapt::mcp {
namespace {

using api::HttpRequest;
using api::HttpResponse;
using nlohmann::json;

constexpr char kAccessPrefix[] = "adapt_at_";
constexpr char kRefreshPrefix[] = "adapt_rt_";
constexpr char kCodePrefix[] = "adapt_ac_";

HttpResponse Json(int status, const json& body) {
  HttpResponse r;
  r.status = status;
  r.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  r.headers.emplace_back("Cache-Control", "no-store");
  r.headers.emplace_back("Access-Control-Allow-Origin", "*");
  return r;
}

HttpResponse OAuthError(int status, const std::string& error, const std::string& description) {
  return Json(status, {{"error", error}, {"error_description", description}});
}

// Registration refused for now: `error` temporarily_unavailable, with Retry-After.
HttpResponse TryLater(int status, const std::string& description, int64_t retry_after_s) {
  HttpResponse r = OAuthError(status, "temporarily_unavailable", description);
  r.headers.emplace_back("Retry-After", std::to_string(retry_after_s));
  return r;
}

HttpResponse Html(int status, const std::string& body) {
  HttpResponse r;
  r.status = status;
  r.content_type = "text/html; charset=utf-8";
  r.headers.emplace_back("Cache-Control", "no-store");
  r.headers.emplace_back("X-Frame-Options", "DENY");
  r.headers.emplace_back("Content-Security-Policy",
                         "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'");
  r.body =
      "<!doctype html><html><head><meta charset=\"utf-8\"><title>adapt: connect an "
      "assistant</title><style>body{font-family:sans-serif;max-width:34em;margin:3em auto}"
      "input{display:block;width:100%}</style></head><body>" +
      body + "</body></html>";
  return r;
}

HttpResponse Redirect(const std::string& location) {
  HttpResponse r;
  r.status = 302;
  r.content_type.clear();
  r.headers.emplace_back("Location", location);
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

std::string ResourceUrl(const HttpRequest& req) { return McpHttp::BaseUrl(req) + "/mcp"; }

std::string Field(const std::map<std::string, std::string>& f, const std::string& k) {
  auto it = f.find(k);
  return it == f.end() ? "" : it->second;
}

std::string HiddenFields(const std::map<std::string, std::string>& params) {
  std::string hidden;
  for (const char* k : {"response_type", "client_id", "redirect_uri", "code_challenge",
                        "code_challenge_method", "state", "resource", "scope"}) {
    if (!params.count(k)) continue;
    hidden += "<input type=\"hidden\" name=\"" + std::string(k) + "\" value=\"" +
              EscapeMarkup(params.at(k)) + "\">";
  }
  return hidden;
}

// One form per way in: a user's email and password, a new account (when the operator allows
// sign-up), or an API key. Each carries the authorization request in hidden fields.
std::string ConsentForm(const std::map<std::string, std::string>& params,
                        const store::OAuthClientRecord& client, bool allow_signup,
                        const std::string& problem) {
  std::string hidden = HiddenFields(params);
  std::string name = client.name.empty() ? client.id : client.name;
  std::string email = EscapeMarkup(Field(params, "email"));
  std::string page =
      "<h1>Connect " + EscapeMarkup(name) + " to adapt</h1><p>" + EscapeMarkup(name) +
      " asks to create sandboxes and run code in them for your organization. It will "
      "redirect to <code>" +
      EscapeMarkup(Field(params, "redirect_uri")) +
      "</code>. Sign in to allow it; access expires and can be refused now.</p>" +
      (problem.empty() ? ""
                       : "<p role=\"alert\"><strong>" + EscapeMarkup(problem) + "</strong></p>") +
      "<h2>Sign in</h2><form method=\"post\" action=\"/oauth/authorize\">" + hidden +
      "<label>Email <input type=\"email\" name=\"email\" autocomplete=\"username\" value=\"" +
      email +
      "\" required></label><label>Password <input type=\"password\" name=\"password\" "
      "autocomplete=\"current-password\" required></label><p><button type=\"submit\" "
      "name=\"action\" value=\"sign_in\">Sign in and allow</button></p></form>";
  if (allow_signup)
    page += "<h2>Create an account</h2><form method=\"post\" action=\"/oauth/authorize\">" +
            hidden +
            "<label>Email <input type=\"email\" name=\"email\" autocomplete=\"username\" "
            "required></label><label>Password (10 characters or more) <input "
            "type=\"password\" name=\"password\" autocomplete=\"new-password\" minlength=\"10\" "
            "required></label><p><button type=\"submit\" name=\"action\" value=\"sign_up\">"
            "Create the account and allow</button></p></form>";
  page += "<h2>Or use an API key</h2><form method=\"post\" action=\"/oauth/authorize\">" + hidden +
          "<label>API key <input type=\"password\" name=\"api_key\" autocomplete=\"off\" "
          "required></label><p><button type=\"submit\" name=\"action\" value=\"allow\">Allow"
          "</button> <button type=\"submit\" name=\"action\" value=\"deny\" formnovalidate>Deny"
          "</button></p></form>";
  return page;
}

std::string FirstUpper(std::string s) {
  if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return s;
}

// The email a sign-in is counted under: normalized when it is an address, as typed otherwise.
std::string LimitKey(const std::string& email) {
  auto normalized = core::NormalizeEmail(email);
  return normalized.ok() ? *normalized : email.substr(0, 256);
}

}  // namespace

OAuthServer::OAuthServer(store::Store& store, core::Auth& auth, core::Users& users,
                         std::string listen_host, bool allow_signup)
    : store_(store),
      auth_(auth),
      users_(users),
      allow_signup_(allow_signup),
      origins_(std::move(listen_host)),
      signup_limit_(RegistrationLimit::Options{3, std::chrono::seconds(20 * 60), 10000}) {}

bool OAuthServer::LooksLikeAccessToken(const std::string& bearer) {
  return bearer.rfind(kAccessPrefix, 0) == 0;
}

Result<core::Principal> OAuthServer::VerifyAccessToken(const std::string& token) {
  auto grant = store_.FindOAuthGrant(Sha256Hex(token), "access", NowMillis());
  if (!grant.ok()) return Status(Code::kUnauthenticated, "unknown or expired access token");
  // A grant made by signing in with an API key ends with the key: revoking deletes the grant,
  // and an expired key refuses it here.
  if (grant->key_id.rfind("key_", 0) == 0) {
    ASSIGN_OR_RETURN(auto keys, store_.ListApiKeys(grant->org_id));
    int64_t now = NowMillis();
    bool live = std::any_of(keys.begin(), keys.end(), [&](const store::ApiKeyRecord& k) {
      return k.id == grant->key_id && (k.expires_at == 0 || k.expires_at > now);
    });
    if (!live)
      return Status(Code::kUnauthenticated, "the API key this access token was made with expired");
  }
  ASSIGN_OR_RETURN(auto org, store_.GetOrg(grant->org_id));
  return core::Principal{grant->org_id, grant->key_id, false, org.registered};
}

HttpResponse OAuthServer::ResourceMetadata(const HttpRequest& req) {
  std::string base = McpHttp::BaseUrl(req);
  return Json(200, {{"resource", base + "/mcp"},
                    {"authorization_servers", json::array({base})},
                    {"bearer_methods_supported", json::array({"header"})},
                    {"scopes_supported", json::array({"mcp"})},
                    {"resource_name", "adapt sandboxes (MCP)"}});
}

HttpResponse OAuthServer::ServerMetadata(const HttpRequest& req) {
  std::string base = McpHttp::BaseUrl(req);
  return Json(200, {{"issuer", base},
                    {"authorization_endpoint", base + "/oauth/authorize"},
                    {"token_endpoint", base + "/oauth/token"},
                    {"registration_endpoint", base + "/oauth/register"},
                    {"response_types_supported", json::array({"code"})},
                    {"grant_types_supported", json::array({"authorization_code", "refresh_token"})},
                    {"code_challenge_methods_supported", json::array({"S256"})},
                    {"token_endpoint_auth_methods_supported", json::array({"none"})},
                    {"scopes_supported", json::array({"mcp"})},
                    {"authorization_response_iss_parameter_supported", true}});
}

HttpResponse OAuthServer::Register(const HttpRequest& req) {
  if (int64_t wait = registration_limit_.Take(req.remote); wait > 0)
    return TryLater(429,
                    "too many client registrations from this address; try again in " +
                        std::to_string(wait) + " s",
                    wait);
  ClientMetadata metadata;
  ClientMetadataError problem;
  if (!ParseClientMetadata(req.body, metadata, problem))
    return OAuthError(400, problem.error, problem.description);
  store::OAuthClientRecord client;
  client.name = std::move(metadata.name);
  client.redirect_uris = std::move(metadata.redirect_uris);
  client.id = NewId("oac");
  client.created_at = NowMillis();
  auto held =
      store_.PruneOAuthClients(client.created_at - kUnusedClientLifetimeMs, client.created_at);
  if (!held.ok())
    return OAuthError(500, "server_error", ClientMessage(held.status(), "OAuth request"));
  if (*held >= kMaxClients)
    return TryLater(503,
                    "this server holds as many OAuth clients as it allows (" +
                        std::to_string(kMaxClients) + "); try again once unused ones expire",
                    3600);
  if (Status st = store_.CreateOAuthClient(client); !st.ok())
    return OAuthError(500, "server_error", ClientMessage(st, "OAuth request"));
  // Public clients only: whatever authentication method was asked for, it is "none".
  return Json(201, {{"client_id", client.id},
                    {"client_id_issued_at", client.created_at / 1000},
                    {"client_name", client.name},
                    {"redirect_uris", client.redirect_uris},
                    {"grant_types", json::array({"authorization_code", "refresh_token"})},
                    {"response_types", json::array({"code"})},
                    {"token_endpoint_auth_method", "none"},
                    {"scope", "mcp"}});
}

HttpResponse OAuthServer::Authorize(const HttpRequest& req) {
  bool submit = req.method == "POST";
  if (submit) {
    if (std::string p = origins_.Problem(req.Header("host"), req.Header("origin")); !p.empty())
      return Html(403, "<h1>Refused</h1><p>" + EscapeMarkup(p) + ".</p>");
  }
  auto params = submit ? DecodeForm(req.body) : req.query;
  // Until the client and its redirect URI are known good, errors stay on this page.
  auto client = store_.GetOAuthClient(Field(params, "client_id"));
  if (!client.ok())
    return Html(400, "<h1>Unknown client</h1><p>client_id is not registered here.</p>");
  std::string redirect = Field(params, "redirect_uri");
  bool registered = false;
  for (const auto& uri : client->redirect_uris) registered = registered || uri == redirect;
  if (!registered)
    return Html(400,
                "<h1>Wrong redirect URI</h1><p>redirect_uri is not one this client "
                "registered.</p>");

  std::string iss = McpHttp::BaseUrl(req);
  // Anyone may register a client with any redirect URI, so a malformed request is not
  // redirected (RFC 9700 4.11.2: that would make this page an open redirector); only the
  // user's own refusal goes back to the client.
  auto fail = [&](const std::string& error, const std::string& description) {
    return Html(400, "<h1>Invalid request</h1><p>" + EscapeMarkup(error) + ": " +
                         EscapeMarkup(description) +
                         ". The application that sent you here made a request this server "
                         "cannot answer; nothing was authorized.</p>");
  };
  auto refused = [&] {
    std::map<std::string, std::string> q = {
        {"error", "access_denied"}, {"error_description", "the user refused"}, {"iss", iss}};
    if (params.count("state")) q["state"] = params["state"];
    return Redirect(WithQuery(redirect, q));
  };
  if (Field(params, "response_type") != "code")
    return fail("unsupported_response_type", "response_type must be code");
  std::string challenge = Field(params, "code_challenge");
  if (challenge.size() < 43 || challenge.size() > 128)
    return fail("invalid_request", "a PKCE code_challenge is required");
  if (Field(params, "code_challenge_method") != "S256")
    return fail("invalid_request", "code_challenge_method must be S256");
  std::string resource = Field(params, "resource");
  if (!resource.empty() && resource != ResourceUrl(req) && resource != iss)
    return fail("invalid_target", "resource must be " + ResourceUrl(req));
  std::string scope = Field(params, "scope");
  if (!scope.empty() && scope != "mcp") return fail("invalid_scope", "the only scope is mcp");

  if (!submit) return Html(200, ConsentForm(params, *client, allow_signup_, ""));
  std::string action = Field(params, "action");
  if (action == "deny") return refused();
  auto again = [&](int status, const std::string& problem) {
    return Html(status, ConsentForm(params, *client, allow_signup_, problem));
  };
  Result<core::Principal> who = Status(Code::kInternal, "no way to sign in was chosen");
  if (action == "sign_in") {
    std::string email = Field(params, "email");
    if (int64_t wait = sign_in_limit_.WaitSeconds(LimitKey(email), req.remote); wait > 0) {
      HttpResponse r = again(429, "Too many failed sign-ins; try again in " +
                                      std::to_string((wait + 59) / 60) + " minutes.");
      r.headers.emplace_back("Retry-After", std::to_string(wait));
      return r;
    }
    who = users_.SignIn(email, Field(params, "password"));
    if (!who.ok() && who.status().code() == Code::kUnauthenticated) {
      sign_in_limit_.Failed(LimitKey(email), req.remote);
      return again(401, "That email and password do not match an account; try again.");
    }
  } else if (action == "sign_up") {
    if (!allow_signup_)
      return again(403, "This server does not let anyone create an account; ask its operator.");
    if (int64_t wait = signup_limit_.Take(req.remote); wait > 0) {
      HttpResponse r =
          again(429, "Too many accounts were created from this address; try again in " +
                         std::to_string((wait + 59) / 60) + " minutes.");
      r.headers.emplace_back("Retry-After", std::to_string(wait));
      return r;
    }
    std::string email = Field(params, "email");
    who = users_.SignUp(email, Field(params, "password"));
    if (!who.ok() && who.status().code() == Code::kConflict)
      // Probing for accounts this way counts like a failed sign-in.
      sign_in_limit_.Failed(LimitKey(email), req.remote);
    if (!who.ok() &&
        (who.status().code() == Code::kInvalidArgument || who.status().code() == Code::kConflict))
      return again(who.status().code() == Code::kConflict ? 409 : 400,
                   FirstUpper(who.status().message()) + ".");
  } else {
    who = auth_.Authenticate(Field(params, "api_key"));
    if (!who.ok()) return again(401, "That API key is not valid; try again.");
  }
  if (!who.ok() && who.status().code() == Code::kUnavailable) {
    HttpResponse r = again(503, FirstUpper(who.status().message()) + ".");
    r.headers.emplace_back("Retry-After", "1");
    return r;
  }
  if (!who.ok())
    return Html(
        500, "<h1>Error</h1><p>" + EscapeMarkup(ClientMessage(who.status(), "sign-in")) + "</p>");
  std::string code = kCodePrefix + RandomToken(32);
  store::OAuthGrantRecord grant;
  grant.hash = Sha256Hex(code);
  grant.kind = "code";
  grant.client_id = client->id;
  grant.org_id = who->org_id;
  grant.key_id = who->key_id;
  grant.created_at = NowMillis();
  grant.expires_at = grant.created_at + kCodeLifetimeMs;
  grant.redirect_uri = redirect;
  grant.code_challenge = challenge;
  grant.resource = resource.empty() ? ResourceUrl(req) : resource;
  if (Status st = store_.PutOAuthGrant(grant, kMaxClientsPerOrg); !st.ok())
    return Html(500, "<h1>Error</h1><p>" + EscapeMarkup(ClientMessage(st, "sign-in")) + "</p>");
  spdlog::info("OAuth: organization {} ({}) authorized client {}", who->org_id, who->key_id,
               client->id);
  std::map<std::string, std::string> q = {{"code", code}, {"iss", iss}};
  if (params.count("state")) q["state"] = params["state"];
  return Redirect(WithQuery(redirect, q));
}

HttpResponse OAuthServer::IssueTokens(const store::OAuthGrantRecord& from) {
  std::string access = kAccessPrefix + RandomToken(32);
  std::string refresh = kRefreshPrefix + RandomToken(32);
  int64_t now = NowMillis();
  for (auto [text, kind, lifetime] : {std::tuple{access, "access", kAccessLifetimeMs},
                                      std::tuple{refresh, "refresh", kRefreshLifetimeMs}}) {
    store::OAuthGrantRecord g = from;
    g.hash = Sha256Hex(text);
    g.kind = kind;
    g.created_at = now;
    g.expires_at = now + lifetime;
    g.redirect_uri.clear();
    g.code_challenge.clear();
    if (Status st = store_.PutOAuthGrant(g); !st.ok())
      return OAuthError(500, "server_error", ClientMessage(st, "OAuth request"));
  }
  return Json(200, {{"access_token", access},
                    {"token_type", "Bearer"},
                    {"expires_in", kAccessLifetimeMs / 1000},
                    {"refresh_token", refresh},
                    {"scope", "mcp"}});
}

HttpResponse OAuthServer::Token(const HttpRequest& req) {
  auto f = DecodeForm(req.body);
  std::string grant_type = Field(f, "grant_type");
  std::string client_id = Field(f, "client_id");
  if (grant_type == "authorization_code") {
    auto code = store_.TakeOAuthGrant(Sha256Hex(Field(f, "code")), "code", NowMillis());
    if (!code.ok()) return OAuthError(400, "invalid_grant", "the code is unknown, used or expired");
    if (code->client_id != client_id)
      return OAuthError(400, "invalid_grant", "the code was issued to another client");
    if (code->redirect_uri != Field(f, "redirect_uri"))
      return OAuthError(400, "invalid_grant",
                        "redirect_uri does not match the authorization request");
    std::string verifier = Field(f, "code_verifier");
    if (verifier.size() < 43 || verifier.size() > 128 ||
        S256Challenge(verifier) != code->code_challenge)
      return OAuthError(400, "invalid_grant", "code_verifier does not match the code_challenge");
    std::string resource = Field(f, "resource");
    if (!resource.empty() && resource != code->resource)
      return OAuthError(400, "invalid_target", "resource differs from the authorization request");
    return IssueTokens(*code);
  }
  if (grant_type == "refresh_token") {
    auto old = store_.TakeOAuthGrant(Sha256Hex(Field(f, "refresh_token")), "refresh", NowMillis());
    if (!old.ok())
      return OAuthError(400, "invalid_grant", "the refresh token is unknown, used or expired");
    if (old->client_id != client_id)
      return OAuthError(400, "invalid_grant", "the refresh token belongs to another client");
    return IssueTokens(*old);
  }
  return OAuthError(400, "unsupported_grant_type",
                    "grant_type must be authorization_code or refresh_token");
}

HttpRoutes OAuthServer::Routes() {
  HttpRoutes routes;
  auto open = [&routes, this](const char* method, const char* path,
                              HttpResponse (OAuthServer::*fn)(const HttpRequest&)) {
    routes.push_back(
        {method, path, [this, fn](const HttpRequest& req) { return (this->*fn)(req); }});
  };
  open("GET", "/.well-known/oauth-protected-resource", &OAuthServer::ResourceMetadata);
  open("GET", "/.well-known/oauth-protected-resource/mcp", &OAuthServer::ResourceMetadata);
  open("GET", "/.well-known/oauth-authorization-server", &OAuthServer::ServerMetadata);
  open("POST", "/oauth/register", &OAuthServer::Register);
  open("GET", "/oauth/authorize", &OAuthServer::Authorize);
  open("POST", "/oauth/authorize", &OAuthServer::Authorize);
  open("POST", "/oauth/token", &OAuthServer::Token);
  return routes;
}

}  // namespace adapt::mcp
