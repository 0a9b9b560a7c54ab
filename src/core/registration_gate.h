// The one rule for organizations that signed up and have not registered yet
// (store::OrgRecord::registered false): they may read and register, nothing else. The edges
// call RequireRegistered on their common path (the REST router for every method but GET, the
// MCP server for every tool not marked read-only), each naming how to register in its own
// vocabulary, so no verb has to remember the check.
#pragma once

#include <string>

#include "base/status.h"
#include "core/auth.h"

namespace adapt::core {

// PermissionDenied "this account is not registered yet: <how_to_register>" while `who`'s
// organization is unregistered; Ok otherwise.
Status RequireRegistered(const Principal& who, const std::string& how_to_register);

}  // namespace adapt::core
