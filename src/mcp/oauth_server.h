// OAuth 2.1 for MCP clients, so an assistant connects without anyone pasting a key:
// protected-resource metadata (RFC 9728), authorization-server metadata (RFC 8414), dynamic
// client registration (RFC 7591, public clients), the authorization-code grant with PKCE S256
// only, the `resource` parameter (RFC 8707), `iss` in the authorization response (RFC 9207),
// refresh-token rotation, and a consent page where the person signs in: as a user (email and
// password, core::Users; failures rate-limited per email and per address by SignInLimit), by
// creating an account when the operator allows sign-up (a new, unregistered organization;
// rate-limited per address), or with an API key. Tokens act for that user's or key's
// organization, expire, and are stored only as SHA-256 hashes. Registration is rate-limited
// per client address (RegistrationLimit) and bounded in total.
#pragma once

#include <string>

#include "api/http_types.h"
#include "core/auth.h"
#include "core/users.h"
#include "mcp/http_routes.h"
#include "mcp/origin_check.h"
#include "mcp/registration_limit.h"
#include "mcp/sign_in_limit.h"
#include "store/store.h"

namespace adapt::mcp {

class OAuthServer {
 public:
  static constexpr int64_t kCodeLifetimeMs = 10 * 60 * 1000;
  static constexpr int64_t kAccessLifetimeMs = 60 * 60 * 1000;
  static constexpr int64_t kRefreshLifetimeMs = 30LL * 24 * 60 * 60 * 1000;
  // /oauth/register is open to anyone, so what it stores is bounded: a client that holds no
  // code or token a day after registering (it never completed an authorization, or all its
  // tokens expired) is forgotten, and past kMaxClients registration waits until some are.
  static constexpr int64_t kUnusedClientLifetimeMs = 24LL * 60 * 60 * 1000;
  static constexpr int64_t kMaxClients = 10000;
  // A grant keeps its client registered: one organization keeps the grants of the clients it
  // authorized most recently, up to this many, so that it cannot pin kMaxClients alone.
  static constexpr size_t kMaxClientsPerOrg = 100;

  // `allow_signup`: the consent page offers "create an account" (adaptd --allow-signup).
  OAuthServer(store::Store& store, core::Auth& auth, core::Users& users, std::string listen_host,
              bool allow_signup);

  // True for text shaped like our access tokens.
  static bool LooksLikeAccessToken(const std::string& bearer);
  // The principal an unexpired access token acts for; Unauthenticated otherwise.
  Result<core::Principal> VerifyAccessToken(const std::string& token);

  // Its endpoints (metadata, registration, authorization, token), for the API's router.
  HttpRoutes Routes();

  // Accounts created per address: shared with the dashboard's sign-up, so the two pages
  // together allow what one does.
  RegistrationLimit& signup_limit() { return signup_limit_; }

 private:
  api::HttpResponse ResourceMetadata(const api::HttpRequest& req);
  api::HttpResponse ServerMetadata(const api::HttpRequest& req);
  api::HttpResponse Register(const api::HttpRequest& req);
  api::HttpResponse Authorize(const api::HttpRequest& req);
  api::HttpResponse Token(const api::HttpRequest& req);
  api::HttpResponse IssueTokens(const store::OAuthGrantRecord& from);

  store::Store& store_;
  core::Auth& auth_;
  core::Users& users_;
  const bool allow_signup_;
  OriginCheck origins_;
  RegistrationLimit registration_limit_;
  SignInLimit sign_in_limit_;
  RegistrationLimit signup_limit_;  // accounts created per address
};

}  // namespace adapt::mcp
