#include "core/database_access.h"

namespace adapt::core {

std::optional<std::string> DatabaseOrgForAddress(store::NetworkStore& networks,
                                                 store::SandboxStore& sandboxes,
                                                 const net::AddressPool& pool,
                                                 const std::string& address) {
  auto slot = pool.SandboxSlot(address);
  if (!slot) return std::nullopt;
  auto network = networks.GetNetworkBySlot(*slot);
  if (!network.ok() || network->address != address) return std::nullopt;
  auto sandbox = sandboxes.GetSandbox("", network->sandbox_id);
  if (!sandbox.ok() || !sandbox->config.database) return std::nullopt;
  if (sandbox->status != "running" && sandbox->status != "provisioning") return std::nullopt;
  return sandbox->org_id;
}

std::map<std::string, std::string> DatabaseEnvironment(const DatabaseCredentials& c,
                                                       const std::string& gateway) {
  std::string port = std::to_string(c.port);
  // The password is RandomToken's URL-safe alphabet, so the URL needs no escaping.
  return {{"DATABASE_URL", "postgresql://" + c.name + ":" + c.password + "@" + gateway + ":" +
                               port + "/" + c.name + "?sslmode=disable"},
          {"PGHOST", gateway},
          {"PGPORT", port},
          {"PGUSER", c.name},
          {"PGPASSWORD", c.password},
          {"PGDATABASE", c.name},
          {"PGSSLMODE", "disable"}};
}

}  // namespace adapt::core
