// DatabaseServer: the PostgreSQL server that holds the organizations' databases (issue 19), as
// DatabaseService sees it. Two kinds, chosen once by adaptd's configuration:
// - PostgresServer (postgres_server.h): a cluster adaptd runs itself under <state>/postgres;
//   adaptd writes its pg_hba and it has no TCP listener.
// - ExternalPostgres (external_postgres.h): an existing server adaptd only connects to with an
//   admin role (--database-admin-url); its pg_hba and listeners are the operator's.
// Implementations are thread-safe.
#pragma once

#include <string>

#include "base/status.h"

namespace adapt::database {

class DatabaseServer {
 public:
  virtual ~DatabaseServer() = default;

  // Makes the server usable: the embedded one is made and started, the external one is
  // reached. Unavailable when it cannot be; the message names no host and no password.
  virtual Status Start() = 0;
  // Stops what adaptd started (an external server is left alone).
  virtual Status Stop() = 0;
  // The server's major version ("15"); empty while an external server was never reached.
  virtual std::string version() const = 0;
  // libpq connection string of the admin role into `database`. It may carry a password: it
  // goes to libpq only, never into a log line, an error or a command line.
  virtual std::string AdminConnectionString(const std::string& database = "postgres") const = 0;
  // Writes a pg_dump custom-format archive (-Fc) of `database` to `path` (a host path).
  virtual Status Dump(const std::string& database, const std::string& path) const = 0;
  // Where dumps are written before they are stored (0700, root's).
  virtual std::string ScratchDir() const = 0;
  // True when adaptd runs the server and writes its pg_hba; false for an operator's server,
  // whose other databases (`postgres` among them) adaptd leaves as they are.
  virtual bool owns_cluster() const = 0;
};

}  // namespace adapt::database
