// Router: (method, path) to a handler. Path patterns use {name} for one segment. Unknown
// paths answer 404 and known paths with another method 405, both in the API error format.
// Routes that need a key get the caller's Principal. Add routes before serving; Handle is
// then thread-safe.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "api/bearer_credential.h"
#include "api/http_types.h"
#include "api/org_stream_limit.h"
#include "core/auth.h"

namespace adapt::api {

using PathParams = std::map<std::string, std::string>;
using AuthedHandler =
    std::function<HttpResponse(const HttpRequest&, const PathParams&, const core::Principal&)>;
using PublicHandler = std::function<HttpResponse(const HttpRequest&, const PathParams&)>;

class Router {
 public:
  explicit Router(core::Auth& auth) : auth_(auth) {}

  void Add(const std::string& method, const std::string& pattern, AuthedHandler handler);
  void AddPublic(const std::string& method, const std::string& pattern, PublicHandler handler);
  HttpResponse Handle(const HttpRequest& request) const;

  // Lets a request without a bearer key sign in with the dashboard's session cookie
  // `cookie_name`. Such a request that is not a GET or HEAD must also send `X-Adapt-CSRF: 1`, a
  // header another site's page cannot add (it would need a CORS preflight /v1 never allows).
  using SessionLookup = std::function<Result<core::Principal>(const std::string& token)>;
  void SetSessionCookie(std::string cookie_name, SessionLookup lookup);

  // For a response that outlives its request (an event stream): true while the credential
  // that `request` was signed in with still signs in to `who`'s organization. Revoked or
  // expired keys, ended dashboard sessions and deleted organizations answer false; a store
  // that cannot answer now does not (the next check asks again). Call only while the router
  // lives (it is stopped after the workers that run streams).
  std::function<bool()> StillSignedIn(const HttpRequest& request, const core::Principal& who) const;

  // Counts each authenticated route's event stream against its organization (set before
  // serving; without it, none is counted).
  void SetStreamLimit(OrgStreamLimit* limit) { stream_limit_ = limit; }

 private:
  struct Route {
    std::string method;
    std::vector<std::string> segments;
    AuthedHandler authed;
    PublicHandler open;
  };
  static bool Match(const Route& route, const std::vector<std::string>& path, PathParams& params);

  Result<core::Principal> Authenticate(const HttpRequest& request) const;

  core::Auth& auth_;
  std::vector<Route> routes_;
  std::string session_cookie_;
  SessionLookup session_lookup_;
  OrgStreamLimit* stream_limit_ = nullptr;
};

}  // namespace adapt::api
