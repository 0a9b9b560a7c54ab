#include "api/router.h"

#include <sstream>

#include "api/errors.h"
#include "api/http_request_decoding.h"
#include "api/request_cookie.h"
#include "core/registration_gate.h"

namespace adapt::api {
namespace {

std::vector<std::string> Split(const std::string& path) {
  std::vector<std::string> out;
  std::stringstream in(path);
  std::string seg;
  while (std::getline(in, seg, '/')) {
    if (!seg.empty()) out.push_back(seg);
  }
  return out;
}

// The path's segments as sent, each decoded on its own: an escaped slash stays inside its
// segment, so /v1%2Fsandboxes is one segment that names no route, as a proxy in front reads
// it too (decoding first made it /v1/sandboxes). A request built without its target (tests,
// in-process callers) is split from its decoded path.
std::vector<std::string> PathSegments(const HttpRequest& request) {
  if (request.target.empty()) return Split(request.path);
  // One splitting for both: the server's choice of what streams (RoutedPath) and this.
  return RouteSegments(std::string_view(request.target).substr(0, request.target.find('?')));
}

// /v1/account and below: the account's own routes, registration among them.
bool IsAccountPath(const std::vector<std::string>& path) {
  return path.size() >= 2 && path[0] == "v1" && path[1] == "account";
}

}  // namespace

void Router::Add(const std::string& method, const std::string& pattern, AuthedHandler handler) {
  routes_.push_back({method, Split(pattern), std::move(handler), nullptr});
}

void Router::AddPublic(const std::string& method, const std::string& pattern,
                       PublicHandler handler) {
  routes_.push_back({method, Split(pattern), nullptr, std::move(handler)});
}

void Router::SetSessionCookie(std::string cookie_name, SessionLookup lookup) {
  session_cookie_ = std::move(cookie_name);
  session_lookup_ = std::move(lookup);
}

Result<core::Principal> Router::Authenticate(const HttpRequest& request) const {
  std::string key = BearerKey(request);
  if (!key.empty() || !session_lookup_) return auth_.Authenticate(key);
  std::string token = CookieValue(request, session_cookie_);
  if (token.empty()) return auth_.Authenticate(key);
  ASSIGN_OR_RETURN(auto who, session_lookup_(token));
  if (request.method != "GET" && request.method != "HEAD" && request.Header("x-adapt-csrf") != "1")
    return Status(Code::kPermissionDenied,
                  "a request signed in with the dashboard's cookie that changes something must "
                  "send the header X-Adapt-CSRF: 1");
  return who;
}

std::function<bool()> Router::StillSignedIn(const HttpRequest& request,
                                            const core::Principal& who) const {
  // Only what signs a request in is kept, not the request.
  HttpRequest credential;
  credential.method = "GET";
  for (const char* name : {"authorization", "cookie"})
    if (auto it = request.headers.find(name); it != request.headers.end())
      credential.headers.insert(*it);
  return [this, credential = std::move(credential), org_id = who.org_id] {
    auto now = Authenticate(credential);
    if (now.ok()) return now->org_id == org_id;
    return now.status().code() != Code::kUnauthenticated &&
           now.status().code() != Code::kPermissionDenied;
  };
}

bool Router::Match(const Route& route, const std::vector<std::string>& path, PathParams& params) {
  if (route.segments.size() != path.size()) return false;
  PathParams found;
  for (size_t i = 0; i < path.size(); ++i) {
    const auto& seg = route.segments[i];
    if (seg.size() > 2 && seg.front() == '{' && seg.back() == '}') {
      found[seg.substr(1, seg.size() - 2)] = path[i];
    } else if (seg != path[i]) {
      return false;
    }
  }
  params = std::move(found);
  return true;
}

HttpResponse Router::Handle(const HttpRequest& request) const {
  auto path = PathSegments(request);
  bool path_known = false;
  std::string allowed;
  for (const auto& route : routes_) {
    PathParams params;
    if (!Match(route, path, params)) continue;
    path_known = true;
    if (route.method != request.method) {
      allowed += (allowed.empty() ? "" : ", ") + route.method;
      continue;
    }
    if (route.open) return route.open(request, params);
    auto who = Authenticate(request);
    if (!who.ok()) return ErrorResponse(who.status());
    // An account that signed up and has not registered may read and register, nothing else.
    if (request.method != "GET" && request.method != "HEAD" && !IsAccountPath(path)) {
      if (Status st = core::RequireRegistered(*who, "call POST /v1/account/register first");
          !st.ok())
        return ErrorResponse(st);
    }
    HttpResponse response = route.authed(request, params, *who);
    if (stream_limit_) return stream_limit_->Admit(who->org_id, std::move(response));
    return response;
  }
  if (path_known) {
    HttpResponse r = JsonResponse(
        405, {{"error",
               {{"code", "method_not_allowed"},
                {"message", "method " + request.method + " is not allowed on " + request.path}}}});
    r.headers.emplace_back("Allow", allowed);
    return r;
  }
  return ErrorResponse(NotFound("no such endpoint: " + request.method + " " + request.path));
}

}  // namespace adapt::api
