// Which database a sandbox address may open through the database proxy
// (net/database_proxy.h), and the variables that give a sandbox its organization's database.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "base/status.h"
#include "core/database_service.h"
#include "store/network_store.h"
#include "store/sandbox_store.h"

namespace adapt::core {

// The database (DatabaseName) of the organization of the running or provisioning sandbox
// whose network has `address`, when it was created with "database": true; else nullopt.
std::optional<std::string> DatabaseForAddress(store::NetworkStore& networks,
                                              store::SandboxStore& sandboxes,
                                              const std::string& address);

// DATABASE_URL and PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE for a sandbox that reaches
// the proxy at `gateway`.
std::map<std::string, std::string> DatabaseEnvironment(const DatabaseCredentials& credentials,
                                                       const std::string& gateway);

}  // namespace adapt::core
