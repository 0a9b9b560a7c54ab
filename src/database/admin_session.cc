#include "database/admin_session.h"

#include "base/log.h"

namespace adapt::database {

Result<std::unique_ptr<PgSession>> OpenAdminSession(const DatabaseServer& server,
                                                    const std::string& database) {
  auto session = PgSession::Open(server.AdminConnectionString(database));
  if (session.ok() || server.owns_cluster()) return session;
  // libpq's message names the host, never the password (it is not in any message libpq makes).
  spdlog::warn("PostgreSQL: the external server: {}", session.status().message());
  return Status(Code::kUnavailable, "the organizations' PostgreSQL server is not available");
}

}  // namespace adapt::database
