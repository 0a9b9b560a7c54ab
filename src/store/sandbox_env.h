// Setting environment variables of an existing sandbox (attach_sandbox_object_storage).
// A free function rather than a Store method for now, so that adding it did not change the
// Store interface every module compiles against; it belongs in Store when store.h next changes.
#pragma once

#include <map>
#include <string>

#include "base/status.h"
#include "store/store.h"

namespace adapt::store {

// Adds or replaces `vars` in the sandbox's env (UpdateSandbox leaves env alone); NotFound
// unless the organization has the sandbox.
Status SetSandboxEnv(Store& store, const std::string& org_id, const std::string& id,
                     const std::map<std::string, std::string>& vars);

}  // namespace adapt::store
