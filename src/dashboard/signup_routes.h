// Sign-up from the dashboard (adaptd --allow-signup): GET /dashboard/signup says whether it is
// on, POST /dashboard/signup {"email","password"} creates an account through core::Users::SignUp
// (the verb the MCP authorize page's "Create an account" uses): a new, unregistered
// organization with this person as its first user. The page then signs in as on any other
// sign-in. Off, the POST answers 403. Accounts made per address are limited by the same
// bucket as the authorize page's (`limit`).
#pragma once

#include "api/router.h"
#include "core/users.h"
#include "mcp/registration_limit.h"

namespace adapt::dashboard {

void AddSignUpRoutes(api::Router& router, core::Users& users, mcp::RegistrationLimit& limit,
                     bool allow_signup);

}  // namespace adapt::dashboard
