// Which database a sandbox address may open through the database proxy
// (net/database_proxy.h), and the variables that give a sandbox its organization's database.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "base/status.h"
#include "core/database_service.h"
#include "net/address.h"
#include "store/network_store.h"
#include "store/sandbox_store.h"

namespace adapt::core {

// The organization of the running or provisioning sandbox whose network has `address` (a
// sandbox address of `pool`), when it was created with "database": true (it may open
// DatabaseName(org)); else nullopt. Two indexed reads: the network of the address's slot, then
// its sandbox.
std::optional<std::string> DatabaseOrgForAddress(store::NetworkStore& networks,
                                                 store::SandboxStore& sandboxes,
                                                 const net::AddressPool& pool,
                                                 const std::string& address);

// DATABASE_URL and PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE for a sandbox that reaches
// the proxy at `gateway`.
std::map<std::string, std::string> DatabaseEnvironment(const DatabaseCredentials& credentials,
                                                       const std::string& gateway);

}  // namespace adapt::core
