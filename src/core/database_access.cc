#include "core/database_access.h"

namespace adapt::core {

std::optional<std::string> DatabaseForAddress(store::NetworkStore& networks,
                                              store::SandboxStore& sandboxes,
                                              const std::string& address) {
  auto list = networks.ListNetworks();
  if (!list.ok()) return std::nullopt;
  for (const auto& n : *list) {
    if (n.address != address) continue;
    auto sandbox = sandboxes.GetSandbox("", n.sandbox_id);
    if (!sandbox.ok() || !sandbox->config.database) return std::nullopt;
    if (sandbox->status != "running" && sandbox->status != "provisioning") return std::nullopt;
    return DatabaseName(sandbox->org_id);
  }
  return std::nullopt;
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
