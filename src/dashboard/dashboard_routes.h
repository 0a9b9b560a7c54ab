// The dashboard on the API's own origin: its files at / and /assets/{name}, and its session
// at /dashboard/session (POST signs in and sets the cookie, GET says who is signed in,
// DELETE signs out). The router accepts the cookie on /v1 (Router::SetSessionCookie).
#pragma once

#include "api/router.h"
#include "dashboard/dashboard_sessions.h"

namespace adapt::dashboard {

// The session cookie's name.
inline constexpr const char* kSessionCookie = "adapt_session";

void AddDashboardRoutes(api::Router& router, DashboardSessions& sessions);

}  // namespace adapt::dashboard
